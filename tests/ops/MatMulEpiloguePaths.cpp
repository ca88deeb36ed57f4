//===- MatMulEpiloguePaths.cpp - MatMul epilogues against a definition ----===//
//
// Graphs as exporters write them, y = act(Add(Add(MatMul(a, b), bias),
// res)) with the bias broadcast from [1, N] (or [1, 1, N] behind the
// view matmul-form leaves), run through the default pipeline, where
// fuse-matmul-epilogue folds them into the MatMul's epilogue and libjit
// applies it in the last K block's store. The cases cover the epilogue's
// parts alone and together, every activation the pass fuses, partial
// panels and remainder rows, several K blocks (the epilogue must apply
// only once, after the last), batches (the residual read at the batch's
// offset) and a run-time B. Each runs on the CPU and the Interpreter, and
// both are checked against the definition computed here in double.
// Tolerance: 1e-5 * max(1, max|ref|) * sqrt(K), as for MatMulPaths (the
// K-term sums dominate; the vector erf and exp of the GELU kinds are
// within a few ulp of libm's).
//
//===----------------------------------------------------------------------===//
#include "EpilogueCases.h"

#include <cmath>

using namespace ember;
using namespace ember::test;

namespace {
using FA = FusedActivation;
const EpilogueCase kCases[] = {
    {"bias", 1, 29, 19, 70, true, false, FA::None},
    {"residual", 1, 13, 40, 64, false, true, FA::None},
    {"bias_residual_k_blocks", 1, 7, 300, 130, true, true, FA::None},
    {"bias_gelu", 1, 12, 200, 96, true, false, FA::Gelu},
    {"bias_gelu_tanh_partial", 1, 11, 33, 47, true, false, FA::GeluTanh},
    {"bias_relu", 1, 6, 50, 17, true, false, FA::Relu},
    {"bias_residual_clip", 1, 9, 97, 70, true, true, FA::Clip},
    {"sigmoid_only", 1, 5, 41, 65, false, false, FA::Sigmoid},
    {"batched_bias_residual", 3, 10, 17, 40, true, true, FA::None},
    {"rank3_view_bias_gelu", 4, 8, 64, 48, true, false, FA::Gelu},
    {"runtime_rhs_bias_residual", 2, 9, 33, 70, true, true, FA::None, false},
};

class MatMulEpilogueTest : public ::testing::TestWithParam<EpilogueCase> {};

/// Random operands in [-1, 1].
std::vector<Tensor> makeOperands(const EpilogueCase &c) {
  return test::makeEpilogueOperands(c, 5, 1.f);
}

/// The case by definition, in double.
std::vector<double> expected(const EpilogueCase &c) {
  std::vector<Tensor> t = makeOperands(c);
  std::vector<double> y;
  for (dim_t bi = 0; bi < c.batch; ++bi)
    for (dim_t i = 0; i < c.m; ++i)
      for (dim_t j = 0; j < c.n; ++j) {
        dim_t bo = c.constantRHS ? 0 : bi * c.k * c.n;
        double acc = 0;
        for (dim_t p = 0; p < c.k; ++p)
          acc += t[0].elementAsDouble((bi * c.m + i) * c.k + p) *
                 t[1].elementAsDouble(bo + p * c.n + j);
        if (c.bias)
          acc += t[2].elementAsDouble(j);
        if (c.residual)
          acc += t[3].elementAsDouble((bi * c.m + i) * c.n + j);
        y.push_back(activateExact(c.act, acc));
      }
  return y;
}

Tensor runCase(const EpilogueCase &c, llvm::StringRef backend) {
  return runEpilogueGraph(c, makeOperands(c), backend, pathOptions());
}
} // namespace

TEST_P(MatMulEpilogueTest, CPUAndInterpreterMatchDefinition) {
  const EpilogueCase &c = GetParam();
  std::vector<double> want = expected(c);
  double maxRef = 1;
  for (double v : want)
    maxRef = std::max(maxRef, std::fabs(v));
  double tol = 1e-5 * maxRef * std::sqrt(double(c.k));
  for (const char *backend : {"Interpreter", "CPU"}) {
    Tensor got = runCase(c, backend);
    ASSERT_EQ(size_t(got.size()), want.size()) << backend;
    for (size_t i = 0; i < want.size(); ++i)
      ASSERT_NEAR(got.elementAsDouble(i), want[i], tol)
          << backend << ", element " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, MatMulEpilogueTest, ::testing::ValuesIn(kCases),
                         [](const auto &info) {
                           return std::string(info.param.name);
                         });
