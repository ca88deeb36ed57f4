//===- LibjitABI.h - What libjit's kernels take, declared once --*- C++ -*-===//
//
// Included by libjit.cpp (compiled by clang to bitcode) before its kernel
// files and by the CPU lowering: each kernel's definition must match its
// declaration here (C linkage makes a mismatch an error), and the lowering
// builds calls against the same declarations (LibCall.h checks count and
// kinds when a call is built). The tile constants both sides must agree on
// live here too. Plain C++17 with <stdint.h> only: libjit is freestanding.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_BACKENDS_CPU_LIBJIT_LIBJITABI_H
#define EMBER_BACKENDS_CPU_LIBJIT_LIBJITABI_H

#include <stdint.h>

namespace ember {
namespace libjit {

/// The bits of an IEEE binary16 value: a type of its own, so that a kernel
/// taking float16 elements is told from one taking bfloat16 bits
/// (uint16_t) by its declaration.
struct Half16 {
  uint16_t bits;
};

/// Pixel-panel conv GEMM: output channels per packed filter block, columns
/// per patch panel, and the longest K accumulated in one pass (a block's
/// filter slice, kConvKC * 24 bytes, stays in L1 and the panels' slices in
/// L2).
constexpr int64_t kConvMR = 6, kConvNR = 64, kConvKC = 512;
/// Channel-vector conv GEMM: output channels per packed filter block,
/// pixels per tile, the K slice of a call with several tiles, and the most
/// tiles a sliced call holds partial sums for.
constexpr int64_t kConvCVMR = 32, kConvCVNR = 14, kConvCVKC = 64,
                  kConvCVMaxTiles = 16;
/// Row-direct convolution (ConvRows.inc): the most output channels and
/// pixel vectors of 16 in one register tile, and the floats of a call's
/// stack buffer for its band of padded input rows (32 KB, like the
/// depthwise bands).
constexpr int64_t kConvRowsMaxMR = 8, kConvRowsMaxNV = 4,
                  kConvRowsBandFloats = 8192;
/// MatMul register tiles libjit instantiates: rows and vectors per tile
/// with 32 512-bit registers and with 16 256-bit ones (chooseMatMulTiling
/// must yield one of them).
constexpr int kMatMulWideMR = 6, kMatMulWideV = 4;
constexpr int kMatMulNarrowMR = 6, kMatMulNarrowV = 2;
/// Direct BFloat16 convolution on vdpbf16ps (ConvBF16DirectDot.inc): the
/// most filter taps (7x7), whose offsets into the copy wait on the stack.
constexpr int64_t kConvDirectMaxTaps = 49;
/// The longest K block an unpacked B's partial panel is copied in.
constexpr int64_t kMatMulMaxKC = 256;
/// Depthwise int8 convolution: the longest output row of a call (its Int32
/// sums wait in a stack buffer of this many elements).
constexpr int64_t kDwInt8Row = 2048;
/// Fused attention (Attention.inc): the most queries per task (16 per
/// vector of the register tile), keys per block and head dims its stack
/// blocks hold (Q^T and O^T: 64 KB each at the maxima).
constexpr int64_t kAttnMaxBQ = 64, kAttnMaxBK = 64, kAttnMaxHeadDim = 256;
/// Columns per chunk of a packed A (ember_matmul_pack_a_f32).
constexpr int64_t kMatMulPackK = 16;
/// Channel-vector BFloat16 convolutions (ConvBF16CV.inc,
/// ConvBF16DirectCV.inc): pixels per block of sums (a multiple of the
/// 6-row tile and of the 16 x 16 transpose).
constexpr int64_t kConvBF16CVPixels = 48;
/// Their narrow panels: 3 vectors (48 channels, where they fill more lanes
/// than 64-channel panels), 8 pixels per tile (24 accumulators, as the
/// wide 6 x 4 tile; a divisor of kConvBF16CVPixels).
constexpr int kConvBF16CVNarrowV = 3, kConvBF16CVNarrowMR = 8;

/// The int8 GEMM into int32 sums (ember_matmul_i8_*, one per ISA).
using MatMulI8Fn = void(int32_t *c, const uint8_t *a, const uint8_t *b,
                        int64_t n, int64_t K, int64_t lda, int64_t kc,
                        int64_t i0, int64_t i1, int64_t t0, int64_t t1,
                        int64_t aSigned, int64_t aFlip, const int32_t *u,
                        int64_t us, int64_t uo, const int32_t *v, int64_t vs,
                        int64_t vo);
/// The same GEMM requantizing its sums to uint8 y (ember_matmul_i8q_*).
using MatMulI8QFn = void(
    uint8_t *y, int32_t *c, const uint8_t *a, const uint8_t *b, int64_t n,
    int64_t K, int64_t lda, int64_t kc, int64_t i0, int64_t i1, int64_t t0,
    int64_t t1, int64_t aSigned, int64_t aFlip, const int32_t *u, int64_t us,
    int64_t uo, const int32_t *v, int64_t vs, int64_t vo, const int32_t *bias,
    int64_t bRow, int64_t bCol, const float *mult, int64_t mRow, int64_t mCol,
    int64_t zero, int64_t lo, int64_t hi, int64_t yRow, int64_t yCol);

} // namespace libjit
} // namespace ember

// The kernels. Pointers are element pointers into the planned regions;
// int64_t are sizes, strides, bounds and enum values (act: FusedActivation);
// a task's bounds come last ([b0, b1) blocks, [t0, t1) tiles or panels,
// [i0, i1) rows).
extern "C" {
void ember_im2col_f32(float *patches, const float *x, int64_t row0, int64_t cw,
                      int64_t cs, int64_t ncols, int64_t H, int64_t W,
                      int64_t KH, int64_t KW, int64_t OH, int64_t OW,
                      int64_t sh, int64_t sw, int64_t pt, int64_t pl,
                      int64_t dh, int64_t dw);
void ember_im2col_cols_f32(float *dst, int64_t ld, const float *x, int64_t C,
                           int64_t c0, int64_t c1, int64_t H, int64_t W,
                           int64_t KH, int64_t KW, int64_t OH, int64_t OW,
                           int64_t sh, int64_t sw, int64_t pt, int64_t pl,
                           int64_t dh, int64_t dw);
void ember_conv_gemm_f32(float *y, const float *w, const float *p,
                         const float *bias, const float *res, int64_t K,
                         int64_t N, int64_t ldp, int64_t G, int64_t chunkStride,
                         int64_t mPerG, int64_t act, float alpha, float beta,
                         int64_t b0, int64_t b1, int64_t t0, int64_t t1,
                         int64_t pfNext);
void ember_conv_gemm_cv_f32(float *y, const float *w, const float *p,
                            const int32_t *koff, const float *bias,
                            const float *res, int64_t K, int64_t N, int64_t ldp,
                            int64_t rowPixels, int64_t rowStride,
                            int64_t tileStride, int64_t ps, int64_t mPerG,
                            int64_t vw, int64_t ow, int64_t nr, int64_t act,
                            float alpha, float beta, int64_t b0, int64_t b1,
                            int64_t t0, int64_t t1);
void ember_conv_rows_f32(float *y, const float *x, const float *w,
                         const float *bias, const float *res, int64_t cPerG,
                         int64_t mc, int64_t H, int64_t W, int64_t KH,
                         int64_t KW, int64_t OH, int64_t OW, int64_t sh,
                         int64_t sw, int64_t pt, int64_t pl, int64_t dh,
                         int64_t dw, int64_t nv, int64_t act, float alpha,
                         float beta, int64_t oh0, int64_t oh1);
void ember_pad_plane_f32(float *dst, const float *x, int64_t H, int64_t W,
                         int64_t Hp, int64_t Wp, int64_t pt, int64_t pl);
void ember_dwconv_f32(float *y, const float *x, const float *w,
                      const float *bias, const float *res, int64_t H, int64_t W,
                      int64_t KH, int64_t KW, int64_t OH, int64_t OW,
                      int64_t sh, int64_t sw, int64_t pt, int64_t pl,
                      int64_t dh, int64_t dw, int64_t act, float alpha,
                      float beta, int64_t before, int64_t after);
void ember_dwconv_cv_f32(float *y, const float *x, const float *w,
                         const float *bias, const float *res, int64_t nc,
                         int64_t H, int64_t W, int64_t KH, int64_t KW,
                         int64_t OH, int64_t OW, int64_t sh, int64_t sw,
                         int64_t pt, int64_t pl, int64_t dh, int64_t dw,
                         int64_t act, float alpha, float beta, int64_t oh0,
                         int64_t oh1);
void ember_maxpool_cv_f32(float *y, const float *x, int64_t nc, int64_t H,
                          int64_t W, int64_t KH, int64_t KW, int64_t OH,
                          int64_t OW, int64_t sh, int64_t sw, int64_t pt,
                          int64_t pl, int64_t oh0, int64_t oh1);
void ember_matmul_f32(float *c, const float *a, const float *b,
                      const float *bias, const float *res, int64_t n, int64_t K,
                      int64_t lda, int64_t ldb, int64_t panelStride,
                      int64_t packed, int64_t packedA, int64_t prefetch,
                      int64_t kc, int64_t act, float alpha, float beta,
                      int64_t i0, int64_t i1, int64_t t0, int64_t t1);
/// ember_matmul_f32 with a packed B of 16-bit floats (MatMul.inc): float16
/// or bfloat16, widened block by block as the tiles read it.
void ember_matmul_f32_b16(float *c, const float *a,
                          const ember::libjit::Half16 *b, const float *bias,
                          const float *res, int64_t n, int64_t K, int64_t lda,
                          int64_t ldb, int64_t panelStride, int64_t packed,
                          int64_t packedA, int64_t prefetch, int64_t kc,
                          int64_t act, float alpha, float beta, int64_t i0,
                          int64_t i1, int64_t t0, int64_t t1);
void ember_matmul_f32_bbf16(float *c, const float *a, const uint16_t *b,
                            const float *bias, const float *res, int64_t n,
                            int64_t K, int64_t lda, int64_t ldb,
                            int64_t panelStride, int64_t packed,
                            int64_t packedA, int64_t prefetch, int64_t kc,
                            int64_t act, float alpha, float beta, int64_t i0,
                            int64_t i1, int64_t t0, int64_t t1);
void ember_matmul_pack_a_f32(float *dst, const float *a, int64_t m, int64_t K,
                             int64_t lda, int64_t ldk, int64_t t0, int64_t t1);
/// A BFloat16 MatMul (MatMulBF16.inc, MatMulAMX.inc): one entry per product
/// kernel, all with these parameters (kc: the K block in pairs; the AMX
/// kernel's: the padded pairs of a panel).
#define EMBER_MATMUL_BF16_DECL(name)                                           \
  void name(float *c, const uint16_t *a, const uint16_t *b, const float *bias, \
            const float *res, int64_t n, int64_t K, int64_t kc, int64_t act,   \
            float alpha, float beta, int64_t i0, int64_t i1, int64_t t0,       \
            int64_t t1)
EMBER_MATMUL_BF16_DECL(ember_matmul_bf16_widen);
EMBER_MATMUL_BF16_DECL(ember_matmul_bf16_dp);
EMBER_MATMUL_BF16_DECL(ember_matmul_bf16_amx);
#undef EMBER_MATMUL_BF16_DECL
/// A convolution with a BFloat16 filter (ConvBF16.inc): one entry per
/// product kernel, all with these parameters.
#define EMBER_CONV_BF16_DECL(name)                                             \
  void name(float *y, uint16_t *yb, const uint16_t *w, const float *x,         \
            const float *bias, const float *res, uint16_t *panels, int64_t K,  \
            int64_t lda, int64_t N, int64_t kp, int64_t kc, int64_t pack,      \
            int64_t H, int64_t W, int64_t KH, int64_t KW, int64_t OW,          \
            int64_t sh, int64_t sw, int64_t pt, int64_t pl, int64_t dh,        \
            int64_t dw, int64_t act, float alpha, float beta, int64_t m0,      \
            int64_t m1, int64_t t0, int64_t t1)
EMBER_CONV_BF16_DECL(ember_conv_bf16_widen);
EMBER_CONV_BF16_DECL(ember_conv_bf16_dp);
EMBER_CONV_BF16_DECL(ember_conv_bf16_amx);
#undef EMBER_CONV_BF16_DECL
void ember_conv_bf16_direct(float *y, uint16_t *yb, const uint16_t *w,
                            const uint16_t *p, const float *bias,
                            const float *res, int64_t lda, int64_t cBlocks,
                            int64_t KH, int64_t KW, int64_t Wp, int64_t S,
                            int64_t OH, int64_t OW, int64_t act, float alpha,
                            float beta, int64_t m0, int64_t m1, int64_t v0,
                            int64_t v1);
void ember_conv_bf16_direct_dp(float *y, uint16_t *yb, const uint16_t *w,
                               const uint16_t *p, const float *bias,
                               const float *res, int64_t lda, int64_t kc,
                               int64_t KH, int64_t KW, int64_t Wp, int64_t S,
                               int64_t OH, int64_t OW, int64_t act, float alpha,
                               float beta, int64_t m0, int64_t m1, int64_t v0,
                               int64_t v1, int64_t s, int64_t phase);
void ember_conv_bf16_direct_cv(float *y, uint16_t *yb, const uint16_t *w,
                               const uint16_t *p, const float *bias,
                               const float *res, int64_t lda, int64_t kc,
                               int64_t KH, int64_t KW, int64_t Wp, int64_t S,
                               int64_t OH, int64_t OW, int64_t act, float alpha,
                               float beta, int64_t m0, int64_t m1, int64_t n0,
                               int64_t n1, int64_t s, int64_t phase);
void ember_conv_bf16_pad(uint16_t *p, const float *x, const uint16_t *xb,
                         int64_t C, int64_t H, int64_t W, int64_t pt,
                         int64_t pl, int64_t Hp, int64_t Wp, int64_t S,
                         int64_t q0, int64_t q1);
void ember_conv_bf16_pad_phases(uint16_t *p, const float *x, const uint16_t *xb,
                                int64_t C, int64_t H, int64_t W, int64_t pt,
                                int64_t pl, int64_t s, int64_t Hs, int64_t Ws,
                                int64_t S, int64_t q0, int64_t q1);
void ember_conv_bf16_pack(uint16_t *panels, const float *x, int64_t K,
                          int64_t N, int64_t nr, int64_t kp, int64_t H,
                          int64_t W, int64_t KH, int64_t KW, int64_t OW,
                          int64_t sh, int64_t sw, int64_t pt, int64_t pl,
                          int64_t dh, int64_t dw, int64_t t0, int64_t t1);
/// Channel-vector BFloat16 convolution (ConvBF16CV.inc): the transposed
/// patch rows of one image, then panels of output channels times pixels.
void ember_conv_bf16_cv_pack(uint16_t *xt, const float *x, const uint16_t *xb,
                             int64_t K, int64_t N, int64_t kp, int64_t H,
                             int64_t W, int64_t KH, int64_t KW, int64_t OW,
                             int64_t sh, int64_t sw, int64_t pt, int64_t pl,
                             int64_t dh, int64_t dw, int64_t n0, int64_t n1);
void ember_conv_bf16_cv_dp(float *y, uint16_t *yb, const uint16_t *w,
                           const uint16_t *xt, const float *bias,
                           const float *res, int64_t kp, int64_t kc, int64_t nr,
                           int64_t M, int64_t N, int64_t act, float alpha,
                           float beta, int64_t t0, int64_t t1, int64_t n0,
                           int64_t n1);
// One signature, several ISA variants (widen: AVX-512 BW, vnni, amx).
ember::libjit::MatMulI8Fn ember_matmul_i8_widen, ember_matmul_i8_vnni,
    ember_matmul_i8_amx;
ember::libjit::MatMulI8QFn ember_matmul_i8q_widen, ember_matmul_i8q_vnni,
    ember_matmul_i8q_amx;
void ember_im2col_u8(uint8_t *dst, const uint8_t *x, int64_t C, int64_t H,
                     int64_t W, int64_t KH, int64_t KW, int64_t sh, int64_t sw,
                     int64_t ph, int64_t pw, int64_t dh, int64_t dw, int64_t OW,
                     int64_t P, int64_t NR, int64_t pad, int64_t flip,
                     int64_t t0, int64_t t1);
void ember_quads_u8(uint8_t *dst, const uint8_t *x, int64_t H, int64_t W,
                    int64_t Hp, int64_t Wp, int64_t ph, int64_t pw, int64_t pad,
                    int64_t flip);
void ember_im2col_quads(uint8_t *dst, const uint8_t *xq, int64_t c4, int64_t Hp,
                        int64_t Wp, int64_t KH, int64_t KW, int64_t sh,
                        int64_t sw, int64_t dh, int64_t dw, int64_t OW,
                        int64_t P, int64_t NR, int64_t flip, int64_t t0,
                        int64_t t1);
void ember_pixels_u8(uint8_t *dst, const uint8_t *x, int64_t C, int64_t H,
                     int64_t W, int64_t Wp, int64_t ph, int64_t pw, int64_t pad,
                     int64_t flip, int64_t py0, int64_t py1);
void ember_im2col_rows(uint8_t *dst, const uint8_t *xp, int64_t C, int64_t Wp,
                       int64_t KH, int64_t KW, int64_t sh, int64_t sw,
                       int64_t dh, int64_t dw, int64_t OW, int64_t lda,
                       int64_t p0, int64_t p1);
void ember_qadd_u8(uint8_t *y, const uint8_t *a, const uint8_t *b, int64_t n,
                   int64_t aSigned, int64_t bSigned, int64_t ySigned,
                   int64_t relu, const float *sa, const int32_t *za,
                   const float *sb, const int32_t *zb, const float *sy,
                   const int32_t *zy);
void ember_qmul_u8(uint8_t *y, const uint8_t *a, const uint8_t *b, int64_t rows,
                   int64_t inner, int64_t aSigned, int64_t bSigned,
                   int64_t ySigned, const float *sa, const int32_t *za,
                   const float *sb, const int32_t *zb, const float *sy,
                   const int32_t *zy);
void ember_lut_u8(uint8_t *y, const uint8_t *x, const uint8_t *table, int64_t n,
                  int64_t xSigned);
void ember_lut_u8_vbmi(uint8_t *y, const uint8_t *x, const uint8_t *table,
                       int64_t n, int64_t xSigned);
void ember_dwconv_i8q(uint8_t *y, const uint8_t *x, const int8_t *w, int64_t H,
                      int64_t W, int64_t KH, int64_t KW, int64_t OH, int64_t OW,
                      int64_t sh, int64_t sw, int64_t pt, int64_t pl,
                      int64_t dh, int64_t dw, int64_t xSigned,
                      const int32_t *zx, const int32_t *bias, const float *mult,
                      int64_t zero, int64_t lo, int64_t hi);
void ember_dwconv_i8q_vnni(uint8_t *y, const uint8_t *x, const int8_t *w,
                           const int32_t *words, int64_t H, int64_t W,
                           int64_t KH, int64_t KW, int64_t OH, int64_t OW,
                           int64_t sh, int64_t sw, int64_t pt, int64_t pl,
                           int64_t dh, int64_t dw, int64_t xSigned,
                           const int32_t *zx, const int32_t *bias,
                           const float *mult, int64_t zero, int64_t lo,
                           int64_t hi);
void ember_pool_plane_f32(float *y, const float *x, int64_t H, int64_t W,
                          int64_t KH, int64_t KW, int64_t OH, int64_t OW,
                          int64_t sh, int64_t sw, int64_t pt, int64_t pl,
                          int64_t pb, int64_t pr, int64_t isMax,
                          int64_t countPad);
void ember_sum_f32(float *y, const float *x, int64_t n, float div);
void ember_sum_i32(int32_t *y, const int32_t *x, int64_t n);
void ember_minmax_f32(float *y, const float *x, int64_t n, int64_t isMax);
void ember_softmax_f32(float *y, const float *x, int64_t n);
/// The k first of a row in TopK's order, best first (TopK.inc).
void ember_topk_f32(float *vals, int64_t *idxs, const float *x, int64_t n,
                    int64_t k, int64_t largest);
/// One plane of a Resize of the last two dims (Resize.inc).
void ember_resize_plane_f32(float *y, const float *x, const int64_t *rowAt,
                            const double *rowW, const int64_t *colAt,
                            const double *colW, int64_t OH, int64_t OW,
                            int64_t th, int64_t tw);
/// ScaledSoftmax's row and one query block of Attention (Attention.inc).
void ember_softmax_masked_f32(float *y, const float *x, const float *mask,
                              int64_t n, int64_t maskStride, float scale,
                              int64_t causal, int64_t qi);
void ember_attention_f32(float *o, const float *q, const float *k,
                         const float *v, const float *mask, int64_t rows,
                         int64_t tk, int64_t d, int64_t dv, int64_t mRow,
                         int64_t mCol, float scale, int64_t causal, int64_t q0,
                         int64_t nv, int64_t bk, int64_t qs, int64_t ks,
                         int64_t vs, int64_t os);
/// Asks Linux once for the AMX tile state; 1 when granted (AMX.inc).
int64_t ember_amx_request();
void ember_wino_input_f32(float *v, const float *x, int64_t tm, int64_t nImg,
                          int64_t imgStride, int64_t H, int64_t W, int64_t pt,
                          int64_t pl, int64_t TH, int64_t TW, int64_t xiStride,
                          int64_t T, int64_t Tpad);
void ember_wino_output_f32(float *y, const float *mo, const float *bias,
                           const float *res, int64_t tm, int64_t nImg,
                           int64_t imgStride, int64_t OH, int64_t OW,
                           int64_t TH, int64_t TW, int64_t xiStride,
                           int64_t act, float alpha, float beta);
}

#endif // EMBER_BACKENDS_CPU_LIBJIT_LIBJITABI_H
