//===- AttentionTestUtils.h - Running attention graphs ---------*- C++ -*-===//
//
// Shared by AttentionTest.cpp and AttentionLayoutTest.cpp: a graph in the
// printer's text format compiled for a backend and run, random inputs for
// it, and the comparison with the unfused chain's result.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_TESTS_OPTIMIZER_ATTENTIONTESTUTILS_H
#define EMBER_TESTS_OPTIMIZER_ATTENTIONTESTUTILS_H

#include "OptTestUtils.h"

#include "ember/Graph/Parser.h"

#include <cmath>
#include <random>
#include <string>

namespace ember {
namespace test {

/// Compiles \p text for backend \p backend with \p P (default: the
/// default pipeline), runs it on \p inputs and returns its outputs;
/// \p count receives the number of \p kind nodes in the optimized graph,
/// \p transposes that of Transposes.
inline llvm::Expected<std::vector<Tensor>>
runAttention(const std::string &text, const char *backend,
             std::optional<Pipeline> P, const std::vector<Tensor> &inputs,
             NodeKind kind = NodeKind::Attention, unsigned *count = nullptr,
             unsigned *transposes = nullptr) {
  registerAllBackends();
  Module M;
  EMBER_ASSIGN_OR_RETURN(Function * F, parseFunction(text, M));
  EMBER_ASSIGN_OR_RETURN(const Backend *B, getBackend(backend));
  CompileOptions opts;
  opts.pipeline = P;
  opts.passes.verifyEach = true;
  EMBER_ASSIGN_OR_RETURN(CompiledNetwork net, compileFunction(*F, *B, opts));
  if (count) {
    *count = 0;
    for (const auto &n : F->getNodes())
      *count += n->getKind() == kind;
  }
  if (transposes) {
    *transposes = 0;
    for (const auto &n : F->getNodes())
      *transposes += n->getKind() == NodeKind::Transpose;
  }
  Bindings b;
  auto phs = M.getInputPlaceholders();
  for (size_t i = 0; i < phs.size(); ++i)
    b.insert(phs[i], inputs[i].clone());
  b.allocateOutputs(M);
  EMBER_RETURN_IF_ERR(net.function->run(b));
  std::vector<Tensor> outs;
  for (Placeholder *p : M.getOutputPlaceholders())
    outs.push_back(b.get(p)->clone());
  return outs;
}

/// Random inputs in [-2, 2) for the graph \p text.
inline std::vector<Tensor> randomInputs(const std::string &text) {
  std::mt19937 gen(11);
  std::vector<Tensor> inputs;
  Module M;
  auto F = parseFunction(text, M);
  EXPECT_TRUE(bool(F)) << llvm::toString(F.takeError()) << "\n" << text;
  for (Placeholder *p : M.getInputPlaceholders()) {
    inputs.emplace_back(*p->getType());
    inputs.back().randomize(-2.f, 2.f, gen);
  }
  return inputs;
}

/// Expects \p got to match \p ref within 2e-5 of max|ref|; with
/// \p nanHalf the second half of ref (batch 1 of a fully masked case)
/// must be NaN in both.
inline void compareAttention(const Tensor &got, const Tensor &ref, bool nanHalf,
                             const std::string &what) {
  if (!nanHalf) {
    expectRelClose(got, ref, 2e-5, what);
    return;
  }
  dim_t half = ref.size() / 2;
  double scale = 0, worst = 0;
  for (dim_t i = 0; i < half; ++i) {
    scale = std::max(scale, std::fabs(ref.elementAsDouble(i)));
    worst = std::max(
        worst, std::fabs(got.elementAsDouble(i) - ref.elementAsDouble(i)));
  }
  EXPECT_LE(worst, 2e-5 * scale) << what;
  for (dim_t i = half; i < ref.size(); ++i) {
    ASSERT_TRUE(std::isnan(ref.elementAsDouble(i))) << what << " " << i;
    ASSERT_TRUE(std::isnan(got.elementAsDouble(i))) << what << " " << i;
  }
}

} // namespace test
} // namespace ember

#endif
