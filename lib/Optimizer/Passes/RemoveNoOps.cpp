//===- RemoveNoOps.cpp - Remove nodes that return their input -------------===//
//
// Reshape to the same shape (Flatten, Squeeze and Unsqueeze are imported as
// Reshapes), Transpose by the identity, Broadcast (and so Expand) to the same
// shape, Concat of one operand, Clip to (-inf, inf), Cast to the same type,
// Pad, Tile and forward Slice that keep the shape all return their input
// unchanged. (Identity and Dropout never reach the graph: the importer
// forwards their input.)
//
//===----------------------------------------------------------------------===//
#include "PassUtils.h"
#include "Passes.h"

#include <cmath>

using namespace ember;

static bool isIdentityShuffle(llvm::ArrayRef<int64_t> shuffle) {
  for (size_t i = 0; i < shuffle.size(); ++i)
    if (shuffle[i] != int64_t(i))
      return false;
  return true;
}

/// True if \p s reads its whole input in order (a negative step reverses,
/// so same dims alone is not enough).
static bool isWholeSlice(const SliceNode &s) {
  llvm::ArrayRef<dim_t> d = s.getInput().dims();
  for (size_t i = 0; i < d.size(); ++i)
    if (s.getStarts()[i] != 0 || (s.getSteps()[i] != 1 && d[i] != 1))
      return false;
  return true;
}

/// The operand \p n forwards unchanged, or an empty value.
static NodeValue forwardedInput(Node *n) {
  if (n->getNumInputs() == 0 || n->getNumResults() != 1 ||
      !n->getNthInput(0).getType()->isSameStorage(*n->getType()))
    return NodeValue();
  NodeValue in = n->getNthInput(0);
  switch (n->getKind()) {
  case NodeKind::Reshape:
  case NodeKind::Broadcast:
  case NodeKind::Cast:
  case NodeKind::Pad:  // pads are non-negative: same dims means none
  case NodeKind::Tile: // same dims means every repeat is 1
    return in;         // same type means same dims
  case NodeKind::Slice:
    return isWholeSlice(*llvm::cast<SliceNode>(n)) ? in : NodeValue();
  case NodeKind::Transpose:
    return isIdentityShuffle(llvm::cast<TransposeNode>(n)->getShuffle())
               ? in
               : NodeValue();
  case NodeKind::Concat:
    return n->getNumInputs() == 1 ? in : NodeValue();
  case NodeKind::Clip: {
    auto *c = llvm::cast<ClipNode>(n);
    return std::isinf(c->getMin()) && c->getMin() < 0 &&
                   std::isinf(c->getMax()) && c->getMax() > 0
               ? in
               : NodeValue();
  }
  default:
    return NodeValue();
  }
}

bool RemoveNoOpsPass::run(Function &F, PassContext &ctx) {
  bool changed = false;
  for (Node *n : nodesInOrder(F)) {
    NodeValue in = forwardedInput(n);
    if (!in)
      continue;
    n->getNthResult(0).replaceAllUsesWith(in);
    F.eraseNode(n);
    ++ctx.counters["remove-noops.removed"];
    changed = true;
  }
  return changed;
}
