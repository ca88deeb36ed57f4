//===- ShrinkLiveRanges.cpp - Allocate late, free early -------------------===//
//
// Moves every allocactivation (and every tensorview) down to just before the
// first instruction that uses it, and every deallocactivation up to just
// after the last instruction that touches the buffer through any view. The
// computing instructions keep their order; only the markers move.
//
//===----------------------------------------------------------------------===//
#include "IRUtils.h"

#include "ember/IR/IROptimizer.h"

using namespace ember;
using namespace ember::iropt;

namespace {
/// Where the markers go relative to the computing instructions.
struct Placement {
  /// Markers (allocs, views) to put before computing instruction k; index
  /// numComputing means the end of the function.
  std::vector<std::vector<Instruction *>> before;
  /// Allocations to free after computing instruction k (or at the end).
  std::vector<std::vector<AllocActivationInst *>> freeAfter;
};
} // namespace

/// Computes, for every marker, the index of the first computing instruction
/// that needs it, and for every allocation the last one.
static Placement place(const std::vector<Instruction *> &order) {
  std::vector<size_t> computeIdx(order.size());
  size_t numComputing = 0;
  for (size_t p = 0; p < order.size(); ++p) {
    computeIdx[p] = numComputing;
    if (!isMemoryMarker(order[p]))
      ++numComputing;
  }
  // first[v]: the computing index at which marker v must exist.
  llvm::DenseMap<const Value *, size_t> first, last;
  for (size_t p = order.size(); p-- > 0;) {
    Instruction *I = order[p];
    size_t here = isMemoryMarker(I) ? first.lookup(I) : computeIdx[p];
    if (llvm::isa<TensorViewInst>(I) && !first.count(I))
      here = first[I] = computeIdx[p]; // An unused view stays where it is.
    if (llvm::isa<DeallocActivationInst>(I))
      continue;
    for (const Operand &op : I->getOperands()) {
      auto [it, inserted] = first.try_emplace(op.value, here);
      if (!inserted)
        it->second = std::min(it->second, here);
      Value *origin = getOrigin(op.value);
      auto [lt, ins2] = last.try_emplace(origin, here);
      if (!ins2)
        lt->second = std::max(lt->second, here);
    }
  }
  // A buffer used in a loop and allocated before it lives until the
  // loopend (extendThroughLoops); spans in computing indices.
  std::vector<LoopSpan> loops =
      findLoops(std::vector<const Instruction *>(order.begin(), order.end()));
  for (LoopSpan &l : loops)
    l = {computeIdx[l.begin], computeIdx[l.end]};
  Placement pl;
  pl.before.resize(numComputing + 1);
  pl.freeAfter.resize(numComputing + 1);
  for (size_t p = 0; p < order.size(); ++p) {
    Instruction *I = order[p];
    if (llvm::isa<DeallocActivationInst>(I) || !isMemoryMarker(I))
      continue;
    auto it = first.find(I);
    size_t at = it == first.end() ? computeIdx[p] : it->second;
    pl.before[at].push_back(I);
    if (auto *a = llvm::dyn_cast<AllocActivationInst>(I)) {
      auto lt = last.find(a);
      size_t end = lt == last.end() ? at : std::max(at, lt->second);
      pl.freeAfter[extendThroughLoops(loops, at, end)].push_back(a);
    }
  }
  return pl;
}

bool ember::shrinkLiveRanges(IRFunction &F) {
  auto &instrs = F.getInstrsMutable();
  std::vector<const Value *> before;
  std::vector<Instruction *> order;
  for (auto &ip : instrs) {
    auto *d = llvm::dyn_cast<DeallocActivationInst>(ip.get());
    before.push_back(d ? static_cast<const Value *>(d->getAlloc()) : ip.get());
    if (!d)
      order.push_back(ip.get());
  }
  Placement pl = place(order);
  eraseDeallocs(F);
  llvm::DenseMap<const Instruction *, IRFunction::InstrList::iterator> where;
  for (auto it = instrs.begin(); it != instrs.end(); ++it)
    where[it->get()] = it;
  IRFunction::InstrList rebuilt;
  std::vector<std::pair<Instruction *, AllocActivationInst *>> frees;
  size_t k = 0;
  auto emitFrees = [&](size_t idx, Instruction *after) {
    for (AllocActivationInst *a : pl.freeAfter[idx])
      frees.push_back({after, a});
  };
  for (Instruction *I : order) {
    if (isMemoryMarker(I))
      continue;
    for (Instruction *m : pl.before[k])
      rebuilt.splice(rebuilt.end(), instrs, where[m]);
    rebuilt.splice(rebuilt.end(), instrs, where[I]);
    emitFrees(k++, I);
  }
  for (Instruction *m : pl.before[k])
    rebuilt.splice(rebuilt.end(), instrs, where[m]);
  emitFrees(k, nullptr);
  instrs.splice(instrs.end(), rebuilt);
  // Insert the deallocations, last instruction first so that several frees
  // after one instruction keep allocation order.
  for (auto it = frees.rbegin(); it != frees.rend(); ++it) {
    if (!it->first)
      continue;
    F.setInsertPoint(std::next(where[it->first]));
    F.createDeallocActivation(it->second);
  }
  F.resetInsertPoint();
  for (auto &[at, alloc] : frees)
    if (!at)
      F.createDeallocActivation(alloc);
  std::vector<const Value *> after;
  for (auto &ip : instrs) {
    auto *d = llvm::dyn_cast<DeallocActivationInst>(ip.get());
    after.push_back(d ? static_cast<const Value *>(d->getAlloc()) : ip.get());
  }
  return before != after;
}
