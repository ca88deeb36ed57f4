//===- FuseSoftmaxMask.cpp - Scale and mask folded into the Softmax
//--------===//
//
// Attention scores reach their Softmax through a Mul (or Div) by a constant
// scale, an Add of an additive mask broadcast from a padding mask
// [B,1,1,T], a causal one [1,1,T,T] or a relative position bias, and for
// causal decoders a Where that fills the keys after the query with a very
// negative constant. Run as nodes, each of these reads and writes the whole
// T x T score tensor (and the Broadcast materializes the mask); folded into
// one ScaledSoftmax {Scale, Causal}(scores, mask) they are one pass per row
// that reads the mask in place by broadcast strides.
//
// Matched, from the Softmax (last axis, float32) inwards, each part
// optional: Where(causal, fill, t) with fill <= -FLT_MAX (or the mirror
// Where(visible, t, fill)), then Add(t, mask), then Mul/Div of t by a
// uniform constant, down to scores made by a MatMul of rank 3 or more.
// Every inner node must be used only by the pattern.
//
//===----------------------------------------------------------------------===//
#include "PassUtils.h"
#include "Passes.h"

#include "ember/Base/ElemAccess.h"

#include <cfloat>

using namespace ember;

namespace {
struct SoftmaxMatch {
  NodeValue scores;
  NodeValue mask; ///< Null when there is none.
  float scale = 1.f;
  bool causal = false;
  llvm::SmallVector<Node *, 4> inside;
};
} // namespace

/// True if \p cond is a constant of bools, seen through a Broadcast, whose
/// leading dims are 1 and which holds (j > i) for \p above, (j <= i) else,
/// over the last two dims of \p scores.
static bool isCausalCondition(NodeValue cond, llvm::ArrayRef<dim_t> scores,
                              bool above) {
  if (auto *b = llvm::dyn_cast<BroadcastNode>(cond.getNode()))
    cond = b->getInput();
  auto *c = llvm::dyn_cast<Constant>(cond.getNode());
  size_t r = scores.size();
  if (!c || c->getType()->getElemKind() != ElemKind::Bool ||
      cond.dims().size() != r)
    return false;
  for (size_t i = 0; i + 2 < r; ++i)
    if (cond.dims()[i] != 1)
      return false;
  dim_t tq = scores[r - 2], tk = scores[r - 1];
  if (cond.dims()[r - 2] != tq || cond.dims()[r - 1] != tk)
    return false;
  const char *p = c->getPayload().data();
  for (dim_t i = 0; i < tq; ++i)
    for (dim_t j = 0; j < tk; ++j)
      if ((loadElementInt(p, ElemKind::Bool, i * tk + j) != 0) !=
          (above ? j > i : j <= i))
        return false;
  return true;
}

/// Peels a causal Where off \p t.
static bool peelCausal(NodeValue &t, SoftmaxMatch &m) {
  auto *w = llvm::dyn_cast<WhereNode>(t.getNode());
  if (!w || m.causal || !hasOneUse(w))
    return false;
  for (int above = 1; above >= 0; --above) {
    NodeValue fill = above ? w->getLHS() : w->getRHS();
    NodeValue data = above ? w->getRHS() : w->getLHS();
    auto u = getUniformValue(fill);
    if (!u || *u > -double(FLT_MAX) ||
        !isCausalCondition(w->getCond(), t.dims(), above))
      continue;
    m.causal = true;
    m.inside.push_back(w);
    t = data;
    return true;
  }
  return false;
}

/// Peels the Add of an additive mask off \p t: a Broadcast operand is the
/// mask (its input, of the scores' rank); without one, the RHS.
static bool peelMask(NodeValue &t, SoftmaxMatch &m) {
  auto *a = llvm::dyn_cast<AddNode>(t.getNode());
  if (!a || m.mask || !hasOneUse(a))
    return false;
  unsigned mi = llvm::isa<BroadcastNode>(a->getLHS().getNode()) &&
                        !llvm::isa<BroadcastNode>(a->getRHS().getNode())
                    ? 0
                    : 1;
  NodeValue mask = a->getNthInput(mi);
  if (auto *b = llvm::dyn_cast<BroadcastNode>(mask.getNode()))
    if (b->getInput().dims().size() == mask.dims().size())
      mask = b->getInput();
  m.mask = mask;
  m.inside.push_back(a);
  t = a->getNthInput(1 - mi);
  return true;
}

/// Peels a Mul or Div by a uniform constant off \p t.
static bool peelScale(NodeValue &t, SoftmaxMatch &m) {
  Node *n = t.getNode();
  if (!hasOneUse(n))
    return false;
  if (llvm::isa<MulNode>(n))
    for (unsigned i = 0; i < 2; ++i)
      if (auto u = getUniformValue(n->getNthInput(1 - i))) {
        m.scale = float(*u);
        m.inside.push_back(n);
        t = n->getNthInput(i);
        return true;
      }
  if (llvm::isa<DivNode>(n))
    if (auto u = getUniformValue(n->getNthInput(1))) {
      m.scale = float(1.0 / *u);
      m.inside.push_back(n);
      t = n->getNthInput(0);
      return true;
    }
  return false;
}

static bool matchSoftmax(SoftmaxNode &s, SoftmaxMatch &m) {
  NodeValue t = s.getInput();
  size_t r = t.dims().size();
  if (r < 2 || s.getAxis() != int64_t(r) - 1 ||
      t.getElemKind() != ElemKind::Float32)
    return false;
  peelCausal(t, m);
  peelMask(t, m);
  peelCausal(t, m);
  peelScale(t, m);
  m.scores = t;
  // Only attention scores (batched: heads or batch): a classifier's
  // Softmax(Add(MatMul, bias)) keeps its bias for the MatMul's epilogue.
  auto *mm = llvm::dyn_cast<MatMulNode>(t.getNode());
  return mm && r >= 3 && mm->getEpilogue().empty() && !m.inside.empty();
}

bool FuseSoftmaxMaskPass::run(Function &F, PassContext &ctx) {
  bool changed = false;
  for (Node *n : nodesInOrder(F)) {
    auto *s = llvm::dyn_cast<SoftmaxNode>(n);
    SoftmaxMatch m;
    if (!s || !matchSoftmax(*s, m))
      continue;
    llvm::SmallVector<NodeValue, 1> mask;
    if (m.mask)
      mask.push_back(m.mask);
    NodeValue fused = F.createScaledSoftmax(s->getName(), m.scores, mask,
                                            m.scale, m.causal ? 1 : 0);
    s->getResult().replaceAllUsesWith(fused);
    F.eraseNode(s);
    for (Node *inner : m.inside)
      if (inner->getUsers().empty())
        F.eraseNode(inner);
    ++ctx.counters["fuse-softmax-mask.fused"];
    changed = true;
  }
  return changed;
}
