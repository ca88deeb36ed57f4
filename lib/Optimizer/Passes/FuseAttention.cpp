//===- FuseAttention.cpp - Scaled dot-product attention as one node -------===//
//
// Attention as exporters write it, after matmul-form and fuse-softmax-mask:
//   MatMul(Softmax | ScaledSoftmax(MatMul(Q, K^T)), V)
// with K^T either read through TransB (K [..., Tk, D]) or given as
// [..., D, Tk]. Run as nodes, the T x T score tensor is written and read
// three times; one Attention node walks key blocks with an online softmax
// and never holds more than one block of it. A constant scale of Q (or of
// a K read through TransB) moves into the Attention's Scale. Q, K and V
// must have equal batch dims (no broadcast), the products no epilogue, and
// the scores and weights no other user.
//
//===----------------------------------------------------------------------===//
#include "PassUtils.h"
#include "Passes.h"

using namespace ember;

namespace {
struct AttentionMatch {
  NodeValue q, k, v, mask;
  float scale = 1.f;
  bool causal = false;
};
} // namespace

/// \p x without a single-use Mul by a uniform constant, which multiplies
/// \p scale.
static NodeValue peelUniformScale(NodeValue x, float &scale) {
  Node *n = x.getNode();
  if (!llvm::isa<MulNode>(n) || !hasOneUse(n))
    return x;
  for (unsigned i = 0; i < 2; ++i)
    if (auto u = getUniformValue(n->getNthInput(1 - i))) {
      scale *= float(*u);
      return n->getNthInput(i);
    }
  return x;
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
  m.q = peelUniformScale(qk->getLHS(), m.scale);
  m.v = pv.getRHS();
  if (qk->getTransB()) {
    m.k = peelUniformScale(qk->getRHS(), m.scale);
    return true;
  }
  llvm::SmallVector<int64_t, kMaxRank> perm;
  for (size_t i = 0; i < r; ++i)
    perm.push_back(int64_t(i));
  std::swap(perm[r - 1], perm[r - 2]);
  m.k = F.createTranspose(qk->getName().str() + ".k", qk->getRHS(), perm);
  return true;
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
    NodeValue a = F.createAttention(pv->getName(), m.q, m.k, m.v, mask, m.scale,
                                    m.causal ? 1 : 0);
    pv->getResult().replaceAllUsesWith(a);
    ++ctx.counters["fuse-attention.fused"];
    changed = true;
  }
  return changed;
}
