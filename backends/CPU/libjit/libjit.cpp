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

#include "LibjitABI.h"

using namespace ember::libjit;

#define EMBER_KERNEL extern "C" __attribute__((always_inline, used))
#define EMBER_HELPER static __attribute__((always_inline)) inline

namespace {
/// ember::FusedActivation's codes, from the one list of them.
enum Act : int64_t {
#define EMBER_FUSED_ACT(Name, Code) Name = Code,
#include "../../../include/ember/Graph/FusedActivations.def"
};
} // namespace

/// The bits of \p n (an integral float, or a vector of them) as int32.
EMBER_HELPER int32_t toInt32(float n) { return int32_t(n); }
template <class VT> EMBER_HELPER auto toInt32(VT n) {
  typedef int32_t VI __attribute__((vector_size(sizeof(VT))));
  return __builtin_convertvector(n, VI);
}

/// exp(\p xc) for xc in [-87.3, 88.3] (no checks): the expansion of
/// FastMath.cpp's emitFastExp (Cody-Waite reduction, a degree-6
/// polynomial, the exponent from bits), within 2 ulp of expf.
template <class T> EMBER_HELPER T expInRange(T xc) {
  T n = __builtin_elementwise_roundeven(xc * 1.44269504088896341f);
  T r = __builtin_elementwise_fma(n, T{} - 0.693359375f, xc);
  r = __builtin_elementwise_fma(n, T{} + 2.12194440e-4f, r);
  T p = T{} + 1.9875691500e-4f;
  p = __builtin_elementwise_fma(p, r, T{} + 1.3981999507e-3f);
  p = __builtin_elementwise_fma(p, r, T{} + 8.3334519073e-3f);
  p = __builtin_elementwise_fma(p, r, T{} + 4.1665795894e-2f);
  p = __builtin_elementwise_fma(p, r, T{} + 1.6666665459e-1f);
  p = __builtin_elementwise_fma(p, r, T{} + 5.0000001201e-1f);
  T y = __builtin_elementwise_fma(p * r, r, r + 1.f);
  // n is in [-126, 127]: 2^n is a normal float.
  auto bits = (toInt32(n) + 127) << 23;
  T scale;
  __builtin_memcpy(&scale, &bits, sizeof scale);
  return y * scale;
}

/// exp(x) as plain arithmetic for the logistic activations, for a float or
/// a whole vector of them, by expInRange. x is clamped to [-87.3, 88.3] first
/// instead of checked after (NaN passes the clamp and stays NaN): 1 / (1 +
/// e) and x / (1 + e) then differ from their limits by less than 1e-37.
/// Checks after the polynomial would add compares and selects on the
/// result, a large share of a fused SiLU's few instructions
/// (docs/PerformanceHistory.md#fused-activations).
template <class T> EMBER_HELPER T expLogistic(T x) {
  constexpr float kLo = -87.3f, kHi = 88.3f;
  T xc = x < kLo ? kLo : x;
  xc = xc > kHi ? kHi : xc;
  return expInRange(xc);
}

/// Phi(x) = erfc(-x / sqrt 2) / 2 for a float or a whole vector of them,
/// by FastMath.cpp's emitFastNormCdf (the same polynomial, so a fused GELU
/// epilogue and the elementwise Gelu kernel agree): the tail Phi(-|x|) =
/// exp(R(|x|)) with |x| clamped at 5.5, Phi = tail below 0, 1 - tail
/// above, and 0 below -5.5 (so x Phi(x) is NaN at -inf, as 0.5 x (1 +
/// erf(x / sqrt 2)) is). A NaN x gives some Phi in [0, 1]: x Phi(x) is NaN.
template <class T> EMBER_HELPER T normCdf(T x) {
  constexpr float kMax = 5.5f;
  T a = __builtin_elementwise_abs(x);
  a = a < kMax ? a : kMax;
  constexpr float kR[] = {2.676986150618177e-05f,   -0.0001265323517145589f,
                          -0.00010110949369845912f, 0.004904343280941248f,
                          -0.03639371320605278f,    -0.3182965815067291f,
                          -0.7978857159614563f,     -0.6931471824645996f};
  T r = T{} - 1.9214380699850153e-06f;
  for (float c : kR)
    r = __builtin_elementwise_fma(r, a, T{} + c);
  T h = expInRange(r);
  T p = x < 0.f ? h : 1.f - h;
  return x < -kMax ? T{} : p;
}

/// The fused activation \p act of a float or of a whole vector of them
/// (the piecewise-linear kinds as selects with the same comparisons either
/// way, so NaN behaves the same; Sigmoid and SiLU through expLogistic).
template <class T>
EMBER_HELPER T activateT(int64_t act, T x, float alpha, float beta) {
  switch (act) {
  case Relu:
    return x > 0.f ? x : 0.f;
  case Clip:
    return x < alpha ? alpha : (x > beta ? beta : x);
  case Sigmoid:
    return 1.f / (1.f + expLogistic(-x));
  case HardSwish: {
    T t = x * alpha + beta;
    t = t < 0.f ? 0.f : (t > 1.f ? 1.f : t);
    return x * t;
  }
  case LeakyRelu:
    return x >= 0.f ? x : alpha * x;
  case SiLU:
    return x / (1.f + expLogistic(-x));
  case Gelu:
    return x * normCdf(x);
  case GeluTanh: {
    // x / 2 * (1 + tanh(u)) is x * sigmoid(2u).
    T u = x * (1.5957691216057308f + 0.07135481627159864f * x * x);
    return x / (1.f + expLogistic(-u));
  }
  default:
    return x;
  }
}

EMBER_HELPER float activate(int64_t act, float x, float alpha, float beta) {
  return activateT(act, x, alpha, beta);
}

/// activate() on a whole vector (the conv epilogues' accumulators).
template <class VT>
EMBER_HELPER VT activateV(int64_t act, VT x, float alpha, float beta) {
  return activateT(act, x, alpha, beta);
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

/// r[i][j] becomes r[j][i] (16 x 16 floats in registers): two rounds of
/// unpacks within 128-bit lanes, then two rounds of 128-bit lane shuffles.
EMBER_HELPER void transpose16(v16 (&r)[16]) {
  v16 t[16], u[16];
  for (int i = 0; i < 16; i += 2) {
    t[i] = __builtin_shufflevector(r[i], r[i + 1], 0, 16, 1, 17, 4, 20, 5, 21,
                                   8, 24, 9, 25, 12, 28, 13, 29);
    t[i + 1] = __builtin_shufflevector(r[i], r[i + 1], 2, 18, 3, 19, 6, 22, 7,
                                       23, 10, 26, 11, 27, 14, 30, 15, 31);
  }
  for (int i = 0; i < 16; i += 4)
    for (int h = 0; h < 2; ++h) {
      u[i + 2 * h] =
          __builtin_shufflevector(t[i + h], t[i + h + 2], 0, 1, 16, 17, 4, 5,
                                  20, 21, 8, 9, 24, 25, 12, 13, 28, 29);
      u[i + 2 * h + 1] =
          __builtin_shufflevector(t[i + h], t[i + h + 2], 2, 3, 18, 19, 6, 7,
                                  22, 23, 10, 11, 26, 27, 14, 15, 30, 31);
    }
  // Lane l of u[4i + q] now holds column 4l + q of rows 4i .. 4i + 3.
  for (int q = 0; q < 4; ++q) {
    v16 p = __builtin_shufflevector(u[q], u[4 + q], 0, 1, 2, 3, 8, 9, 10, 11,
                                    16, 17, 18, 19, 24, 25, 26, 27);
    v16 s = __builtin_shufflevector(u[q], u[4 + q], 4, 5, 6, 7, 12, 13, 14, 15,
                                    20, 21, 22, 23, 28, 29, 30, 31);
    v16 a = __builtin_shufflevector(u[8 + q], u[12 + q], 0, 1, 2, 3, 8, 9, 10,
                                    11, 16, 17, 18, 19, 24, 25, 26, 27);
    v16 b = __builtin_shufflevector(u[8 + q], u[12 + q], 4, 5, 6, 7, 12, 13, 14,
                                    15, 20, 21, 22, 23, 28, 29, 30, 31);
    r[q] = __builtin_shufflevector(p, a, 0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18,
                                   19, 24, 25, 26, 27);
    r[8 + q] = __builtin_shufflevector(p, a, 4, 5, 6, 7, 12, 13, 14, 15, 20, 21,
                                       22, 23, 28, 29, 30, 31);
    r[4 + q] = __builtin_shufflevector(s, b, 0, 1, 2, 3, 8, 9, 10, 11, 16, 17,
                                       18, 19, 24, 25, 26, 27);
    r[12 + q] = __builtin_shufflevector(s, b, 4, 5, 6, 7, 12, 13, 14, 15, 20,
                                        21, 22, 23, 28, 29, 30, 31);
  }
}

// The kernel families in dependency order (each uses helpers of those
// before it), so not sorted.
// clang-format off
#include "AMX.inc"
#include "ConvGemm.inc"
#include "ConvGemmCV.inc"
#include "Depthwise.inc"
#include "ConvRows.inc"
#include "DepthwiseCV.inc"
#include "MatMul.inc"
#include "MatMulBF16.inc"
#include "MatMulAMX.inc"
#include "ConvBF16.inc"
#include "ConvBF16CV.inc"
#include "ConvBF16Direct.inc"
#include "ConvBF16DirectDot.inc"
#include "ConvBF16DirectCV.inc"
#include "MatMulInt8.inc"
#include "Im2colInt8.inc"
#include "Pool.inc"
#include "Reduce.inc"
#include "Resize.inc"
#include "Softmax.inc"
#include "TopK.inc"
#include "Attention.inc"
#include "Winograd.inc"

#include "DepthwiseInt8.inc"
#include "DepthwiseInt8Vnni.inc"
#include "Int8Elementwise.inc"
#include "MatMulInt8AMX.inc"
// clang-format on
