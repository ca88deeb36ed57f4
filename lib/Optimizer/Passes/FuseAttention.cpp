//===- FuseAttention.cpp - Scaled dot-product attention as one node -------===//
//
// Attention as exporters write it, after matmul-form and fuse-softmax-mask:
//   MatMul(Softmax | ScaledSoftmax(MatMul(Q, K^T)), V)
// with K^T either read through TransB (K [..., Tk, D]) or given as
// [..., D, Tk]. Run as nodes, the T x T score tensor is written and read
// three times; one Attention node walks key blocks with an online softmax
// and never holds more than one block of it. A constant scale of Q (or of
// a K read through TransB), a Mul or Div before or after the head split,
// moves into the Attention's Scale. Q, K and V
// must have equal batch dims (no broadcast), the products no epilogue, and
// the scores and weights no other user. The head split before (Transposes
// of Q, K, V that keep the head dim last) and the merge after (a Transpose
// that is the product's only user) become the Attention's perms: it reads
// and writes the heads in place instead of through copies.
//
//===----------------------------------------------------------------------===//
#include "PassUtils.h"
#include "Passes.h"

using namespace ember;

namespace {
using Perm = llvm::SmallVector<int64_t, kMaxRank>;

struct AttentionMatch {
  NodeValue q, k, v, mask;
  float scale = 1.f;
  bool causal = false;
  Perm qPerm, kPerm, vPerm, outPerm; ///< empty: read / stored as is
};
} // namespace

/// \p x without a single-use Mul by a uniform constant, which multiplies
/// \p scale, or Div by one (ViT divides Q by the root of the head dim),
/// which divides it.
static NodeValue peelUniformScale(NodeValue x, float &scale) {
  Node *n = x.getNode();
  if (!hasOneUse(n))
    return x;
  if (llvm::isa<DivNode>(n)) {
    // A division by 0 stays a node: its infinities are the model's own.
    if (auto u = getUniformValue(n->getNthInput(1)); u && *u != 0) {
      scale = float(scale / *u);
      return n->getNthInput(0);
    }
    return x;
  }
  if (!llvm::isa<MulNode>(n))
    return x;
  for (unsigned i = 0; i < 2; ++i)
    if (auto u = getUniformValue(n->getNthInput(1 - i))) {
      scale *= float(*u);
      return n->getNthInput(i);
    }
  return x;
}

/// \p x read through \p perm (empty: identity) with the Transposes that
/// make it peeled off into \p perm while the composed perm keeps the last
/// axis last: Attention then reads their input in place.
static NodeValue peelTransposes(NodeValue x, Perm &perm) {
  size_t r = x.dims().size();
  while (auto *t = llvm::dyn_cast<TransposeNode>(x.getNode())) {
    llvm::ArrayRef<int64_t> tp = t->getShuffle();
    Perm composed;
    for (size_t i = 0; i < r; ++i)
      composed.push_back(tp[perm.empty() ? i : perm[i]]);
    if (composed.back() != int64_t(r) - 1)
      break;
    perm = composed;
    x = t->getInput();
  }
  bool identity = true;
  for (size_t i = 0; i < perm.size(); ++i)
    identity &= perm[i] == int64_t(i);
  if (identity)
    perm.clear();
  return x;
}

/// \p x without the Transposes (into \p perm, as peelTransposes) and, with
/// a \p scale, the uniform Muls (into it) above it, in any order:
/// exporters scale Q before or after the head split.
static NodeValue peelOperand(NodeValue x, Perm &perm, float *scale) {
  for (;;) {
    NodeValue y = peelTransposes(x, perm);
    if (scale)
      y = peelUniformScale(y, *scale);
    if (y == x)
      return x;
    x = y;
  }
}

static bool plainProduct(const MatMulNode *m) {
  return m && m->getEpilogue().empty() && m->getFusedActivation() == 0 &&
         m->getLHS().getElemKind() == ElemKind::Float32 &&
         m->getRHS().getElemKind() == ElemKind::Float32;
}

/// The weights P of \p pv: their scale, mask and causal flag, and the
/// scores under them.
static MatMulNode *matchWeights(NodeValue p, AttentionMatch &m) {
  Node *n = p.getNode();
  if (!hasOneUse(n))
    return nullptr;
  NodeValue s;
  if (auto *sm = llvm::dyn_cast<SoftmaxNode>(n)) {
    if (sm->getAxis() + 1 != int64_t(p.dims().size()))
      return nullptr;
    s = sm->getInput();
  } else if (auto *ss = llvm::dyn_cast<ScaledSoftmaxNode>(n)) {
    s = ss->getInput();
    m.scale = ss->getScale();
    m.causal = ss->getCausal() != 0;
    if (!ss->getMask().empty())
      m.mask = ss->getMask()[0];
  } else {
    return nullptr;
  }
  auto *qk = llvm::dyn_cast<MatMulNode>(s.getNode());
  return plainProduct(qk) && hasOneUse(qk) ? qk : nullptr;
}

static bool matchAttention(MatMulNode &pv, Function &F, AttentionMatch &m) {
  if (!plainProduct(&pv) || pv.getTransB())
    return false;
  MatMulNode *qk = matchWeights(pv.getLHS(), m);
  if (!qk)
    return false;
  llvm::ArrayRef<dim_t> qd = qk->getLHS().dims(), kd = qk->getRHS().dims(),
                        vd = pv.getRHS().dims();
  size_t r = qd.size();
  for (size_t i = 0; i + 2 < r; ++i)
    if (kd[i] != qd[i] || vd[i] != qd[i])
      return false;
  m.q = peelOperand(qk->getLHS(), m.qPerm, &m.scale);
  m.v = peelOperand(pv.getRHS(), m.vPerm, nullptr);
  if (qk->getTransB()) {
    m.k = peelOperand(qk->getRHS(), m.kPerm, &m.scale);
    return true;
  }
  // K^T [..., D, Tk]: K is K^T read with its last two axes swapped, which
  // only a Transpose under it can make a perm that keeps D last.
  Perm swap;
  for (size_t i = 0; i < r; ++i)
    swap.push_back(int64_t(i));
  std::swap(swap[r - 1], swap[r - 2]);
  m.kPerm = swap;
  m.k = peelTransposes(qk->getRHS(), m.kPerm);
  if (m.kPerm.empty() || m.kPerm.back() == int64_t(r) - 1)
    return true;
  m.kPerm.clear();
  m.k = F.createTranspose(qk->getName().str() + ".k", qk->getRHS(), swap);
  return true;
}

/// The Transpose that is \p pv's only user, when its perm keeps the last
/// axis last (the heads' merge after attention): the Attention then
/// stores through it.
static TransposeNode *outputTranspose(MatMulNode &pv) {
  if (!hasOneUse(&pv))
    return nullptr;
  auto *t = llvm::dyn_cast<TransposeNode>(pv.getUsers()[0].user);
  size_t r = pv.getResult().dims().size();
  return t && t->getShuffle().back() == int64_t(r) - 1 ? t : nullptr;
}

bool FuseAttentionPass::run(Function &F, PassContext &ctx) {
  bool changed = false;
  for (Node *n : nodesInOrder(F)) {
    auto *pv = llvm::dyn_cast<MatMulNode>(n);
    AttentionMatch m;
    if (!pv || !matchAttention(*pv, F, m))
      continue;
    llvm::SmallVector<NodeValue, 1> mask;
    if (m.mask)
      mask.push_back(m.mask);
    TransposeNode *out = outputTranspose(*pv);
    if (out)
      m.outPerm.assign(out->getShuffle().begin(), out->getShuffle().end());
    NodeValue a = F.createAttention(pv->getName(), m.q, m.k, m.v, mask, m.scale,
                                    m.causal ? 1 : 0, m.qPerm, m.kPerm, m.vPerm,
                                    m.outPerm);
    if (out)
      out->getResult().replaceAllUsesWith(a);
    else
      pv->getResult().replaceAllUsesWith(a);
    ++ctx.counters["fuse-attention.fused"];
    changed = true;
  }
  return changed;
}
