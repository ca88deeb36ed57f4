//===- OptTestUtils.h - Helpers for optimizer tests ------------*- C++ -*-===//
#ifndef EMBER_TESTS_OPTIMIZER_OPTTESTUTILS_H
#define EMBER_TESTS_OPTIMIZER_OPTTESTUTILS_H

#include "ember/Backend/Pipeline.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cmath>
#include <optional>

namespace ember {
namespace test {

/// Compiles \p F for the Interpreter with \p opts (pipeline unset: the
/// default one), runs it once on \p inputs (by input placeholder, in
/// order) and returns the outputs.
inline llvm::Expected<std::vector<Tensor>>
runOnInterpreter(Module &M, Function &F, const CompileOptions &opts,
                 const std::vector<const Tensor *> &inputs) {
  registerAllBackends();
  EMBER_ASSIGN_OR_RETURN(const Backend *B, getBackend("Interpreter"));
  EMBER_ASSIGN_OR_RETURN(CompiledNetwork net, compileFunction(F, *B, opts));
  Bindings b;
  auto phs = M.getInputPlaceholders();
  for (size_t i = 0; i < phs.size() && i < inputs.size(); ++i)
    b.insert(phs[i], inputs[i]->clone());
  b.allocateOutputs(M);
  EMBER_RETURN_IF_ERR(net.function->run(b));
  std::vector<Tensor> outs;
  for (Placeholder *p : M.getOutputPlaceholders())
    outs.push_back(b.get(p)->clone());
  return outs;
}

/// runOnInterpreter with pipeline \p P, -verify-each as \p verifyEach and
/// an optional Conv layout override.
inline llvm::Expected<std::vector<Tensor>>
runOnInterpreter(Module &M, Function &F, const Pipeline &P,
                 const std::vector<const Tensor *> &inputs,
                 bool verifyEach = true,
                 std::optional<ConvLayout> convLayout = std::nullopt) {
  CompileOptions opts;
  opts.pipeline = P;
  opts.passes.verifyEach = verifyEach;
  opts.convLayout = convLayout;
  return runOnInterpreter(M, F, opts, inputs);
}

/// Expects \p got to match \p ref within \p rel of ref's largest magnitude
/// per element (a norm-relative bound: element-relative error is
/// meaningless for outputs near zero).
inline void expectRelClose(const Tensor &got, const Tensor &ref, double rel,
                           const std::string &what) {
  ASSERT_EQ(got.getType(), ref.getType()) << what;
  double scale = 0, worst = 0;
  for (dim_t i = 0; i < ref.size(); ++i)
    scale = std::max(scale, std::fabs(ref.elementAsDouble(i)));
  for (dim_t i = 0; i < ref.size(); ++i)
    worst = std::max(
        worst, std::fabs(got.elementAsDouble(i) - ref.elementAsDouble(i)));
  EXPECT_LE(worst, rel * std::max(scale, 1e-30))
      << what << ": max abs diff " << worst << ", max |ref| " << scale;
}

} // namespace test
} // namespace ember

#endif
