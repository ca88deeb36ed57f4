//===- CopyPropagation.cpp - Share buffers instead of copying -------------===//
//
// Two rewrites of `copy @out %dst, @in %src`:
//  - into outputs: %src is an activation (or a full-size view at offset 0
//    of one) and %dst a network output that nothing else touches; the
//    activation is replaced by the output (or a view of it), so its writers
//    fill the caller's buffer directly.
//  - between activations: %src and %dst are activations of one type, the
//    copy is %dst's first use and neither is written afterwards; %dst is
//    replaced by %src.
//
//===----------------------------------------------------------------------===//
#include "IRUtils.h"

#include "ember/IR/IROptimizer.h"

using namespace ember;
using namespace ember::iropt;

/// Tries to let the activation behind \p c's source live in its output.
static bool foldIntoOutput(IRFunction &F, CopyInst *c, const UseMap &uses) {
  auto *out = llvm::dyn_cast<WeightVar>(c->getDest());
  auto *src = llvm::dyn_cast<AllocActivationInst>(getOrigin(c->getSrc()));
  if (!out || !out->isOutput() || !src || getOriginOffset(c->getSrc()) != 0 ||
      src->getType()->size() != out->getType()->size())
    return false;
  size_t pos = uses.position.lookup(c);
  if (uses.usesOf(out).size() != 1 || uses.writtenAfter(src, pos))
    return false;
  // Readers of the source, before or after the copy, read the same values
  // from the output, which only the copy wrote.
  Value *replacement = out;
  if (src->getType() != out->getType()) {
    F.setInsertPoint(findInstr(F, src));
    replacement = F.createTensorView(src->getName().str() + ".out", out,
                                     src->getType(), 0);
    F.resetInsertPoint();
  }
  replaceAllUses(F, src, replacement);
  eraseAlloc(F, src);
  F.eraseInstr(c);
  return true;
}

/// Tries to make \p c's destination activation the source activation.
static bool shareActivations(IRFunction &F, CopyInst *c, const UseMap &uses) {
  auto *dst = llvm::dyn_cast<AllocActivationInst>(c->getDest());
  auto *src = llvm::dyn_cast<AllocActivationInst>(c->getSrc());
  if (!dst || !src || dst == src || dst->getType() != src->getType())
    return false;
  size_t pos = uses.position.lookup(c);
  if (uses.firstUse(dst) != pos || uses.numWriters(dst) != 1 ||
      uses.writtenAfter(src, pos) || uses.views.count(dst))
    return false;
  replaceAllUses(F, dst, src);
  eraseAlloc(F, dst);
  F.eraseInstr(c);
  return true;
}

/// Applies \p rewrite to copies until none changes; fixes markers after.
static bool rewriteCopies(IRFunction &F,
                          bool (*rewrite)(IRFunction &, CopyInst *,
                                          const UseMap &)) {
  bool changed = false;
  for (bool again = true; again;) {
    again = false;
    UseMap uses(F);
    for (Instruction *I : uses.order)
      if (auto *c = llvm::dyn_cast<CopyInst>(I))
        if (rewrite(F, c, uses)) {
          changed = again = true;
          break;
        }
  }
  if (changed)
    shrinkLiveRanges(F);
  return changed;
}

bool ember::copyIntoOutputs(IRFunction &F) {
  return rewriteCopies(F, foldIntoOutput);
}

bool ember::propagateCopies(IRFunction &F) {
  return rewriteCopies(F, shareActivations);
}
