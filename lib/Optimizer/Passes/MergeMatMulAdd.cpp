//===- MergeMatMulAdd.cpp - MatMul + Add into Gemm ------------------------===//
//
// Add(MatMul(a, b), c) of rank 2, with the MatMul used only there, is
// Gemm(a, b, c) with alpha = beta = 1. Add(Gemm(a, b, c, beta = 0), d) is
// Gemm(a, b, d, beta = 1). A backend that keeps Gemm then runs one kernel;
// one that lowers it gets the MatMul and Add back. It also lets
// fold-batchnorm see a Gemm.
//
//===----------------------------------------------------------------------===//
#include "PassUtils.h"
#include "Passes.h"

using namespace ember;

static NodeValue mergeInto(Function &F, AddNode *add, unsigned i) {
  Node *p = add->getNthInput(i).getNode();
  NodeValue d = add->getNthInput(1 - i);
  if (!hasOneUse(p) || p->getType() != add->getType())
    return NodeValue();
  if (auto *mm = llvm::dyn_cast<MatMulNode>(p)) {
    if (mm->getType()->rank() != 2)
      return NodeValue();
    return F.createGemm(add->getName(), mm->getLHS(), mm->getRHS(), d, 1.f, 1.f,
                        0, mm->getTransB());
  }
  if (auto *g = llvm::dyn_cast<GemmNode>(p)) {
    if (g->getBeta() != 0.f)
      return NodeValue();
    return F.createGemm(add->getName(), g->getA(), g->getB(), d, g->getAlpha(),
                        1.f, g->getTransA(), g->getTransB());
  }
  return NodeValue();
}

bool MergeMatMulAddPass::run(Function &F, PassContext &ctx) {
  bool changed = false;
  for (Node *n : nodesInOrder(F)) {
    auto *add = llvm::dyn_cast<AddNode>(n);
    if (!add || add->getType()->getElemKind() != ElemKind::Float32)
      continue;
    for (unsigned i = 0; i < 2; ++i) {
      NodeValue g = mergeInto(F, add, i);
      if (!g)
        continue;
      Node *old = add->getNthInput(i).getNode();
      add->getResult().replaceAllUsesWith(g);
      F.eraseNode(add);
      F.eraseNode(old);
      ++ctx.counters["merge-matmul-add.merged"];
      changed = true;
      break;
    }
  }
  return changed;
}
