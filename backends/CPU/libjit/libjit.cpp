//===- libjit.cpp - CPU library kernels, compiled to bitcode --------------===//
//
// Compiled at build time by clang-19 to LLVM bitcode (one file per target),
// embedded in the compiler and linked into every network's module. The
// kernels are always inlined, so each call site is specialized for its
// constant shapes and then vectorized for the target by the O3 pipeline.
// No libc beyond libm is used: bundles stay dependency-free.
//
//===----------------------------------------------------------------------===//
#include <stdint.h>

#define EMBER_KERNEL extern "C" __attribute__((always_inline, used))
#define EMBER_HELPER static __attribute__((always_inline)) inline

namespace {
/// Mirrors ember::FusedActivation (include/ember/Graph/OpInfo.h).
enum Act : int64_t { None, Relu, Clip, Sigmoid, HardSwish, LeakyRelu };
} // namespace

EMBER_HELPER float activate(int64_t act, float x, float alpha, float beta) {
  switch (act) {
  case Relu:
    return x > 0.f ? x : 0.f;
  case Clip:
    return x < alpha ? alpha : (x > beta ? beta : x);
  case Sigmoid:
    return 1.f / (1.f + __builtin_expf(-x));
  case HardSwish: {
    float t = x * alpha + beta;
    t = t < 0.f ? 0.f : (t > 1.f ? 1.f : t);
    return x * t;
  }
  case LeakyRelu:
    return x >= 0.f ? x : alpha * x;
  default:
    return x;
  }
}

EMBER_HELPER int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
EMBER_HELPER int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

/// Rows [rowBegin, rowEnd) of C[m x n] = A[m x k] * B[k x n], row-major.
/// Four rows and 64 columns are accumulated at a time.
EMBER_KERNEL void ember_matmul_f32(float *c, const float *a, const float *b,
                                   int64_t m, int64_t n, int64_t k,
                                   int64_t rowBegin, int64_t rowEnd) {
  constexpr int64_t RB = 4, CB = 64;
  for (int64_t i0 = rowBegin; i0 < rowEnd; i0 += RB) {
    int64_t rows = min64(RB, rowEnd - i0);
    for (int64_t j0 = 0; j0 < n; j0 += CB) {
      int64_t cols = min64(CB, n - j0);
      float acc[RB][CB];
      for (int64_t r = 0; r < RB; ++r)
        for (int64_t j = 0; j < CB; ++j)
          acc[r][j] = 0.f;
      if (rows == RB && cols == CB) {
        for (int64_t p = 0; p < k; ++p) {
          const float *brow = b + p * n + j0;
          for (int64_t r = 0; r < RB; ++r) {
            float av = a[(i0 + r) * k + p];
            for (int64_t j = 0; j < CB; ++j)
              acc[r][j] += av * brow[j];
          }
        }
      } else {
        for (int64_t p = 0; p < k; ++p) {
          const float *brow = b + p * n + j0;
          for (int64_t r = 0; r < rows; ++r) {
            float av = a[(i0 + r) * k + p];
            for (int64_t j = 0; j < cols; ++j)
              acc[r][j] += av * brow[j];
          }
        }
      }
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t j = 0; j < cols; ++j)
          c[(i0 + r) * n + j0 + j] = acc[r][j];
    }
  }
}

/// 16 floats; unaligned loads and stores go through memcpy. On targets with
/// narrower vectors LLVM splits it.
typedef float v16 __attribute__((vector_size(64)));

EMBER_HELPER v16 loadV(const float *p) {
  v16 v;
  __builtin_memcpy(&v, p, sizeof v);
  return v;
}

/// acc[r][v] = sum_k w[k * ldw + r] * p[k * ldp + 16 v ...]: R rows of
/// packed weights times 16 V columns of the patch matrix, in registers.
template <int R, int V>
EMBER_HELPER void microTile(const float *w, int64_t ldw, const float *p,
                            int64_t ldp, int64_t K, v16 (&acc)[R][V]) {
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < V; ++v)
      acc[r][v] = v16{};
  for (int64_t k = 0; k < K; ++k) {
    v16 b[V];
    for (int v = 0; v < V; ++v)
      b[v] = loadV(p + k * ldp + 16 * v);
    for (int r = 0; r < R; ++r) {
      float wv = w[k * ldw + r];
      for (int v = 0; v < V; ++v)
        acc[r][v] += wv * b[v];
    }
  }
}

/// Writes rows [0, rows) and columns [0, cols) of a tile with the epilogue
/// y = act(acc + bias + residual).
template <int R, int V>
EMBER_HELPER void storeTile(v16 (&acc)[R][V], int64_t rows, int64_t cols,
                            float *y, int64_t ldy, const float *bias,
                            const float *res, int64_t act, float alpha,
                            float beta) {
  for (int64_t r = 0; r < rows; ++r) {
    float t[16 * V];
    __builtin_memcpy(t, acc[r], sizeof t);
    if (cols == 16 * V) {
      for (int j = 0; j < 16 * V; ++j) {
        float v = t[j] + bias[r];
        if (res)
          v += res[r * ldy + j];
        y[r * ldy + j] = activate(act, v, alpha, beta);
      }
      continue;
    }
    for (int64_t j = 0; j < cols; ++j) {
      float v = t[j] + bias[r];
      if (res)
        v += res[r * ldy + j];
      y[r * ldy + j] = activate(act, v, alpha, beta);
    }
  }
}

/// Tiles [t0, t1) of 32 output pixels of one block of output channels of a
/// convolution, as a GEMM: y[m][n] = act(sum_k w[k][m] * p[k][n] + bias[m]
/// + res[m][n]) for m < rows, n < N. \p w is the block's packed filter
/// [K][MB] (zero-padded to MB channels); \p p is the group's patch matrix
/// in panels of 32 columns, [N / 32][K][32], so each tile streams one
/// contiguous panel; y, bias and res point at the block's first channel.
EMBER_KERNEL void ember_conv_gemm_f32(float *y, const float *w, const float *p,
                                      const float *bias, const float *res,
                                      int64_t K, int64_t N, int64_t MB,
                                      int64_t rows, int64_t act, float alpha,
                                      float beta, int64_t t0, int64_t t1) {
  for (int64_t t = t0; t < t1; ++t) {
    const float *panel = p + t * K * 32;
    int64_t n = t * 32, cols = min64(32, N - n);
    const float *r0 = res ? res + n : res;
    if (MB == 8) {
      v16 acc[8][2];
      microTile<8, 2>(w, 8, panel, 32, K, acc);
      storeTile<8, 2>(acc, rows, cols, y + n, N, bias, r0, act, alpha, beta);
      continue;
    }
    for (int64_t r = 0; r < rows; ++r) {
      v16 acc[1][2];
      microTile<1, 2>(w + r, MB, panel, 32, K, acc);
      storeTile<1, 2>(acc, 1, cols, y + r * N + n, N, bias + r,
                      res ? r0 + r * N : res, act, alpha, beta);
    }
  }
}

/// Writes the KH * KW patch rows of one input channel into a group's patch
/// panels ([N/32][K][32], see ember_conv_gemm_f32): row row0 + kh * KW + kw,
/// column oh * OW + ow holds x[ih][iw] (0 in padding), columns past N are
/// zeroed. \p x points at the channel's plane.
EMBER_KERNEL void ember_im2col_f32(float *panels, const float *x, int64_t row0,
                                   int64_t K, int64_t H, int64_t W, int64_t KH,
                                   int64_t KW, int64_t OH, int64_t OW,
                                   int64_t sh, int64_t sw, int64_t pt,
                                   int64_t pl, int64_t dh, int64_t dw,
                                   int64_t numPanels) {
  int64_t panelStride = K * 32;
  for (int64_t kh = 0; kh < KH; ++kh)
    for (int64_t kw = 0; kw < KW; ++kw) {
      float *panel = panels + (row0 + kh * KW + kw) * 32;
      int64_t lane = 0;
      int64_t off = kw * dw - pl;
      // Valid ow: 0 <= ow * sw + off < W.
      int64_t lo = off >= 0 ? 0 : min64(OW, (-off + sw - 1) / sw);
      int64_t hi = W - off <= 0 ? 0 : min64(OW, (W - off + sw - 1) / sw);
      if (hi < lo)
        hi = lo;
      for (int64_t oh = 0; oh < OH; ++oh) {
        int64_t ih = oh * sh - pt + kh * dh;
        bool rowOk = ih >= 0 && ih < H;
        const float *xrow = x + (rowOk ? ih : 0) * W + off;
        for (int64_t ow = 0; ow < OW;) {
          // Copy the run that stays in this panel.
          int64_t run = min64(32 - lane, OW - ow);
          for (int64_t j = 0; j < run; ++j) {
            int64_t o = ow + j;
            panel[lane + j] = rowOk && o >= lo && o < hi ? xrow[o * sw] : 0.f;
          }
          ow += run;
          lane += run;
          if (lane == 32) {
            lane = 0;
            panel += panelStride;
          }
        }
      }
      for (int64_t n = OH * OW; n < numPanels * 32; ++n) {
        panel[lane] = 0.f;
        if (++lane == 32) {
          lane = 0;
          panel += panelStride;
        }
      }
    }
}

/// One channel of a depthwise convolution (group == C == M), direct: each
/// output row accumulates, per filter tap, a contiguous (or strided) run of
/// an input row, so the inner loop vectorizes along the row. \p x, \p y,
/// \p res point at the channel's planes, \p w at its KH x KW taps.
EMBER_KERNEL void ember_dwconv_f32(float *y, const float *x, const float *w,
                                   const float *bias, const float *res,
                                   int64_t H, int64_t W, int64_t KH, int64_t KW,
                                   int64_t OH, int64_t OW, int64_t sh,
                                   int64_t sw, int64_t pt, int64_t pl,
                                   int64_t dh, int64_t dw, int64_t act,
                                   float alpha, float beta) {
  constexpr int64_t TW = 256;
  float b = bias[0];
  for (int64_t oh = 0; oh < OH; ++oh)
    for (int64_t ow0 = 0; ow0 < OW; ow0 += TW) {
      int64_t tw = min64(TW, OW - ow0);
      float acc[TW];
      for (int64_t j = 0; j < tw; ++j)
        acc[j] = b;
      for (int64_t kh = 0; kh < KH; ++kh) {
        int64_t ih = oh * sh - pt + kh * dh;
        if (ih < 0 || ih >= H)
          continue;
        const float *xrow = x + ih * W;
        for (int64_t kw = 0; kw < KW; ++kw) {
          float wv = w[kh * KW + kw];
          int64_t off = kw * dw - pl + ow0 * sw;
          // Valid j: 0 <= j * sw + off < W.
          int64_t lo = off >= 0 ? 0 : (-off + sw - 1) / sw;
          int64_t hi = W - off <= 0 ? 0 : min64(tw, (W - off + sw - 1) / sw);
          for (int64_t j = lo; j < hi; ++j)
            acc[j] += wv * xrow[j * sw + off];
        }
      }
      float *yrow = y + oh * OW + ow0;
      const float *rrow = res ? res + oh * OW + ow0 : res;
      for (int64_t j = 0; j < tw; ++j) {
        float v = acc[j];
        if (rrow)
          v += rrow[j];
        yrow[j] = activate(act, v, alpha, beta);
      }
    }
}
