//===- HalfPaths.cpp - fp16 operands and 16-bit weights: CPU vs Interpreter
//===//
//
// -precision=fp16 rounds both operands of every Float32 MatMul and
// non-depthwise, constant-filter Conv to Float16 (round to nearest even,
// past 65504 to infinity) and computes in Float32; -weights-precision=fp16
// and bf16 round only the constant weights (every Conv filter, a MatMul's
// constant B). Each case compiles the same Float32 graph for the
// Interpreter and the CPU and checks, per element, with T = |bias| +
// sum_k |x_k w_k| over the rounded operands and gamma(n) = n u / (1 - n u),
// u = 2^-24:
//  - the Interpreter against the exact value (in double) of the products
//    of the operands rounded here (by a rounding written independently of
//    the library's): within gamma(K + 2) T. Under -precision=fp16 a
//    product of two Float16 values (11 + 11 significant bits) is exact in
//    Float32 and only the K + 1 additions round; with 16-bit weights and
//    Float32 activations the products round too, and a Float32 dot
//    product of K terms is still within gamma(K) of the exact sum
//    (Higham, Accuracy and Stability, 3.1), gamma(K + 2) with the bias;
//  - the CPU against the Interpreter: within 2 gamma(K + 2) T (two orders
//    of one sum).
// A CPU or Interpreter that did not round an operand misses the bound by
// about 2^12 (one Float16 rounding is up to 2^-11 relative, one BFloat16
// rounding 2^-8). The overflow case has A values past 65504: Float16
// makes them infinite, and the CPU must give the Interpreter's infinities
// and NaNs exactly.
//
//===----------------------------------------------------------------------===//
#include "../unit/TestUtils.h"
#include "BF16PathBounds.h"

#include <cmath>
#include <cstring>
#include <random>

using namespace ember;
using namespace ember::test;

namespace {
/// Which precision option a case runs under.
enum class Half { FP16, WeightsFP16, WeightsBF16 };

const char *halfName(Half h) {
  switch (h) {
  case Half::FP16:
    return "fp16";
  case Half::WeightsFP16:
    return "weights_fp16";
  case Half::WeightsBF16:
    return "weights_bf16";
  }
  return "";
}

/// A (case, Half) parameter's test name: "<case>_<precision>".
const auto caseHalfName = [](const auto &info) {
  return std::string(std::get<0>(info.param).name) + "_" +
         halfName(std::get<1>(info.param));
};

CodegenOptions halfOptions(Half h) {
  CodegenOptions opts = pathOptions();
  if (h == Half::FP16)
    opts.precision.precision = FloatPrecision::FP16;
  else
    opts.precision.weights =
        h == Half::WeightsFP16 ? FloatPrecision::FP16 : FloatPrecision::BF16;
  return opts;
}

/// \p v (a Float32 value) rounded to Float16, nearest even: 11 significant
/// bits down to 2^-14, then steps of 2^-24; past 65504, infinity.
double roundFP16(double v) {
  double a = std::fabs(v);
  if (a == 0 || !std::isfinite(a))
    return v;
  int e;
  std::frexp(a, &e); // a = f 2^e, f in [0.5, 1)
  double q = std::ldexp(1.0, std::max(e - 1, -14) - 10);
  double r = std::nearbyint(a / q) * q; // ties to even (default mode)
  return std::copysign(r > 65504 ? INFINITY : r, v);
}

/// \p v (a Float32 value) rounded to BFloat16, nearest even: 8 significant
/// bits.
double roundBF16(double v) {
  double a = std::fabs(v);
  if (a == 0 || !std::isfinite(a))
    return v;
  int e;
  std::frexp(a, &e);
  double q = std::ldexp(1.0, e - 8);
  return std::copysign(std::nearbyint(a / q) * q, v);
}

/// Rounds activations (\p weight false) or weights as \p h does, for an op
/// that -precision=fp16 converts (\p converted) or leaves in Float32.
double roundOperand(Half h, bool converted, bool weight, double v) {
  if (h == Half::FP16)
    return converted ? roundFP16(v) : v;
  if (!weight)
    return v;
  return h == Half::WeightsFP16 ? roundFP16(v) : roundBF16(v);
}

/// Checks \p got (CPU) and \p ref (Interpreter) against \p exact with
/// bound factor \p g per unit of \p t.
void checkBounds(const Tensor &ref, const Tensor &got,
                 const std::vector<double> &exact, const std::vector<double> &t,
                 double g) {
  ASSERT_EQ(got.getType(), ref.getType());
  ASSERT_EQ(size_t(ref.size()), exact.size());
  for (size_t i = 0; i < exact.size(); ++i) {
    double r = ref.elementAsDouble(i), v = got.elementAsDouble(i);
    if (!std::isfinite(exact[i])) {
      // Infinite operands: the same infinity or NaN on both backends.
      ASSERT_TRUE((std::isnan(r) && std::isnan(v)) || r == v)
          << "element " << i << ": CPU " << v << ", Interpreter " << r;
      ASSERT_TRUE(std::isnan(exact[i]) ? std::isnan(r) : r == exact[i])
          << "Interpreter, element " << i << ": " << r;
      continue;
    }
    ASSERT_LE(std::fabs(r - exact[i]), g * t[i])
        << "Interpreter, element " << i << ": " << r << " vs " << exact[i];
    ASSERT_LE(std::fabs(v - r), 2 * g * t[i])
        << "CPU, element " << i << ": " << v << " vs " << r;
  }
}

struct HalfMatMulCase {
  const char *name;
  dim_t batch, m, k, n;
  bool constantRHS, transB;
  float aScale; ///< A in [-2 aScale, 2 aScale].
};

const HalfMatMulCase kMatMulCases[] = {
    {"gemv_const", 1, 1, 300, 130, true, false, 1},
    {"odd_k_const", 1, 3, 129, 65, true, false, 1},
    {"odd_k_runtime", 1, 3, 129, 65, false, false, 1},
    {"partial_tiles", 1, 29, 19, 47, true, false, 1},
    {"long_k_blocks", 1, 11, 801, 130, true, false, 1},
    {"transb_const", 1, 9, 48, 80, true, true, 1},
    {"attention_qk_runtime", 6, 10, 16, 10, false, true, 1},
    {"batched_runtime", 4, 6, 33, 20, false, false, 1},
    // A up to 1e5: Float16 operands past 65504 become infinities.
    {"overflow", 1, 8, 3, 5, true, false, 5e4f},
};

/// A and B as stored, random (B [batch or 1][n][k] when transB).
std::pair<Tensor, Tensor> matMulOperands(const HalfMatMulCase &c) {
  std::mt19937 gen(7);
  std::vector<dim_t> bd =
      c.transB ? std::vector<dim_t>{c.n, c.k} : std::vector<dim_t>{c.k, c.n};
  // A weight is shared by the batch (broadcast), a run-time B is not.
  bd.insert(bd.begin(), c.constantRHS ? 1 : c.batch);
  Tensor a(ElemKind::Float32, {c.batch, c.m, c.k});
  Tensor b(ElemKind::Float32, bd);
  a.randomize(-2.f * c.aScale, 2.f * c.aScale, gen);
  b.randomize(-2.f, 2.f, gen);
  return {std::move(a), std::move(b)};
}

Tensor runMatMul(const HalfMatMulCase &c, Half h, llvm::StringRef backend,
                 bool packA = false) {
  Module M;
  Function *F = M.createFunction("mm");
  auto [at, bt] = matMulOperands(c);
  std::vector<Tensor> inputs;
  auto *a = M.createPlaceholder("a", at.getType(), false);
  inputs.push_back(std::move(at));
  NodeValue b = constantOrInput(M, "b", std::move(bt), c.constantRHS, inputs);
  NodeValue y = F->createMatMul("mm", a, b, c.transB);
  F->createSave("save", y, M.createPlaceholder("y", *y.getType(), true));
  CodegenOptions opts = halfOptions(h);
  opts.cpu.forcePackMatMulLHS = packA;
  auto outs = compileAndRun(M, *F, backend, std::move(inputs), opts);
  return outs.empty() ? Tensor() : std::move(outs[0]);
}

void exactMatMul(const HalfMatMulCase &c, Half h, std::vector<double> &y,
                 std::vector<double> &t) {
  auto [a, b] = matMulOperands(c);
  bool bWeight = c.constantRHS;
  for (dim_t bi = 0; bi < c.batch; ++bi)
    for (dim_t i = 0; i < c.m; ++i)
      for (dim_t j = 0; j < c.n; ++j) {
        dim_t bo = c.constantRHS ? 0 : bi * c.k * c.n;
        double acc = 0, abs = 0;
        for (dim_t p = 0; p < c.k; ++p) {
          double x = roundOperand(h, true, false,
                                  a.elementAsDouble((bi * c.m + i) * c.k + p));
          double w = roundOperand(
              h, true, bWeight,
              b.elementAsDouble(bo + (c.transB ? j * c.k + p : p * c.n + j)));
          acc += x * w;
          abs += std::fabs(x * w);
        }
        y.push_back(acc);
        t.push_back(abs);
      }
}

using MatMulParam = std::tuple<HalfMatMulCase, Half>;
class HalfMatMulPathTest : public ::testing::TestWithParam<MatMulParam> {};
} // namespace

TEST_P(HalfMatMulPathTest, CPUMatchesInterpreter) {
  auto [c, h] = GetParam();
  if (h != Half::FP16 && c.aScale != 1)
    GTEST_SKIP() << "activations are not rounded: no infinities";
  Tensor ref = runMatMul(c, h, "Interpreter");
  Tensor got = runMatMul(c, h, "CPU");
  std::vector<double> exact, t;
  exactMatMul(c, h, exact, t);
  checkBounds(ref, got, exact, t, gamma(c.k + 2));
}

// The same with A packed into row tiles: the 16-bit B kernels' other
// family of tiles.
TEST_P(HalfMatMulPathTest, PackedLHSMatchesInterpreter) {
  auto [c, h] = GetParam();
  if (h != Half::FP16 && c.aScale != 1)
    GTEST_SKIP() << "activations are not rounded: no infinities";
  Tensor ref = runMatMul(c, h, "Interpreter");
  Tensor got = runMatMul(c, h, "CPU", /*packA=*/true);
  std::vector<double> exact, t;
  exactMatMul(c, h, exact, t);
  checkBounds(ref, got, exact, t, gamma(c.k + 2));
}

INSTANTIATE_TEST_SUITE_P(
    Cases, HalfMatMulPathTest,
    ::testing::Combine(::testing::ValuesIn(kMatMulCases),
                       ::testing::Values(Half::FP16, Half::WeightsFP16,
                                         Half::WeightsBF16)),
    caseHalfName);

namespace {
struct HalfConvCase {
  const char *name;
  dim_t N, C, H, W, M, K; ///< K x K filter.
  int64_t stride, pad, group;
  bool relu;
};

const HalfConvCase kConvCases[] = {
    {"pointwise", 1, 17, 7, 9, 40, 1, 1, 0, 1, false},
    {"3x3_padded_relu", 2, 13, 10, 11, 24, 3, 1, 1, 1, true},
    {"3x3_s2", 1, 16, 15, 17, 20, 3, 2, 1, 1, false},
    {"pointwise_s2_relu", 2, 24, 14, 13, 32, 1, 2, 0, 1, true},
    {"7x7_s2_stem", 1, 3, 31, 29, 16, 7, 2, 3, 1, true},
    {"long_k", 1, 96, 12, 12, 32, 3, 1, 1, 1, false},
    {"grouped", 1, 32, 9, 9, 64, 3, 1, 1, 2, true},
    // Depthwise: Float32 under -precision=fp16; its filter is a weight.
    {"depthwise", 1, 24, 10, 10, 24, 3, 1, 1, 24, false},
};

dim_t convOut(const HalfConvCase &c, dim_t in) {
  return (in + 2 * c.pad - c.K) / c.stride + 1;
}

struct ConvOperands {
  Tensor x, w, b;
  explicit ConvOperands(const HalfConvCase &c) {
    std::mt19937 gen(13);
    x = Tensor(ElemKind::Float32, {c.N, c.C, c.H, c.W});
    w = Tensor(ElemKind::Float32, {c.M, c.C / c.group, c.K, c.K});
    b = Tensor(ElemKind::Float32, {c.M});
    x.randomize(-2.f, 2.f, gen);
    w.randomize(-1.f, 1.f, gen);
    b.randomize(-1.f, 1.f, gen);
  }
};

/// A forced CPU convolution path (the Interpreter ignores it).
struct ConvForce {
  const char *name;
  cpu::ConvPath path;
  cpu::WinogradMode winograd;
};

Tensor runConv(const HalfConvCase &c, Half h, llvm::StringRef backend,
               ConvForce force = {"auto", cpu::ConvPath::Auto,
                                  cpu::WinogradMode::Auto}) {
  Module M;
  Function *F = M.createFunction("conv");
  ConvOperands o(c);
  auto *x = M.createPlaceholder("x", o.x.getType(), false);
  NodeValue y = F->createConv(
      "conv", x, M.createConstant("w", o.w.clone()),
      M.createConstant("b", o.b.clone()), {}, {c.stride, c.stride},
      {c.pad, c.pad, c.pad, c.pad}, {1, 1}, c.group,
      int64_t(c.relu ? FusedActivation::Relu : FusedActivation::None), 0, 0);
  F->createSave("save", y, M.createPlaceholder("y", *y.getType(), true));
  std::vector<Tensor> inputs;
  inputs.push_back(o.x.clone());
  CodegenOptions opts = halfOptions(h);
  opts.cpu.convPath = force.path;
  opts.cpu.winograd = force.winograd;
  auto outs = compileAndRun(M, *F, backend, std::move(inputs), opts);
  return outs.empty() ? Tensor() : std::move(outs[0]);
}

void exactConv(const HalfConvCase &c, Half h, std::vector<double> &y,
               std::vector<double> &t) {
  ConvOperands o(c);
  bool converted =
      !(c.group > 1 && c.group == int64_t(c.C) && c.group == int64_t(c.M));
  dim_t OH = convOut(c, c.H), OW = convOut(c, c.W);
  dim_t cPerG = c.C / c.group, mPerG = c.M / c.group;
  for (dim_t n = 0; n < c.N; ++n)
    for (dim_t m = 0; m < c.M; ++m)
      for (dim_t oh = 0; oh < OH; ++oh)
        for (dim_t ow = 0; ow < OW; ++ow) {
          double acc = o.b.elementAsDouble(m), abs = std::fabs(acc);
          for (dim_t ci = 0; ci < cPerG; ++ci)
            for (dim_t kh = 0; kh < c.K; ++kh)
              for (dim_t kw = 0; kw < c.K; ++kw) {
                int64_t ih = oh * c.stride - c.pad + kh;
                int64_t iw = ow * c.stride - c.pad + kw;
                if (ih < 0 || ih >= int64_t(c.H) || iw < 0 ||
                    iw >= int64_t(c.W))
                  continue;
                dim_t cin = m / mPerG * cPerG + ci;
                double xv =
                    roundOperand(h, converted, false,
                                 o.x.elementAsDouble(
                                     ((n * c.C + cin) * c.H + ih) * c.W + iw));
                double wv =
                    roundOperand(h, converted, true,
                                 o.w.elementAsDouble(
                                     ((m * cPerG + ci) * c.K + kh) * c.K + kw));
                acc += xv * wv;
                abs += std::fabs(xv * wv);
              }
          y.push_back(c.relu ? std::max(acc, 0.0) : acc);
          t.push_back(abs);
        }
}

using ConvParam = std::tuple<HalfConvCase, Half>;
class HalfConvPathTest : public ::testing::TestWithParam<ConvParam> {};
} // namespace

TEST_P(HalfConvPathTest, CPUMatchesInterpreter) {
  auto [c, h] = GetParam();
  Tensor ref = runConv(c, h, "Interpreter");
  Tensor got = runConv(c, h, "CPU");
  std::vector<double> exact, t;
  exactConv(c, h, exact, t);
  checkBounds(ref, got, exact, t, gamma(c.C / c.group * c.K * c.K + 2));
}

INSTANTIATE_TEST_SUITE_P(
    Cases, HalfConvPathTest,
    ::testing::Combine(::testing::ValuesIn(kConvCases),
                       ::testing::Values(Half::FP16, Half::WeightsFP16,
                                         Half::WeightsBF16)),
    caseHalfName);

namespace {
/// Every path the CPU's lowering can take for a convolution with 16-bit
/// weights: the pixel panels (im2col, or in place for 1x1), channel
/// vectors, pixel rows, and Winograd asked for (excluded: its transformed
/// filter would round differently from the Interpreter's direct
/// convolution, so the convolution takes another path). Depthwise cases
/// take the per-plane kernel under "panels" and the channel-vector one
/// (taps packed at compile time) under "channels".
const ConvForce kForces[] = {
    {"panels", cpu::ConvPath::Panels, cpu::WinogradMode::Off},
    {"channels", cpu::ConvPath::Channels, cpu::WinogradMode::Off},
    {"rows", cpu::ConvPath::Rows, cpu::WinogradMode::Off},
    {"winograd_f4", cpu::ConvPath::Auto, cpu::WinogradMode::F4},
};

const HalfConvCase kForcedCases[] = {
    {"pointwise", 1, 17, 7, 9, 40, 1, 1, 0, 1, false},
    {"3x3_padded_relu", 2, 13, 10, 11, 24, 3, 1, 1, 1, true},
    {"3x3_s2", 1, 16, 15, 17, 20, 3, 2, 1, 1, false},
    {"grouped", 1, 32, 9, 9, 64, 3, 1, 1, 2, true},
    {"depthwise", 1, 32, 10, 10, 32, 3, 1, 1, 32, false},
    // 24 channels: the packed taps fill two blocks of 16, more than the
    // filter's buffer holds, so the per-plane kernel is kept.
    {"depthwise_partial_block", 1, 24, 10, 10, 24, 3, 1, 1, 24, false},
};

using ForcedParam = std::tuple<HalfConvCase, ConvForce, Half>;
class HalfConvForcedPathTest : public ::testing::TestWithParam<ForcedParam> {};
} // namespace

TEST_P(HalfConvForcedPathTest, CPUMatchesInterpreter) {
  auto [c, force, h] = GetParam();
  Tensor ref = runConv(c, h, "Interpreter");
  Tensor got = runConv(c, h, "CPU", force);
  std::vector<double> exact, t;
  exactConv(c, h, exact, t);
  checkBounds(ref, got, exact, t, gamma(c.C / c.group * c.K * c.K + 2));
}

INSTANTIATE_TEST_SUITE_P(
    Cases, HalfConvForcedPathTest,
    ::testing::Combine(::testing::ValuesIn(kForcedCases),
                       ::testing::ValuesIn(kForces),
                       ::testing::Values(Half::WeightsFP16, Half::WeightsBF16)),
    [](const auto &info) {
      return std::string(std::get<0>(info.param).name) + "_" +
             std::get<1>(info.param).name + "_" +
             halfName(std::get<2>(info.param));
    });
