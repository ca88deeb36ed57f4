//===- MatMulPaths.cpp - The CPU MatMul kernel against the Interpreter ----===//
//
// libjit's MatMul has a packed path (constant B, re-laid out at compile time
// into panels of NR columns) and an in-place one (B computed at run time,
// its last partial panel copied zero-padded per K block). Tiles are MR = 6
// rows by NR = 64 columns (16-lane kernels) or 16 (8-lane; ctest runs the
// cases with both, see ops.wide-simd-paths / ops.narrow-simd-paths), the
// rows past the last whole tile in one tile of 1-5 rows; K is walked in
// blocks of equal length up to the rule's (at most 144 rows with 16 lanes
// on a 48 KiB L1d, 256 with 8). Where tasks re-read a large A, A is first
// packed into row tiles (matMulPacksLHS); every case also runs with it
// packed whatever its size (PackedLHSMatchesInterpreter).
// The cases cover each remainder row count, partial panels, K below one
// block, exactly one and several blocks, tasks split along rows, batches,
// packed and row-major A, one and two threads; and the operand forms: an
// N-D LHS times a B with unit batch dims (flattened into one 2-D product
// by matmul-form), batch dims broadcast on either side (read with batch
// stride 0), and a transposed B (TransB, or a Transpose node that
// matmul-form folds into TransB; a run-time one is packed by a kernel).
// Each case runs random data through both backends.
// Tolerance: max|d| <= 1e-5 * max(1, max|ref|) * sqrt(K): the Interpreter
// sums in another order, and float rounding error of a K-term dot product
// grows about as sqrt(K).
//
//===----------------------------------------------------------------------===//
#include "../../backends/CPU/MatMulTiling.h"
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
  unsigned threads = 1; ///< The CPU run's threads.
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
    // Every remainder tile (1-5 rows past whole 6-row tiles), with and
    // without partial panels.
    {"rows7_k_blocks", {}, {}, 7, 300, 64, true},
    {"rows8_partial_panel", {}, {}, 8, 97, 70, true},
    {"rows9_runtime", {}, {}, 9, 97, 70, false},
    {"rows10_n1", {}, {}, 10, 33, 1, true},
    {"rows11_runtime_blocks", {}, {}, 11, 600, 130, false},
    {"rows12_whole_tiles", {}, {}, 12, 96, 128, true},
    {"m4", {}, {}, 4, 40, 17, false},
    {"m5", {}, {}, 5, 41, 65, true},
    // K of exactly one block, of exactly three and of several plus a
    // partial one, on both kernels' block sizes (96 and 256 rows).
    {"k96", {}, {}, 13, 96, 80, true},
    {"k256_runtime", {}, {}, 13, 256, 80, false},
    {"k288", {}, {}, 20, 288, 64, true},
    {"k769", {}, {}, 30, 769, 96, true},
    {"k769_runtime_partial", {}, {}, 30, 769, 100, false},
    // Enough rows that tasks split along m (the row block of A a task reads
    // per K block stays within half of L2).
    {"row_split", {}, {}, 1400, 40, 24, true},
    {"row_split_runtime", {}, {}, 250, 300, 40, false},
    {"batched_blocks", {2}, {2}, 17, 200, 70, true},
    {"gemv_k_blocks", {}, {}, 1, 1000, 130, true},
    // Shapes for A packed into row tiles (PackedLHSMatchesInterpreter
    // forces it for every case; the rule packs only A beyond half of L2):
    // several K blocks and panels on both kernels (K above 256), every
    // remainder tile, partial panels, K blocks of equal length that do not
    // divide K, one panel, a B packed at run time in the scratch before the
    // packed A, broadcast batch dims of A, and tasks shared by two threads
    // (the packing is complete before the product).
    {"packed_lhs_rest5", {}, {}, 23, 700, 200, true},
    {"packed_lhs_rest1_2t", {}, {}, 19, 290, 130, true, RHSForm::Plain, 2},
    {"packed_lhs_rest2", {}, {}, 14, 577, 90, false},
    {"packed_lhs_rest3_one_panel", {}, {}, 15, 400, 16, true},
    {"packed_lhs_rest4_runtime_transb",
     {3},
     {3},
     16,
     300,
     90,
     false,
     RHSForm::TransB},
    {"packed_lhs_whole_tiles_2t",
     {2},
     {2},
     24,
     513,
     129,
     true,
     RHSForm::Plain,
     2},
    {"packed_lhs_bcast_lhs", {1}, {3}, 8, 290, 70, false},
    {"packed_lhs_bcast_transb_2t",
     {2, 1},
     {2, 3},
     7,
     333,
     65,
     false,
     RHSForm::TransB,
     2},
    // Transformer-sized: many tiles and tasks, two threads.
    {"packed_lhs_tfm_2t", {}, {}, 197, 768, 320, true, RHSForm::Plain, 2},
    // A of 1.2 MB: packed by the rule where L2 is at most 2 MB per core.
    {"packed_lhs_by_rule_2t", {}, {}, 100, 3000, 130, true, RHSForm::Plain, 2},
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
  NodeValue b = constantOrInput(M, "b", std::move(bt), c.constantRHS, inputs);
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
  auto outs = compileAndRun(M, *F, backend, std::move(inputs), pathOptions(),
                            backend == "CPU" ? c.threads : 1);
  return outs.empty() ? Tensor() : std::move(outs[0]);
}
} // namespace

/// Runs case \p c on both backends and checks them against each other and
/// the Interpreter against the definition.
void checkCase(const MatMulCase &c) {
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

TEST_P(MatMulPathTest, CPUMatchesInterpreter) { checkCase(GetParam()); }

// Every case again with A packed into row tiles, which the rule does only
// for large A (beyond half of L2).
TEST_P(MatMulPathTest, PackedLHSMatchesInterpreter) {
  CPUCodegenOptions saved = pathOptions().cpu;
  pathOptions().cpu.forcePackMatMulLHS = true;
  checkCase(GetParam());
  pathOptions().cpu = saved;
}

INSTANTIATE_TEST_SUITE_P(Cases, MatMulPathTest,
                         ::testing::ValuesIn(kMatMulCases),
                         [](const auto &info) {
                           return std::string(info.param.name);
                         });

// The two kernel families libjit instantiates, with the smallest caches of
// their CPUs.
const cpu::MatMulTarget kWideTarget = {16, 32, 32 << 10, 1 << 20};
const cpu::MatMulTarget kNarrowTarget = {8, 16, 32 << 10, 256 << 10};

// The rule's tiles for the two kernel families (the kernels above are
// compiled for exactly these), and task splits that cover every row and
// panel once with equal shares.
TEST(MatMulTiling, TilesOfBothTargets) {
  cpu::MatMulTiling w = cpu::chooseMatMulTiling(kWideTarget);
  EXPECT_EQ(w.rows, 6);
  EXPECT_EQ(w.vectors, 4);
  EXPECT_EQ(w.panelCols, 64);
  EXPECT_EQ(w.kBlock, 96); // 3/4 of 32 KiB over 64 columns of floats
  cpu::MatMulTiling n = cpu::chooseMatMulTiling(kNarrowTarget);
  EXPECT_EQ(n.rows, 6);
  EXPECT_EQ(n.vectors, 2);
  EXPECT_EQ(n.panelCols, 16);
  EXPECT_EQ(n.kBlock, cpu::kMatMulMaxKC);
  // A 48 KiB L1 holds a longer block.
  EXPECT_EQ(cpu::chooseMatMulTiling({16, 32, 48 << 10, 2 << 20}).kBlock, 144);
}

// K blocks of equal length, none longer than the rule's, that cover K; A
// packed only where a tile reads it in several K blocks for several panels.
TEST(MatMulTiling, KBlocksAndPackedLHS) {
  for (const cpu::MatMulTarget &T : {kWideTarget, kNarrowTarget}) {
    cpu::MatMulTiling t = cpu::chooseMatMulTiling(T);
    for (int64_t K : {1, 50, 96, 97, 143, 256, 257, 300, 768, 3072, 3073}) {
      int64_t kc = cpu::matMulKBlock(K, t);
      int64_t blocks = (K + kc - 1) / kc;
      SCOPED_TRACE(testing::Message() << "K " << K << ", kc " << kc);
      EXPECT_LE(kc, t.kBlock);
      EXPECT_EQ(blocks, (K + t.kBlock - 1) / t.kBlock);
      if (blocks > 1) { // the last block within `blocks` rows of the others
        EXPECT_GT(K - (blocks - 1) * kc, kc - blocks);
      }
    }
    // The rows of A a task reads: just over half of L2, or just under.
    int64_t over = T.l2Bytes / 2 / 4 / (t.kBlock + 1) + 1;
    EXPECT_TRUE(cpu::matMulPacksLHS(over, t.kBlock + 1, 3, t, T));
    EXPECT_FALSE(cpu::matMulPacksLHS(over - 1, t.kBlock + 1, 3, t, T));
    EXPECT_FALSE(cpu::matMulPacksLHS(over, t.kBlock, 3, t, T));
    // Two panels: the copy would cost as much as the reads it speeds up.
    EXPECT_FALSE(cpu::matMulPacksLHS(over, t.kBlock + 1, 2, t, T));
    EXPECT_TRUE(cpu::matMulPacksLHS(197, 3072, 12, t, T));
    EXPECT_FALSE(cpu::matMulPacksLHS(5, 1 << 20, 12, t, T));
  }
  EXPECT_EQ(cpu::matMulKBlock(
                768, cpu::chooseMatMulTiling({16, 32, 48 << 10, 2 << 20})),
            128); // 6 blocks of 128, not 5 of 144 and one of 48
}

// A packed B is prefetched block by block where it exceeds half of L2
// (streamed from memory): BERT's FFN weight is, a 128 x 128 one is not.
TEST(MatMulTiling, PrefetchOnlyStreamedRHS) {
  for (const cpu::MatMulTarget &T : {kWideTarget, kNarrowTarget}) {
    EXPECT_TRUE(cpu::prefetchMatMulRHS(768 * 3072, T));
    EXPECT_FALSE(cpu::prefetchMatMulRHS(128 * 128, T));
    EXPECT_EQ(cpu::prefetchMatMulRHS(T.l2Bytes / 8 + 1, T), true);
    EXPECT_EQ(cpu::prefetchMatMulRHS(T.l2Bytes / 8, T), false);
  }
}

TEST(MatMulTiling, TasksCoverTheProduct) {
  for (bool wide : {true, false}) {
    cpu::MatMulTarget T = wide ? kWideTarget : kNarrowTarget;
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
