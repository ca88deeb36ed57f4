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
  TypeRef ta = I.getLHS()->getType(), tb = I.getRHS()->getType();
  TypeRef tc = I.getDest()->getType();
  unsigned r = ta->rank();
  dim_t m = ta->dims()[r - 2], k = ta->dims()[r - 1], n = tc->dims()[r - 1];
  dim_t batch = m * n != 0 ? tc->size() / (m * n) : 0;
  // B[p][j] of a plain RHS is at p * n + j, of a transposed one at j * k + p.
  dim_t pStride = I.getTransB() ? 1 : n, jStride = I.getTransB() ? k : 1;
  auto outBatch = tc->dims().drop_back(2);
  const uint16_t *a = ctx.ptr<uint16_t>(I.getLHS());
  const uint16_t *b = ctx.ptr<uint16_t>(I.getRHS());
  float *c = ctx.ptr<float>(I.getDest());
  for (dim_t bi = 0; bi < batch; ++bi) {
    const uint16_t *A =
        a + batchOffset(bi, outBatch, ta->dims().drop_back(2), m * k);
    const uint16_t *B =
        b + batchOffset(bi, outBatch, tb->dims().drop_back(2), k * n);
    float *C = c + bi * m * n;
    for (dim_t i = 0; i < m; ++i) {
      for (dim_t j = 0; j < n; ++j)
        C[i * n + j] = 0.f;
      for (dim_t p = 0; p < k; ++p) {
        float av = widen(A[i * k + p]);
        for (dim_t j = 0; j < n; ++j)
          C[i * n + j] += av * widen(B[p * pStride + j * jStride]);
      }
    }
  }
}
