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

/// 16 floats; unaligned loads and stores go through memcpy. On targets with
/// narrower vectors LLVM splits it.
typedef float v16 __attribute__((vector_size(64)));

EMBER_HELPER v16 loadV(const float *p) {
  v16 v;
  __builtin_memcpy(&v, p, sizeof v);
  return v;
}

#include "ConvGemm.inc"
#include "MatMul.inc"

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
