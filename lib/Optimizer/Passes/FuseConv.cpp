//===- FuseConv.cpp - Conv epilogue fusion (activation, residual) ---------===//
//
// Conv computes act(conv(x) + bias + residual). fuse-conv-residual turns
// Add(Conv, r) into Conv with Residual r; fuse-conv-activation turns
// an activation of a Conv into its FusedActivation (FuseConvActivation.cpp).
// Both need the Conv to be the only user's operand, and ask the backend
// (PassContext) first.
// Residual fusion must run first: an activation already fused would apply
// before the Add.
//
//===----------------------------------------------------------------------===//
#include "PassUtils.h"
#include "Passes.h"

using namespace ember;

ConvNode *ember::plainSingleUseConv(NodeValue v) {
  auto *conv = llvm::dyn_cast<ConvNode>(v.getNode());
  if (!conv || !hasOneUse(conv) ||
      conv->getFusedActivation() != int64_t(FusedActivation::None))
    return nullptr;
  return conv;
}

bool FuseConvResidualPass::run(Function &F, PassContext &ctx) {
  if (!ctx.supportsConvResidual)
    return false;
  bool changed = false;
  for (Node *n : nodesInOrder(F)) {
    auto *add = llvm::dyn_cast<AddNode>(n);
    if (!add)
      continue;
    for (unsigned i = 0; i < 2; ++i) {
      ConvNode *conv = plainSingleUseConv(add->getNthInput(i));
      if (!conv || !conv->getResidual().empty() ||
          conv->getType() != add->getType())
        continue;
      // The other operand cannot depend on the Conv: the Add is its only
      // user. So making it a Conv operand creates no cycle.
      NodeValue other = add->getNthInput(1 - i);
      Node *fused = cloneNode(
          F, *conv,
          {conv->getInput(), conv->getFilter(), conv->getBias(), other},
          conv->getAttrs());
      add->getResult().replaceAllUsesWith(fused->getNthResult(0));
      F.eraseNode(add);
      F.eraseNode(conv);
      ++ctx.counters["fuse-conv-residual.fused"];
      changed = true;
      break;
    }
  }
  return changed;
}
