//===- TiledKernels.h - Shared-memory tiled GEMM and convolution -*- C++
//-*-===//
//
// The generated MatMul and convolution: each block of kTileThreads threads
// computes one kTileM x kTileN tile of the result, reading the reduction in
// chunks of kTileK through shared memory, each thread a 4 x 4 register
// block. Every thread of a block runs the same trip counts, so the barriers
// are reached by the whole block. The text compiles for the GPU with NVRTC
// and for the host under EMBER_HOST_EMULATION (tests/cuda/HostEmulation.h
// runs a block's threads as fibers that meet at each barrier).
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_BACKENDS_CUDA_TILEDKERNELS_H
#define EMBER_BACKENDS_CUDA_TILEDKERNELS_H

#include "DeviceABI.h"

#include <string>

namespace ember {
namespace cuda {

/// The tiled kernels' text (after the prelude, which defines ember_act).
inline const char *cudaTiledKernels() {
  return R"(
#ifndef EMBER_EMU_COOPERATIVE
#define EMBER_EMU_COOPERATIVE(sym)
#endif
#define EMBER_TM 64
#define EMBER_TN 64
#define EMBER_TK 16
// Thread (ty, tx) of the 16 x 16 block owns rows ty + 16 i and columns
// tx + 16 j of the tile: a warp reads 16 consecutive B columns and two A
// rows from shared memory (no bank conflicts) and stores whole rows. A's
// chunk is stored transposed, its rows padded so the transposing stores
// spread over the banks.
__device__ __forceinline__ void
ember_tile_fma(float (*as)[EMBER_TM + 4], float (*bs)[EMBER_TN], float acc[4][4],
               int ty, int tx) {
  for (int kk = 0; kk < EMBER_TK; ++kk) {
    float av[4], bv[4];
    for (int i = 0; i < 4; ++i)
      av[i] = as[kk][ty + 16 * i];
    for (int j = 0; j < 4; ++j)
      bv[j] = bs[kk][tx + 16 * j];
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 4; ++j)
        acc[i][j] += av[i] * bv[j];
  }
}

// TF32 tensor cores (-cuda-math=tf32): the 8 warps of a block split the
// 64 x 64 tile 2 x 4, each warp 32 x 16 as 2 x 2 products m16n8k8 per
// reduction step of 8 (mma.sync, sm_80+). Operands are rounded to TF32
// (10-bit mantissa, to nearest, ties away) as they leave shared memory;
// products accumulate in fp32. acc[i][j] holds, for the warp's m16 tile
// i / 2 and n8 tile j / 2, fragment register (i % 2) * 2 + j % 2.
__device__ __forceinline__ unsigned ember_tf32(float f) {
#ifdef EMBER_HOST_EMULATION
  return (ember_f2b(f) + 0x1000u) & 0xffffe000u;
#else
  unsigned u;
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(u) : "f"(f));
  return u;
#endif
}
__device__ __forceinline__ void ember_mma_tf32(float d[4], const unsigned a[4],
                                               const unsigned b[2]) {
#if defined(EMBER_HOST_EMULATION)
  ember_emu_mma_m16n8k8(d, a, b);
#elif __CUDA_ARCH__ >= 800
  asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
               "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]),
                 "r"(b[1]));
#else
  // Before sm_80: the same products from the warp's registers, lane by
  // lane, through shared memory would be needed; refuse at run time.
  __trap();
#endif
}
__device__ __forceinline__ void
ember_tile_mma(float (*as)[EMBER_TM + 4], float (*bs)[EMBER_TN],
               float acc[4][4], int lane) {
  int warp = lane / 32, g = lane % 32 / 4, t = lane % 4;
  int m0 = warp / 4 * 32, n0 = warp % 4 * 16;
  for (int ks = 0; ks < EMBER_TK; ks += 8) {
    unsigned a[2][4], b[2][2];
    for (int mt = 0; mt < 2; ++mt)
      for (int r = 0; r < 4; ++r)
        a[mt][r] = ember_tf32(as[ks + t + 4 * (r / 2)][m0 + mt * 16 + g +
                                                      8 * (r % 2)]);
    for (int nt = 0; nt < 2; ++nt)
      for (int r = 0; r < 2; ++r)
        b[nt][r] = ember_tf32(bs[ks + t + 4 * r][n0 + nt * 8 + g]);
    for (int mt = 0; mt < 2; ++mt)
      for (int nt = 0; nt < 2; ++nt) {
        float d[4] = {acc[mt * 2][nt * 2], acc[mt * 2][nt * 2 + 1],
                      acc[mt * 2 + 1][nt * 2], acc[mt * 2 + 1][nt * 2 + 1]};
        ember_mma_tf32(d, a[mt], b[nt]);
        acc[mt * 2][nt * 2] = d[0], acc[mt * 2][nt * 2 + 1] = d[1];
        acc[mt * 2 + 1][nt * 2] = d[2], acc[mt * 2 + 1][nt * 2 + 1] = d[3];
      }
  }
}
// The reduction of one chunk into acc, and where acc[i][j] lies in the
// tile, for either compute path.
__device__ __forceinline__ void ember_tile_step(long long tf32,
                                                float (*as)[EMBER_TM + 4],
                                                float (*bs)[EMBER_TN],
                                                float acc[4][4], int lane) {
  if (tf32)
    ember_tile_mma(as, bs, acc, lane);
  else
    ember_tile_fma(as, bs, acc, lane / 16, lane % 16);
}
__device__ __forceinline__ int ember_tile_row(long long tf32, int lane,
                                              int i) {
  return tf32 ? lane / 128 * 32 + i / 2 * 16 + lane % 32 / 4 + 8 * (i % 2)
              : lane / 16 + 16 * i;
}
__device__ __forceinline__ int ember_tile_col(long long tf32, int lane,
                                              int j) {
  return tf32 ? lane / 32 % 4 * 16 + j / 2 * 8 + 2 * (lane % 4) + j % 2
              : lane % 16 + 16 * j;
}

// One lane of the block computing tile idx / 256 of D[b] = A[b] * B[b]
// (m x k times k x n, any strides: a batch stride of 0 broadcasts, a
// transposed B is sbk = 1), plus bias[col] when epi > 0 and ReLU when
// epi == 2; on TF32 tensor cores when tf32 is set.
__device__ __forceinline__ void
ember_gemm_tile_f32(float *d, const float *a, const float *b,
                    const float *bias, long long m, long long n, long long k,
                    long long sab, long long sam, long long sak, long long sbb,
                    long long sbk, long long sbn, long long epi,
                    long long tf32, long long idx) {
  __shared__ float as[EMBER_TK][EMBER_TM + 4];
  __shared__ float bs[EMBER_TK][EMBER_TN];
  int lane = (int)(idx % 256);
  long long tile = idx / 256, tn = (n + EMBER_TN - 1) / EMBER_TN;
  long long tm = (m + EMBER_TM - 1) / EMBER_TM;
  long long bat = tile / (tm * tn), m0 = (tile / tn) % tm * EMBER_TM;
  long long n0 = tile % tn * EMBER_TN;
  const float *ab = a + bat * sab, *bb = b + bat * sbb;
  float acc[4][4] = {{0.f}};
  for (long long k0 = 0; k0 < k; k0 += EMBER_TK) {
    for (int j = 0; j < 4; ++j) {
      int am = lane / 16 + 16 * j, ak = lane % 16;
      int bk = lane / 64 + 4 * j, bn = lane % 64;
      long long r = m0 + am, ka = k0 + ak, kb = k0 + bk, c = n0 + bn;
      as[ak][am] = r < m && ka < k ? ab[r * sam + ka * sak] : 0.f;
      bs[bk][bn] = kb < k && c < n ? bb[kb * sbk + c * sbn] : 0.f;
    }
    __syncthreads();
    ember_tile_step(tf32, as, bs, acc, lane);
    __syncthreads();
  }
  for (int i = 0; i < 4; ++i) {
    long long r = m0 + ember_tile_row(tf32, lane, i);
    for (int j = 0; j < 4; ++j) {
      long long c = n0 + ember_tile_col(tf32, lane, j);
      if (r >= m || c >= n)
        continue;
      float v = acc[i][j] + (epi > 0 ? bias[c] : 0.f);
      d[(bat * m + r) * n + c] = epi == 2 && v < 0.f ? 0.f : v;
    }
  }
}

// One lane of the block computing tile idx / 256 of a grouped, strided,
// dilated, padded NCHW convolution as an implicit GEMM per group: output
// channels of the group x output pixels of every image, reduced over the
// group's input channels x taps, then act(conv + bias + residual); on
// TF32 tensor cores when tf32 is set.
__device__ __forceinline__ void
ember_conv_tile_f32(float *y, const float *x, const float *w,
                    const float *bias, const float *res, long long hasRes,
                    long long N, long long C, long long H, long long W,
                    long long M, long long KH, long long KW, long long OH,
                    long long OW, long long sh, long long sw, long long pt,
                    long long pl, long long dh, long long dw, long long group,
                    long long act, float alpha, float beta, long long tf32,
                    long long idx) {
  __shared__ float as[EMBER_TK][EMBER_TM + 4];
  __shared__ float bs[EMBER_TK][EMBER_TN];
  int lane = (int)(idx % 256);
  long long mg = M / group, cg = C / group, taps = KH * KW, red = cg * taps;
  long long pix = N * OH * OW, tile = idx / 256;
  long long tp = (pix + EMBER_TN - 1) / EMBER_TN;
  long long tm = (mg + EMBER_TM - 1) / EMBER_TM;
  long long g = tile / (tm * tp), m0 = (tile / tp) % tm * EMBER_TM;
  long long p0 = tile % tp * EMBER_TN;
  // This lane loads the patch column of one output pixel in every chunk.
  long long p = p0 + lane % 64, img = p / (OH * OW);
  long long ih0 = (p / OW) % OH * sh - pt, iw0 = p % OW * sw - pl;
  const float *xg = x + (img * C + g * cg) * H * W;
  const float *wg = w + g * mg * red;
  float acc[4][4] = {{0.f}};
  for (long long k0 = 0; k0 < red; k0 += EMBER_TK) {
    for (int j = 0; j < 4; ++j) {
      int am = lane / 16 + 16 * j, ak = lane % 16, bk = lane / 64 + 4 * j;
      long long r = m0 + am, ka = k0 + ak, kb = k0 + bk;
      as[ak][am] = r < mg && ka < red ? wg[r * red + ka] : 0.f;
      float v = 0.f;
      if (kb < red && p < pix) {
        long long c = kb / taps, t = kb % taps;
        long long ih = ih0 + t / KW * dh, iw = iw0 + t % KW * dw;
        if (ih >= 0 && ih < H && iw >= 0 && iw < W)
          v = xg[(c * H + ih) * W + iw];
      }
      bs[bk][lane % 64] = v;
    }
    __syncthreads();
    ember_tile_step(tf32, as, bs, acc, lane);
    __syncthreads();
  }
  for (int i = 0; i < 4; ++i) {
    long long oc = m0 + ember_tile_row(tf32, lane, i);
    for (int j = 0; j < 4; ++j) {
      long long q = p0 + ember_tile_col(tf32, lane, j);
      if (oc >= mg || q >= pix)
        continue;
      long long o = ((q / (OH * OW) * M + g * mg + oc) * OH * OW) +
                    q % (OH * OW);
      float v = acc[i][j] + bias[g * mg + oc] + (hasRes ? res[o] : 0.f);
      y[o] = ember_act(act, v, alpha, beta);
    }
  }
}
)";
}

/// True if \p callee is one of the tiled kernels above: its kernel needs
/// kTileThreads threads per block, shared memory and barriers.
inline bool isTiledCall(const std::string &callee) {
  return callee == "ember_gemm_tile_f32" || callee == "ember_conv_tile_f32";
}

} // namespace cuda
} // namespace ember

#endif
