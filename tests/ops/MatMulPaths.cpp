//===- MatMulPaths.cpp - The CPU MatMul kernel against the Interpreter ----===//
//
// libjit's MatMul has a packed path (constant B, re-laid out at compile time
// into 32-column panels) and an in-place one (B computed at run time, its
// last partial panel done column by column); products with 1-3 rows take
// small-m tiles with split K sums and are split over n, larger ones take
// 8-row tiles in 24-row tasks. The operand forms: an N-D LHS times a B with
// unit batch dims (flattened into one 2-D product by matmul-form), batch
// dims broadcast on either side (read with batch stride 0), and a
// transposed B (TransB, or a Transpose node that matmul-form folds into
// TransB; a run-time one is packed by a kernel). Each case runs random data
// through both backends. Tolerance: max|d| <= 1e-5 * max(1, max|ref|) *
// sqrt(K) (float sums of K products in different orders).
//
//===----------------------------------------------------------------------===//
#include "../unit/TestUtils.h"
#include "PathOptions.h"

#include <cmath>
#include <random>

using namespace ember;
using namespace ember::test;

namespace {
/// How a case gives the MatMul its B.
enum class RHSForm { Plain, TransB, TransposeNode };

struct MatMulCase {
  const char *name;
  std::vector<dim_t> aBatch, bBatch; ///< Same length; 1 broadcasts.
  dim_t m, k, n;
  bool constantRHS;
  RHSForm form = RHSForm::Plain;
};

const MatMulCase kMatMulCases[] = {
    {"gemv_classifier", {}, {}, 1, 300, 1000, true},
    {"gemv_runtime_rhs", {}, {}, 1, 300, 77, false},
    {"m2_odd", {}, {}, 2, 7, 33, true},
    {"m3_odd_k", {}, {}, 3, 129, 65, true},
    {"m3_runtime_rhs", {}, {}, 3, 129, 65, false},
    {"k1_n1", {}, {}, 5, 1, 1, true},
    {"partial_tiles", {}, {}, 29, 19, 47, true},
    {"row_tasks_runtime", {}, {}, 53, 40, 96, false},
    {"batched_constant", {3}, {3}, 10, 17, 40, true},
    {"batched_runtime", {4}, {4}, 6, 33, 20, false},
    {"batched_gemv", {2}, {2}, 1, 64, 31, true},
    {"wide_n", {}, {}, 4, 16, 600, true},
    // N-D activation times a weight: one flattened 2-D product.
    {"rank3_x_2d", {7}, {1}, 1, 24, 70, true},
    {"rank4_x_2d_odd", {1, 3}, {1, 1}, 5, 19, 33, true},
    {"rank3_x_2d_runtime", {5}, {1}, 3, 17, 40, false},
    // Broadcast batch dims on either side, read in place.
    {"bcast_lhs", {1}, {4}, 5, 17, 33, false},
    {"bcast_lhs_const_rhs", {1}, {3}, 9, 20, 35, true},
    {"bcast_both", {3, 1}, {1, 2}, 4, 13, 29, false},
    {"bcast_rhs_partial", {2, 3}, {2, 1}, 6, 11, 40, false},
    // A transposed B: read by the packing, in place.
    {"transb_runtime", {2}, {2}, 7, 17, 33, false, RHSForm::TransB},
    {"transb_const", {}, {}, 5, 40, 70, true, RHSForm::TransB},
    {"transb_bcast", {2, 3}, {2, 1}, 4, 9, 37, false, RHSForm::TransB},
    {"transb_rank3_x_2d", {4}, {1}, 5, 21, 45, true, RHSForm::TransB},
    {"transpose_node_qk",
     {2, 3},
     {2, 3},
     10,
     16,
     10,
     false,
     RHSForm::TransposeNode},
    {"transpose_node_gemv", {}, {}, 1, 50, 65, false, RHSForm::TransposeNode},
};

/// Names a case in test listings (instead of its bytes).
void PrintTo(const MatMulCase &c, std::ostream *os) { *os << c.name; }

std::vector<dim_t> withMatrix(std::vector<dim_t> batch, dim_t rows,
                              dim_t cols) {
  batch.push_back(rows);
  batch.push_back(cols);
  return batch;
}

class MatMulPathTest : public ::testing::TestWithParam<MatMulCase> {};

/// The operands of case \p c: A, and B as stored ([..., n, k] for the
/// transposed forms), random in [-1, 1] from a fixed seed.
std::pair<Tensor, Tensor> makeOperands(const MatMulCase &c) {
  std::mt19937 gen(11);
  bool stored = c.form != RHSForm::Plain;
  Tensor a(ElemKind::Float32, withMatrix(c.aBatch, c.m, c.k));
  Tensor b(ElemKind::Float32, stored ? withMatrix(c.bBatch, c.n, c.k)
                                     : withMatrix(c.bBatch, c.k, c.n));
  a.randomize(-1.f, 1.f, gen);
  b.randomize(-1.f, 1.f, gen);
  return {std::move(a), std::move(b)};
}

/// The product of case \p c by definition, in double: an oracle that shares
/// no code with either backend's batch or transpose arithmetic.
std::vector<double> naiveProduct(const MatMulCase &c) {
  auto [a, b] = makeOperands(c);
  bool stored = c.form != RHSForm::Plain;
  size_t rank = c.aBatch.size();
  dim_t batch = 1;
  for (size_t d = 0; d < rank; ++d)
    batch *= std::max(c.aBatch[d], c.bBatch[d]);
  std::vector<double> y;
  for (dim_t bi = 0; bi < batch; ++bi) {
    dim_t ai = 0, bj = 0, rest = bi, aMul = 1, bMul = 1;
    for (size_t d = rank; d-- > 0;) {
      dim_t out = std::max(c.aBatch[d], c.bBatch[d]), coord = rest % out;
      rest /= out;
      ai += (c.aBatch[d] == 1 ? 0 : coord) * aMul;
      bj += (c.bBatch[d] == 1 ? 0 : coord) * bMul;
      aMul *= c.aBatch[d], bMul *= c.bBatch[d];
    }
    for (dim_t i = 0; i < c.m; ++i)
      for (dim_t j = 0; j < c.n; ++j) {
        double acc = 0;
        for (dim_t p = 0; p < c.k; ++p)
          acc += a.elementAsDouble((ai * c.m + i) * c.k + p) *
                 b.elementAsDouble(bj * c.k * c.n +
                                   (stored ? j * c.k + p : p * c.n + j));
        y.push_back(acc);
      }
  }
  return y;
}

Tensor runCase(const MatMulCase &c, llvm::StringRef backend) {
  Module M;
  Function *F = M.createFunction("mm");
  auto [at, bt] = makeOperands(c);
  std::vector<dim_t> bd(bt.dims().begin(), bt.dims().end());
  std::vector<Tensor> inputs;
  auto *a = M.createPlaceholder("a", at.getType(), false);
  inputs.push_back(std::move(at));
  NodeValue b;
  if (c.constantRHS) {
    b = M.createConstant("b", std::move(bt));
  } else {
    b = M.createPlaceholder("b", Type(ElemKind::Float32, bd), false);
    inputs.push_back(std::move(bt));
  }
  if (c.form == RHSForm::TransposeNode) {
    std::vector<int64_t> perm;
    for (size_t i = 0; i < bd.size(); ++i)
      perm.push_back(int64_t(i));
    std::swap(perm[bd.size() - 2], perm[bd.size() - 1]);
    b = F->createTranspose("bt", b, perm);
  }
  NodeValue y = F->createMatMul("mm", a, b, c.form == RHSForm::TransB);
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
  float tol = float(1e-5 * maxRef * std::sqrt(double(c.k)));
  expectNear(got, ref, tol);
  // Both backends read broadcast and transposed operands with their own
  // arithmetic: check the Interpreter against the definition too.
  std::vector<double> want = naiveProduct(c);
  ASSERT_EQ(size_t(ref.size()), want.size());
  for (size_t i = 0; i < want.size(); ++i)
    ASSERT_NEAR(ref.elementAsDouble(i), want[i], tol) << "element " << i;
}

INSTANTIATE_TEST_SUITE_P(Cases, MatMulPathTest,
                         ::testing::ValuesIn(kMatMulCases),
                         [](const auto &info) {
                           return std::string(info.param.name);
                         });
