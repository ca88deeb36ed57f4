//===- DeviceABI.h - What the CUDA prelude's functions take -----*- C++ -*-===//
//
// The device functions of the CUDA prelude (Prelude.h, TiledKernels.h)
// that generated kernels call, declared once with named and typed
// parameters, and the tile constants the tiled kernels and the lowering
// agree on. The lowering builds its calls against these declarations
// (DeviceCall.h checks count and kinds when a call is built); the host
// emulation of the tests (tests/cuda/HostEmulation.h) includes this header
// before the generated source and EMBER_EMU_CHECK_DEVICE_ABI after it, so a
// prelude definition that differs from its declaration here fails to
// compile there.
// Plain C++ (the constants aside): it is compiled inside generated sources.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_BACKENDS_CUDA_DEVICEABI_H
#define EMBER_BACKENDS_CUDA_DEVICEABI_H

#ifndef EMBER_HOST_EMULATION
#include <cstdint>

namespace ember {
namespace cuda {

/// Threads per block of a tiled kernel: its parallel loop runs over
/// tiles x kTileThreads so one block owns one tile at a time.
constexpr int64_t kTileThreads = 256;
/// Result rows and columns per tile, and the reduction chunk (the
/// prelude's EMBER_TM, EMBER_TN, EMBER_TK).
constexpr int64_t kTileM = 64, kTileN = 64, kTileK = 16;

} // namespace cuda
} // namespace ember
#endif

// The functions. Pointers are element pointers into the planned regions;
// long long are sizes, strides, flags and enum values (act:
// FusedActivation, epi: LibOps.h EMBER_EPI_*); idx, last, is the element
// (or tile lane) of the parallel loop the call runs in.
extern "C" {
/// One output element of a grouped, strided, dilated, padded NCHW
/// convolution with the fused epilogue act(conv + bias + residual).
void ember_conv2d_f32(float *y, const float *x, const float *w,
                      const float *bias, const float *res, long long hasRes,
                      long long C, long long H, long long W, long long M,
                      long long KH, long long KW, long long OH, long long OW,
                      long long sh, long long sw, long long pt, long long pl,
                      long long dh, long long dw, long long group,
                      long long act, float alpha, float beta, long long idx);
/// One element of D[b] = A[b] * B[b] with the epilogue epi.
void ember_gemm_f32(float *d, const float *a, const float *b, const float *bias,
                    long long m, long long n, long long k, long long epi,
                    long long idx);
/// One lane of the tile idx / kTileThreads of D[b] = A[b] * B[b] with any
/// operand strides (a batch stride of 0 broadcasts).
void ember_gemm_tile_f32(float *d, const float *a, const float *b,
                         const float *bias, long long m, long long n,
                         long long k, long long sab, long long sam,
                         long long sak, long long sbb, long long sbk,
                         long long sbn, long long epi, long long tf32,
                         long long idx);
/// One lane of the tile idx / kTileThreads of a convolution as an
/// implicit GEMM per group.
void ember_conv_tile_f32(float *y, const float *x, const float *w,
                         const float *bias, const float *res, long long hasRes,
                         long long N, long long C, long long H, long long W,
                         long long M, long long KH, long long KW, long long OH,
                         long long OW, long long sh, long long sw, long long pt,
                         long long pl, long long dh, long long dw,
                         long long group, long long act, float alpha,
                         float beta, long long tf32, long long idx);
}

#ifdef EMBER_HOST_EMULATION
/// Placed after a generated source: each name must denote one function.
/// A prelude definition whose parameters differ from its declaration above
/// is a second overload, and taking the address of the name then fails.
#define EMBER_EMU_CHECK_DEVICE_ABI                                             \
  static_assert(sizeof(&ember_conv2d_f32) && sizeof(&ember_gemm_f32) &&        \
                    sizeof(&ember_gemm_tile_f32) &&                            \
                    sizeof(&ember_conv_tile_f32),                              \
                "the prelude's functions match DeviceABI.h");
#endif

#endif // EMBER_BACKENDS_CUDA_DEVICEABI_H
