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
/// Regions of one compiled network plus the IR that runs on them.
class InterpreterFunction final : public CompiledFunction {
public:
  InterpreterFunction(const Module &M, std::shared_ptr<const IRFunction> F,
                      const MemoryPlan &plan)
      : M_(M), F_(std::move(F)), plan_(plan),
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

  llvm::Error run(Bindings &b) override {
    guardRegions();
    EMBER_RETURN_IF_ERR(copyInputsToRegion(
        M_, *F_, plan_, b, reinterpret_cast<uint8_t *>(mutables_.data())));
    ExecContext ctx(plan_, constants_.data(), mutables_.data(),
                    activations_.data());
    for (auto &ip : F_->getInstrs()) {
      const Instruction &I = *ip;
      switch (I.getKind()) {
      case ValueKind::AllocActivationInst:
        unpoisonBytes(ctx.addr(ip.get()), I.getType()->sizeInBytes());
        break;
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
