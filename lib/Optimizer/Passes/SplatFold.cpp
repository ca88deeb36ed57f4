//===- SplatFold.cpp - Reshaped, broadcast or transposed splats -----------===//
//
// Moving a splat (or a uniform constant) around does not change its value:
// Reshape, Broadcast and Transpose of one, and a Concat of equal ones,
// become a single Splat of the result's shape.
//
//===----------------------------------------------------------------------===//
#include "PassUtils.h"
#include "Passes.h"

#include "ember/Base/ElemAccess.h"

using namespace ember;

/// The uniform value \p n produces by moving data of a uniform operand.
static std::optional<double> movedUniform(Node *n) {
  switch (n->getKind()) {
  case NodeKind::Reshape:
  case NodeKind::Broadcast:
  case NodeKind::Transpose:
    return getUniformValue(n->getNthInput(0));
  case NodeKind::Concat: {
    std::optional<double> v;
    for (NodeValue in : n->getInputs()) {
      auto u = getUniformValue(in);
      if (!u || (v && *v != *u))
        return std::nullopt;
      v = u;
    }
    return v;
  }
  default:
    return std::nullopt;
  }
}

bool SplatFoldPass::run(Function &F, PassContext &ctx) {
  bool changed = false;
  for (Node *n : nodesInOrder(F)) {
    std::optional<double> v = movedUniform(n);
    // A Splat holds a float, converted to the result's kind.
    if (!v || double(float(*v)) != *v ||
        !holdsExactly(n->getType()->getElemKind(), *v))
      continue;
    llvm::SmallVector<int64_t, kMaxRank> dims(n->getType()->dims().begin(),
                                              n->getType()->dims().end());
    NodeValue s = F.createSplat(n->getName().str() + ".splat", dims,
                                n->getType()->getElemKind(), float(*v));
    if (s.getType() != n->getType()) {
      F.eraseNode(s.getNode()); // e.g. a quantized type a Splat cannot give
      continue;
    }
    n->getNthResult(0).replaceAllUsesWith(s);
    F.eraseNode(n);
    ++ctx.counters["splat-fold.folded"];
    changed = true;
  }
  return changed;
}
