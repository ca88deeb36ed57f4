//===- IRVerifier.cpp - Structural and type checks of the IR --------------===//
#include "ember/IR/IRGen.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

using namespace ember;

static llvm::Error verifyTableInstr(const Instruction &I) {
  OpKind op = *opKindForInstr(I.getKind());
  const OpInfo &info = getOpInfo(op);
  unsigned numDests = info.results.size();
  if (I.getNumOperands() < numDests)
    return makeErrorF("instruction {0} ({1}) has too few operands", I.getName(),
                      I.getKindName());
  llvm::SmallVector<TypeRef, 4> inTypes;
  for (unsigned i = 0; i < I.getNumOperands(); ++i) {
    const Operand &op = I.getOperand(i);
    OperandRole expected =
        tableOperandRole(I.getKind(), I.getAttrs(), i, I.getNumOperands());
    if (op.role != expected)
      return makeErrorF("instruction {0}: operand {1} must be {2}", I.getName(),
                        i, operandRoleName(expected));
    if (i >= numDests)
      inTypes.push_back(op.value->getType());
  }
  auto types = checkAndInfer(op, I.getName(), inTypes, I.getAttrs());
  if (!types)
    return types.takeError();
  for (unsigned i = 0; i < numDests; ++i)
    if (!(*types)[i].isSameStorage(*I.getOperand(i).value->getType()))
      return makeErrorF("instruction {0} ({1}): destination {2} has type {3}, "
                        "expected {4}",
                        I.getName(), I.getKindName(), i,
                        I.getOperand(i).value->getType()->toString(),
                        (*types)[i].toString());
  return llvm::Error::success();
}

/// Every loopbegin has one loopend after it, loops nest without crossing,
/// and an
/// allocation made before a loop is not freed inside it (the next
/// iteration reads it again).
static llvm::Error verifyLoops(const IRFunction &F) {
  std::vector<const Instruction *> order;
  llvm::DenseMap<const Value *, size_t> allocAt;
  llvm::DenseSet<const Value *> counters;
  for (auto &ip : F.getInstrs()) {
    if (llvm::isa<AllocActivationInst>(ip.get()))
      allocAt[ip.get()] = order.size();
    if (ip->getKind() == ValueKind::LoopBeginInst)
      counters.insert(ip->getOperand(0).value);
    if (ip->getKind() == ValueKind::LoopEndInst &&
        !counters.count(ip->getOperand(1).value))
      return makeErrorF("loopend {0} has no loopbegin before it",
                        ip->getName());
    order.push_back(ip.get());
  }
  std::vector<LoopSpan> loops = findLoops(order);
  std::vector<size_t> open;
  for (size_t i = 0; i < loops.size(); ++i) {
    const LoopSpan &l = loops[i];
    if (l.end <= l.begin)
      return makeErrorF("loopbegin {0} has no loopend after it",
                        order[l.begin]->getName());
    // Loops in order of their loopbegin: the open ones enclosing this one
    // must end after it.
    while (!open.empty() && loops[open.back()].end < l.begin)
      open.pop_back();
    if (!open.empty() && loops[open.back()].end < l.end)
      return makeErrorF("loops {0} and {1} cross (a loop that begins "
                        "inside another must end inside it)",
                        order[loops[open.back()].begin]->getName(),
                        order[l.begin]->getName());
    open.push_back(i);
    for (size_t p = l.begin; p < l.end; ++p)
      if (auto *d = llvm::dyn_cast<DeallocActivationInst>(order[p]))
        if (allocAt.lookup(d->getAlloc()) < l.begin)
          return makeErrorF("{0} is allocated before loop {1} and freed "
                            "inside it",
                            d->getAlloc()->getName(),
                            order[l.begin]->getName());
  }
  return llvm::Error::success();
}

llvm::Error ember::verifyIR(const IRFunction &F) {
  llvm::DenseSet<const Value *> defined, freed;
  for (auto &w : F.getWeights())
    defined.insert(w.get());
  for (auto &ip : F.getInstrs()) {
    const Instruction &I = *ip;
    for (const Operand &op : I.getOperands()) {
      if (!op.value)
        return makeErrorF("instruction {0} has a null operand", I.getName());
      if (!defined.count(op.value))
        return makeErrorF("instruction {0} uses {1} before its definition",
                          I.getName(), op.value->getName());
      if (!op.value->getType())
        return makeErrorF("instruction {0}: operand {1} is not a buffer",
                          I.getName(), op.value->getName());
      Value *origin = getOrigin(op.value);
      if (freed.count(origin))
        return makeErrorF("instruction {0} uses {1} after its deallocation",
                          I.getName(), op.value->getName());
      if (op.role != OperandRole::In)
        if (auto *w = llvm::dyn_cast<WeightVar>(origin))
          if (w->isConstant())
            return makeErrorF("instruction {0} writes constant weight {1}",
                              I.getName(), w->getName());
    }
    switch (I.getKind()) {
    case ValueKind::AllocActivationInst:
      if (!I.getType())
        return makeErrorF("allocation {0} has no type", I.getName());
      break;
    case ValueKind::DeallocActivationInst: {
      auto *a = llvm::dyn_cast<AllocActivationInst>(I.getOperand(0).value);
      if (!a)
        return makeErrorF("{0} does not free an allocation", I.getName());
      freed.insert(a);
      break;
    }
    case ValueKind::TensorViewInst: {
      auto &tv = llvm::cast<TensorViewInst>(I);
      TypeRef src = tv.getSrc()->getType();
      if (tv.getOffset() < 0 ||
          tv.getOffset() + tv.getType()->size() > src->size() ||
          src->getElemKind() != tv.getType()->getElemKind())
        return makeErrorF("view {0} of type {1} at offset {2} does not fit in "
                          "{3}",
                          I.getName(), tv.getType()->toString(), tv.getOffset(),
                          src->toString());
      break;
    }
    case ValueKind::CopyInst: {
      auto &c = llvm::cast<CopyInst>(I);
      if (!c.getDest()->getType()->isSameStorage(*c.getSrc()->getType()))
        return makeErrorF("copy {0} between different types {1} and {2}",
                          I.getName(), c.getDest()->getType()->toString(),
                          c.getSrc()->getType()->toString());
      break;
    }
    default:
      EMBER_RETURN_IF_ERR(verifyTableInstr(I));
    }
    defined.insert(&I);
  }
  for (auto &ip : F.getInstrs())
    if (llvm::isa<AllocActivationInst>(ip.get()) && !freed.count(ip.get()))
      return makeErrorF("allocation {0} is never deallocated", ip->getName());
  return verifyLoops(F);
}
