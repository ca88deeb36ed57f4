//===- IntProductOps.cpp - IntMatMul, IntConv, Quantize, Dequantize -------===//
//
// The integer products on every backend against sums computed here in
// int64, bit for bit. Operands sit near the top of their 8-bit range so
// the Int32 sums pass 2^24 (a float accumulator would lose low bits); the
// shapes cover padding, strides, dilations, groups, per-channel zero
// points and broadcast batch dims.
//
//===----------------------------------------------------------------------===//
#include "../ops/OpTestUtils.h"

#include <random>

using namespace ember;
using namespace ember::test;

namespace {

class IntProductTest : public OpTest {
protected:
  std::mt19937 gen{17};

  Placeholder *typed(llvm::StringRef name, ElemKind k,
                     llvm::ArrayRef<dim_t> dims) {
    return M.createPlaceholder(name, Type(k, dims), false);
  }
  /// Int8 or UInt8 values uniform in [lo, hi].
  Tensor random(ElemKind k, llvm::ArrayRef<dim_t> dims, int lo, int hi) {
    Tensor t(k, dims);
    std::uniform_int_distribution<int> dist(lo, hi);
    auto *p = reinterpret_cast<uint8_t *>(t.data());
    for (dim_t i = 0; i < t.size(); ++i)
      p[i] = uint8_t(dist(gen)); // two's complement for Int8
    return t;
  }
  /// An Int32 vector constant.
  Constant *zeros(llvm::StringRef name, std::vector<int32_t> v) {
    Tensor t(ElemKind::Int32, {dim_t(v.size())});
    std::copy(v.begin(), v.end(), t.getHandle<int32_t>().begin());
    return constant(name, std::move(t));
  }
};

/// Expects \p got (Int32) equal to \p want element for element.
void expectEqual(const Tensor &got, const std::vector<int64_t> &want) {
  ASSERT_EQ(got.getElemKind(), ElemKind::Int32);
  ASSERT_EQ(size_t(got.size()), want.size());
  size_t bad = 0;
  for (size_t i = 0; i < want.size(); ++i)
    if (int64_t(got.elementAsDouble(i)) != want[i] && bad++ < 5)
      ADD_FAILURE() << "element " << i << ": " << got.elementAsDouble(i)
                    << " want " << want[i];
  EXPECT_EQ(bad, 0u);
}

TEST_P(IntProductTest, ConvWithPaddingStridesDilationsAndGroups) {
  // 2 images, 64 channels in 2 groups, 3x3 taps dilated by 2, stride 2.
  const dim_t N = 2, C = 64, H = 9, W = 8, M = 6, G = 2, KH = 3, KW = 3;
  const int64_t s = 2, d = 2, pt = 2, pl = 1, pb = 1, pr = 2;
  auto *x = typed("x", ElemKind::UInt8, {N, C, H, W});
  auto *w = typed("w", ElemKind::Int8, {M, C / G, KH, KW});
  std::vector<int32_t> wz = {0, 1, -2, 3, -4, 5};
  NodeValue y =
      F->createIntConv("conv", x, w, zeros("xz", {2}), zeros("wz", wz), {s, s},
                       {pt, pl, pb, pr}, {d, d}, G);
  save(y);
  Tensor xt = random(ElemKind::UInt8, {N, C, H, W}, 240, 255);
  Tensor wt = random(ElemKind::Int8, {M, C / G, KH, KW}, 110, 127);
  auto yd = y.dims();
  std::vector<int64_t> want;
  for (dim_t n = 0; n < N; ++n)
    for (dim_t m = 0; m < M; ++m)
      for (dim_t oh = 0; oh < yd[2]; ++oh)
        for (dim_t ow = 0; ow < yd[3]; ++ow) {
          int64_t acc = 0;
          for (dim_t c = 0; c < C / G; ++c)
            for (dim_t kh = 0; kh < KH; ++kh)
              for (dim_t kw = 0; kw < KW; ++kw) {
                int64_t ih = int64_t(oh) * s + kh * d - pt;
                int64_t iw = int64_t(ow) * s + kw * d - pl;
                if (ih < 0 || ih >= int64_t(H) || iw < 0 || iw >= int64_t(W))
                  continue;
                dim_t ch = m / (M / G) * (C / G) + c;
                int64_t xv =
                    xt.elementAsDouble(((n * C + ch) * H + ih) * W + iw);
                int64_t wv =
                    wt.elementAsDouble(((m * (C / G) + c) * KH + kh) * KW + kw);
                acc += (xv - 2) * (wv - wz[m]);
              }
          want.push_back(acc);
        }
  auto out = run(tensors(std::move(xt), std::move(wt)));
  ASSERT_EQ(out.size(), 1u);
  expectEqual(out[0], want);
}

TEST_P(IntProductTest, ConvSumsPast2To24) {
  // K = 3*3*512 terms of about 250 * 125: sums near 1.4e8.
  const dim_t C = 512, H = 4, M = 3;
  auto *x = typed("x", ElemKind::UInt8, {1, C, H, H});
  auto *w = typed("w", ElemKind::Int8, {M, C, 3, 3});
  NodeValue y =
      F->createIntConv("conv", x, w, zeros("xz", {1}), zeros("wz", {0, -1, 1}),
                       {1, 1}, {1, 1, 1, 1}, {1, 1}, 1);
  save(y);
  Tensor xt = random(ElemKind::UInt8, {1, C, H, H}, 250, 255);
  Tensor wt = random(ElemKind::Int8, {M, C, 3, 3}, 120, 127);
  std::vector<int64_t> want;
  int32_t wz[3] = {0, -1, 1};
  for (dim_t m = 0; m < M; ++m)
    for (int64_t oh = 0; oh < int64_t(H); ++oh)
      for (int64_t ow = 0; ow < int64_t(H); ++ow) {
        int64_t acc = 0;
        for (dim_t c = 0; c < C; ++c)
          for (int64_t kh = 0; kh < 3; ++kh)
            for (int64_t kw = 0; kw < 3; ++kw) {
              int64_t ih = oh + kh - 1, iw = ow + kw - 1;
              if (ih < 0 || ih >= int64_t(H) || iw < 0 || iw >= int64_t(H))
                continue;
              acc += (int64_t(xt.elementAsDouble((c * H + ih) * H + iw)) - 1) *
                     (int64_t(
                          wt.elementAsDouble(((m * C + c) * 3 + kh) * 3 + kw)) -
                      wz[m]);
            }
        want.push_back(acc);
      }
  EXPECT_GT(*std::max_element(want.begin(), want.end()), int64_t(1) << 24);
  auto out = run(tensors(std::move(xt), std::move(wt)));
  ASSERT_EQ(out.size(), 1u);
  expectEqual(out[0], want);
}

TEST_P(IntProductTest, MatMulWithBroadcastBatchAndPerRowColumnZeros) {
  const dim_t B = 3, Mr = 4, K = 4608, N = 5;
  auto *a = typed("a", ElemKind::Int8, {B, Mr, K});
  auto *b = typed("b", ElemKind::UInt8, {1, K, N});
  std::vector<int32_t> za = {-128, 0, 1, -3}, zb = {0, 7, 255, 3, 1};
  NodeValue y =
      F->createIntMatMul("mm", a, b, zeros("za", za), zeros("zb", zb));
  save(y);
  Tensor at = random(ElemKind::Int8, {B, Mr, K}, 120, 127);
  Tensor bt = random(ElemKind::UInt8, {1, K, N}, 0, 255);
  std::vector<int64_t> want;
  for (dim_t bi = 0; bi < B; ++bi)
    for (dim_t i = 0; i < Mr; ++i)
      for (dim_t j = 0; j < N; ++j) {
        int64_t acc = 0;
        for (dim_t p = 0; p < K; ++p)
          acc += (int64_t(at.elementAsDouble((bi * Mr + i) * K + p)) - za[i]) *
                 (int64_t(bt.elementAsDouble(p * N + j)) - zb[j]);
        want.push_back(acc);
      }
  auto out = run(tensors(std::move(at), std::move(bt)));
  ASSERT_EQ(out.size(), 1u);
  expectEqual(out[0], want);
}

TEST_P(IntProductTest, QuantizeAndDequantizePerAxis) {
  // Halves round to even; values beyond the range saturate.
  auto *x = input("x", {2, 3});
  Tensor s(ElemKind::Float32, {3});
  float scales[3] = {0.5f, 1.f, 2.f};
  std::copy(scales, scales + 3, s.getHandle<float>().begin());
  NodeValue q = F->createQuantize("q", x, constant("s", s.clone()),
                                  zeros("z", {10, -3, 0}), 1, ElemKind::Int8);
  save(q);
  save(F->createDequantize("dq", q, constant("s2", std::move(s)),
                           zeros("z2", {10, -3, 0}), 1));
  auto out = run(
      tensors(makeTensor({2, 3}, {0.25f, 2.5f, 3.f, -100.f, 1000.f, -5.f})));
  ASSERT_EQ(out.size(), 2u);
  // 0.25/0.5 = 0.5 -> 0 (+10); 2.5 -> 2 (-3); 3/2 = 1.5 -> 2; -200 -> -190
  // saturates; 1000 saturates; -2.5 -> -2.
  double wantQ[6] = {10, -1, 2, -128, 127, -2};
  double wantD[6] = {0, 2, 4, -69, 130, -4};
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(out[0].elementAsDouble(i), wantQ[i]) << "q element " << i;
    EXPECT_EQ(out[1].elementAsDouble(i), wantD[i]) << "dq element " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, IntProductTest,
                         ::testing::ValuesIn(opTestBackends()));

} // namespace
