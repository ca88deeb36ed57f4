//===- FoldPadIntoPool.cpp - Zero padding becomes AvgPool padding ---------===//
//
// AvgPool(Pad(x)) with a constant-zero Pad of the spatial dims only is an
// AvgPool of x whose own padding counts in the divisor (CountIncludePad):
// the padded zeros are averaged either way. (PyTorch exports avg_pool2d
// with count_include_pad=True this way: Inception-v3 pads every pool
// branch.) It applies when the AvgPool has no padding of its own or already
// counts it, and the total stays below the window (what the AvgPool node
// takes). The Pad stays if it has other users.
//
//===----------------------------------------------------------------------===//
#include "PassUtils.h"
#include "Passes.h"

using namespace ember;

bool FoldPadIntoPoolPass::run(Function &F, PassContext &ctx) {
  bool changed = false;
  unsigned padsIdx = attrIndex(OpKind::AvgPool, "Pads");
  unsigned countIdx = attrIndex(OpKind::AvgPool, "CountIncludePad");
  for (Node *n : nodesInOrder(F)) {
    auto *pool = llvm::dyn_cast<AvgPoolNode>(n);
    if (!pool)
      continue;
    PadNode *pad = spatialZeroPad(pool->getInput());
    if (!pad)
      continue;
    llvm::ArrayRef<int64_t> own = pool->getPads(); // top, left, bottom, right
    bool ownPads = llvm::any_of(own, [](int64_t v) { return v != 0; });
    if (ownPads && !pool->getCountIncludePad())
      continue;
    llvm::SmallVector<int64_t, 4> pads = addSpatialPads(own, *pad);
    llvm::ArrayRef<int64_t> k = pool->getKernel();
    if (pads[0] >= k[0] || pads[2] >= k[0] || pads[1] >= k[1] ||
        pads[3] >= k[1])
      continue;
    AttrList attrs = pool->getAttrs();
    attrs[padsIdx] = Attr::makeInts(pads);
    attrs[countIdx] = Attr::makeInt(1);
    Node *folded = cloneNode(F, *pool, {pad->getInput()}, std::move(attrs));
    replaceNode(pool, folded);
    F.eraseNode(pool);
    if (!pad->hasUsers())
      F.eraseNode(pad);
    ++ctx.counters["fold-pad-into-pool.folded"];
    changed = true;
  }
  return changed;
}
