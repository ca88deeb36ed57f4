//===- FuseConv.cpp - Conv epilogue fusion (activation, residual) ---------===//
//
// Conv computes act(conv(x) + bias + residual). fuse-conv-residual turns
// Add(Conv, r) into Conv with Residual r; fuse-conv-activation turns
// Relu/Clip/Sigmoid of a Conv into its FusedActivation. Both need the Conv
// to be the only user's operand, and ask the backend (PassContext) first.
// Residual fusion must run first: an activation already fused would apply
// before the Add.
//
//===----------------------------------------------------------------------===//
#include "PassUtils.h"
#include "Passes.h"

using namespace ember;

/// The Conv behind \p v if it is used once and has no epilogue yet.
static ConvNode *plainSingleUseConv(NodeValue v) {
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

/// The activation \p n applies, with its parameters, if Conv can fuse it.
static std::optional<std::tuple<FusedActivation, float, float>>
activationOf(const Node *n) {
  switch (n->getKind()) {
  case NodeKind::Relu:
    return std::make_tuple(FusedActivation::Relu, 0.f, 0.f);
  case NodeKind::Sigmoid:
    return std::make_tuple(FusedActivation::Sigmoid, 0.f, 0.f);
  case NodeKind::Clip: {
    auto *c = llvm::cast<ClipNode>(n);
    return std::make_tuple(FusedActivation::Clip, c->getMin(), c->getMax());
  }
  default:
    return std::nullopt;
  }
}

bool FuseConvActivationPass::run(Function &F, PassContext &ctx) {
  bool changed = false;
  unsigned actIdx = attrIndex(OpKind::Conv, "FusedActivation");
  unsigned alphaIdx = attrIndex(OpKind::Conv, "FusedAlpha");
  unsigned betaIdx = attrIndex(OpKind::Conv, "FusedBeta");
  for (Node *n : nodesInOrder(F)) {
    auto act = activationOf(n);
    if (!act || n->getNumInputs() != 1)
      continue;
    ConvNode *conv = plainSingleUseConv(n->getNthInput(0));
    if (!conv || conv->getType() != n->getType() ||
        !ctx.supportsConvActivation(std::get<0>(*act)))
      continue;
    AttrList attrs = conv->getAttrs();
    attrs[actIdx] = Attr::makeInt(int64_t(std::get<0>(*act)));
    attrs[alphaIdx] = Attr::makeFloat(std::get<1>(*act));
    attrs[betaIdx] = Attr::makeFloat(std::get<2>(*act));
    Node *fused = cloneNode(F, *conv, conv->getInputs(), std::move(attrs));
    n->getNthResult(0).replaceAllUsesWith(fused->getNthResult(0));
    F.eraseNode(n);
    F.eraseNode(conv);
    ++ctx.counters["fuse-conv-activation.fused"];
    changed = true;
  }
  return changed;
}
