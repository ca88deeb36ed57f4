//===- DeadIR.cpp - Dead views, dead allocations, dead stores -------------===//
#include "IRUtils.h"

#include "ember/IR/IROptimizer.h"

#include "llvm/ADT/DenseSet.h"

using namespace ember;
using namespace ember::iropt;

/// True if instruction \p I at \p pos only writes activations that nobody
/// reads afterwards (and reads nothing it writes).
static bool isDeadStore(const Instruction *I, size_t pos, const UseMap &uses) {
  if (isMemoryMarker(I))
    return false;
  bool writes = false;
  for (const Operand &op : I->getOperands()) {
    if (!isWrite(op.role))
      continue;
    writes = true;
    const Value *buffer = getOrigin(op.value);
    if (!llvm::isa<AllocActivationInst>(buffer) || uses.readAfter(buffer, pos))
      return false;
  }
  return writes;
}

/// Erases one round of dead code; returns whether anything was erased.
static bool eraseDeadRound(IRFunction &F) {
  UseMap uses(F);
  llvm::DenseSet<const Value *> used;
  for (Instruction *I : uses.order)
    if (!llvm::isa<DeallocActivationInst>(I))
      for (const Operand &op : I->getOperands())
        used.insert(op.value);
  std::vector<Instruction *> dead;
  for (size_t pos = 0; pos < uses.order.size(); ++pos) {
    Instruction *I = uses.order[pos];
    bool unusedMarker =
        (llvm::isa<TensorViewInst>(I) || llvm::isa<AllocActivationInst>(I)) &&
        !used.count(I);
    if (unusedMarker || isDeadStore(I, pos, uses))
      dead.push_back(I);
  }
  for (Instruction *I : dead) {
    if (auto *a = llvm::dyn_cast<AllocActivationInst>(I))
      eraseAlloc(F, a);
    else
      F.eraseInstr(I);
  }
  return !dead.empty();
}

bool ember::eliminateDeadIR(IRFunction &F) {
  bool changed = false;
  while (eraseDeadRound(F))
    changed = true;
  if (changed)
    shrinkLiveRanges(F);
  return changed;
}
