//===- MatMulOperands.cpp - Strided MatMul operands on the CPU ------------===//
//
// Which Transposes the CPU's MatMul reads through strides (TransposeFolds)
// and the batch offsets of strided operands. A folded Transpose costs the
// product nothing where the operand's last dim stays contiguous (the
// kernel takes A's and B's row strides), and one strided packing copy
// where it does not, which replaces the Transpose's own copy (a transposed
// B was packed after the copy anyway); so every Transpose that is safe to
// skip is folded.
//
//===----------------------------------------------------------------------===//
#include "MatMulOperands.h"

#include "ember/Kernel/LowerToKernel.h"

using namespace ember;
using namespace ember::cpu;
using kir::ExprRef;

namespace {
/// Row-major element strides of \p dims.
llvm::SmallVector<int64_t, 6> rowMajor(llvm::ArrayRef<dim_t> dims) {
  llvm::SmallVector<int64_t, 6> s(dims.size(), 1);
  for (size_t d = dims.size(); d-- > 1;)
    s[d - 1] = s[d] * int64_t(dims[d]);
  return s;
}

bool isFloatMatMulOperand(const MatMulInst &M, const Value *v) {
  return (M.getLHS() == v || M.getRHS() == v) &&
         M.getLHS()->getType()->getElemKind() == ElemKind::Float32 &&
         M.getRHS()->getType()->getElemKind() == ElemKind::Float32;
}

bool overlaps(const kir::Buffer &a, const kir::Buffer &b) {
  return a.region == b.region && a.offset < b.offset + b.size &&
         b.offset < a.offset + a.size;
}

/// True if an instruction of [from, to] writes bytes of \p buf. Markers
/// write nothing (a deallocation names its buffer as @out).
bool writtenIn(const std::vector<const Instruction *> &instrs, size_t from,
               size_t to, const kir::Buffer &buf, const MemoryPlan &plan) {
  for (size_t i = from; i <= to; ++i) {
    const Instruction *I = instrs[i];
    if (llvm::isa<AllocActivationInst>(I) ||
        llvm::isa<DeallocActivationInst>(I) || llvm::isa<TensorViewInst>(I))
      continue;
    for (const Operand &op : I->getOperands())
      if (op.role != OperandRole::In &&
          overlaps(kir::bufferFor(op.value, plan), buf))
        return true;
  }
  return false;
}
} // namespace

TransposeFolds::TransposeFolds(const IRFunction &F, const MemoryPlan &plan) {
  std::vector<const Instruction *> instrs;
  llvm::DenseMap<const Value *, unsigned> readers;
  llvm::DenseMap<const Value *, size_t> reader;
  for (auto &I : F.getInstrs()) {
    for (const Operand &op : I->getOperands())
      if (op.role != OperandRole::Out) {
        ++readers[getOrigin(op.value)];
        reader[op.value] = instrs.size();
      }
    instrs.push_back(I.get());
  }
  for (size_t t = 0; t < instrs.size(); ++t) {
    auto *T = llvm::dyn_cast<TransposeInst>(instrs[t]);
    if (!T || !llvm::isa<AllocActivationInst>(T->getDest()) ||
        readers.lookup(T->getDest()) != 1 || !reader.count(T->getDest()))
      continue;
    auto *w = llvm::dyn_cast<WeightVar>(getOrigin(T->getInput()));
    size_t m = reader.lookup(T->getDest());
    auto *M = llvm::dyn_cast<MatMulInst>(instrs[m]);
    if ((w && w->isConstant()) || !M || m <= t ||
        !isFloatMatMulOperand(*M, T->getDest()) ||
        llvm::is_contained(M->getEpilogue(), T->getDest()) ||
        writtenIn(instrs, t + 1, m, kir::bufferFor(T->getInput(), plan), plan))
      continue;
    folded_[T->getDest()] = T;
  }
}

MatMulOperand TransposeFolds::operand(Value *v) const {
  const TransposeInst *T = folded_.lookup(v);
  if (!T)
    return {v, rowMajor(v->getType()->dims())};
  // Dim d of the result is dim shuffle[d] of the input.
  llvm::SmallVector<int64_t, 6> in = rowMajor(T->getInput()->getType()->dims());
  MatMulOperand op{T->getInput(), {}};
  for (int64_t p : T->getShuffle())
    op.strides.push_back(in[p]);
  return op;
}

ExprRef cpu::stridedBatchOffset(kir::Kernel &k, ExprRef bi,
                                llvm::ArrayRef<dim_t> outBatch,
                                llvm::ArrayRef<dim_t> opBatch,
                                llvm::ArrayRef<int64_t> strides) {
  ExprRef off = k.constInt(0);
  int64_t inner = 1;
  for (size_t d = outBatch.size(); d-- > 0;) {
    if (opBatch[d] != 1)
      off = k.add(off, k.mul(k.rem(k.div(bi, inner), outBatch[d]), strides[d]));
    inner *= int64_t(outBatch[d]);
  }
  return off;
}
