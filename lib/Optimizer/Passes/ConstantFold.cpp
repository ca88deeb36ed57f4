//===- ConstantFold.cpp - Evaluate subgraphs of constants -----------------===//
//
// A node is foldable when all its operands are Constants or foldable nodes
// (a Splat has none). It is worth folding unless it is a Splat or folding
// would create more data than its Constant leaves hold (a Broadcast of a
// per-channel vector stays a Broadcast), or it widens a Float16 / BFloat16
// value to Float32 where the precision options store weights narrow. The
// roots - nodes worth folding with a user that is not - are evaluated
// through PassContext::evaluate, in batches of bounded size, and replaced by
// new Constants.
//
//===----------------------------------------------------------------------===//
#include "PassUtils.h"
#include "Passes.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <optional>

using namespace ember;

/// Results smaller than this are always worth folding.
static constexpr dim_t kSmallResult = 64;

/// Result bytes one evaluation computes at most (a larger single result is
/// evaluated alone). The evaluator holds copies of the batch's leaves, the
/// Interpreter's regions and the results at once, next to the network's
/// own Constants: folding all of a transformer's weight transposes in one
/// evaluation held its weights four times over.
static constexpr uint64_t kBatchBytes = 32 << 20;

/// Evaluates \p roots together (or, if that fails, one by one, so that one
/// subgraph the evaluator cannot run does not block the others).
static std::vector<std::optional<Tensor>>
evaluateRoots(llvm::ArrayRef<Node *> roots, PassContext &ctx) {
  std::vector<NodeValue> values(roots.begin(), roots.end());
  std::vector<std::optional<Tensor>> results(roots.size());
  if (auto all = ctx.evaluate(values)) {
    for (size_t i = 0; i < roots.size(); ++i)
      results[i] = std::move((*all)[i]);
    return results;
  } else {
    llvm::consumeError(all.takeError());
  }
  for (size_t i = 0; i < roots.size(); ++i) {
    auto one = ctx.evaluate({values[i]});
    if (one)
      results[i] = std::move(one->front());
    else
      llvm::consumeError(one.takeError());
  }
  return results;
}

/// Erases \p n if nothing uses it, then its operands that this leaves
/// unused, and the Constants no node uses any more: a folded subgraph's
/// weights are freed before the next batch is evaluated.
static void eraseDeadSubgraph(Node *n) {
  // A node reached twice (an operand of two erased nodes) is erased once.
  llvm::SmallPtrSet<Node *, 16> erased;
  std::vector<Node *> work = {n};
  while (!work.empty()) {
    Node *d = work.back();
    work.pop_back();
    if (erased.count(d) || d->hasUsers() || llvm::isa<Constant>(d) ||
        !d->getParent())
      continue;
    for (NodeValue v : d->getInputs())
      work.push_back(v.getNode());
    erased.insert(d);
    d->getParent()->eraseNode(d);
  }
}

/// Folds \p roots: evaluates them, replaces each by a new Constant and
/// erases what only it used.
static bool foldBatch(Function &F, llvm::ArrayRef<Node *> roots,
                      PassContext &ctx) {
  std::vector<std::optional<Tensor>> results = evaluateRoots(roots, ctx);
  Module &M = F.getParent();
  bool changed = false;
  for (size_t i = 0; i < roots.size(); ++i) {
    if (!results[i]) {
      ++ctx.counters["constant-fold.failed-evaluations"];
      continue;
    }
    Constant *c = M.createConstant(roots[i]->getName(), std::move(*results[i]));
    if (!c->getType()->isSameStorage(*roots[i]->getType()))
      LOG(FATAL) << "constant folding changed the type of "
                 << roots[i]->getName().str();
    M.refineResultType(c, 0, *roots[i]->getType()); // keep its quantization
    roots[i]->getNthResult(0).replaceAllUsesWith(c);
    ++ctx.counters["constant-fold.folded"];
    changed = true;
  }
  for (size_t i = 0; i < roots.size(); ++i)
    if (results[i])
      eraseDeadSubgraph(roots[i]);
  M.eraseUnusedConstants();
  return changed;
}

/// True if \p n is a Cast from Float16 or BFloat16 to Float32. Where
/// weights are stored narrow (-precision=fp16, -weights-precision), it
/// runs at run time: folding it would store the weight in Float32 again.
static bool widensNarrowFloat(Node *n) {
  auto *cast = llvm::dyn_cast<CastNode>(n);
  if (!cast || cast->getType()->getElemKind() != ElemKind::Float32)
    return false;
  ElemKind from = cast->getInput().getElemKind();
  return from == ElemKind::Float16 || from == ElemKind::BFloat16;
}

bool ConstantFoldPass::run(Function &F, PassContext &ctx) {
  if (!ctx.evaluate)
    return false;
  // For each foldable node: the size of its largest Constant leaf.
  llvm::DenseMap<Node *, dim_t> leafMax;
  std::vector<Node *> order = nodesInOrder(F);
  for (Node *n : order) {
    if (llvm::isa<SaveNode>(n) || isLoopOp(toOpKind(n->getKind())))
      continue; // a loop's buffers are written at run time
    dim_t largest = 0;
    bool ok = true;
    for (NodeValue v : n->getInputs()) {
      if (auto *c = llvm::dyn_cast<Constant>(v.getNode()))
        largest = std::max(largest, c->getType()->size());
      else if (leafMax.count(v.getNode()))
        largest = std::max(largest, leafMax[v.getNode()]);
      else
        ok = false;
    }
    if (ok)
      leafMax[n] = largest;
  }
  // Foldable nodes worth turning into a Constant.
  bool keepNarrow = ctx.precision.storesNarrowWeights();
  auto worthIt = [&](Node *n) {
    auto it = leafMax.find(n);
    return it != leafMax.end() && !llvm::isa<SplatNode>(n) &&
           !(keepNarrow && widensNarrowFloat(n)) && n->getNumResults() == 1 &&
           n->getType()->size() <= std::max(it->second, kSmallResult);
  };
  // Roots: such nodes with a user that will not be folded itself.
  std::vector<Node *> roots;
  for (Node *n : order) {
    if (!worthIt(n))
      continue;
    bool usedOutside = false;
    for (const NodeUse &u : n->getUsers())
      usedOutside |= !worthIt(u.user);
    if (usedOutside)
      roots.push_back(n);
  }
  if (roots.empty())
    return false;
  // Later roots stay valid while earlier batches are erased: each has a
  // user outside the folded subgraphs.
  bool changed = false;
  for (size_t b = 0; b < roots.size();) {
    size_t e = b;
    uint64_t bytes = 0;
    do
      bytes += roots[e++]->getType()->sizeInBytes();
    while (e < roots.size() &&
           bytes + roots[e]->getType()->sizeInBytes() <= kBatchBytes);
    changed |= foldBatch(F, llvm::ArrayRef<Node *>(roots).slice(b, e - b), ctx);
    b = e;
  }
  return changed;
}
