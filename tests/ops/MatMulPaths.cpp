//===- MatMulPaths.cpp - The CPU MatMul kernel against the Interpreter ----===//
//
// libjit's MatMul has a packed path (constant B, re-laid out at compile time
// into 32-column panels) and an in-place one (B computed at run time, its
// last partial panel done column by column); products with 1-3 rows take
// small-m tiles with split K sums and are split over n, larger ones take
// 8-row tiles in 24-row tasks. Each case runs random data through both
// backends. Tolerance: max|d| <= 1e-5 * max(1, max|ref|) * sqrt(K).
//
//===----------------------------------------------------------------------===//
#include "../unit/TestUtils.h"
#include "PathOptions.h"

#include <cmath>
#include <random>

using namespace ember;
using namespace ember::test;

namespace {
struct MatMulCase {
  const char *name;
  dim_t batch, m, k, n;
  bool constantRHS;
};

const MatMulCase kMatMulCases[] = {
    {"gemv_classifier", 1, 1, 300, 1000, true},
    {"gemv_runtime_rhs", 1, 1, 300, 77, false},
    {"m2_odd", 1, 2, 7, 33, true},
    {"m3_odd_k", 1, 3, 129, 65, true},
    {"m3_runtime_rhs", 1, 3, 129, 65, false},
    {"k1_n1", 1, 5, 1, 1, true},
    {"partial_tiles", 1, 29, 19, 47, true},
    {"row_tasks_runtime", 1, 53, 40, 96, false},
    {"batched_constant", 3, 10, 17, 40, true},
    {"batched_runtime", 4, 6, 33, 20, false},
    {"batched_gemv", 2, 1, 64, 31, true},
    {"wide_n", 1, 4, 16, 600, true},
};

class MatMulPathTest : public ::testing::TestWithParam<MatMulCase> {};

Tensor runCase(const MatMulCase &c, llvm::StringRef backend) {
  Module M;
  Function *F = M.createFunction("mm");
  std::mt19937 gen(11);
  std::vector<dim_t> ad = {c.m, c.k}, bd = {c.k, c.n};
  if (c.batch > 1) {
    ad.insert(ad.begin(), c.batch);
    bd.insert(bd.begin(), c.batch);
  }
  std::vector<Tensor> inputs;
  auto *a = M.createPlaceholder("a", Type(ElemKind::Float32, ad), false);
  Tensor at(ElemKind::Float32, ad);
  at.randomize(-1.f, 1.f, gen);
  inputs.push_back(std::move(at));
  Tensor bt(ElemKind::Float32, bd);
  bt.randomize(-1.f, 1.f, gen);
  NodeValue b;
  if (c.constantRHS) {
    b = M.createConstant("b", std::move(bt));
  } else {
    b = M.createPlaceholder("b", Type(ElemKind::Float32, bd), false);
    inputs.push_back(std::move(bt));
  }
  NodeValue y = F->createMatMul("mm", a, b);
  auto *out = M.createPlaceholder("y", *y.getType(), true);
  F->createSave("save", y, out);
  auto outs = compileAndRun(M, *F, backend, std::move(inputs), pathOptions());
  return outs.empty() ? Tensor() : std::move(outs[0]);
}
} // namespace

TEST_P(MatMulPathTest, CPUMatchesInterpreter) {
  const MatMulCase &c = GetParam();
  Tensor ref = runCase(c, "Interpreter");
  Tensor got = runCase(c, "CPU");
  ASSERT_GT(ref.size(), 0);
  double maxRef = 1;
  for (dim_t i = 0; i < ref.size(); ++i)
    maxRef = std::max(maxRef, std::fabs(ref.elementAsDouble(i)));
  expectNear(got, ref, float(1e-5 * maxRef * std::sqrt(double(c.k))));
}

INSTANTIATE_TEST_SUITE_P(Cases, MatMulPathTest,
                         ::testing::ValuesIn(kMatMulCases),
                         [](const auto &info) {
                           return std::string(info.param.name);
                         });
