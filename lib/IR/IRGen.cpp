//===- IRGen.cpp - From a scheduled graph to IR ---------------------------===//
#include "ember/IR/IRGen.h"

#include "ember/Graph/Verifier.h"

#include "llvm/ADT/DenseMap.h"

using namespace ember;

namespace {
/// Maps graph values to IR values while generating code.
class IRGenerator {
public:
  IRGenerator(const Function &G, IRFunction &F) : G_(G), F_(F) {}

  llvm::Error run(const std::vector<Node *> &schedule) {
    declareWeights();
    for (Node *n : schedule)
      EMBER_RETURN_IF_ERR(emit(n));
    insertDeallocs();
    return llvm::Error::success();
  }

private:
  void declareWeights() {
    // Placeholders first (inputs, then outputs), then constants, each in
    // Module order, so the mutable region follows the graph's I/O order.
    Module &M = G_.getParent();
    for (Placeholder *p : M.getInputPlaceholders())
      values_[p] = F_.createWeightVar(p->getName(), p->getType(),
                                      WeightKind::Mutable, nullptr, false);
    for (Placeholder *p : M.getOutputPlaceholders())
      values_[p] = F_.createWeightVar(p->getName(), p->getType(),
                                      WeightKind::Mutable, nullptr, true);
  }

  Value *lookup(NodeValue v) {
    auto it = values_.find(v);
    if (it != values_.end())
      return it->second;
    auto *c = llvm::cast<Constant>(v.getNode());
    Value *w =
        F_.createWeightVar(c->getName(), c->getType(), WeightKind::Constant,
                           &c->getPayload(), false);
    values_[v] = w;
    return w;
  }

  llvm::Error emit(Node *n) {
    if (auto *r = llvm::dyn_cast<ReshapeNode>(n)) {
      values_[r->getResult()] = F_.createTensorView(
          n->getName(), lookup(r->getInput()), n->getType(), 0);
      return llvm::Error::success();
    }
    if (auto *s = llvm::dyn_cast<SaveNode>(n)) {
      F_.createCopy(n->getName(), lookup(s->getOutput()),
                    lookup(s->getInput()));
      return llvm::Error::success();
    }
    std::optional<ValueKind> kind = instrKindForOp(toOpKind(n->getKind()));
    if (!kind)
      return makeErrorF("node {0} ({1}) has no instruction; it must be "
                        "lowered for this backend",
                        n->getName(), n->getKindName());
    llvm::SmallVector<Operand, 6> ops;
    for (unsigned i = 0; i < n->getNumResults(); ++i) {
      std::string name = n->getName().str() + ".res";
      if (n->getNumResults() > 1)
        name += std::to_string(i);
      auto *alloc = F_.createAllocActivation(name, n->getType(i));
      values_[n->getNthResult(i)] = alloc;
      ops.push_back({alloc, OperandRole::Out});
    }
    for (NodeValue v : n->getInputs())
      ops.push_back({lookup(v), OperandRole::In});
    for (unsigned i = 0; i < ops.size(); ++i)
      ops[i].role = tableOperandRole(*kind, n->getAttrs(), i, ops.size());
    F_.createOpInstr(*kind, n->getName(), ops, n->getAttrs());
    return llvm::Error::success();
  }

  /// Puts a dealloc right after the last instruction that touches each
  /// allocation (directly or through a view), or after the loopend of a
  /// loop that uses an allocation made before it.
  void insertDeallocs() {
    auto &instrs = F_.getInstrsMutable();
    std::vector<IRFunction::InstrList::iterator> at;
    std::vector<const Instruction *> order;
    llvm::DenseMap<AllocActivationInst *, std::pair<size_t, size_t>> span;
    for (auto it = instrs.begin(); it != instrs.end(); ++it) {
      Instruction *I = it->get();
      size_t p = order.size();
      at.push_back(it);
      order.push_back(I);
      if (auto *a = llvm::dyn_cast<AllocActivationInst>(I))
        span[a] = {p, p};
      for (const Operand &op : I->getOperands())
        if (auto *a = llvm::dyn_cast<AllocActivationInst>(getOrigin(op.value)))
          span[a].second = p;
    }
    std::vector<LoopSpan> loops = findLoops(order);
    llvm::DenseMap<AllocActivationInst *, IRFunction::InstrList::iterator> last;
    for (auto &[a, s] : span)
      last[a] = at[extendThroughLoops(loops, s.first, s.second)];
    // Deterministic order: walk allocations in program order.
    for (auto it = instrs.begin(); it != instrs.end(); ++it) {
      auto *a = llvm::dyn_cast<AllocActivationInst>(it->get());
      if (!a)
        continue;
      F_.setInsertPoint(std::next(last[a]));
      F_.createDeallocActivation(a);
    }
    F_.resetInsertPoint();
  }

  const Function &G_;
  IRFunction &F_;
  std::map<NodeValue, Value *> values_;
};
} // namespace

llvm::Expected<std::unique_ptr<IRFunction>>
ember::generateIR(const Function &G, const std::vector<Node *> &schedule) {
  auto F = std::make_unique<IRFunction>(G.getName(), &G.getParent());
  IRGenerator gen(G, *F);
  EMBER_RETURN_IF_ERR(gen.run(schedule));
  return F;
}
