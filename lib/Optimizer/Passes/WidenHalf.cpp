//===- WidenHalf.cpp - 16-bit float ops the backend lacks, run in Float32 -===//
//
// A model stored in float16 (an exporter's fp16 conversion) or bfloat16 has
// 16-bit MatMuls, convolutions, normalizations... that a backend without
// such kernels cannot run. Each such op is rebuilt on Float32 operands
// (Casts of its 16-bit ones: exact) and its 16-bit results are rounded back
// by a Cast, so every op still rounds its result as the model says;
// only its arithmetic is wider. The rebuilt op is kept where the backend
// runs it; otherwise the original stays for the support check to name.
// Casts of constant weights fold at compile time.
//
//===----------------------------------------------------------------------===//
#include "PassUtils.h"
#include "Passes.h"

using namespace ember;

static bool isHalf(ElemKind k) {
  return k == ElemKind::Float16 || k == ElemKind::BFloat16;
}

/// True where \p n reads or makes 16-bit float values and is an op node.
static bool isHalfOp(const Node &n) {
  if (n.getKind() == NodeKind::Constant ||
      n.getKind() == NodeKind::Placeholder || n.getKind() == NodeKind::Save ||
      n.getKind() == NodeKind::Cast)
    return false;
  for (NodeValue in : n.getInputs())
    if (isHalf(in.getElemKind()))
      return true;
  for (unsigned i = 0; i < n.getNumResults(); ++i)
    if (isHalf(n.getType(i)->getElemKind()))
      return true;
  return false;
}

/// \p n on Float32 operands with its 16-bit results cast back, replacing
/// it; false (and nothing changed) when the backend cannot run that either.
static bool widen(Function &F, Node *n, const PassContext &ctx) {
  std::string name = n->getName().str();
  std::vector<NodeValue> ins;
  for (NodeValue in : n->getInputs())
    ins.push_back(isHalf(in.getElemKind())
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
      r = F.createCast(name + ".narrow", r, want);
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
