//===- ConcatInPlace.cpp - Producers write into their concat's slices -----===//
//
// Concat along an axis whose leading dims are all 1 puts each input in one
// contiguous slice of the result. Two rewrites remove the copy:
//  - scatter: every input is an activation written once, before the concat,
//    by one instruction; each input becomes a tensorview of its slice of
//    the destination and the concat is erased.
//  - gather: every input already is a view of one buffer, back to back in
//    concat order (an earlier scatter put them there, as DenseNet's growing
//    concats do); the destination becomes a view of that range.
// Concats are visited last to first, so the largest concat of a chain
// claims the buffers and the smaller ones become views of its prefix.
//
//===----------------------------------------------------------------------===//
#include "IRUtils.h"

#include "ember/IR/IROptimizer.h"

#include "llvm/ADT/SmallPtrSet.h"

using namespace ember;
using namespace ember::iropt;

/// The element offset of each input's slice, or empty if the slices are not
/// contiguous (some dim before the axis is not 1).
static llvm::SmallVector<int64_t, 8> sliceOffsets(const ConcatInst *C) {
  TypeRef out = C->getDest()->getType();
  int64_t axis = C->getAxis();
  for (int64_t i = 0; i < axis; ++i)
    if (out->dims()[i] != 1)
      return {};
  llvm::SmallVector<int64_t, 8> offsets;
  int64_t off = 0;
  for (Value *v : C->getInputs()) {
    offsets.push_back(off);
    off += int64_t(v->getType()->size());
  }
  return offsets;
}

/// True if the element ranges [a, a+n) and [b, b+m) intersect.
static bool intersects(int64_t a, int64_t n, int64_t b, int64_t m) {
  return a < b + m && b < a + n;
}

/// Checks the scatter conditions for input \p in (slice at \p off of the
/// destination \p dst) of the concat at \p pos.
static bool canScatter(Value *in, int64_t off, AllocActivationInst *dst,
                       size_t pos, const UseMap &uses) {
  auto *a = llvm::dyn_cast<AllocActivationInst>(in);
  if (!a || uses.views.count(a) || uses.numWriters(a) != 1)
    return false;
  const UseMap::Use &first = uses.usesOf(a).front();
  if (first.pos >= pos || !isWrite(first.role) ||
      first.role == OperandRole::InOut)
    return false;
  // The producer must not read the destination where the input will go.
  int64_t n = int64_t(a->getType()->size());
  for (const Operand &op : first.instr->getOperands())
    if (getOrigin(op.value) == dst &&
        intersects(getOriginOffset(op.value),
                   int64_t(op.value->getType()->size()), off, n))
      return false;
  return true;
}

/// The scatter rewrite of concat \p C at \p pos.
static bool scatter(IRFunction &F, ConcatInst *C, size_t pos,
                    const UseMap &uses) {
  auto *dst = llvm::dyn_cast<AllocActivationInst>(C->getDest());
  llvm::SmallVector<int64_t, 8> offs = sliceOffsets(C);
  llvm::SmallVector<Value *, 8> ins = C->getInputs();
  if (!dst || offs.empty() || uses.firstUse(dst) != pos ||
      uses.numWriters(dst) != 1)
    return false;
  llvm::SmallPtrSet<Value *, 8> seen;
  for (size_t k = 0; k < ins.size(); ++k)
    if (!seen.insert(ins[k]).second ||
        !canScatter(ins[k], offs[k], dst, pos, uses))
      return false;
  // Each slice view replaces its allocation where it stood; the
  // destination's allocation moves up before the first of them.
  auto &instrs = F.getInstrsMutable();
  auto firstIn = findInstr(F, llvm::cast<Instruction>(ins[0]));
  for (Value *v : ins) {
    auto it = findInstr(F, llvm::cast<Instruction>(v));
    if (uses.position.lookup(it->get()) < uses.position.lookup(firstIn->get()))
      firstIn = it;
  }
  instrs.splice(firstIn, instrs, findInstr(F, dst));
  for (size_t k = 0; k < ins.size(); ++k) {
    auto *a = llvm::cast<AllocActivationInst>(ins[k]);
    F.setInsertPoint(findInstr(F, a));
    Value *view = F.createTensorView(a->getName().str() + ".slice", dst,
                                     a->getType(), offs[k]);
    F.resetInsertPoint();
    replaceAllUses(F, a, view);
    eraseAlloc(F, a);
  }
  F.eraseInstr(C);
  return true;
}

/// The gather rewrite of concat \p C at \p pos.
static bool gather(IRFunction &F, ConcatInst *C, size_t pos,
                   const UseMap &uses) {
  auto *dst = llvm::dyn_cast<AllocActivationInst>(C->getDest());
  llvm::SmallVector<int64_t, 8> offs = sliceOffsets(C);
  llvm::SmallVector<Value *, 8> ins = C->getInputs();
  if (!dst || offs.empty() || uses.firstUse(dst) != pos ||
      uses.numWriters(dst) != 1 || !llvm::isa<TensorViewInst>(ins[0]))
    return false;
  Value *origin = getOrigin(ins[0]);
  int64_t base = getOriginOffset(ins[0]);
  if (!llvm::isa<AllocActivationInst>(origin))
    return false;
  for (size_t k = 0; k < ins.size(); ++k)
    if (getOrigin(ins[k]) != origin ||
        getOriginOffset(ins[k]) != base + offs[k])
      return false;
  // The range must not change while the view is read: nothing after the
  // concat may write into it.
  int64_t n = int64_t(dst->getType()->size());
  for (const UseMap::Use &u : uses.usesOf(origin)) {
    if (u.pos <= pos || !isWrite(u.role))
      continue;
    for (const Operand &op : u.instr->getOperands())
      if (isWrite(op.role) && getOrigin(op.value) == origin &&
          intersects(getOriginOffset(op.value),
                     int64_t(op.value->getType()->size()), base, n))
        return false;
  }
  F.setInsertPoint(findInstr(F, dst));
  Value *view = F.createTensorView(dst->getName().str() + ".slice", origin,
                                   dst->getType(), base);
  F.resetInsertPoint();
  replaceAllUses(F, dst, view);
  eraseAlloc(F, dst);
  F.eraseInstr(C);
  return true;
}

bool ember::concatInPlace(IRFunction &F) {
  bool changed = false;
  for (bool again = true; again;) {
    again = false;
    UseMap uses(F);
    for (size_t pos = uses.order.size(); pos-- > 0;) {
      auto *C = llvm::dyn_cast<ConcatInst>(uses.order[pos]);
      if (C && (scatter(F, C, pos, uses) || gather(F, C, pos, uses))) {
        changed = again = true;
        break;
      }
    }
  }
  if (changed)
    shrinkLiveRanges(F);
  return changed;
}
