//===- ConstantFold.cpp - Evaluate subgraphs of constants -----------------===//
//
// A node is foldable when all its operands are Constants or foldable nodes
// (a Splat has none). It is worth folding unless it is a Splat or folding
// would create more data than its Constant leaves hold (a Broadcast of a
// per-channel vector stays a Broadcast). The roots - nodes worth folding
// with a user that is not - are evaluated together through
// PassContext::evaluate and replaced by new Constants.
//
//===----------------------------------------------------------------------===//
#include "PassUtils.h"
#include "Passes.h"

#include "llvm/ADT/DenseMap.h"

using namespace ember;

/// Results smaller than this are always worth folding.
static constexpr dim_t kSmallResult = 64;

bool ConstantFoldPass::run(Function &F, PassContext &ctx) {
  if (!ctx.evaluate)
    return false;
  // For each foldable node: the size of its largest Constant leaf.
  llvm::DenseMap<Node *, dim_t> leafMax;
  std::vector<Node *> order = nodesInOrder(F);
  for (Node *n : order) {
    if (llvm::isa<SaveNode>(n))
      continue;
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
  auto worthIt = [&](Node *n) {
    auto it = leafMax.find(n);
    return it != leafMax.end() && !llvm::isa<SplatNode>(n) &&
           n->getNumResults() == 1 &&
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
  // Evaluate all roots in one compile; if that fails (a node the evaluator
  // cannot run), retry them one by one so one bad subgraph does not block
  // the others.
  std::vector<NodeValue> values(roots.begin(), roots.end());
  std::vector<std::optional<Tensor>> results(roots.size());
  if (auto all = ctx.evaluate(values)) {
    for (size_t i = 0; i < roots.size(); ++i)
      results[i] = std::move((*all)[i]);
  } else {
    llvm::consumeError(all.takeError());
    for (size_t i = 0; i < roots.size(); ++i) {
      auto one = ctx.evaluate({values[i]});
      if (one)
        results[i] = std::move(one->front());
      else
        llvm::consumeError(one.takeError());
    }
  }
  Module &M = F.getParent();
  bool changed = false;
  for (size_t i = 0; i < roots.size(); ++i) {
    if (!results[i]) {
      ++ctx.counters["constant-fold.failed-evaluations"];
      continue;
    }
    Constant *c = M.createConstant(roots[i]->getName(), std::move(*results[i]));
    if (c->getType() != roots[i]->getType())
      LOG(FATAL) << "constant folding changed the type of "
                 << roots[i]->getName().str();
    roots[i]->getNthResult(0).replaceAllUsesWith(c);
    ++ctx.counters["constant-fold.folded"];
    changed = true;
  }
  return changed;
}
