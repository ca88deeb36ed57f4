//===- ConcatSlice.cpp - Simplify Concat and Slice combinations -----------===//
//
// concat-merge: Concat(a, Concat(b, c), d) on one axis, the inner Concat
// used only here, becomes Concat(a, b, c, d).
// slice-concat: a unit-step Slice that selects exactly operand i of a
// Concat (all of it, nothing else) is that operand; a Concat of Slices of
// one tensor that are adjacent along the Concat axis (unit steps, equal
// elsewhere) becomes one Slice (remove-noops removes it if it is all of the
// tensor). The second undoes merge-parallel's split where the parts are
// joined again in order.
//
//===----------------------------------------------------------------------===//
#include "PassUtils.h"
#include "Passes.h"

using namespace ember;

bool ConcatMergePass::run(Function &F, PassContext &ctx) {
  bool changed = false;
  for (Node *n : nodesInOrder(F)) {
    auto *cat = llvm::dyn_cast<ConcatNode>(n);
    if (!cat)
      continue;
    llvm::SmallVector<NodeValue, 8> ops;
    bool flattened = false;
    for (NodeValue in : cat->getInputs()) {
      auto *inner = llvm::dyn_cast<ConcatNode>(in.getNode());
      if (inner && inner != cat && hasOneUse(inner) &&
          inner->getAxis() == cat->getAxis()) {
        // ConcatNode::getInputs returns a vector by value: keep one.
        llvm::SmallVector<NodeValue, 4> innerOps = inner->getInputs();
        ops.append(innerOps.begin(), innerOps.end());
        flattened = true;
      } else {
        ops.push_back(in);
      }
    }
    if (!flattened)
      continue;
    Node *merged = createLike(F, *cat, ops, cat->getAttrs());
    llvm::SmallVector<Node *, 4> inners;
    for (NodeValue in : cat->getInputs())
      if (in.getNode() != cat && llvm::isa<ConcatNode>(in.getNode()) &&
          hasOneUse(in.getNode()) &&
          llvm::cast<ConcatNode>(in.getNode())->getAxis() == cat->getAxis())
        inners.push_back(in.getNode());
    replaceNode(cat, merged);
    F.eraseNode(cat);
    for (Node *i : inners)
      if (!i->hasUsers())
        F.eraseNode(i);
    ++ctx.counters["concat-merge.merged"];
    changed = true;
  }
  return changed;
}

/// True if \p s has unit steps and covers its input fully on every axis
/// but \p axis.
static bool isUnitSliceAlong(const SliceNode &s, unsigned axis) {
  llvm::ArrayRef<dim_t> in = s.getInput().dims();
  for (unsigned i = 0; i < in.size(); ++i) {
    if (s.getSteps()[i] != 1)
      return false;
    if (i != axis && (s.getStarts()[i] != 0 || s.getDims()[i] != in[i]))
      return false;
  }
  return true;
}

/// The Concat operand a Slice selects exactly, or an empty value.
static NodeValue selectedOperand(SliceNode &s) {
  auto *cat = llvm::dyn_cast<ConcatNode>(s.getInput().getNode());
  if (!cat)
    return NodeValue();
  unsigned axis = cat->getAxis();
  if (!isUnitSliceAlong(s, axis))
    return NodeValue();
  int64_t offset = 0;
  for (NodeValue in : cat->getInputs()) {
    if (offset == s.getStarts()[axis] && s.getDims()[axis] == in.dims()[axis])
      return in;
    offset += in.dims()[axis];
  }
  return NodeValue();
}

/// One Slice equal to the Concat \p cat of adjacent Slices, or null.
static Node *joinAdjacentSlices(Function &F, ConcatNode &cat) {
  unsigned axis = cat.getAxis();
  NodeValue src;
  int64_t next = 0;
  for (NodeValue in : cat.getInputs()) {
    auto *s = llvm::dyn_cast<SliceNode>(in.getNode());
    if (!s || !isUnitSliceAlong(*s, axis))
      return nullptr;
    if (!src) {
      src = s->getInput();
      next = s->getStarts()[axis];
    }
    if (s->getInput() != src || s->getStarts()[axis] != next)
      return nullptr;
    next += s->getDims()[axis];
  }
  auto *first = llvm::cast<SliceNode>(cat.getInputs()[0].getNode());
  llvm::ArrayRef<dim_t> d = cat.getType()->dims();
  return F.createSlice(
      cat.getName().str() + ".slice", src, first->getStarts(),
      first->getSteps(),
      llvm::SmallVector<int64_t, kMaxRank>(d.begin(), d.end()));
}

bool SliceConcatPass::run(Function &F, PassContext &ctx) {
  bool changed = false;
  for (Node *n : nodesInOrder(F)) {
    if (auto *s = llvm::dyn_cast<SliceNode>(n)) {
      NodeValue op = selectedOperand(*s);
      if (!op || op.getType() != s->getType())
        continue;
      s->getResult().replaceAllUsesWith(op);
      F.eraseNode(s);
    } else if (auto *cat = llvm::dyn_cast<ConcatNode>(n)) {
      if (cat->getNumInputs() < 2)
        continue;
      Node *joined = joinAdjacentSlices(F, *cat);
      if (!joined)
        continue;
      replaceNode(cat, joined);
      F.eraseNode(cat);
    } else {
      continue;
    }
    ++ctx.counters["slice-concat.rewrites"];
    changed = true;
  }
  return changed;
}
