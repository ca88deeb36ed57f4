//===- VectorMathAccuracy.cpp - The CPU's inline math against libm --------===//
//
// The CPU renderer expands Exp, Log, Tanh, Erf and Sigmoid (and GELU,
// which is built from them) into inline polynomial arithmetic so that the
// loops vectorize. This test compiles each through the real pipeline,
// renderer and JIT and compares every element with libm evaluated in
// double (the exact value for float purposes) in units in the last place
// of the float result. The bounds are the ones stated in docs/Math.md,
// measured over every third float bit pattern (--stride=3; --stride=1
// visits all 2^32). The default run checks a dense sample: every 4093rd
// bit pattern (both signs, subnormals, infinities and NaNs), a fine
// uniform sweep of [-10, 10] and the points where the expansions switch
// formulas.
//
//===----------------------------------------------------------------------===//
#include "../unit/TestUtils.h"

#include <cfloat>
#include <cmath>
#include <cstring>
#include <functional>

using namespace ember;
using namespace ember::test;

namespace {
/// Bit-pattern stride of the sweep: 4093 in ctest; --stride=1 visits all
/// 2^32 floats.
uint64_t gStride = 4093;

/// One expansion, its libm reference and its stated bound: |got - exact|
/// <= maxUlp * ulp(exact) + absFloor (absFloor covers results flushed to
/// zero below the normal range, and GELU's cancellation where x < 0).
struct MathCase {
  const char *name;
  std::function<NodeValue(Function &, NodeValue)> build;
  std::function<double(double)> exact;
  double maxUlp;
  /// The absolute error allowed besides the ulps, as a function of x.
  std::function<double(double)> absFloor;
};

double flushFloor(double) { return 0x1p-124; }

double geluErf(double x) { return 0.5 * x * std::erfc(-x / std::sqrt(2.0)); }
double twoU(double x) {
  return 2 * 0.79788456080286536 * (x + 0.044715 * x * x * x);
}
/// 0.5 x (1 + tanh(u)) as x / (1 + e^(-2u)): the double sum 1 + tanh(u)
/// would cancel to 0 for x < -6.
double geluTanh(double x) { return x / (1 + std::exp(-twoU(x))); }
/// For x < 0 the result is about x e^(2u), so the float roundings in
/// computing 2u (four products and sums, up to 2^-24 |2u| each) move it by
/// that much relatively.
double geluTanhFloor(double x) {
  return 0x1p-124 + 0x1p-22 * std::fabs(twoU(x) * geluTanh(x));
}

std::vector<MathCase> cases() {
  return {
      {"exp", [](Function &F, NodeValue x) { return F.createExp("e", x); },
       [](double x) { return std::exp(x); }, 2, flushFloor},
      {"log", [](Function &F, NodeValue x) { return F.createLog("l", x); },
       [](double x) { return std::log(x); }, 2, [](double) { return 0.0; }},
      {"tanh", [](Function &F, NodeValue x) { return F.createTanh("t", x); },
       [](double x) { return std::tanh(x); }, 2, [](double) { return 0.0; }},
      {"erf", [](Function &F, NodeValue x) { return F.createErf("r", x); },
       [](double x) { return std::erf(x); }, 2, [](double) { return 0.0; }},
      {"sigmoid",
       [](Function &F, NodeValue x) { return F.createSigmoid("s", x); },
       [](double x) { return 1 / (1 + std::exp(-x)); }, 3.5, flushFloor},
      // GELU: relative to x, 1 + erf / 1 + tanh lose digits for x < 0.
      {"gelu-erf",
       [](Function &F, NodeValue x) { return F.createGelu("g", x, 0); },
       geluErf, 2, [](double x) { return 0x1p-24 * std::fabs(x); }},
      {"gelu-tanh",
       [](Function &F, NodeValue x) { return F.createGelu("h", x, 1); },
       geluTanh, 3, geluTanhFloor},
  };
}

/// The spacing of floats around \p v (subnormal spacing near 0).
double ulpOf(double v) {
  float f = float(std::fabs(v));
  if (std::isinf(f))
    return std::ldexp(1.0, 104);
  return std::max(double(std::nextafter(f, INFINITY)) - f, 0x1p-149);
}

float fromBits(uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}

/// The uniform sweep of [-10, 10] and the points around the expansions'
/// switches, thresholds and special values.
std::vector<float> denseInputs() {
  std::vector<float> v;
  for (int i = -(1 << 20); i <= (1 << 20); ++i)
    v.push_back(float(i * (10.0 / (1 << 20))));
  for (float s :
       {0.0f, FLT_MIN, FLT_TRUE_MIN, FLT_MAX, INFINITY, NAN, 0.625f, 1.0f,
        3.92f, 5.5f, 9.1f, 87.3f, 88.72f, 0.7071068f, 1.4142135f})
    for (float f : {s, std::nextafter(s, 0.0f), std::nextafter(s, INFINITY)})
      for (float sign : {1.0f, -1.0f})
        v.push_back(sign * f);
  return v;
}

/// The worst error seen for one case, in units of its allowance.
struct Worst {
  double ulps = 0, x = 0;
  bool specialsOk = true;
  std::string firstBadSpecial;
};

void compare(const MathCase &c, llvm::ArrayRef<float> in, const float *out,
             Worst &w) {
  for (size_t i = 0; i < in.size(); ++i) {
    double x = in[i], want = c.exact(x), got = out[i];
    if (std::isnan(want) || std::isinf(float(want)) || std::isnan(x)) {
      want = float(want); // overflow to infinity is exact
      bool ok = std::isnan(want) ? std::isnan(got) : got == want;
      if (!ok && w.specialsOk) {
        w.specialsOk = false;
        w.firstBadSpecial = std::to_string(x) + " -> " + std::to_string(got);
      }
      continue;
    }
    double err = std::fabs(got - want) - c.absFloor(x);
    double ulps = std::max(err, 0.0) / ulpOf(want);
    if (ulps > w.ulps)
      w = {ulps, x, w.specialsOk, w.firstBadSpecial};
  }
}

/// Runs every case on \p in (one compiled function) and folds the errors
/// into \p worst.
void runChunk(llvm::ArrayRef<float> in, std::vector<Worst> &worst) {
  std::vector<MathCase> all = cases();
  Module M;
  Function *F = M.createFunction("vecmath");
  Type ty(ElemKind::Float32, {dim_t(in.size())});
  NodeValue x = M.createPlaceholder("x", ty, false);
  for (const MathCase &c : all)
    F->createSave("save", c.build(*F, x),
                  M.createPlaceholder(std::string("y_") + c.name, ty, true));
  Tensor t(ty);
  std::copy(in.begin(), in.end(), t.getHandle<float>().begin());
  std::vector<Tensor> inputs;
  inputs.push_back(std::move(t));
  std::vector<Tensor> outs = compileAndRun(M, *F, "CPU", std::move(inputs));
  ASSERT_EQ(outs.size(), all.size());
  for (size_t k = 0; k < all.size(); ++k)
    compare(all[k], in,
            reinterpret_cast<const float *>(outs[k].getHandle<float>().begin()),
            worst[k]);
}
} // namespace

TEST(VectorMath, CPUExpansionsWithinStatedBounds) {
  std::vector<MathCase> all = cases();
  std::vector<Worst> worst(all.size());
  runChunk(denseInputs(), worst);
  // Every gStride-th bit pattern, 2^24 floats per compile.
  constexpr uint64_t kChunk = uint64_t(1) << 24, kEnd = uint64_t(1) << 32;
  std::vector<float> in;
  for (uint64_t b = 0; b < kEnd; b += gStride) {
    in.push_back(fromBits(uint32_t(b)));
    if (in.size() == kChunk || b + gStride >= kEnd) {
      runChunk(in, worst);
      in.clear();
    }
  }
  for (size_t k = 0; k < all.size(); ++k) {
    std::printf("%-10s max error %.3f ulp at x = %.9g\n", all[k].name,
                worst[k].ulps, worst[k].x);
    EXPECT_TRUE(worst[k].specialsOk)
        << all[k].name << ": " << worst[k].firstBadSpecial;
    EXPECT_LE(worst[k].ulps, all[k].maxUlp)
        << all[k].name << " at x = " << worst[k].x;
  }
}

// The GEMM's fused GELU epilogue (libjit's normCdf, not the renderer's
// expansion) within the same bound: a product by ones of K = 1 is exact, so
// every column of row i is gelu(x_i) as the epilogue computes it.
TEST(VectorMath, GeluEpilogueWithinStatedBound) {
  std::vector<float> in;
  for (int i = -(1 << 16); i <= (1 << 16); ++i)
    in.push_back(float(i * (10.0 / (1 << 16))));
  for (float f : denseInputs())
    if (!(std::fabs(f) <= 10))
      in.push_back(f);
  for (uint64_t b = 0; b < (uint64_t(1) << 32); b += 65521)
    in.push_back(fromBits(uint32_t(b)));
  constexpr dim_t kCols = 32;
  Module M;
  Function *F = M.createFunction("gelu_epilogue");
  Type xt(ElemKind::Float32, {dim_t(in.size()), 1});
  NodeValue x = M.createPlaceholder("x", xt, false);
  Tensor ones(ElemKind::Float32, {1, kCols});
  for (float &v : ones.getHandle<float>())
    v = 1;
  NodeValue mm =
      F->createMatMul("mm", x, M.createConstant("ones", std::move(ones)), 0);
  Type yt(ElemKind::Float32, {dim_t(in.size()), kCols});
  F->createSave("save", F->createGelu("g", mm, 0),
                M.createPlaceholder("y", yt, true));
  Tensor t(xt);
  std::copy(in.begin(), in.end(), t.getHandle<float>().begin());
  std::vector<Tensor> inputs;
  inputs.push_back(std::move(t));
  std::vector<Tensor> outs = compileAndRun(M, *F, "CPU", std::move(inputs));
  ASSERT_EQ(outs.size(), 1u);
  const float *y =
      reinterpret_cast<const float *>(outs[0].getHandle<float>().begin());
  MathCase gelu = cases()[5];
  ASSERT_STREQ(gelu.name, "gelu-erf");
  for (dim_t col : {dim_t(0), kCols - 1}) {
    std::vector<float> got;
    for (size_t i = 0; i < in.size(); ++i)
      got.push_back(y[i * kCols + col]);
    Worst w;
    compare(gelu, in, got.data(), w);
    std::printf("epilogue column %d: max error %.3f ulp at x = %.9g\n",
                int(col), w.ulps, w.x);
    EXPECT_TRUE(w.specialsOk) << w.firstBadSpecial;
    EXPECT_LE(w.ulps, gelu.maxUlp) << "at x = " << w.x;
  }
}

int main(int argc, char **argv) {
  ::testing::InitGoogleTest(&argc, argv);
  for (int i = 1; i < argc; ++i)
    if (llvm::StringRef(argv[i]).starts_with("--stride="))
      gStride = std::max(1, std::atoi(argv[i] + 9));
  return RUN_ALL_TESTS();
}
