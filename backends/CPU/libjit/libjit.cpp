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
enum Act : int64_t { None, Relu, Clip, Sigmoid, HardSwish, LeakyRelu, SiLU };
} // namespace

/// exp(x) as plain arithmetic that the loop vectorizer handles (expf has no
/// vector form here), the same expansion as FastMath.cpp's emitFastExp:
/// Cody-Waite reduction, a degree-6 polynomial, the exponent from bits.
/// Within 2 ulp of expf for results >= 2^-126; x < -87.3 gives 0,
/// x > 88.72 +inf, NaN stays NaN.
EMBER_HELPER float fastExp(float x) {
  constexpr float kLo = -87.3f, kHi = 88.72f;
  float xc = x < kLo ? kLo : (x > kHi ? kHi : x);
  xc = x != x ? 0.f : xc;
  float n = __builtin_rintf(xc * 1.44269504088896341f);
  float r = __builtin_fmaf(n, -0.693359375f, xc);
  r = __builtin_fmaf(n, 2.12194440e-4f, r);
  float p = 1.9875691500e-4f;
  p = __builtin_fmaf(p, r, 1.3981999507e-3f);
  p = __builtin_fmaf(p, r, 8.3334519073e-3f);
  p = __builtin_fmaf(p, r, 4.1665795894e-2f);
  p = __builtin_fmaf(p, r, 1.6666665459e-1f);
  p = __builtin_fmaf(p, r, 5.0000001201e-1f);
  float y = __builtin_fmaf(p * r, r, r + 1.f);
  // y * 2^(n-1) * 2, so that n = 128 does not overflow the exponent.
  int32_t bits = (int32_t(n) + 126) << 23;
  float scale;
  __builtin_memcpy(&scale, &bits, sizeof scale);
  float res = y * scale * 2.f;
  res = x < kLo ? 0.f : res;
  res = x > kHi ? __builtin_inff() : res;
  return x != x ? x : res;
}

EMBER_HELPER float activate(int64_t act, float x, float alpha, float beta) {
  switch (act) {
  case Relu:
    return x > 0.f ? x : 0.f;
  case Clip:
    return x < alpha ? alpha : (x > beta ? beta : x);
  case Sigmoid:
    return 1.f / (1.f + fastExp(-x));
  case HardSwish: {
    float t = x * alpha + beta;
    t = t < 0.f ? 0.f : (t > 1.f ? 1.f : t);
    return x * t;
  }
  case LeakyRelu:
    return x >= 0.f ? x : alpha * x;
  case SiLU:
    return x / (1.f + fastExp(-x));
  default:
    return x;
  }
}

/// fastExp() on a whole vector, the same operations lane by lane (so the
/// same results): the loop vectorizer does not vectorize a lane loop of
/// fastExp over a register-resident tile.
template <class VT> EMBER_HELPER VT fastExpV(VT x) {
  typedef int32_t VI __attribute__((vector_size(sizeof(VT))));
  constexpr float kLo = -87.3f, kHi = 88.72f;
  VT xc = x < kLo ? kLo : (x > kHi ? kHi : x);
  xc = x != x ? 0.f : xc;
  VT n = __builtin_elementwise_roundeven(xc * 1.44269504088896341f);
  VT r = __builtin_elementwise_fma(n, VT{} - 0.693359375f, xc);
  r = __builtin_elementwise_fma(n, VT{} + 2.12194440e-4f, r);
  VT p = VT{} + 1.9875691500e-4f;
  p = __builtin_elementwise_fma(p, r, VT{} + 1.3981999507e-3f);
  p = __builtin_elementwise_fma(p, r, VT{} + 8.3334519073e-3f);
  p = __builtin_elementwise_fma(p, r, VT{} + 4.1665795894e-2f);
  p = __builtin_elementwise_fma(p, r, VT{} + 1.6666665459e-1f);
  p = __builtin_elementwise_fma(p, r, VT{} + 5.0000001201e-1f);
  VT y = __builtin_elementwise_fma(p * r, r, r + 1.f);
  VI bits = (__builtin_convertvector(n, VI) + 126) << 23;
  VT scale;
  __builtin_memcpy(&scale, &bits, sizeof scale);
  VT res = y * scale * 2.f;
  res = x < kLo ? 0.f : res;
  res = x > kHi ? __builtin_inff() : res;
  return x != x ? x : res;
}

/// activate() on a whole vector: the piecewise-linear kinds as vector
/// selects (the same comparisons, so NaN behaves as in activate()), the
/// exponential ones lane by lane (the loop vectorizer turns that into vector
/// code).
template <class VT>
EMBER_HELPER VT activateV(int64_t act, VT x, float alpha, float beta) {
  switch (act) {
  case None:
    return x;
  case Relu:
    return x > 0.f ? x : 0.f;
  case Clip:
    return x < alpha ? alpha : (x > beta ? beta : x);
  case LeakyRelu:
    return x >= 0.f ? x : alpha * x;
  case HardSwish: {
    VT t = x * alpha + beta;
    t = t < 0.f ? 0.f : (t > 1.f ? 1.f : t);
    return x * t;
  }
  case Sigmoid:
    return 1.f / (1.f + fastExpV(-x));
  case SiLU:
    return x / (1.f + fastExpV(-x));
  default: {
    constexpr int L = sizeof(VT) / sizeof(float);
    float t[L];
    __builtin_memcpy(t, &x, sizeof t);
    for (int j = 0; j < L; ++j)
      t[j] = activate(act, t[j], alpha, beta);
    __builtin_memcpy(&x, t, sizeof t);
    return x;
  }
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
#include "ConvGemmCV.inc"
#include "Depthwise.inc"
#include "MatMul.inc"
#include "Winograd.inc"
