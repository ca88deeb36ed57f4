//===- DCE.cpp - Dead-code elimination and lowering as passes -------------===//
#include "Passes.h"

#include "ember/Optimizer/Lower.h"

using namespace ember;

bool DCEPass::run(Function &F, PassContext &) { return eliminateDeadCode(F); }

bool LowerPass::run(Function &F, PassContext &ctx) {
  return lowerFunction(F, ctx.shouldLower);
}
