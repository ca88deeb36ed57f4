//===- IRUtils.cpp - Use queries and edits shared by the IR passes --------===//
#include "IRUtils.h"

#include "llvm/ADT/SmallPtrSet.h"

#include "glog/logging.h"

#include <algorithm>

using namespace ember;
using namespace ember::iropt;

bool iropt::isMemoryMarker(const Instruction *I) {
  return llvm::isa<AllocActivationInst>(I) ||
         llvm::isa<DeallocActivationInst>(I) || llvm::isa<TensorViewInst>(I);
}

bool iropt::isElementwise(const Instruction *I) {
  std::optional<OpKind> op = opKindForInstr(I->getKind());
  return op && getOpInfo(*op).elementwise;
}

UseMap::UseMap(const IRFunction &F) {
  for (auto &ip : F.getInstrs()) {
    Instruction *I = ip.get();
    size_t pos = order.size();
    position[I] = pos;
    order.push_back(I);
    if (auto *tv = llvm::dyn_cast<TensorViewInst>(I)) {
      views[getOrigin(tv)].push_back(tv);
      continue;
    }
    if (isMemoryMarker(I))
      continue;
    for (const Operand &op : I->getOperands())
      uses[getOrigin(op.value)].push_back({pos, I, op.role});
  }
  // A buffer touched before a loop and inside it is read again by the next
  // iteration: record a read at the loopend, so that no pass sees it die
  // (or its later writes as dead) inside the loop.
  std::vector<LoopSpan> loops =
      findLoops(std::vector<const Instruction *>(order.begin(), order.end()));
  for (auto &[buffer, list] : uses) {
    size_t last = extendThroughLoops(loops, list.front().pos, list.back().pos);
    if (last != list.back().pos)
      list.push_back({last, order[last], OperandRole::In});
  }
}

llvm::ArrayRef<UseMap::Use> UseMap::usesOf(const Value *buffer) const {
  auto it = uses.find(buffer);
  if (it == uses.end())
    return {};
  return it->second;
}

bool UseMap::readAfter(const Value *buffer, size_t pos) const {
  return llvm::any_of(usesOf(buffer), [&](const Use &u) {
    return u.pos > pos && isRead(u.role);
  });
}

bool UseMap::writtenAfter(const Value *buffer, size_t pos) const {
  return llvm::any_of(usesOf(buffer), [&](const Use &u) {
    return u.pos > pos && isWrite(u.role);
  });
}

unsigned UseMap::numWriters(const Value *buffer) const {
  llvm::SmallPtrSet<const Instruction *, 4> writers;
  for (const Use &u : usesOf(buffer))
    if (isWrite(u.role))
      writers.insert(u.instr);
  return writers.size();
}

std::optional<size_t> UseMap::firstUse(const Value *buffer) const {
  llvm::ArrayRef<Use> u = usesOf(buffer);
  if (u.empty())
    return std::nullopt;
  return u.front().pos;
}

std::optional<size_t> UseMap::lastUse(const Value *buffer) const {
  llvm::ArrayRef<Use> u = usesOf(buffer);
  if (u.empty())
    return std::nullopt;
  return u.back().pos;
}

void UseMap::mergeInto(const AllocActivationInst *from, const Value *to) {
  std::vector<Use> &dst = uses[to];
  auto it = uses.find(from);
  if (it != uses.end()) {
    dst.insert(dst.end(), it->second.begin(), it->second.end());
    std::stable_sort(dst.begin(), dst.end(),
                     [](const Use &a, const Use &b) { return a.pos < b.pos; });
    uses.erase(from);
  }
  auto vt = views.find(from);
  if (vt != views.end()) {
    std::vector<TensorViewInst *> moved = std::move(vt->second);
    views.erase(from);
    auto &v = views[to];
    v.insert(v.end(), moved.begin(), moved.end());
  }
  auto pt = position.find(from);
  if (pt != position.end()) {
    order[pt->second] = nullptr;
    position.erase(pt);
  }
}

void iropt::replaceAllUses(IRFunction &F, Value *from, Value *to) {
  for (auto &ip : F.getInstrs()) {
    if (llvm::isa<DeallocActivationInst>(ip.get()))
      continue;
    for (unsigned i = 0; i < ip->getNumOperands(); ++i)
      if (ip->getOperand(i).value == from)
        ip->setOperand(i, to);
  }
}

void iropt::eraseAlloc(IRFunction &F, AllocActivationInst *alloc) {
  for (auto &ip : F.getInstrs())
    if (auto *d = llvm::dyn_cast<DeallocActivationInst>(ip.get()))
      if (d->getAlloc() == alloc) {
        F.eraseInstr(d);
        break;
      }
  F.eraseInstr(alloc);
}

void iropt::eraseDeallocs(IRFunction &F) {
  F.eraseInstrsIf(
      [](const Instruction *I) { return llvm::isa<DeallocActivationInst>(I); });
}

IRFunction::InstrList::iterator iropt::findInstr(IRFunction &F,
                                                 const Instruction *I) {
  auto &instrs = F.getInstrsMutable();
  auto it = std::find_if(instrs.begin(), instrs.end(),
                         [&](auto &p) { return p.get() == I; });
  CHECK(it != instrs.end()) << "instruction is not in this function";
  return it;
}
