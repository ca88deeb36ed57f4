//===- EpilogueCases.h - MatMul epilogue graphs for the path tests -*- C++ -*-//
//
// The MatMul epilogue tests (MatMulEpiloguePaths for Float32,
// MatMulBF16Paths for -precision=bf16) build the same graph as exporters
// write it, y = act(Add(Add(MatMul(a, b), bias), res)), with the bias
// broadcast from [1, 1, N], and compare against the definition in double.
// The case, its operands, the graph and the activation's definition live
// here once; each test keeps its own tolerance.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_TESTS_OPS_EPILOGUECASES_H
#define EMBER_TESTS_OPS_EPILOGUECASES_H

#include "../unit/TestUtils.h"
#include "PathOptions.h"

#include <cmath>
#include <ostream>
#include <random>

namespace ember {
namespace test {

struct EpilogueCase {
  const char *name;
  dim_t batch, m, k, n;
  bool bias, residual;
  FusedActivation act;
  bool constantRHS = true;
};

inline void PrintTo(const EpilogueCase &c, std::ostream *os) { *os << c.name; }

/// The operands: a [batch, m, k], b [k, n] (batch of them when run-time),
/// bias [1, 1, n], res [batch, m, n], uniform in [-range, range] from
/// \p seed.
inline std::vector<Tensor> makeEpilogueOperands(const EpilogueCase &c,
                                                unsigned seed, float range) {
  std::mt19937 gen(seed);
  dim_t bb = c.constantRHS ? 1 : c.batch;
  std::vector<Tensor> t;
  t.emplace_back(ElemKind::Float32, std::vector<dim_t>{c.batch, c.m, c.k});
  t.emplace_back(ElemKind::Float32, std::vector<dim_t>{bb, c.k, c.n});
  t.emplace_back(ElemKind::Float32, std::vector<dim_t>{1, 1, c.n});
  t.emplace_back(ElemKind::Float32, std::vector<dim_t>{c.batch, c.m, c.n});
  for (Tensor &x : t)
    x.randomize(-range, range, gen);
  return t;
}

/// The activation \p act of \p x by definition, in double (Clip's bounds
/// are the ones applyActivation gives the node).
inline double activateExact(FusedActivation act, double x) {
  switch (act) {
  case FusedActivation::Relu:
    return std::max(x, 0.0);
  case FusedActivation::Clip:
    return std::min(std::max(x, -0.5), 0.75);
  case FusedActivation::Sigmoid:
    return 1 / (1 + std::exp(-x));
  case FusedActivation::Gelu:
    return 0.5 * x * std::erfc(-x / std::sqrt(2.0));
  case FusedActivation::GeluTanh:
    return 0.5 * x *
           (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
  default:
    return x;
  }
}

/// The activation node for \p act applied to \p x.
inline NodeValue applyActivation(Function &F, FusedActivation act,
                                 NodeValue x) {
  switch (act) {
  case FusedActivation::Relu:
    return F.createRelu("act", x);
  case FusedActivation::Clip:
    return F.createClip("act", x, -0.5f, 0.75f);
  case FusedActivation::Sigmoid:
    return F.createSigmoid("act", x);
  case FusedActivation::Gelu:
    return F.createGelu("act", x, 0);
  case FusedActivation::GeluTanh:
    return F.createGelu("act", x, 1);
  default:
    return x;
  }
}

/// Compiles case \p c's graph over operands \p t with \p opts for
/// \p backend and returns y (rank 3 throughout: matmul-form flattens a
/// constant B's product into 2-D behind a view, a run-time one stays
/// batched).
inline Tensor runEpilogueGraph(const EpilogueCase &c, std::vector<Tensor> t,
                               llvm::StringRef backend,
                               const CodegenOptions &opts) {
  Module M;
  Function *F = M.createFunction("epi");
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
  NodeValue y = F->createMatMul("mm", a, b, 0);
  std::vector<int64_t> dims(y.dims().begin(), y.dims().end());
  if (c.bias)
    y = F->createAdd("add_bias", F->createBroadcast("bias_b", bias, dims), y);
  if (c.residual)
    y = F->createAdd("add_res", y, res);
  y = applyActivation(*F, c.act, y);
  auto *out = M.createPlaceholder("y", *y.getType(), true);
  F->createSave("save", y, out);
  auto outs = compileAndRun(M, *F, backend, std::move(inputs), opts);
  return outs.empty() ? Tensor() : std::move(outs[0]);
}

} // namespace test
} // namespace ember

#endif
