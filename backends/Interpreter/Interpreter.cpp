//===- Interpreter.cpp - The reference backend ----------------------------===//
#include "Interpreter.h"

#include "Generic.h"
#include "Kernels.h"
#include "RegionPoison.h"

#include "ember/Base/Error.h"
#include "ember/Graph/KernelTypes.h"

#include "glog/logging.h"

#include <cstring>
#include <unistd.h>

using namespace ember;
using namespace ember::interp;

namespace {
#include "ember/Generated/InterpreterSupport.inc"
static_assert(sizeof(kInterpreterTypes) / sizeof(kInterpreterTypes[0]) ==
                  kNumOpKinds,
              "one Interpreter entry per op");
} // namespace

bool interp::hasKernel(OpKind op, ElemKind kind) {
  return kernelTypesAccept(kInterpreterTypes[unsigned(op)], kind);
}

bool InterpreterBackend::isOpSupported(const Node &n) const {
  if (!isTableOp(n.getKind()))
    return false;
  return hasKernel(toOpKind(n.getKind()), n.getType()->getElemKind());
}

void interp::executeOp(const Instruction &I, const ExecContext &ctx) {
  if (executeElementwise(I, ctx) || executeLinear(I, ctx) ||
      executeDataMovement(I, ctx) || executeShuffle(I, ctx) ||
      executeMath(I, ctx) || executeReduce(I, ctx) || executeIndexing(I, ctx) ||
      executeWindow(I, ctx) || executeQuantized(I, ctx) ||
      executeAttention(I, ctx))
    return;
  LOG(FATAL) << "Interpreter: no kernel for " << I.getKindName().str() << " "
             << I.getName().str();
}

namespace {
/// The instructions of \p F in order, and for each loopbegin / loopend the
/// position of its partner (the target of its jump).
struct Program {
  std::vector<const Instruction *> code;
  std::vector<size_t> partner;
  explicit Program(const IRFunction &F) {
    for (auto &ip : F.getInstrs())
      code.push_back(ip.get());
    partner.assign(code.size(), 0);
    for (const LoopSpan &l : findLoops(code)) {
      partner[l.begin] = l.end;
      partner[l.end] = l.begin;
    }
  }
};

/// Whether the loop of \p begin and \p end runs another iteration (ONNX
/// Loop: i < M and cond, and i below the scan outputs' bound MaxTrips).
bool loopContinues(const Instruction &begin, const Instruction &end,
                   const ExecContext &ctx) {
  int64_t i = *ctx.ptr<int64_t>(end.getOperand(1).value);
  int64_t m = *ctx.ptr<int64_t>(begin.getOperand(1).value);
  bool cond = *ctx.ptr<bool>(end.getOperand(2).value);
  int64_t maxTrips = end.attr(1).i;
  return i < m && cond && (maxTrips < 0 || i < maxTrips);
}

/// The loop of \p end is done: its Count gets the iterations run.
void loopDone(const Instruction &end, const ExecContext &ctx) {
  *ctx.ptr<int64_t>(end.getOperand(0).value) =
      *ctx.ptr<int64_t>(end.getOperand(1).value);
}

/// The end of one iteration: next values into the carried buffers, the
/// scan rows into row i of their buffers, i + 1.
void loopLatch(const Instruction &end, const ExecContext &ctx) {
  auto copy = [&](Value *to, Value *from, size_t offset) {
    std::memmove(ctx.addr(to) + offset, ctx.addr(from),
                 from->getType()->sizeInBytes());
  };
  unsigned n = unsigned(end.attr(0).i);
  unsigned k = (end.getNumOperands() - 4 - 2 * n) / 2;
  auto *counter = ctx.ptr<int64_t>(end.getOperand(1).value);
  copy(end.getOperand(2).value, end.getOperand(3).value, 0);
  for (unsigned j = 0; j < n; ++j)
    copy(end.getOperand(4 + j).value, end.getOperand(4 + n + j).value, 0);
  for (unsigned j = 0; j < k; ++j) {
    Value *row = end.getOperand(4 + 2 * n + k + j).value;
    copy(end.getOperand(4 + 2 * n + j).value, row,
         size_t(*counter) * row->getType()->sizeInBytes());
  }
  ++*counter;
}

/// Regions of one compiled network plus the IR that runs on them.
class InterpreterFunction final : public CompiledFunction {
public:
  InterpreterFunction(const Module &M, std::shared_ptr<const IRFunction> F,
                      const MemoryPlan &plan)
      : M_(M), F_(std::move(F)), program_(*F_), plan_(plan),
        constants_(Type(ElemKind::Int8Q, {dim_t(plan.constantSize) + 1})),
        mutables_(Type(ElemKind::Int8Q, {dim_t(plan.mutableSize) + 1})),
        activations_(Type(ElemKind::Int8Q, {dim_t(plan.activationSize) + 1})) {
    poisonBytes(constants_.data(), constants_.sizeInBytes());
    for (auto &w : F_->getWeights())
      if (w->isConstant()) {
        char *dst = constants_.data() + plan_.placements.lookup(w.get()).offset;
        unpoisonBytes(dst, w->getType()->sizeInBytes());
        std::memcpy(dst, w->getPayload()->data(), w->getType()->sizeInBytes());
      }
  }
  ~InterpreterFunction() override {
    unpoisonBytes(constants_.data(), constants_.sizeInBytes());
    unpoisonBytes(mutables_.data(), mutables_.sizeInBytes());
    unpoisonBytes(activations_.data(), activations_.sizeInBytes());
  }

  /// The buffer lifetimes of instructions [from, to) applied without
  /// running them: allocations made addressable, deallocations poisoned
  /// (RegionPoison.h), as if a loop body that runs no iteration had run.
  void skipBody(size_t from, size_t to, const ExecContext &ctx) {
    for (size_t q = from; q < to; ++q) {
      const Instruction &J = *program_.code[q];
      if (J.getKind() == ValueKind::AllocActivationInst)
        unpoisonBytes(ctx.addr(const_cast<Instruction *>(&J)),
                      J.getType()->sizeInBytes());
      else if (auto *d = llvm::dyn_cast<DeallocActivationInst>(&J))
        poisonBytes(ctx.addr(d->getAlloc()),
                    d->getAlloc()->getType()->sizeInBytes());
    }
  }

  llvm::Error run(Bindings &b) override {
    guardRegions();
    EMBER_RETURN_IF_ERR(copyInputsToRegion(
        M_, *F_, plan_, b, reinterpret_cast<uint8_t *>(mutables_.data())));
    ExecContext ctx(plan_, constants_.data(), mutables_.data(),
                    activations_.data());
    for (size_t pc = 0; pc < program_.code.size(); ++pc) {
      const Instruction &I = *program_.code[pc];
      Instruction *ip = const_cast<Instruction *>(&I);
      switch (I.getKind()) {
      case ValueKind::AllocActivationInst:
        unpoisonBytes(ctx.addr(ip), I.getType()->sizeInBytes());
        break;
      case ValueKind::LoopCarryInst:
      case ValueKind::LoopParamInst:
      case ValueKind::LoopFinalInst: { // copies of the last operand
        Value *src = I.getOperand(I.getNumOperands() - 1).value;
        std::memmove(ctx.addr(I.getOperand(0).value), ctx.addr(src),
                     src->getType()->sizeInBytes());
        break;
      }
      case ValueKind::LoopBeginInst: {
        size_t endPc = program_.partner[pc];
        const Instruction &end = *program_.code[endPc];
        *ctx.ptr<int64_t>(I.getOperand(0).value) = 0;
        if (!loopContinues(I, end, ctx)) {
          // Skipping the body skips its allocations: what it allocates
          // for after the loop (the Count) must still be addressable.
          skipBody(pc + 1, endPc, ctx);
          loopDone(end, ctx);
          pc = endPc; // past the loopend
        }
        break;
      }
      case ValueKind::LoopEndInst: {
        const Instruction &begin = *program_.code[program_.partner[pc]];
        loopLatch(I, ctx);
        if (loopContinues(begin, I, ctx))
          pc = program_.partner[pc]; // to the first body instruction
        else
          loopDone(I, ctx);
        break;
      }
      case ValueKind::DeallocActivationInst: {
        Value *alloc = I.getOperand(0).value;
        poisonBytes(ctx.addr(alloc), alloc->getType()->sizeInBytes());
        break;
      }
      case ValueKind::TensorViewInst:
        break;
      case ValueKind::CopyInst: {
        auto &c = llvm::cast<CopyInst>(I);
        std::memmove(ctx.addr(c.getDest()), ctx.addr(c.getSrc()),
                     c.getDest()->getType()->sizeInBytes());
        break;
      }
      default:
        executeOp(I, ctx);
      }
    }
    copyOutputsFromRegion(M_, *F_, plan_, b,
                          reinterpret_cast<const uint8_t *>(mutables_.data()));
    unpoisonBytes(mutables_.data(), mutables_.sizeInBytes());
    unpoisonBytes(activations_.data(), activations_.sizeInBytes());
    return llvm::Error::success();
  }

private:
  /// Leaves only the mutable weights addressable (see RegionPoison.h);
  /// activations become addressable at their allocactivation.
  void guardRegions() {
    poisonBytes(mutables_.data(), mutables_.sizeInBytes());
    poisonBytes(activations_.data(), activations_.sizeInBytes());
    for (auto &w : F_->getWeights())
      if (!w->isConstant())
        unpoisonBytes(mutables_.data() +
                          plan_.placements.lookup(w.get()).offset,
                      w->getType()->sizeInBytes());
  }

  const Module &M_;
  std::shared_ptr<const IRFunction> F_;
  Program program_;
  MemoryPlan plan_;
  Tensor constants_, mutables_, activations_;
};
} // namespace

llvm::Expected<std::unique_ptr<CompiledFunction>> InterpreterBackend::compile(
    const Module &M, std::shared_ptr<const IRFunction> F,
    const MemoryPlan &plan, const CodegenOptions &) const {
  // Refuse before allocating what the machine cannot hold. Constants and
  // inputs/outputs exist twice (the Module's or caller's copy and the
  // region), activations once.
  uint64_t need = 2 * (uint64_t(plan.constantSize) + plan.mutableSize) +
                  plan.activationSize;
  long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGE_SIZE);
  uint64_t have = pages > 0 && pageSize > 0 ? uint64_t(pages) * pageSize : 0;
  if (have && need > have)
    return makeErrorF("Interpreter: the network needs {0} bytes of memory, "
                      "more than this machine's {1}",
                      need, have);
  for (auto &ip : F->getInstrs())
    if (auto op = opKindForInstr(ip->getKind()))
      if (!hasKernel(*op, ip->getOperand(0).value->getType()->getElemKind()))
        return makeErrorF("Interpreter: no kernel for {0} ({1})", ip->getName(),
                          ip->getKindName());
  return std::make_unique<InterpreterFunction>(M, std::move(F), plan);
}
