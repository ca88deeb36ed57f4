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
#include "../unit/TestUtils.h"
#include "PathOptions.h"

#include <cmath>
#include <random>

using namespace ember;
using namespace ember::test;

namespace {
struct EpilogueCase {
  const char *name;
  dim_t batch, m, k, n;
  bool bias, residual;
  NodeKind act; ///< NodeKind::Save for none.
  bool constantRHS = true;
};

const EpilogueCase kCases[] = {
    {"bias", 1, 29, 19, 70, true, false, NodeKind::Save},
    {"residual", 1, 13, 40, 64, false, true, NodeKind::Save},
    {"bias_residual_k_blocks", 1, 7, 300, 130, true, true, NodeKind::Save},
    {"bias_gelu", 1, 12, 200, 96, true, false, NodeKind::Gelu},
    {"bias_gelu_tanh_partial", 1, 11, 33, 47, true, false, NodeKind::Tanh},
    {"bias_relu", 1, 6, 50, 17, true, false, NodeKind::Relu},
    {"bias_residual_clip", 1, 9, 97, 70, true, true, NodeKind::Clip},
    {"sigmoid_only", 1, 5, 41, 65, false, false, NodeKind::Sigmoid},
    {"batched_bias_residual", 3, 10, 17, 40, true, true, NodeKind::Save},
    {"rank3_view_bias_gelu", 4, 8, 64, 48, true, false, NodeKind::Gelu},
    {"runtime_rhs_bias_residual", 2, 9, 33, 70, true, true, NodeKind::Save,
     false},
};

void PrintTo(const EpilogueCase &c, std::ostream *os) { *os << c.name; }

class MatMulEpilogueTest : public ::testing::TestWithParam<EpilogueCase> {};

/// The operands: a [batch, m, k], b [k, n] (batch of them when run-time),
/// bias [n], res [batch, m, n], random in [-1, 1] from a fixed seed.
std::vector<Tensor> makeOperands(const EpilogueCase &c) {
  std::mt19937 gen(5);
  dim_t bb = c.constantRHS ? 1 : c.batch;
  std::vector<Tensor> t;
  t.emplace_back(ElemKind::Float32, std::vector<dim_t>{c.batch, c.m, c.k});
  t.emplace_back(ElemKind::Float32, std::vector<dim_t>{bb, c.k, c.n});
  t.emplace_back(ElemKind::Float32, std::vector<dim_t>{1, 1, c.n});
  t.emplace_back(ElemKind::Float32, std::vector<dim_t>{c.batch, c.m, c.n});
  for (Tensor &x : t)
    x.randomize(-1.f, 1.f, gen);
  return t;
}

/// The activation of case \p c on \p x, in double.
double activate(const EpilogueCase &c, double x) {
  switch (c.act) {
  case NodeKind::Relu:
    return std::max(x, 0.0);
  case NodeKind::Clip:
    return std::min(std::max(x, -0.5), 0.75);
  case NodeKind::Sigmoid:
    return 1 / (1 + std::exp(-x));
  case NodeKind::Gelu:
    return 0.5 * x * std::erfc(-x / std::sqrt(2.0));
  case NodeKind::Tanh: // The tanh form of GELU.
    return 0.5 * x *
           (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
  default:
    return x;
  }
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
        y.push_back(activate(c, acc));
      }
  return y;
}

/// The activation node of case \p c applied to \p x.
NodeValue applyAct(Function &F, const EpilogueCase &c, NodeValue x) {
  switch (c.act) {
  case NodeKind::Relu:
    return F.createRelu("act", x);
  case NodeKind::Clip:
    return F.createClip("act", x, -0.5f, 0.75f);
  case NodeKind::Sigmoid:
    return F.createSigmoid("act", x);
  case NodeKind::Gelu:
    return F.createGelu("act", x, 0);
  case NodeKind::Tanh:
    return F.createGelu("act", x, 1);
  default:
    return x;
  }
}

Tensor runCase(const EpilogueCase &c, llvm::StringRef backend) {
  Module M;
  Function *F = M.createFunction("epi");
  std::vector<Tensor> t = makeOperands(c);
  std::vector<Tensor> inputs;
  auto input = [&](const char *name, Tensor x) -> NodeValue {
    auto *p = M.createPlaceholder(name, x.getType(), false);
    inputs.push_back(std::move(x));
    return p;
  };
  NodeValue a = input("a", std::move(t[0]));
  NodeValue b = c.constantRHS
                    ? NodeValue(M.createConstant("b", std::move(t[1])))
                    : input("b", std::move(t[1]));
  NodeValue bias = input("bias", std::move(t[2]));
  NodeValue res = input("res", std::move(t[3]));
  // Rank 3 throughout: matmul-form flattens a constant B's product into
  // 2-D behind a view, a run-time one stays batched.
  NodeValue y = F->createMatMul("mm", a, b, 0);
  std::vector<int64_t> dims(y.dims().begin(), y.dims().end());
  if (c.bias)
    y = F->createAdd("add_bias", F->createBroadcast("bias_b", bias, dims), y);
  if (c.residual)
    y = F->createAdd("add_res", y, res);
  y = applyAct(*F, c, y);
  auto *out = M.createPlaceholder("y", *y.getType(), true);
  F->createSave("save", y, out);
  auto outs = compileAndRun(M, *F, backend, std::move(inputs), pathOptions());
  return outs.empty() ? Tensor() : std::move(outs[0]);
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
