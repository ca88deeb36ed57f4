//===- TensorOps.cpp - Linear algebra, window and data-movement tests -----===//
#include "OpTestUtils.h"

#include <cmath>

using namespace ember;
using namespace ember::test;

namespace {
class TensorOpTest : public OpTest {};
} // namespace

TEST_P(TensorOpTest, BatchedMatMul) {
  auto *a = input("a", {2, 1, 2});
  auto *b = input("b", {2, 2, 2});
  save(F->createMatMul("mm", a, b, 0));
  auto out = run(tensors(makeTensor({2, 1, 2}, {1, 2, 3, 4}),
                         makeTensor({2, 2, 2}, {1, 0, 0, 1, 2, 1, 1, 2})));
  ASSERT_EQ(out.size(), 1u);
  expectNear(out[0], makeTensor({2, 1, 2}, {1, 2, 10, 11}), 0);
}

// Broadcast batch dims on both sides and a transposed B: read in place by
// the Interpreter and the CPU, made explicit for CUDA by the lowering rule.
TEST_P(TensorOpTest, BroadcastTransposedMatMul) {
  auto *a = input("a", {2, 1, 1, 2});
  auto *b = input("b", {1, 2, 3, 2}); // [.., n, k]
  save(F->createMatMul("mm", a, b, 1));
  auto out = run(
      tensors(makeTensor({2, 1, 1, 2}, {1, 2, 3, 4}),
              makeTensor({1, 2, 3, 2}, {1, 0, 0, 1, 1, 1, 2, 0, 0, 2, 1, -1})));
  ASSERT_EQ(out.size(), 1u);
  // y[i][j] = a[i] . b[j][n] for every a batch i and b batch j.
  expectNear(out[0],
             makeTensor({2, 2, 1, 3}, {1, 2, 3, 2, 4, -1, //
                                       3, 4, 7, 6, 8, -1}),
             0);
}

TEST_P(TensorOpTest, ConvWithPaddingStrideAndGroups) {
  auto *x = input("x", {1, 2, 3, 3});
  // Group 2: output channel 0 sees input channel 0, channel 1 sees 1.
  Tensor w = makeTensor({2, 1, 2, 2}, {1, 0, 0, 1, 1, 1, 1, 1});
  auto *wc = constant("w", std::move(w));
  auto *bc = constant("b", makeTensor({2}, {0.5f, -1}));
  save(F->createConv("conv", x, wc, bc, {}, {2, 2}, {1, 1, 0, 0}, {1, 1}, 2, 0,
                     0.f, 0.f));
  auto out = run(tensors(
      makeTensor({1, 2, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9,     // channel 0
                                1, 1, 1, 1, 1, 1, 1, 1, 1}))); // channel 1
  ASSERT_EQ(out.size(), 1u);
  // Pads top/left 1, stride 2: windows start at rows/cols -1 and 1.
  // ch0, diagonal filter: x[0][0], x[0][2], x[2][0], x[1][1]+x[2][2], +0.5.
  // ch1, ones filter on ones: in-bounds taps per window, -1.
  expectNear(out[0],
             makeTensor({1, 2, 2, 2}, {1.5f, 3.5f, 7.5f, 14.5f, 0, 1, 1, 3}),
             0);
}

TEST_P(TensorOpTest, DilatedConv) {
  auto *x = input("x", {1, 1, 3, 3});
  auto *wc = constant("w", makeTensor({1, 1, 2, 2}, {1, 1, 1, 1}));
  auto *bc = constant("b", makeTensor({1}, {0}));
  save(F->createConv("conv", x, wc, bc, {}, {1, 1}, {0, 0, 0, 0}, {2, 2}, 1, 0,
                     0.f, 0.f));
  auto out =
      run(tensors(makeTensor({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9})));
  ASSERT_EQ(out.size(), 1u);
  expectNear(out[0], makeTensor({1, 1, 1, 1}, {1 + 3 + 7 + 9}), 0);
}

TEST_P(TensorOpTest, ConvFusedResidualAndActivations) {
  auto *x = input("x", {1, 1, 1, 3});
  auto *r = input("r", {1, 1, 1, 3});
  auto *wc = constant("w", makeTensor({1, 1, 1, 1}, {2}));
  auto *bc = constant("b", makeTensor({1}, {-1}));
  auto conv = [&](const char *name, FusedActivation act, float a, float b,
                  bool residual) {
    llvm::SmallVector<NodeValue, 1> res;
    if (residual)
      res.push_back(r);
    save(F->createConv(name, x, wc, bc, res, {1, 1}, {0, 0, 0, 0}, {1, 1}, 1,
                       int64_t(act), a, b));
  };
  conv("plain", FusedActivation::None, 0, 0, false);
  conv("relu_res", FusedActivation::Relu, 0, 0, true);
  conv("clip", FusedActivation::Clip, 0, 2, false);
  conv("leaky", FusedActivation::LeakyRelu, 0.5f, 0, false);
  conv("hswish", FusedActivation::HardSwish, 1.f / 6, 0.5f, false);
  conv("sigmoid", FusedActivation::Sigmoid, 0, 0, false);
  auto out = run(tensors(makeTensor({1, 1, 1, 3}, {-1, 0.5f, 3}),
                         makeTensor({1, 1, 1, 3}, {1, -1, 1})));
  ASSERT_EQ(out.size(), 6u);
  // conv = 2x - 1 = {-3, 0, 5}
  expectNear(out[0], makeTensor({1, 1, 1, 3}, {-3, 0, 5}), 0);
  expectNear(out[1], makeTensor({1, 1, 1, 3}, {0, 0, 6}), 0);
  expectNear(out[2], makeTensor({1, 1, 1, 3}, {0, 0, 2}), 0);
  expectNear(out[3], makeTensor({1, 1, 1, 3}, {-1.5f, 0, 5}), 0);
  expectNear(out[4], makeTensor({1, 1, 1, 3}, {0, 0, 5}), 1e-6f);
  expectNear(out[5],
             makeTensor({1, 1, 1, 3}, {0.047425874f, 0.5f, 0.99330715f}),
             1e-6f);
}

TEST_P(TensorOpTest, Pooling) {
  auto *x = input("x", {1, 1, 3, 3});
  save(F->createMaxPool("max", x, {2, 2}, {1, 1}, {0, 0, 0, 0}));
  save(F->createAvgPool("avg", x, {2, 2}, {2, 2}, {1, 1, 0, 0}, 0));
  save(F->createAvgPool("avgpad", x, {2, 2}, {2, 2}, {1, 1, 0, 0}, 1));
  auto out =
      run(tensors(makeTensor({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9})));
  ASSERT_EQ(out.size(), 3u);
  expectNear(out[0], makeTensor({1, 1, 2, 2}, {5, 6, 8, 9}), 0);
  // Windows: {1}, {2,3}, {4,7}, {5,6,8,9}
  expectNear(out[1], makeTensor({1, 1, 2, 2}, {1, 2.5f, 5.5f, 7}), 1e-6f);
  expectNear(out[2], makeTensor({1, 1, 2, 2}, {0.25f, 1.25f, 2.75f, 7}), 1e-6f);
}

TEST_P(TensorOpTest, SoftmaxOnInnerAndOuterAxis) {
  auto *x = input("x", {2, 2});
  save(F->createSoftmax("last", x, 1));
  save(F->createSoftmax("first", x, 0));
  auto out = run(tensors(makeTensor({2, 2}, {0, 0, 1, 3})));
  ASSERT_EQ(out.size(), 2u);
  expectNear(out[0], makeTensor({2, 2}, {0.5f, 0.5f, 0.11920292f, 0.88079708f}),
             1e-6f);
  expectNear(
      out[1],
      makeTensor({2, 2}, {0.26894142f, 0.04742587f, 0.73105858f, 0.95257413f}),
      1e-6f);
}

// Last-axis rows of every length class a vector kernel treats apart (shorter
// than a vector, whole vectors, whole vectors and a tail), with attention
// masks' large negative and -inf entries beside finite ones; the reference
// is computed here in double. Masked entries must be exact zeros. 2e-6: a few
// float roundings of values <= 1 (exp within 2 ulp, the sum, the reciprocal).
TEST_P(TensorOpTest, SoftmaxRowsOfEveryLength) {
  const dim_t lens[] = {1, 5, 16, 37, 128};
  auto tensorOf = [](dim_t len, const std::vector<float> &v) {
    Tensor t(ElemKind::Float32, {3, len});
    std::copy(v.begin(), v.end(), t.getHandle<float>().begin());
    return t;
  };
  std::vector<Tensor> in, want;
  for (dim_t len : lens) {
    save(F->createSoftmax("s", input("x" + std::to_string(len), {3, len}), 1));
    std::vector<float> v(3 * len), y(v.size());
    for (size_t i = 0; i < v.size(); ++i)
      v[i] = float((i * 37) % 23) * 0.7f - 8.f;
    for (dim_t j = 1; j < len; j += 3)
      v[len + j] = -1e9f, v[2 * len + j] = -INFINITY;
    for (dim_t r = 0; r < 3; ++r) {
      double mx = -INFINITY, sum = 0;
      for (dim_t j = 0; j < len; ++j)
        mx = std::max<double>(mx, v[r * len + j]);
      for (dim_t j = 0; j < len; ++j)
        sum += std::exp(v[r * len + j] - mx);
      for (dim_t j = 0; j < len; ++j)
        y[r * len + j] = float(std::exp(v[r * len + j] - mx) / sum);
    }
    in.push_back(tensorOf(len, v));
    want.push_back(tensorOf(len, y));
  }
  auto out = run(std::move(in));
  ASSERT_EQ(out.size(), want.size());
  for (size_t i = 0; i < out.size(); ++i) {
    SCOPED_TRACE(lens[i]);
    expectNear(out[i], want[i], 2e-6f);
    // Masked entries are exact zeros (not subnormals, which slow every
    // later product that reads them).
    for (dim_t j = 1; j < lens[i]; j += 3)
      for (dim_t r : {1, 2})
        EXPECT_EQ(out[i].elementAsDouble(r * lens[i] + j), 0.0) << j;
  }
}

// Attention reading Q, K and V split as [B, T, H, D] (QPerm = KPerm = VPerm
// = [0, 2, 1, 3]: strides, no copy) and storing its result merged back as
// [B, T, H, D] (OutPerm), causal and with a padding mask [B, 1, 1, T]; the
// reference is computed here in double from the same layout. CUDA lowers
// the perms back to Transposes. 1e-5: weighted means of values <= 1 over 5
// keys (exp within 2 ulp, a few roundings per sum).
TEST_P(TensorOpTest, AttentionThroughHeadPerms) {
  const dim_t B = 2, T = 5, H = 2, D = 3;
  const std::vector<int64_t> split = {0, 2, 1, 3};
  auto tensorOf = [](llvm::ArrayRef<dim_t> dims, const std::vector<float> &v) {
    Tensor t(ElemKind::Float32, dims);
    std::copy(v.begin(), v.end(), t.getHandle<float>().begin());
    return t;
  };
  auto *q = input("q", {B, T, H, D});
  auto *k = input("k", {B, T, H, D});
  auto *v = input("v", {B, T, H, D});
  std::vector<float> mv(B * T, 0.f);
  mv[T - 1] = -10000.f; // batch 0 cannot see its last key
  auto *m = constant("m", tensorOf({B, 1, 1, T}, mv));
  save(F->createAttention("a", q, k, v, {m}, 0.5f, 1, split, split, split,
                          split));
  std::vector<float> x[3];
  for (int i = 0; i < 3; ++i)
    for (dim_t e = 0; e < B * T * H * D; ++e)
      x[i].push_back(float(std::sin(0.37 * double(e) + 1.3 * i)));
  auto at = [&](int i, dim_t b, dim_t t, dim_t h, dim_t d) {
    return double(x[i][((b * T + t) * H + h) * D + d]);
  };
  std::vector<float> want(B * T * H * D);
  for (dim_t b = 0; b < B; ++b)
    for (dim_t h = 0; h < H; ++h)
      for (dim_t i = 0; i < T; ++i) {
        double s[T], mx = -INFINITY, sum = 0;
        for (dim_t j = 0; j <= i; ++j) {
          s[j] = mv[b * T + j];
          for (dim_t d = 0; d < D; ++d)
            s[j] += 0.5 * at(0, b, i, h, d) * at(1, b, j, h, d);
          mx = std::max(mx, s[j]);
        }
        for (dim_t j = 0; j <= i; ++j)
          sum += s[j] = std::exp(s[j] - mx);
        for (dim_t d = 0; d < D; ++d) {
          double y = 0;
          for (dim_t j = 0; j <= i; ++j)
            y += s[j] / sum * at(2, b, j, h, d);
          want[((b * T + i) * H + h) * D + d] = float(y);
        }
      }
  auto out =
      run(tensors(tensorOf({B, T, H, D}, x[0]), tensorOf({B, T, H, D}, x[1]),
                  tensorOf({B, T, H, D}, x[2])));
  ASSERT_EQ(out.size(), 1u);
  expectNear(out[0], tensorOf({B, T, H, D}, want), 1e-5f);
}

// Attention with masks that vary with the query: a full [1, H, Tq, Tk]
// one (the CPU reads each query's run of keys and transposes 16 x 16
// blocks) and a per-query [1, 1, Tq, 1] one (key stride 0). 37 queries and
// 70 keys cross the 16-lane and key-block edges (partial runs, a second
// block). Reference in double; 1e-5 as above (70 keys).
TEST_P(TensorOpTest, AttentionWithPerQueryMasks) {
  const dim_t H = 2, TQ = 37, TK = 70, D = 8;
  auto tensorOf = [](llvm::ArrayRef<dim_t> dims, const std::vector<float> &v) {
    Tensor t(ElemKind::Float32, dims);
    std::copy(v.begin(), v.end(), t.getHandle<float>().begin());
    return t;
  };
  auto fill = [](size_t n, double f, double p) {
    std::vector<float> v;
    for (size_t e = 0; e < n; ++e)
      v.push_back(float(std::sin(f * double(e) + p)));
    return v;
  };
  std::vector<float> x[3] = {fill(H * TQ * D, 0.37, 0),
                             fill(H * TK * D, 0.41, 1),
                             fill(H * TK * D, 0.29, 2)};
  std::vector<float> full = fill(H * TQ * TK, 0.53, 3), row = fill(TQ, 0.7, 4);
  for (float &m : full)
    m *= 3.f;
  auto *q = input("q", {1, H, TQ, D});
  auto *k = input("k", {1, H, TK, D});
  auto *v = input("v", {1, H, TK, D});
  auto *mf = constant("mf", tensorOf({1, H, TQ, TK}, full));
  auto *mr = constant("mr", tensorOf({1, 1, TQ, 1}, row));
  save(F->createAttention("af", q, k, v, {mf}, 0.5f, 0, {}, {}, {}, {}));
  save(F->createAttention("ar", q, k, v, {mr}, 0.5f, 0, {}, {}, {}, {}));
  auto reference = [&](auto mask) {
    std::vector<float> want(H * TQ * D);
    for (dim_t h = 0; h < H; ++h)
      for (dim_t i = 0; i < TQ; ++i) {
        double s[TK], mx = -INFINITY, sum = 0;
        for (dim_t j = 0; j < TK; ++j) {
          s[j] = mask(h, i, j);
          for (dim_t d = 0; d < D; ++d)
            s[j] += 0.5 * double(x[0][(h * TQ + i) * D + d]) *
                    double(x[1][(h * TK + j) * D + d]);
          mx = std::max(mx, s[j]);
        }
        for (dim_t j = 0; j < TK; ++j)
          sum += s[j] = std::exp(s[j] - mx);
        for (dim_t d = 0; d < D; ++d) {
          double y = 0;
          for (dim_t j = 0; j < TK; ++j)
            y += s[j] / sum * double(x[2][(h * TK + j) * D + d]);
          want[(h * TQ + i) * D + d] = float(y);
        }
      }
    return tensorOf({1, H, TQ, D}, want);
  };
  auto out =
      run(tensors(tensorOf({1, H, TQ, D}, x[0]), tensorOf({1, H, TK, D}, x[1]),
                  tensorOf({1, H, TK, D}, x[2])));
  ASSERT_EQ(out.size(), 2u);
  expectNear(out[0], reference([&](dim_t h, dim_t i, dim_t j) {
               return double(full[(h * TQ + i) * TK + j]);
             }),
             1e-5f);
  expectNear(out[1],
             reference([&](dim_t, dim_t i, dim_t) { return double(row[i]); }),
             1e-5f);
}

TEST_P(TensorOpTest, TransposeBroadcastConcatReshape) {
  auto *x = input("x", {2, 3});
  save(F->createTranspose("t", x, {1, 0}));
  auto *col = input("col", {2, 1});
  save(F->createBroadcast("b", col, {2, 3}));
  save(F->createConcat("c", {x, F->createBroadcast("b2", col, {2, 3})}, 1));
  save(F->createReshape("r", x, {3, 2}));
  auto out = run(tensors(makeTensor({2, 3}, {1, 2, 3, 4, 5, 6}),
                         makeTensor({2, 1}, {7, 8})));
  ASSERT_EQ(out.size(), 4u);
  expectNear(out[0], makeTensor({3, 2}, {1, 4, 2, 5, 3, 6}), 0);
  expectNear(out[1], makeTensor({2, 3}, {7, 7, 7, 8, 8, 8}), 0);
  expectNear(out[2], makeTensor({2, 6}, {1, 2, 3, 7, 7, 7, 4, 5, 6, 8, 8, 8}),
             0);
  expectNear(out[3], makeTensor({3, 2}, {1, 2, 3, 4, 5, 6}), 0);
}

INSTANTIATE_TEST_SUITE_P(Backends, TensorOpTest,
                         ::testing::ValuesIn(opTestBackends()));
