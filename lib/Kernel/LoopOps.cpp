//===- LoopOps.cpp - The loop ops of a loop kept as a loop ----------------===//
//
// The loop ops of a Loop kept as a loop (docs/ControlFlow.md) as small
// sequential kernels: loopcarry / loopparam / loopfinal copy their state,
// loopbegin and loopend do the Interpreter's test and latch and leave the
// test's answer in a one-byte flag, on which the backend's host code (the
// CPU's entries, the CUDA runtime and bundle) branches after running them.
//
//===----------------------------------------------------------------------===//
#include "ember/Kernel/LowerToKernel.h"

using namespace ember;
using namespace ember::kir;

namespace {
/// Builds one loop-op kernel over byte views of the planned buffers.
class LoopKernel {
public:
  LoopKernel(llvm::StringRef name, const MemoryPlan &plan)
      : k(name), plan_(plan) {}

  unsigned buffer(Value *v, ElemKind kind) {
    Buffer b = bufferFor(v, plan_);
    b.kind = kind;
    return k.addBuffer(b);
  }
  ExprRef scalar(Value *v, ElemKind kind) {
    return k.load(buffer(v, kind), k.constInt(0));
  }

  /// Copies all of \p from to \p to at byte \p at (none: 0); bytes, since
  /// the carried values are any kind and the copies are small.
  void copy(Value *to, Value *from, ExprRef at = nullptr) {
    int64_t n = int64_t(from->getType()->sizeInBytes());
    if (n == 0)
      return;
    unsigned d = buffer(to, ElemKind::UInt8);
    unsigned s = buffer(from, ElemKind::UInt8);
    unsigned v = k.newVar();
    ExprRef i = k.var(v);
    k.body().push_back(
        Kernel::loop(v, n, /*parallel=*/false,
                     {Kernel::store(d, at ? k.add(at, i) : i, k.load(s, i))}));
  }

  /// The loop's test with counter value \p i (loopContinues in the
  /// Interpreter): i < M, the condition and i < MaxTrips; the answer goes
  /// to \p flag, and when it is no, i goes to the loop's Count.
  void test(ExprRef i, const Instruction &begin, const LoopEndInst &end,
            const Buffer &flag) {
    ExprRef more = k.binary(BinOp::Lt, i,
                            scalar(begin.getOperand(1).value, ElemKind::Int64));
    ExprRef cond = scalar(end.getOperand(2).value, ElemKind::Bool);
    more = k.binary(BinOp::And, more, cond);
    if (end.getMaxTrips() >= 0)
      more = k.binary(BinOp::And, more,
                      k.binary(BinOp::Lt, i, k.constInt(end.getMaxTrips())));
    unsigned f = k.addBuffer(flag);
    k.body().push_back(Kernel::store(f, k.constInt(0), more));
    ExprRef done = k.binary(BinOp::Xor, more, k.constInt(1, ElemKind::Bool));
    unsigned count = buffer(end.getDest(), ElemKind::Int64);
    k.body().push_back(
        Kernel::ifThen(done, {Kernel::store(count, k.constInt(0), i)}));
  }

  Kernel k;

private:
  const MemoryPlan &plan_;
};
} // namespace

llvm::DenseMap<const Instruction *, const Instruction *>
kir::loopPartners(const IRFunction &F) {
  std::vector<const Instruction *> order;
  for (auto &I : F.getInstrs())
    order.push_back(I.get());
  llvm::DenseMap<const Instruction *, const Instruction *> partner;
  for (const LoopSpan &l : findLoops(order)) {
    partner[order[l.begin]] = order[l.end];
    partner[order[l.end]] = order[l.begin];
  }
  return partner;
}

bool kir::isLoopInst(const Instruction &I) {
  switch (I.getKind()) {
  case ValueKind::LoopCarryInst:
  case ValueKind::LoopBeginInst:
  case ValueKind::LoopParamInst:
  case ValueKind::LoopEndInst:
  case ValueKind::LoopFinalInst:
    return true;
  default:
    return false;
  }
}

Kernel kir::lowerLoopOp(const Instruction &I, const Instruction &partner,
                        const MemoryPlan &plan, const Buffer &flag) {
  LoopKernel lk(I.getKindName(), plan);
  Kernel &k = lk.k;
  if (auto *end = llvm::dyn_cast<LoopEndInst>(&I)) {
    // The latch: next values into the carried buffers, the scan rows into
    // row i, i + 1; then the test.
    unsigned n = unsigned(end->getNumCarried());
    unsigned numScans = (I.getNumOperands() - 4 - 2 * n) / 2;
    Value *counter = end->getCounter();
    lk.copy(I.getOperand(2).value, I.getOperand(3).value);
    for (unsigned j = 0; j < n; ++j)
      lk.copy(I.getOperand(4 + j).value, I.getOperand(4 + n + j).value);
    ExprRef i = lk.scalar(counter, ElemKind::Int64);
    for (unsigned j = 0; j < numScans; ++j) {
      Value *row = I.getOperand(4 + 2 * n + numScans + j).value;
      lk.copy(I.getOperand(4 + 2 * n + j).value, row,
              k.mul(i, int64_t(row->getType()->sizeInBytes())));
    }
    unsigned c = lk.buffer(counter, ElemKind::Int64);
    unsigned next = k.addLocal(ElemKind::Int64);
    k.body().push_back(
        Kernel::assign(next, k.add(k.load(c, k.constInt(0)), k.constInt(1))));
    k.body().push_back(Kernel::store(c, k.constInt(0), k.local(next)));
    lk.test(k.local(next), partner, *end, flag);
    return std::move(k);
  }
  if (I.getKind() == ValueKind::LoopBeginInst) {
    unsigned c = lk.buffer(I.getOperand(0).value, ElemKind::Int64);
    k.body().push_back(Kernel::store(c, k.constInt(0), k.constInt(0)));
    lk.test(k.constInt(0), I, llvm::cast<LoopEndInst>(partner), flag);
    return std::move(k);
  }
  // loopcarry, loopparam, loopfinal: copies of their last operand.
  lk.copy(I.getOperand(0).value, I.getOperand(I.getNumOperands() - 1).value);
  return std::move(k);
}
