//===- FuseMatMulEpilogue.cpp - Bias, residual, activation into MatMul ----===//
//
// Moves the elementwise work that follows a float MatMul into its epilogue
// (y = act(A * B + bias + residual), the MatMul entry of Ops.py), so the
// product's tile is finished in registers instead of being stored, read
// back and stored again by one kernel per operation:
//   Add(mm, Broadcast(b [1, ..., 1, N]))  -> bias b [N]
//   Add(mm, x), x of the result's type    -> residual x
//   Gelu / Relu / Sigmoid / Clip (mm)     -> FusedActivation
// where mm is the MatMul or a Reshape of it that keeps the last dim (the
// N-D view matmul-form leaves behind a flattened product: rows stay rows).
// Bias and residual need the MatMul to have no activation yet (the
// activation applies to their sum); each part is fused at most once. The
// MatMul and its view must be used only by the fused node, so no work is
// duplicated. Runs after convert-precision: a MatMul of BFloat16 operands
// (a Float32 result) takes the same epilogue, applied in Float32.
//
//===----------------------------------------------------------------------===//
#include "PassUtils.h"
#include "Passes.h"

using namespace ember;

namespace {
/// The MatMul an operand comes from, and the view between them if any.
struct Producer {
  MatMulNode *mm = nullptr;
  ReshapeNode *view = nullptr;
};

/// What one rewrite adds to the MatMul.
struct Epilogue {
  NodeValue bias, residual;
  FusedActivation act = FusedActivation::None;
  float alpha = 0, beta = 0;
};
} // namespace

/// The Float32 or BFloat16 MatMul \p v comes from, directly or through a
/// Reshape keeping the last dim, each used only on the way to \p v's user.
static Producer producerOf(NodeValue v) {
  Node *n = v.getNode();
  ReshapeNode *view = nullptr;
  if (auto *r = llvm::dyn_cast<ReshapeNode>(n)) {
    // A Reshape to or from a scalar has no last dim to keep.
    if (!hasOneUse(r) || r->getInput().dims().empty() || v.dims().empty() ||
        r->getInput().dims().back() != v.dims().back())
      return {};
    view = r;
    n = r->getInput().getNode();
  }
  auto *mm = llvm::dyn_cast<MatMulNode>(n);
  if (!mm || !hasOneUse(mm))
    return {};
  ElemKind operands = mm->getLHS().getElemKind();
  if (operands != ElemKind::Float32 && operands != ElemKind::BFloat16)
    return {};
  return {mm, view};
}

/// The epilogue operands of \p mm split into bias and residual.
static Epilogue current(const MatMulNode &mm) {
  Epilogue e;
  for (NodeValue v : mm.getEpilogue())
    (v.dims().size() == 1 ? e.bias : e.residual) = v;
  e.act = FusedActivation(mm.getFusedActivation());
  e.alpha = mm.getFusedAlpha();
  e.beta = mm.getFusedBeta();
  return e;
}

/// \p x as a bias [n]: x (through a Broadcast) is [1, ..., 1, n].
static NodeValue asBias(Function &F, NodeValue x, dim_t n,
                        llvm::StringRef name) {
  if (auto *b = llvm::dyn_cast<BroadcastNode>(x.getNode()))
    x = b->getInput();
  llvm::ArrayRef<dim_t> d = x.dims();
  if (d.empty() || d.back() != n ||
      !llvm::all_of(d.drop_back(), [](dim_t v) { return v == 1; }))
    return NodeValue();
  if (d.size() == 1)
    return x;
  return F.createReshape((name + ".bias").str(), x, {int64_t(n)});
}

/// Adds the Add \p add to \p p's MatMul as its bias or residual: \p e is
/// the MatMul's epilogue updated, false if the Add does not fit.
static bool matchAdd(Function &F, AddNode *add, Producer &p, Epilogue &e) {
  for (unsigned i = 0; i < 2; ++i) {
    p = producerOf(add->getNthInput(i));
    if (!p.mm)
      continue;
    e = current(*p.mm);
    if (e.act != FusedActivation::None)
      continue;
    NodeValue x = add->getNthInput(1 - i);
    dim_t n = add->getResult().dims().back();
    if (!e.bias) {
      e.bias = asBias(F, x, n, p.mm->getName());
      if (e.bias)
        return true;
    }
    if (!e.residual && x.getType() == add->getResult().getType()) {
      e.residual =
          p.view
              ? NodeValue(F.createReshape((p.mm->getName() + ".residual").str(),
                                          x, p.mm->getResult().dims()))
              : x;
      return true;
    }
  }
  return false;
}

/// The activation \p n applies, if it is one the epilogue has.
static bool matchActivation(Node *n, Epilogue &e) {
  switch (n->getKind()) {
  case NodeKind::Relu:
    e.act = FusedActivation::Relu;
    return true;
  case NodeKind::Sigmoid:
    e.act = FusedActivation::Sigmoid;
    return true;
  case NodeKind::Clip:
    e.act = FusedActivation::Clip;
    e.alpha = llvm::cast<ClipNode>(n)->getMin();
    e.beta = llvm::cast<ClipNode>(n)->getMax();
    return true;
  case NodeKind::Gelu:
    e.act = llvm::cast<GeluNode>(n)->getApproximate()
                ? FusedActivation::GeluTanh
                : FusedActivation::Gelu;
    return true;
  default:
    return false;
  }
}

/// Matches a fusable node rooted at \p n: its MatMul in \p p and the
/// MatMul's new epilogue in \p e.
static bool match(Function &F, Node *n, PassContext &ctx, Producer &p,
                  Epilogue &e) {
  if (n->getNumResults() != 1 ||
      n->getNthResult(0).getElemKind() != ElemKind::Float32)
    return false;
  if (auto *add = llvm::dyn_cast<AddNode>(n))
    return matchAdd(F, add, p, e);
  if (n->getNumInputs() != 1)
    return false;
  p = producerOf(n->getNthInput(0));
  if (!p.mm)
    return false;
  e = current(*p.mm);
  Epilogue act;
  if (e.act != FusedActivation::None || !matchActivation(n, act) ||
      !ctx.supportsConvActivation(act.act))
    return false;
  e.act = act.act, e.alpha = act.alpha, e.beta = act.beta;
  return true;
}

/// Replaces \p root by \p p's MatMul with the epilogue \p e.
static void rewrite(Function &F, Node *root, const Producer &p,
                    const Epilogue &e) {
  MatMulNode *mm = p.mm;
  llvm::SmallVector<NodeValue, 2> ops;
  for (NodeValue v : {e.bias, e.residual})
    if (v)
      ops.push_back(v);
  NodeValue y =
      F.createMatMul(mm->getName(), mm->getLHS(), mm->getRHS(), ops,
                     mm->getTransB(), int64_t(e.act), e.alpha, e.beta);
  if (p.view)
    y = F.createReshape(p.view->getName(), y, root->getNthResult(0).dims());
  root->getNthResult(0).replaceAllUsesWith(y);
  F.eraseNode(root);
  if (p.view)
    F.eraseNode(p.view);
  F.eraseNode(mm);
}

bool FuseMatMulEpiloguePass::run(Function &F, PassContext &ctx) {
  if (!ctx.supportsMatMulEpilogue)
    return false;
  bool changed = false, again = true;
  // A rewrite's new MatMul may take the next part of its epilogue (bias,
  // then residual or activation): repeat until nothing fits.
  while (again) {
    again = false;
    for (Node *n : nodesInOrder(F)) {
      Producer p;
      Epilogue e;
      if (!match(F, n, ctx, p, e))
        continue;
      rewrite(F, n, p, e);
      ++ctx.counters["fuse-matmul-epilogue.fused"];
      again = changed = true;
    }
  }
  return changed;
}
