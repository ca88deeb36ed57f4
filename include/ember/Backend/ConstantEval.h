//===- ConstantEval.h - Evaluate constant subgraphs on a backend -*- C++
//-*-===//
#ifndef EMBER_BACKEND_CONSTANTEVAL_H
#define EMBER_BACKEND_CONSTANTEVAL_H

#include "ember/Backend/Backend.h"

#include <functional>

namespace ember {

/// Computes \p v, whose operands are all Constants transitively (its
/// subgraph is copied and run on the Interpreter; see
/// evaluateConstantValues in Pipeline.h).
llvm::Expected<Tensor> evaluateConstant(NodeValue v);

/// An evaluator for ImportOptions::evaluator that runs on the Interpreter
/// (defined in backends/, which registers it).
std::function<llvm::Expected<Tensor>(NodeValue)> makeConstantEvaluator();

} // namespace ember

#endif // EMBER_BACKEND_CONSTANTEVAL_H
