//===- MatMulBF16.cpp - The reference BFloat16 MatMul ---------------------===//
//
// C = A * B for BFloat16 A and B, Float32 C. Every product of two BFloat16
// values is exact in Float32 (8 + 8 significand bits fit in 24), so the
// only roundings are those of the Float32 sums, taken in increasing k as in
// the Float32 MatMul: C[i][j] = (((0 + a0 b0) + a1 b1) + ...). Any other
// summation order (the CPU's vdpbf16ps pairs, its K blocks) differs from
// this one by at most 2 * gamma(K) * sum_k |a_k b_k|, gamma(K) = K u / (1 -
// K u) with u = 2^-24 (each order is within gamma(K) of the exact sum).
//
//===----------------------------------------------------------------------===//
#include "Kernels.h"

#include "ember/Base/ElemAccess.h"

#include <cstring>

using namespace ember;
using namespace ember::interp;

/// The Float32 value of BFloat16 bits \p h (exact: the upper half of a
/// Float32).
static float widen(uint16_t h) {
  uint32_t bits = uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

void interp::matMulBF16(const MatMulInst &I, const ExecContext &ctx) {
  matMulLoop<uint16_t>(I, ctx, widen);
}

std::vector<float> interp::widenBF16(const uint16_t *h, dim_t n) {
  std::vector<float> r(n);
  for (dim_t i = 0; i < n; ++i)
    r[i] = widen(h[i]);
  return r;
}

std::vector<float> interp::roundToBF16(const float *x, dim_t n) {
  std::vector<float> r(n);
  for (dim_t i = 0; i < n; ++i) {
    uint16_t h;
    storeElement(&h, ElemKind::BFloat16, 0, x[i]);
    r[i] = widen(h);
  }
  return r;
}
