//===- ConstantEvaluator.cpp - The importer's evaluator on the Interpreter ===//
#include "ember/Backend/ConstantEval.h"

#include "ember/Base/Error.h"

using namespace ember;

std::function<llvm::Expected<Tensor>(NodeValue)>
ember::makeConstantEvaluator() {
  return [](NodeValue v) -> llvm::Expected<Tensor> {
    registerAllBackends();
    return evaluateConstant(v);
  };
}
