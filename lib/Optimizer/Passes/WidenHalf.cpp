//===- WidenHalf.cpp - Float16 ops the backend lacks, run in Float32 ------===//
//
// A model stored in float16 (an exporter's fp16 conversion) has float16
// MatMuls, convolutions, normalizations... that a backend without float16
// kernels cannot run. Each such op is rebuilt on Float32 operands (Casts
// of its Float16 ones: exact) and its Float16 results are rounded back by a
// Cast, so every op still rounds its result to float16 as the model says;
// only its arithmetic is wider. The rebuilt op is kept where the backend
// runs it; otherwise the original stays for the support check to name.
// Casts of constant weights fold at compile time.
//
//===----------------------------------------------------------------------===//
#include "PassUtils.h"
#include "Passes.h"

using namespace ember;

/// True where \p n reads or makes Float16 values and is an op node.
static bool isHalfOp(const Node &n) {
  if (n.getKind() == NodeKind::Constant ||
      n.getKind() == NodeKind::Placeholder || n.getKind() == NodeKind::Save ||
      n.getKind() == NodeKind::Cast)
    return false;
  for (NodeValue in : n.getInputs())
    if (in.getElemKind() == ElemKind::Float16)
      return true;
  for (unsigned i = 0; i < n.getNumResults(); ++i)
    if (n.getType(i)->getElemKind() == ElemKind::Float16)
      return true;
  return false;
}

/// \p n on Float32 operands with its Float16 results cast back, replacing
/// it; false (and nothing changed) when the backend cannot run that either.
static bool widen(Function &F, Node *n, const PassContext &ctx) {
  std::string name = n->getName().str();
  std::vector<NodeValue> ins;
  for (NodeValue in : n->getInputs())
    ins.push_back(in.getElemKind() == ElemKind::Float16
                      ? F.createCast(name + ".f32", in, ElemKind::Float32)
                      : in);
  auto wide = F.tryCreateNode(toOpKind(n->getKind()), name + ".wide", ins,
                              n->getAttrs());
  bool ok = wide && (*wide)->getNumResults() == n->getNumResults() &&
            ctx.isOpSupported(**wide);
  if (!wide)
    llvm::consumeError(wide.takeError());
  if (!ok) {
    if (wide)
      F.eraseNode(*wide);
    return false; // The unused Casts go in dce.
  }
  for (unsigned i = 0; i < n->getNumResults(); ++i) {
    NodeValue r = (*wide)->getNthResult(i);
    ElemKind want = n->getType(i)->getElemKind();
    if (r.getElemKind() != want)
      r = F.createCast(name + ".f16", r, want);
    n->getNthResult(i).replaceAllUsesWith(r);
  }
  return true;
}

bool WidenHalfPass::run(Function &F, PassContext &ctx) {
  bool changed = false;
  for (Node *n : nodesInOrder(F))
    if (isHalfOp(*n) && !ctx.isOpSupported(*n))
      changed |= widen(F, n, ctx);
  return changed;
}
