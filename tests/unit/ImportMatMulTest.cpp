//===- ImportMatMulTest.cpp - MatMul and Gemm import without copies -------===//
//
// An ONNX MatMul of an N-D activation by a 2-D weight imports with no
// Broadcast, Tile or Expand node (the weight is never copied per batch
// index) and compiles to one 2-D MatMul over a Reshape; broadcast batch dims
// stay inside the MatMul; a Transpose of the last two dims of B (Q * K^T) and
// Gemm's transB fold into MatMul's TransB. Results are checked against the
// product by definition on the Interpreter and the CPU. Tolerance: 1e-5 *
// max(1, max|ref|) * sqrt(K) (float sums in different orders).
//
//===----------------------------------------------------------------------===//
#include "ember/Importer/ONNXImporter.h"

#include "ONNXBuilder.h"
#include "TestUtils.h"

#include <cmath>
#include <random>

using namespace ember;
using namespace ember::test;

namespace {
/// Counts the nodes of \p F of kind \p kind.
size_t countKind(const Function &F, NodeKind kind) {
  size_t n = 0;
  for (auto &node : F.getNodes())
    n += node->getKind() == kind;
  return n;
}

/// Fails if \p F holds a node that copies or repeats an operand.
void expectNoCopies(const Function &F, const char *when) {
  EXPECT_EQ(countKind(F, NodeKind::Broadcast), 0u) << when;
  EXPECT_EQ(countKind(F, NodeKind::Tile), 0u) << when;
  EXPECT_EQ(countKind(F, NodeKind::Transpose), 0u) << when;
}

/// A float tensor of \p dims, random in [-1, 1].
Tensor randomTensor(llvm::ArrayRef<dim_t> dims, unsigned seed) {
  std::mt19937 gen(seed);
  Tensor t(ElemKind::Float32, dims);
  t.randomize(-1.f, 1.f, gen);
  return t;
}

/// A[i][p] * B[p][j] (or B[j][p] when \p transB) over the trailing matrices,
/// B's batch dims broadcast against A's (B has 1 or A's count of batches).
std::vector<double> naive(const Tensor &a, const Tensor &b, bool transB) {
  auto ad = a.dims(), bd = b.dims();
  dim_t m = ad[ad.size() - 2], k = ad.back();
  dim_t n = transB ? bd[bd.size() - 2] : bd.back();
  dim_t aBatch = a.size() / (m * k), bBatch = b.size() / (k * n);
  dim_t batch = std::max(aBatch, bBatch);
  std::vector<double> y;
  for (dim_t t = 0; t < batch; ++t)
    for (dim_t i = 0; i < m; ++i)
      for (dim_t j = 0; j < n; ++j) {
        double acc = 0;
        dim_t ab = aBatch == 1 ? 0 : t, bb = bBatch == 1 ? 0 : t;
        for (dim_t p = 0; p < k; ++p)
          acc +=
              a.elementAsDouble((ab * m + i) * k + p) *
              b.elementAsDouble(bb * k * n + (transB ? j * k + p : p * n + j));
        y.push_back(acc);
      }
  return y;
}

/// Imports \p model, checks the import and, per backend, the optimized graph
/// for copies, then runs it on \p inputs and compares with \p want.
void checkModel(const std::string &model, std::vector<Tensor> (*makeInputs)(),
                const std::vector<double> &want, dim_t k,
                size_t wantRank2MatMuls) {
  for (const char *backend : {"Interpreter", "CPU"}) {
    Module M;
    auto F = importONNXBuffer(model, "m.onnx", M);
    ASSERT_TRUE(bool(F)) << llvm::toString(F.takeError());
    for (NodeKind kind : {NodeKind::Broadcast, NodeKind::Tile})
      EXPECT_EQ(countKind(**F, kind), 0u) << "imported graph";
    auto out = compileAndRun(M, **F, backend, makeInputs());
    ASSERT_EQ(out.size(), 1u);
    expectNoCopies(**F, backend);
    size_t rank2 = 0;
    for (auto &node : (*F)->getNodes())
      if (auto *mm = llvm::dyn_cast<MatMulNode>(node.get()))
        rank2 += mm->getResult().dims().size() == 2;
    EXPECT_EQ(rank2, wantRank2MatMuls) << backend;
    double scale = 1;
    for (double v : want)
      scale = std::max(scale, std::fabs(v));
    ASSERT_EQ(size_t(out[0].size()), want.size());
    for (size_t i = 0; i < want.size(); ++i)
      ASSERT_NEAR(out[0].elementAsDouble(i), want[i],
                  1e-5 * scale * std::sqrt(double(k)))
          << backend << " element " << i;
  }
}

std::vector<float> values(const Tensor &t) {
  std::vector<float> v;
  for (dim_t i = 0; i < t.size(); ++i)
    v.push_back(float(t.elementAsDouble(i)));
  return v;
}
} // namespace

// torchvision's Linear on a rank-4 activation ([1, 7, 7, C] x [C, N], as in
// ConvNeXt blocks): one 2-D MatMul with 49 rows, the weight not copied.
TEST(ImportMatMul, Rank4ByWeightIsOne2DProduct) {
  ONNXBuilder b(17);
  b.input("x", {1, 7, 7, 24});
  Tensor w = randomTensor({24, 40}, 2);
  b.initializer("w", {24, 40}, values(w));
  b.node("MatMul", {"x", "w"}, {"y"});
  b.output("y");
  auto inputs = [] { return tensors(randomTensor({1, 7, 7, 24}, 1)); };
  std::vector<double> want = naive(randomTensor({49, 24}, 1), w, false);
  checkModel(b.serialize(), inputs, want, 24, 1);
}

// A rank-3 activation times a run-time 2-D matrix: still one 2-D product.
TEST(ImportMatMul, Rank3ByRuntimeMatrixIsOne2DProduct) {
  ONNXBuilder b(17);
  b.input("x", {5, 3, 16});
  b.input("w", {16, 33});
  b.node("MatMul", {"x", "w"}, {"y"});
  b.output("y");
  auto inputs = [] {
    return tensors(randomTensor({5, 3, 16}, 1), randomTensor({16, 33}, 2));
  };
  std::vector<double> want =
      naive(randomTensor({15, 16}, 1), randomTensor({16, 33}, 2), false);
  checkModel(b.serialize(), inputs, want, 16, 1);
}

// [M, K] x [B, K, N]: A's missing batch dim broadcasts inside the MatMul.
TEST(ImportMatMul, BroadcastLHSIsReadInPlace) {
  ONNXBuilder b(17);
  b.input("x", {6, 9});
  b.input("w", {3, 9, 20});
  b.node("MatMul", {"x", "w"}, {"y"});
  b.output("y");
  auto inputs = [] {
    return tensors(randomTensor({6, 9}, 1), randomTensor({3, 9, 20}, 2));
  };
  std::vector<double> want =
      naive(randomTensor({1, 6, 9}, 1), randomTensor({3, 9, 20}, 2), false);
  checkModel(b.serialize(), inputs, want, 9, 0);
}

// Attention scores Q * K^T with K transposed by a Transpose node: the
// Transpose folds into TransB, no copy of K.
TEST(ImportMatMul, TransposedKeysFoldIntoTransB) {
  ONNXBuilder b(17);
  b.input("q", {2, 10, 8});
  b.input("k", {2, 12, 8});
  auto &t = b.node("Transpose", {"k"}, {"kt"});
  ONNXBuilder::attrInts(t, "perm", {0, 2, 1});
  b.node("MatMul", {"q", "kt"}, {"y"});
  b.output("y");
  auto inputs = [] {
    return tensors(randomTensor({2, 10, 8}, 1), randomTensor({2, 12, 8}, 2));
  };
  std::vector<double> want =
      naive(randomTensor({2, 10, 8}, 1), randomTensor({2, 12, 8}, 2), true);
  checkModel(b.serialize(), inputs, want, 8, 0);
}

// Gemm with transB = 1 and a run-time B lowers to MatMul(TransB = 1) + Add,
// no Transpose.
TEST(ImportMatMul, GemmTransBHasNoTranspose) {
  ONNXBuilder b(17);
  b.input("a", {4, 16});
  b.input("w", {35, 16});
  auto &g = b.node("Gemm", {"a", "w"}, {"y"});
  ONNXBuilder::attrInt(g, "transB", 1);
  b.output("y");
  auto inputs = [] {
    return tensors(randomTensor({4, 16}, 1), randomTensor({35, 16}, 2));
  };
  std::vector<double> want =
      naive(randomTensor({4, 16}, 1), randomTensor({35, 16}, 2), true);
  checkModel(b.serialize(), inputs, want, 16, 1);
}
