//===- MatMulTransposePaths.cpp - Transposes read through strides ---------===//
//
// A Transpose whose only reader is a float MatMul operand is not run on the
// CPU: the product reads the Transpose's input through the permuted strides
// (MatMulOperands.h). A in place with its row stride where its last dim
// stays contiguous (a head split [B, T, H, D] -> [B, H, T, D]), gathered by
// the packing of A where it does not (A transposed); B in place with its
// row stride (attention's V), else gathered by the packing of B (K^T from
// the head split, or a head-split K under TransB). The cases are odd-sized,
// of batch 2 (one with a broadcast batch dim), some long enough in K and N
// for several K blocks and panels, on one and two threads; each runs with
// A packed by the rule and with A always packed. Oracle: the Interpreter
// (which runs the Transpose), and the definition in double for it.
// Where the Transpose's input is a network input (nothing can overwrite
// it), the CPU's profile must show no kernel computing the Transpose.
// Tolerance: max|d| <= 1e-5 * max(1, max|ref|) * sqrt(K), as MatMulPaths.
//
//===----------------------------------------------------------------------===//
#include "../unit/TestUtils.h"
#include "PathOptions.h"

#include "ember/Backend/Profile.h"

#include <cmath>
#include <random>

using namespace ember;
using namespace ember::test;

namespace {
/// One stored operand and the Transpose applied to it (none when empty).
struct Stored {
  std::vector<dim_t> dims;
  std::vector<int64_t> perm;
};

struct TransposeCase {
  const char *name;
  Stored a, b;
  bool transB = false;
  bool constantRHS = false;
  bool reluA = false; ///< A's source is an activation (Relu of the input).
  unsigned threads = 1;
};

const TransposeCase kCases[] = {
    {"lhs_heads", {{2, 7, 3, 8}, {0, 2, 1, 3}}, {{2, 3, 8, 11}, {}}},
    {"lhs_trans", {{2, 19, 13}, {0, 2, 1}}, {{2, 19, 70}, {}}, false, true},
    {"rhs_heads_pv", {{2, 3, 9, 11}, {}}, {{2, 11, 3, 21}, {0, 2, 1, 3}}},
    {"rhs_heads_kt", {{2, 3, 9, 8}, {}}, {{2, 13, 3, 8}, {0, 2, 3, 1}}},
    {"rhs_heads_transb",
     {{2, 3, 9, 8}, {}},
     {{2, 13, 3, 8}, {0, 2, 1, 3}},
     true},
    {"both_heads_qk",
     {{2, 10, 3, 8}, {0, 2, 1, 3}},
     {{2, 12, 3, 8}, {0, 2, 3, 1}}},
    {"lhs_heads_bcast", {{1, 7, 3, 8}, {0, 2, 1, 3}}, {{2, 3, 8, 5}, {}}},
    {"rank3_seq_major", {{9, 4, 16}, {1, 0, 2}}, {{12, 4, 16}, {1, 2, 0}}},
    {"lhs_heads_blocks_2t",
     {{2, 40, 2, 300}, {0, 2, 1, 3}},
     {{2, 2, 300, 130}, {}},
     false,
     false,
     false,
     2},
    {"lhs_trans_blocks_2t",
     {{2, 300, 25}, {0, 2, 1}},
     {{2, 300, 70}, {}},
     false,
     false,
     false,
     2},
    {"rhs_wide_pv_2t",
     {{2, 2, 13, 33}, {}},
     {{2, 33, 2, 150}, {0, 2, 1, 3}},
     false,
     false,
     false,
     2},
    {"lhs_heads_of_activation",
     {{2, 7, 3, 8}, {0, 2, 1, 3}},
     {{2, 3, 8, 11}, {}},
     false,
     false,
     true},
};

void PrintTo(const TransposeCase &c, std::ostream *os) { *os << c.name; }

/// The dims the MatMul sees of \p s.
std::vector<dim_t> operandDims(const Stored &s) {
  if (s.perm.empty())
    return s.dims;
  std::vector<dim_t> d;
  for (int64_t p : s.perm)
    d.push_back(s.dims[p]);
  return d;
}

/// Element \p idx of the operand made of stored tensor \p t by \p s.
double operandAt(const Tensor &t, const Stored &s,
                 const std::vector<dim_t> &idx) {
  std::vector<dim_t> at(idx.size());
  for (size_t i = 0; i < idx.size(); ++i)
    at[s.perm.empty() ? i : size_t(s.perm[i])] = idx[i];
  dim_t flat = 0;
  for (size_t i = 0; i < at.size(); ++i)
    flat = flat * s.dims[i] + at[i];
  return t.elementAsDouble(flat);
}

std::pair<Tensor, Tensor> makeOperands(const TransposeCase &c) {
  std::mt19937 gen(5);
  Tensor a(ElemKind::Float32, c.a.dims), b(ElemKind::Float32, c.b.dims);
  a.randomize(-1.f, 1.f, gen);
  b.randomize(-1.f, 1.f, gen);
  return {std::move(a), std::move(b)};
}

/// The product by definition, in double (A through Relu where the case
/// says), batch dims broadcast.
std::vector<double> naiveProduct(const TransposeCase &c) {
  auto [a, b] = makeOperands(c);
  std::vector<dim_t> ad = operandDims(c.a), bd = operandDims(c.b);
  size_t r = ad.size();
  dim_t m = ad[r - 2], K = ad[r - 1], n = c.transB ? bd[r - 2] : bd[r - 1];
  std::vector<dim_t> out(r - 2);
  dim_t batch = 1;
  for (size_t d = 0; d + 2 < r; ++d)
    batch *= (out[d] = std::max(ad[d], bd[d]));
  std::vector<double> y;
  for (dim_t bi = 0; bi < batch; ++bi) {
    std::vector<dim_t> ia(r), ib(r);
    dim_t rest = bi;
    for (size_t d = r - 2; d-- > 0;) {
      ia[d] = ad[d] == 1 ? 0 : rest % out[d];
      ib[d] = bd[d] == 1 ? 0 : rest % out[d];
      rest /= out[d];
    }
    for (dim_t i = 0; i < m; ++i)
      for (dim_t j = 0; j < n; ++j) {
        double acc = 0;
        for (dim_t p = 0; p < K; ++p) {
          ia[r - 2] = i, ia[r - 1] = p;
          ib[r - 2] = c.transB ? j : p, ib[r - 1] = c.transB ? p : j;
          double x = operandAt(a, c.a, ia);
          acc += (c.reluA ? std::max(x, 0.0) : x) * operandAt(b, c.b, ib);
        }
        y.push_back(acc);
      }
  }
  return y;
}

NodeValue transposed(Function *F, const char *name, NodeValue v,
                     const Stored &s) {
  return s.perm.empty() ? v : F->createTranspose(name, v, s.perm);
}

/// Runs case \p c on \p backend; on the CPU also returns whether a kernel
/// computes a Transpose (\p transposeKernels).
Tensor runCase(const TransposeCase &c, llvm::StringRef backend,
               bool *transposeKernels = nullptr) {
  Module M;
  Function *F = M.createFunction("mm");
  auto [at, bt] = makeOperands(c);
  std::vector<Tensor> inputs;
  NodeValue a = M.createPlaceholder("a", at.getType(), false);
  inputs.push_back(std::move(at));
  if (c.reluA)
    a = F->createRelu("relu", a);
  NodeValue b = constantOrInput(M, "b", std::move(bt), c.constantRHS, inputs);
  NodeValue y = F->createMatMul("mm", transposed(F, "at", a, c.a),
                                transposed(F, "bt", b, c.b), c.transB);
  auto *out = M.createPlaceholder("y", *y.getType(), true);
  F->createSave("save", y, out);
  registerAllBackends();
  auto B = getBackend(backend);
  EXPECT_TRUE(bool(B));
  if (!B)
    return Tensor();
  CompileOptions opts;
  opts.codegen = pathOptions();
  auto net = compileFunction(*F, **B, opts);
  if (!net) {
    ADD_FAILURE() << llvm::toString(net.takeError());
    return Tensor();
  }
  if (backend == "CPU" && c.threads > 1) {
    llvm::Error e = net->function->setNumThreads(c.threads);
    EXPECT_FALSE(bool(e)) << llvm::toString(std::move(e));
  }
  Bindings bind;
  auto phs = M.getInputPlaceholders();
  for (size_t i = 0; i < phs.size(); ++i)
    bind.insert(phs[i], std::move(inputs[i]));
  Profile profile;
  llvm::Error err = transposeKernels ? net->function->runProfiled(bind, profile)
                                     : net->function->run(bind);
  EXPECT_FALSE(bool(err)) << llvm::toString(std::move(err));
  if (transposeKernels) {
    *transposeKernels = false;
    for (const KernelTime &k : profile.kernels)
      for (const Instruction *I : k.sources)
        *transposeKernels |= llvm::isa<TransposeInst>(I);
  }
  return bind.get(out)->clone();
}

void checkCase(const TransposeCase &c) {
  Tensor ref = runCase(c, "Interpreter");
  bool transposes = true;
  Tensor got = runCase(c, "CPU", &transposes);
  ASSERT_GT(ref.size(), 0);
  std::vector<dim_t> ad = operandDims(c.a);
  dim_t K = ad.back();
  double maxRef = 1;
  for (dim_t i = 0; i < ref.size(); ++i)
    maxRef = std::max(maxRef, std::fabs(ref.elementAsDouble(i)));
  float tol = float(1e-5 * maxRef * std::sqrt(double(K)));
  expectNear(got, ref, tol);
  std::vector<double> want = naiveProduct(c);
  ASSERT_EQ(size_t(ref.size()), want.size());
  for (size_t i = 0; i < want.size(); ++i)
    ASSERT_NEAR(ref.elementAsDouble(i), want[i], tol) << "element " << i;
  // An input cannot be overwritten before the product: always folded.
  if (!c.reluA) {
    EXPECT_FALSE(transposes) << "the CPU ran a Transpose kernel";
  }
}

class MatMulTransposeTest : public ::testing::TestWithParam<TransposeCase> {};
} // namespace

TEST_P(MatMulTransposeTest, CPUMatchesInterpreter) { checkCase(GetParam()); }

TEST_P(MatMulTransposeTest, PackedLHSMatchesInterpreter) {
  CPUCodegenOptions saved = pathOptions().cpu;
  pathOptions().cpu.forcePackMatMulLHS = true;
  checkCase(GetParam());
  pathOptions().cpu = saved;
}

INSTANTIATE_TEST_SUITE_P(Cases, MatMulTransposeTest,
                         ::testing::ValuesIn(kCases), [](const auto &info) {
                           return std::string(info.param.name);
                         });
