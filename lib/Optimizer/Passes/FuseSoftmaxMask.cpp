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
// Where(visible, t, fill)), Adds of additive terms and Reshapes that only
// regroup the leading dims, in any order, then Mul/Div of t by a uniform
// constant, down to scores made by a MatMul of rank 3 or more. Every inner
// node must be used only by the pattern. Swin's shifted windows add the
// relative position bias [1,H,T,T] to the scores [B*nW,H,T,T], view them
// as [B,nW,H,T,T] to add the window mask [1,nW,1,T,T] and view them back:
// the terms become one mask of the scores' rank (a sum of Broadcasts that
// constant-fold holds once, [nW,H,T,T] at batch 1), so the attention
// fusion after this pass still sees Softmax(scores, mask).
//
//===----------------------------------------------------------------------===//
#include "PassUtils.h"
#include "Passes.h"

#include "ember/Base/ElemAccess.h"

#include <cfloat>

using namespace ember;

namespace {
using Dims = llvm::SmallVector<int64_t, kMaxRank>;

/// An additive term and the dims of the sum it was added to.
struct Term {
  NodeValue value;
  Dims site;
};

struct SoftmaxMatch {
  NodeValue scores;
  llvm::SmallVector<Term, 2> terms;
  float scale = 1.f;
  bool causal = false;
  bool scaled = false;
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

/// Peels the Add of an additive term off \p t: a Broadcast operand is the
/// term (its input, where of the same rank); without one, the RHS.
static bool peelMask(NodeValue &t, SoftmaxMatch &m) {
  auto *a = llvm::dyn_cast<AddNode>(t.getNode());
  if (!a || !hasOneUse(a))
    return false;
  unsigned mi = llvm::isa<BroadcastNode>(a->getLHS().getNode()) &&
                        !llvm::isa<BroadcastNode>(a->getRHS().getNode())
                    ? 0
                    : 1;
  NodeValue mask = a->getNthInput(mi);
  if (auto *b = llvm::dyn_cast<BroadcastNode>(mask.getNode()))
    if (b->getInput().dims().size() == mask.dims().size())
      mask = b->getInput();
  m.terms.push_back({mask, Dims(t.dims().begin(), t.dims().end())});
  m.inside.push_back(a);
  t = a->getNthInput(1 - mi);
  return true;
}

/// Peels a Reshape that keeps the last two dims (a regrouping of the
/// batch and head dims) off \p t.
static bool peelReshape(NodeValue &t, SoftmaxMatch &m) {
  auto *r = llvm::dyn_cast<ReshapeNode>(t.getNode());
  if (!r || !hasOneUse(r))
    return false;
  llvm::ArrayRef<dim_t> in = r->getInput().dims(), out = t.dims();
  if (in.size() < 3 || in.take_back(2) != out.take_back(2))
    return false;
  m.inside.push_back(r);
  t = r->getInput();
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
        m.scaled = true;
        m.inside.push_back(n);
        t = n->getNthInput(i);
        return true;
      }
  if (llvm::isa<DivNode>(n))
    if (auto u = getUniformValue(n->getNthInput(1))) {
      m.scale = float(1.0 / *u);
      m.scaled = true;
      m.inside.push_back(n);
      t = n->getNthInput(0);
      return true;
    }
  return false;
}

static bool matchSoftmax(SoftmaxNode &s, SoftmaxMatch &m) {
  NodeValue t = s.getInput();
  size_t r = t.dims().size();
  if (r < 3 || s.getAxis() != int64_t(r) - 1 ||
      t.getElemKind() != ElemKind::Float32)
    return false;
  while (peelCausal(t, m) || peelMask(t, m) || peelReshape(t, m)) {
  }
  // The scale last: it multiplies the scores, not the terms added after.
  peelScale(t, m);
  m.scores = t;
  // Only attention scores (batched: heads or batch): a classifier's
  // Softmax(Add(MatMul, bias)) keeps its bias for the MatMul's epilogue.
  auto *mm = llvm::dyn_cast<MatMulNode>(t.getNode());
  return mm && t.dims().size() >= 3 && mm->getEpilogue().empty() &&
         (m.causal || m.scaled || !m.terms.empty());
}

/// \p term (added to a sum of dims \p site) as a value of the scores' rank
/// that broadcasts to \p scores. Where the site only adds leading 1s
/// (batch 1 of swin's [1,nW,H,T,T] view), the term drops them; any other
/// regrouping broadcasts the term to the site first.
static NodeValue termAtScores(Function &F, llvm::StringRef name,
                              const Term &term, llvm::ArrayRef<dim_t> scores) {
  NodeValue v = term.value;
  llvm::ArrayRef<int64_t> site = term.site;
  if (site == scores)
    return v;
  auto dropOnes = [](llvm::ArrayRef<int64_t> d) {
    while (d.size() > 1 && d.front() == 1)
      d = d.drop_front();
    return d;
  };
  llvm::ArrayRef<int64_t> core = dropOnes(site);
  size_t extra = site.size() - core.size();
  bool leadingOnes =
      llvm::all_of(v.dims().take_front(extra), [](dim_t d) { return d == 1; });
  if (core == dropOnes(scores) && core.size() <= scores.size() && leadingOnes) {
    Dims d(scores.size() - core.size(), 1);
    d.append(v.dims().begin() + extra, v.dims().end());
    return F.createReshape(name, v, d);
  }
  if (v.dims() != site)
    v = F.createBroadcast(name.str() + ".site", v, site);
  return F.createReshape(name, v, scores);
}

/// The terms of \p m as one mask that broadcasts to the scores: their sum,
/// each broadcast to the dims of the sum.
static NodeValue buildMask(Function &F, llvm::StringRef name,
                           const SoftmaxMatch &m) {
  llvm::ArrayRef<dim_t> scores = m.scores.dims();
  llvm::SmallVector<NodeValue, 2> vals;
  Dims sum(scores.size(), 1);
  for (size_t i = 0; i < m.terms.size(); ++i) {
    std::string n = name.str() + ".mask" + std::to_string(i);
    vals.push_back(termAtScores(F, n, m.terms[i], scores));
    for (size_t d = 0; d < sum.size(); ++d)
      sum[d] = std::max<int64_t>(sum[d], vals.back().dims()[d]);
  }
  if (vals.size() == 1)
    return vals[0];
  NodeValue acc;
  for (size_t i = 0; i < vals.size(); ++i) {
    NodeValue v = vals[i];
    if (v.dims() != llvm::ArrayRef<int64_t>(sum))
      v = F.createBroadcast(name.str() + ".maskb" + std::to_string(i), v, sum);
    acc = i == 0 ? v : F.createAdd(name.str() + ".mask", acc, v);
  }
  return acc;
}

bool FuseSoftmaxMaskPass::run(Function &F, PassContext &ctx) {
  bool changed = false;
  for (Node *n : nodesInOrder(F)) {
    auto *s = llvm::dyn_cast<SoftmaxNode>(n);
    SoftmaxMatch m;
    if (!s || !matchSoftmax(*s, m))
      continue;
    llvm::SmallVector<NodeValue, 1> mask;
    if (!m.terms.empty())
      mask.push_back(buildMask(F, s->getName(), m));
    NodeValue fused = F.createScaledSoftmax(s->getName(), m.scores, mask,
                                            m.scale, m.causal ? 1 : 0);
    // A Reshape peeled off outermost: the rows are the same, viewed back.
    if (fused.dims() != s->getResult().dims())
      fused = F.createReshape(s->getName().str() + ".view", fused,
                              s->getResult().dims());
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
