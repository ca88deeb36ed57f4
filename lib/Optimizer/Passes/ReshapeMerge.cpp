//===- ReshapeMerge.cpp - Merge chains of Reshapes ------------------------===//
//
// Reshape(Reshape(x)) is Reshape(x): only the last shape matters. Flatten
// and Squeeze/Unsqueeze are imported as Reshapes, so their chains merge too.
//
//===----------------------------------------------------------------------===//
#include "PassUtils.h"
#include "Passes.h"

using namespace ember;

bool ReshapeMergePass::run(Function &F, PassContext &ctx) {
  bool changed = false;
  for (Node *n : nodesInOrder(F)) {
    auto *outer = llvm::dyn_cast<ReshapeNode>(n);
    if (!outer)
      continue;
    auto *inner = llvm::dyn_cast<ReshapeNode>(outer->getInput().getNode());
    if (!inner)
      continue;
    outer->setNthInput(0, inner->getInput());
    ++ctx.counters["reshape-merge.merged"];
    changed = true;
  }
  return changed;
}
