//===- MatMulPaths.cpp - The CPU MatMul kernel against the Interpreter ----===//
//
// libjit's MatMul has a packed path (constant B, re-laid out at compile time
// into panels of NR columns) and an in-place one (B computed at run time,
// its last partial panel copied zero-padded per K block). Tiles are MR = 6
// rows by NR = 64 columns (16-lane kernels) or 16 (8-lane; ctest runs the
// cases with both, see ops.wide-simd-paths / ops.narrow-simd-paths), the
// rows past the last whole tile in one tile of 1-5 rows; K is walked in
// blocks of 96 (16 lanes) or 256 (8 lanes) rows. The cases cover each
// remainder row count, partial panels, K below one block, exactly one and
// several blocks (with a partial last one), tasks split along rows, and
// batches. Each case runs random data through both backends. Tolerance:
// max|d| <= 1e-5 * max(1, max|ref|) * sqrt(K): the Interpreter sums in
// another order, and float rounding error of a K-term dot product grows
// about as sqrt(K).
//
//===----------------------------------------------------------------------===//
#include "../../backends/CPU/MatMulTiling.h"
#include "../unit/TestUtils.h"

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
    // Every remainder tile (1-5 rows past whole 6-row tiles), with and
    // without partial panels.
    {"rows7_k_blocks", 1, 7, 300, 64, true},
    {"rows8_partial_panel", 1, 8, 97, 70, true},
    {"rows9_runtime", 1, 9, 97, 70, false},
    {"rows10_n1", 1, 10, 33, 1, true},
    {"rows11_runtime_blocks", 1, 11, 600, 130, false},
    {"rows12_whole_tiles", 1, 12, 96, 128, true},
    {"m4", 1, 4, 40, 17, false},
    {"m5", 1, 5, 41, 65, true},
    // K of exactly one block, of exactly three and of several plus a
    // partial one, on both kernels' block sizes (96 and 256 rows).
    {"k96", 1, 13, 96, 80, true},
    {"k256_runtime", 1, 13, 256, 80, false},
    {"k288", 1, 20, 288, 64, true},
    {"k769", 1, 30, 769, 96, true},
    {"k769_runtime_partial", 1, 30, 769, 100, false},
    // Enough rows that tasks split along m (the row block of A a task reads
    // per K block stays within half of L2).
    {"row_split", 1, 1400, 40, 24, true},
    {"row_split_runtime", 1, 250, 300, 40, false},
    {"batched_blocks", 2, 17, 200, 70, true},
    {"gemv_k_blocks", 1, 1, 1000, 130, true},
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
  auto outs = compileAndRun(M, *F, backend, std::move(inputs));
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

// The rule's tiles for the two kernel families libjit instantiates (the
// kernels above are compiled for exactly these), and task splits that cover
// every row and panel once with equal shares.
TEST(MatMulTiling, TilesOfBothTargets) {
  cpu::MatMulTiling w = cpu::chooseMatMulTiling(cpu::matMulTarget(true));
  EXPECT_EQ(w.rows, 6);
  EXPECT_EQ(w.vectors, 4);
  EXPECT_EQ(w.panelCols, 64);
  EXPECT_EQ(w.kBlock, 96); // 3/4 of 32 KiB over 64 columns of floats
  cpu::MatMulTiling n = cpu::chooseMatMulTiling(cpu::matMulTarget(false));
  EXPECT_EQ(n.rows, 6);
  EXPECT_EQ(n.vectors, 2);
  EXPECT_EQ(n.panelCols, 16);
  EXPECT_EQ(n.kBlock, cpu::kMatMulMaxKC);
  // A 48 KiB L1 holds a longer block.
  EXPECT_EQ(cpu::chooseMatMulTiling({16, 32, 48 << 10, 2 << 20}).kBlock, 144);
}

TEST(MatMulTiling, TasksCoverTheProduct) {
  for (bool wide : {true, false}) {
    cpu::MatMulTarget T = cpu::matMulTarget(wide);
    cpu::MatMulTiling t = cpu::chooseMatMulTiling(T);
    for (int64_t m : {1, 5, 7, 50, 128, 197, 256, 3000})
      for (int64_t panels : {1, 3, 8, 12, 13, 16, 36, 48}) {
        cpu::MatMulTasks k = cpu::splitMatMul(m, panels, t, T);
        SCOPED_TRACE(testing::Message()
                     << m << " rows, " << panels << " panels, wide " << wide);
        EXPECT_EQ(k.rowsPerTask % t.rows, 0);
        EXPECT_GE(k.rowsPerTask * k.rowTasks, m);
        EXPECT_LT(k.rowsPerTask * (k.rowTasks - 1), m);
        EXPECT_EQ(k.panelsPerTask * k.colTasks, panels);
        int64_t tasks = k.rowTasks * k.colTasks;
        if (tasks < cpu::kMatMulMinTasks) {
          EXPECT_EQ(k.rowsPerTask, t.rows);
        }
      }
  }
}
