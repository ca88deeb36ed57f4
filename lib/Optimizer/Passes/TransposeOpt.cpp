//===- TransposeOpt.cpp - Merge, cancel and sink Transposes ---------------===//
//
// Transpose(Transpose(x, p), q) is Transpose(x, p∘q), removed when that is
// the identity. A Transpose used only by an elementwise op is moved below
// it (U(T(x)) -> T(U(x)); B(T(x), T(y)) -> T(B(x, y)) for equal shuffles;
// B(T(x), splat) -> T(B(x, splat'))), so that Transposes meet and cancel.
//
//===----------------------------------------------------------------------===//
#include "PassUtils.h"
#include "Passes.h"

using namespace ember;

static bool isUnaryElementwise(NodeKind k) {
  switch (k) {
  case NodeKind::Relu:
  case NodeKind::Sigmoid:
  case NodeKind::Tanh:
  case NodeKind::Sqrt:
  case NodeKind::Exp:
  case NodeKind::Log:
  case NodeKind::Neg:
  case NodeKind::Abs:
  case NodeKind::Clip:
    return true;
  default:
    return false;
  }
}

static bool isBinaryElementwise(NodeKind k) {
  switch (k) {
  case NodeKind::Add:
  case NodeKind::Sub:
  case NodeKind::Mul:
  case NodeKind::Div:
  case NodeKind::Max:
  case NodeKind::Min:
  case NodeKind::Pow:
    return true;
  default:
    return false;
  }
}

/// Transpose(Transpose(x)) -> one Transpose (the identity is removed later
/// by remove-noops).
static bool mergeTransposes(Function &F, TransposeNode *outer) {
  auto *inner = llvm::dyn_cast<TransposeNode>(outer->getInput().getNode());
  if (!inner)
    return false;
  llvm::SmallVector<int64_t, kMaxRank> shuffle;
  for (int64_t q : outer->getShuffle())
    shuffle.push_back(inner->getShuffle()[q]);
  NodeValue t = F.createTranspose(outer->getName(), inner->getInput(), shuffle);
  outer->getResult().replaceAllUsesWith(t);
  F.eraseNode(outer);
  return true;
}

/// The Transpose feeding operand \p i of \p n if \p n is its only user.
static TransposeNode *soleTransposeOperand(Node *n, unsigned i) {
  auto *t = llvm::dyn_cast<TransposeNode>(n->getNthInput(i).getNode());
  return t && hasOneUse(t) ? t : nullptr;
}

/// Moves the Transpose(s) feeding the elementwise \p n below it.
static bool sinkThrough(Function &F, Node *n) {
  llvm::SmallVector<NodeValue, 2> ins;
  TransposeNode *t0 = nullptr;
  if (isUnaryElementwise(n->getKind())) {
    t0 = soleTransposeOperand(n, 0);
    if (!t0)
      return false;
    ins.push_back(t0->getInput());
  } else if (isBinaryElementwise(n->getKind())) {
    TransposeNode *a = soleTransposeOperand(n, 0);
    TransposeNode *b = soleTransposeOperand(n, 1);
    t0 = a ? a : b;
    if (!t0)
      return false;
    for (unsigned i = 0; i < 2; ++i) {
      TransposeNode *t = i == 0 ? a : b;
      NodeValue in = n->getNthInput(i);
      if (t && t->getShuffle() == t0->getShuffle()) {
        ins.push_back(t->getInput());
      } else if (auto *s = llvm::dyn_cast<SplatNode>(in.getNode())) {
        llvm::ArrayRef<dim_t> d = t0->getInput().dims();
        ins.push_back(F.createSplat(s->getName(), {d.begin(), d.end()},
                                    s->getElemTy(), s->getValue()));
      } else {
        return false;
      }
    }
  } else {
    return false;
  }
  Node *moved = createLike(F, *n, ins, n->getAttrs());
  NodeValue t = F.createTranspose(t0->getName(), moved->getNthResult(0),
                                  t0->getShuffle());
  n->getNthResult(0).replaceAllUsesWith(t);
  F.eraseNode(n);
  return true;
}

bool TransposeOptPass::run(Function &F, PassContext &ctx) {
  bool changed = false;
  for (Node *n : nodesInOrder(F)) {
    bool c = false;
    if (auto *t = llvm::dyn_cast<TransposeNode>(n))
      c = mergeTransposes(F, t);
    else
      c = sinkThrough(F, n);
    if (c)
      ++ctx.counters["transpose-opt.rewrites"];
    changed |= c;
  }
  return changed;
}
