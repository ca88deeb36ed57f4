//===- FuseLayerNorm.cpp - Layer normalization patterns as one LayerNorm --===//
//
// The importer composes ONNX LayerNormalization, and exporters below opset
// 17 write layer normalization, as
//   d = x - mean(x);  y = d / sqrt(mean(d * d) + eps) * scale + bias
// over the last axis (d * d may be Pow(d, 2), the divide a multiply by the
// reciprocal, scale and bias absent). Run as separate nodes this reads and
// writes the row about ten times; one LayerNorm node is one pass for the
// statistics and one for the result. The means must reduce exactly the
// last axis, scale and bias must be constant along every other axis, and
// no node inside the pattern may have a user outside it (an ONNX Mean or
// InvStdDev output in use keeps the pattern as it is).
//
//===----------------------------------------------------------------------===//
#include "PassUtils.h"
#include "Passes.h"

#include <set>

using namespace ember;

namespace {
/// A matched layer normalization rooted at a node.
struct LayerNormMatch {
  NodeValue x;
  NodeValue scale, bias; ///< Row vectors, or null when absent.
  double eps = 0;
  std::set<const Node *> inside;
};
} // namespace

/// \p v without the Broadcasts and Reshapes that only add or repeat size-1
/// dims, recorded in \p seen.
static NodeValue throughBroadcasts(NodeValue v, std::set<const Node *> &seen) {
  while (llvm::isa<BroadcastNode>(v.getNode()) ||
         llvm::isa<ReshapeNode>(v.getNode())) {
    seen.insert(v.getNode());
    v = v.getNode()->getNthInput(0);
  }
  return v;
}

/// The per-row statistic behind \p v: a ReduceMean over the last axis of
/// a tensor of \p dims, with kept dims, seen through its Broadcast.
static ReduceMeanNode *rowMean(NodeValue v, llvm::ArrayRef<dim_t> dims,
                               std::set<const Node *> &seen) {
  auto *b = llvm::dyn_cast<BroadcastNode>(v.getNode());
  if (!b)
    return nullptr;
  seen.insert(b);
  auto *m = llvm::dyn_cast<ReduceMeanNode>(b->getInput().getNode());
  if (!m || m->getInput().dims() != dims || !m->getKeepDims())
    return nullptr;
  llvm::ArrayRef<int64_t> axes = m->getAxes();
  if (axes.size() != 1 || axes[0] != int64_t(dims.size()) - 1)
    return nullptr;
  seen.insert(m);
  return m;
}

/// True if \p v is the same on every row of \p dims (last axis N): a
/// uniform value, or a tensor of N elements along the last axis seen
/// through Broadcasts and Reshapes (those used only here join \p seen).
static bool isRowConstant(NodeValue v, llvm::ArrayRef<dim_t> dims,
                          std::set<const Node *> &seen) {
  if (getUniformValue(v))
    return true;
  std::set<const Node *> local;
  NodeValue src = throughBroadcasts(v, local);
  if (src.getType()->size() != dims.back() || src.dims().empty() ||
      src.dims().back() != dims.back())
    return false;
  for (const Node *b : local)
    if (b->getUsers().size() == 1)
      seen.insert(b);
  return true;
}

/// The [N] vector that the row-constant \p v repeats.
static NodeValue rowVector(Function &F, NodeValue v, dim_t n) {
  std::string name = v.getNode()->getName().str() + ".row";
  if (auto u = getUniformValue(v))
    return F.createSplat(name, {int64_t(n)}, v.getElemKind(), float(*u));
  std::set<const Node *> unused;
  NodeValue src = throughBroadcasts(v, unused);
  if (src.dims().size() == 1)
    return src;
  return F.createReshape(name, src, {int64_t(n)});
}

/// d * d or Pow(d, 2).
static bool isSquareOf(Node *n, NodeValue d) {
  if (auto *m = llvm::dyn_cast<MulNode>(n))
    return m->getLHS() == d && m->getRHS() == d;
  if (auto *p = llvm::dyn_cast<PowNode>(n))
    return p->getLHS() == d && isUniform(p->getRHS(), 2);
  return false;
}

/// The Add(mean(d * d), eps) under the square root, operands either way.
static bool matchVariance(Node *n, NodeValue d, size_t rank,
                          LayerNormMatch &m) {
  auto *add = llvm::dyn_cast<AddNode>(n);
  if (!add)
    return false;
  for (unsigned i = 0; i < 2; ++i) {
    auto eps = getUniformValue(add->getNthInput(1 - i));
    auto *vm = llvm::dyn_cast<ReduceMeanNode>(add->getNthInput(i).getNode());
    if (!eps || !vm || !vm->getKeepDims() || vm->getAxes().size() != 1 ||
        vm->getAxes()[0] != int64_t(rank) - 1 ||
        !isSquareOf(vm->getInput().getNode(), d))
      continue;
    m.eps = *eps;
    m.inside.insert({add, vm, vm->getInput().getNode()});
    return true;
  }
  return false;
}

/// d / sqrt(mean(d * d) + eps), or d * (1 / sqrt(...)), with
/// d = x - mean(x): the normalized rows; fills x, eps and the inner nodes.
static bool matchNormalized(NodeValue y, LayerNormMatch &m) {
  Node *root = y.getNode();
  if (!llvm::isa<DivNode>(root) && !llvm::isa<MulNode>(root))
    return false;
  NodeValue d = root->getNthInput(0);
  auto *sub = llvm::dyn_cast<SubNode>(d.getNode());
  auto *b = llvm::dyn_cast<BroadcastNode>(root->getNthInput(1).getNode());
  if (!sub || !b)
    return false;
  llvm::ArrayRef<dim_t> dims = y.dims();
  ReduceMeanNode *mean = rowMean(sub->getRHS(), dims, m.inside);
  if (!mean || mean->getInput() != sub->getLHS())
    return false;
  m.x = sub->getLHS();
  Node *s = b->getInput().getNode();
  if (llvm::isa<MulNode>(root)) {
    if (!llvm::isa<ReciprocalNode>(s))
      return false;
    m.inside.insert(s);
    s = s->getNthInput(0).getNode();
  }
  auto *sqrt = llvm::dyn_cast<SqrtNode>(s);
  if (!sqrt || !matchVariance(sqrt->getInput().getNode(), d, dims.size(), m))
    return false;
  m.inside.insert({b, sqrt, sub});
  return true;
}

static bool matchFrom(NodeValue y, int stage, LayerNormMatch &m);

/// Peels an Add of a bias row (stage 0) or a Mul by a scale row (stage 1)
/// off \p y, with the data on either side, and matches what is under it.
static bool peelParam(NodeValue y, int stage, LayerNormMatch &m) {
  Node *n = y.getNode();
  NodeKind kind = stage == 0 ? NodeKind::Add : NodeKind::Mul;
  if (n->getKind() != kind)
    return false;
  for (unsigned i = 0; i < 2; ++i) {
    LayerNormMatch t = m;
    NodeValue param = n->getNthInput(1 - i);
    if (!isRowConstant(param, y.dims(), t.inside))
      continue;
    (stage == 0 ? t.bias : t.scale) = param;
    t.inside.insert(n);
    if (matchFrom(n->getNthInput(i), stage + 1, t)) {
      m = std::move(t);
      return true;
    }
  }
  return false;
}

/// Matches from \p stage on: 0 bias, 1 scale, 2 the normalization.
static bool matchFrom(NodeValue y, int stage, LayerNormMatch &m) {
  if (stage < 2)
    return peelParam(y, stage, m) || matchFrom(y, stage + 1, m);
  if (!matchNormalized(y, m))
    return false;
  m.inside.insert(y.getNode());
  return true;
}

/// True if no node of \p m but \p root has a user outside the pattern.
static bool selfContained(const LayerNormMatch &m, const Node *root) {
  for (const Node *n : m.inside)
    if (n != root)
      for (const NodeUse &u : n->getUsers())
        if (!m.inside.count(u.user))
          return false;
  return true;
}

bool FuseLayerNormPass::run(Function &F, PassContext &ctx) {
  bool changed = false;
  std::set<const Node *> erased;
  std::vector<Node *> order = nodesInOrder(F);
  // Visit roots last to first, so that the outermost Add or Mul of a
  // pattern is tried before the nodes inside it.
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    Node *root = *it;
    if (erased.count(root))
      continue;
    LayerNormMatch m;
    if (root->getNumResults() != 1 || root->getType()->rank() < 1 ||
        root->getType()->getElemKind() != ElemKind::Float32 ||
        !matchFrom(root->getNthResult(0), 0, m) || !selfContained(m, root))
      continue;
    std::string name = root->getName().str();
    dim_t n = m.x.dims().back();
    NodeValue scale = m.scale ? rowVector(F, m.scale, n)
                              : F.createSplat(name + ".scale", {int64_t(n)},
                                              ElemKind::Float32, 1.f);
    NodeValue bias = m.bias ? rowVector(F, m.bias, n)
                            : F.createSplat(name + ".bias", {int64_t(n)},
                                            ElemKind::Float32, 0.f);
    NodeValue ln = F.createLayerNorm(name, m.x, scale, bias, float(m.eps));
    root->getNthResult(0).replaceAllUsesWith(ln);
    ++ctx.counters["fuse-layernorm.fused"];
    erased.insert(m.inside.begin(), m.inside.end());
    changed = true;
  }
  // The patterns' nodes are unused now; erase them users first.
  for (auto it = order.rbegin(); it != order.rend(); ++it)
    if (erased.count(*it) && (*it)->getUsers().empty())
      F.eraseNode(*it);
  return changed;
}
