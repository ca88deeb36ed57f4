//===- FoldPadIntoConv.cpp - Zero padding becomes Conv padding ------------===//
//
// Conv(Pad(x)) with a constant-zero Pad of the spatial dims only is Conv(x)
// with the Pad's amounts added to the Conv's own: the Conv pads with zeros
// too. (Exporters that pad explicitly, e.g. for "same" padding, leave this
// pattern.) The Pad stays if it has other users.
//
//===----------------------------------------------------------------------===//
#include "PassUtils.h"
#include "Passes.h"

using namespace ember;

bool FoldPadIntoConvPass::run(Function &F, PassContext &ctx) {
  bool changed = false;
  unsigned padsIdx = attrIndex(OpKind::Conv, "Pads");
  for (Node *n : nodesInOrder(F)) {
    auto *conv = llvm::dyn_cast<ConvNode>(n);
    if (!conv)
      continue;
    PadNode *pad = spatialZeroPad(conv->getInput());
    if (!pad)
      continue;
    AttrList attrs = conv->getAttrs();
    attrs[padsIdx] = Attr::makeInts(addSpatialPads(conv->getPads(), *pad));
    llvm::SmallVector<NodeValue, 4> ops(conv->getInputs().begin(),
                                        conv->getInputs().end());
    ops[0] = pad->getInput();
    Node *folded = cloneNode(F, *conv, ops, std::move(attrs));
    replaceNode(conv, folded);
    F.eraseNode(conv);
    if (!pad->hasUsers())
      F.eraseNode(pad);
    ++ctx.counters["fold-pad-into-conv.folded"];
    changed = true;
  }
  return changed;
}
