//===- Lower.cpp - The lowering driver and its rule table -----------------===//
#include "ember/Optimizer/Lower.h"

#include "LowerRules.h"

#include "ember/Graph/Verifier.h"

#include "llvm/ADT/SmallPtrSet.h"

using namespace ember;

namespace {
using RuleFn = Replacement (*)(Function &, Node &);
struct LoweringRule {
  NodeKind kind;
  RuleFn fn;
};
template <typename NodeT, Replacement (*Fn)(Function &, NodeT &)>
Replacement adapt(Function &F, Node &n) {
  return Fn(F, llvm::cast<NodeT>(n));
}
const LoweringRule kRules[] = {
    {NodeKind::Gemm, adapt<GemmNode, lowerGemm>},
    {NodeKind::MatMul, adapt<MatMulNode, lowerMatMulOperands>},
    {NodeKind::BatchNorm, adapt<BatchNormNode, lowerBatchNorm>},
    {NodeKind::Softmax, adapt<SoftmaxNode, lowerSoftmax>},
    {NodeKind::AvgPool, adapt<AvgPoolNode, lowerAvgPool>},
    {NodeKind::MaxPool, adapt<MaxPoolNode, lowerMaxPool>},
    {NodeKind::PoolND, adapt<PoolNDNode, lowerPoolND>},
    {NodeKind::Conv, adapt<ConvNode, lowerGroupedConv>},
    {NodeKind::Dequantize, adapt<DequantizeNode, lowerDequantize>},
    {NodeKind::Quantize, adapt<QuantizeNode, lowerQuantize>},
    {NodeKind::RequantConv, adapt<RequantConvNode, lowerRequantConv>},
    {NodeKind::RequantMatMul, adapt<RequantMatMulNode, lowerRequantMatMul>},
    {NodeKind::RequantAdd, adapt<RequantAddNode, lowerRequantAdd>},
    {NodeKind::RequantMul, adapt<RequantMulNode, lowerRequantMul>},
    {NodeKind::TableLookup, adapt<TableLookupNode, lowerTableLookup>},
    {NodeKind::ScaledSoftmax, adapt<ScaledSoftmaxNode, lowerScaledSoftmax>},
    {NodeKind::Attention, adapt<AttentionNode, lowerAttention>},
};
} // namespace

static const LoweringRule *findRule(NodeKind kind) {
  for (const LoweringRule &r : kRules)
    if (r.kind == kind)
      return &r;
  return nullptr;
}

bool ember::hasLowering(NodeKind kind) { return findRule(kind) != nullptr; }

bool ember::lowerFunction(Function &F, const ShouldLowerFn &shouldLower) {
  bool changed = false, again = true;
  while (again) {
    again = false;
    for (Node *n : topologicalOrder(F)) {
      const LoweringRule *rule = findRule(n->getKind());
      if (!rule || !shouldLower(*n))
        continue;
      Replacement repl = rule->fn(F, *n);
      if (repl.empty())
        continue; // the rule declined this node
      for (unsigned i = 0; i < repl.size(); ++i)
        n->getNthResult(i).replaceAllUsesWith(repl[i]);
      F.eraseNode(n);
      changed = again = true;
    }
  }
  return changed;
}

bool ember::eliminateDeadCode(Function &F) {
  auto isDead = [&](const Node *n) {
    return n->getParent() == &F && !n->hasUsers() && !llvm::isa<SaveNode>(n);
  };
  // A worklist, so that a chain of k dead nodes costs k erasures rather
  // than k sweeps over the function.
  std::vector<Node *> dead;
  llvm::SmallPtrSet<const Node *, 16> queued;
  for (auto &n : F.getNodes())
    if (isDead(n.get()) && queued.insert(n.get()).second)
      dead.push_back(n.get());
  bool changed = !dead.empty();
  while (!dead.empty()) {
    Node *n = dead.back();
    dead.pop_back();
    llvm::SmallVector<Node *, 4> producers;
    for (const NodeValue &in : n->getInputs())
      producers.push_back(in.getNode());
    F.eraseNode(n);
    for (Node *p : producers)
      if (isDead(p) && queued.insert(p).second)
        dead.push_back(p);
  }
  F.getParent().eraseUnusedConstants();
  return changed;
}
