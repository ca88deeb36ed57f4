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
    auto *pad = llvm::dyn_cast<PadNode>(conv->getInput().getNode());
    if (!pad || pad->getMode() != 0 || pad->getValue() != 0.f)
      continue;
    // ONNX order: begins of N, C, H, W, then ends.
    llvm::ArrayRef<int64_t> p = pad->getPads();
    if (p.size() != 8 || p[0] || p[1] || p[4] || p[5])
      continue;
    llvm::ArrayRef<int64_t> cp = conv->getPads(); // top, left, bottom, right
    llvm::SmallVector<int64_t, 4> pads = {cp[0] + p[2], cp[1] + p[3],
                                          cp[2] + p[6], cp[3] + p[7]};
    AttrList attrs = conv->getAttrs();
    attrs[padsIdx] = Attr::makeInts(pads);
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
