//===- ConstantEval.cpp - One constant value for the importer -------------===//
#include "ember/Backend/ConstantEval.h"

#include "ember/Backend/Pipeline.h"
#include "ember/Base/Error.h"

using namespace ember;

llvm::Expected<Tensor> ember::evaluateConstant(NodeValue v) {
  if (auto *c = llvm::dyn_cast<Constant>(v.getNode()))
    return c->getPayload().clone();
  EMBER_ASSIGN_OR_RETURN(std::vector<Tensor> values,
                         evaluateConstantValues({v}));
  return std::move(values.front());
}
