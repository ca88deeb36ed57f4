//===- ConstantFold.cpp - Evaluate subgraphs of constants -----------------===//
//
// A node is foldable when all its operands are Constants or foldable nodes
// (a Splat has none). The roots - foldable nodes with a user that is not -
// are evaluated together through PassContext::evaluate and replaced by new
// Constants. A root is left alone when it is a Splat, or when folding would
// create more data than its Constant leaves hold (a Broadcast of a
// per-channel vector stays a Broadcast).
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
  std::vector<Node *> roots;
  for (Node *n : order) {
    auto it = leafMax.find(n);
    if (it == leafMax.end() || llvm::isa<SplatNode>(n) ||
        n->getNumResults() != 1 ||
        n->getType()->size() > std::max(it->second, kSmallResult))
      continue;
    bool usedOutside = false;
    for (const NodeUse &u : n->getUsers())
      usedOutside |= !leafMax.count(u.user);
    if (usedOutside)
      roots.push_back(n);
  }
  if (roots.empty())
    return false;
  std::vector<NodeValue> values(roots.begin(), roots.end());
  auto tensors = ctx.evaluate(values);
  if (!tensors) {
    llvm::consumeError(tensors.takeError());
    ++ctx.counters["constant-fold.failed-evaluations"];
    return false;
  }
  Module &M = F.getParent();
  for (size_t i = 0; i < roots.size(); ++i) {
    Constant *c =
        M.createConstant(roots[i]->getName(), std::move((*tensors)[i]));
    if (c->getType() != roots[i]->getType())
      LOG(FATAL) << "constant folding changed the type of "
                 << roots[i]->getName().str();
    roots[i]->getNthResult(0).replaceAllUsesWith(c);
    ++ctx.counters["constant-fold.folded"];
  }
  return true;
}
