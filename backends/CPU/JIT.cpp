//===- JIT.cpp - In-process runs through ORC LLJIT ------------------------===//
#include "CPU.h"

#include "ember/Base/Error.h"

#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/ExecutionEngine/Orc/ThreadSafeModule.h"

#include <cstring>

using namespace ember;
using namespace ember::cpu;

namespace {
using EntryFn = int (*)(uint8_t *, uint8_t *, uint8_t *);

/// A JIT-compiled network and its three regions.
class CPUFunction final : public CompiledFunction {
public:
  CPUFunction(const Module &M, std::shared_ptr<const IRFunction> F,
              const MemoryPlan &plan, std::vector<uint8_t> constants,
              size_t activationSize, std::unique_ptr<llvm::orc::LLJIT> jit,
              EntryFn entry)
      : M_(M), F_(std::move(F)), plan_(plan),
        constants_(Type(ElemKind::Int8Q, {dim_t(constants.size()) + 1})),
        mutables_(Type(ElemKind::Int8Q, {dim_t(plan.mutableSize) + 1})),
        activations_(Type(ElemKind::Int8Q, {dim_t(activationSize) + 1})),
        jit_(std::move(jit)), entry_(entry) {
    std::memcpy(constants_.data(), constants.data(), constants.size());
  }

  llvm::Error run(Bindings &b) override {
    auto *mut = reinterpret_cast<uint8_t *>(mutables_.data());
    for (auto &w : F_->getWeights()) {
      if (w->isConstant() || w->isOutput())
        continue;
      const Placeholder *p = M_.getPlaceholderByName(w->getName());
      const Tensor *t = p ? b.get(p) : nullptr;
      if (!t)
        return makeErrorF("no tensor is bound to input '{0}'", w->getName());
      if (t->getType() != *w->getType())
        return makeErrorF("input '{0}' expects {1}, got {2}", w->getName(),
                          w->getType()->toString(), t->getType().toString());
      std::memcpy(mut + plan_.placements.lookup(w.get()).offset, t->data(),
                  t->sizeInBytes());
    }
    if (int rc = entry_(reinterpret_cast<uint8_t *>(constants_.data()), mut,
                        reinterpret_cast<uint8_t *>(activations_.data())))
      return makeErrorF("CPU: the network returned {0}", rc);
    b.allocateOutputs(M_);
    for (auto &w : F_->getWeights()) {
      if (!w->isOutput())
        continue;
      Tensor *t = b.get(M_.getPlaceholderByName(w->getName()));
      std::memcpy(t->data(), mut + plan_.placements.lookup(w.get()).offset,
                  w->getType()->sizeInBytes());
    }
    return llvm::Error::success();
  }

private:
  const Module &M_;
  std::shared_ptr<const IRFunction> F_;
  MemoryPlan plan_;
  Tensor constants_, mutables_, activations_;
  std::unique_ptr<llvm::orc::LLJIT> jit_;
  EntryFn entry_;
};
} // namespace

llvm::Expected<std::unique_ptr<CompiledFunction>>
CPUBackend::compile(const Module &M, std::shared_ptr<const IRFunction> F,
                    const MemoryPlan &plan) const {
  EMBER_ASSIGN_OR_RETURN(CPUProgram prog, lowerForCPU(*F, plan));
  EMBER_ASSIGN_OR_RETURN(auto TM, createTargetMachine("", ""));
  auto ctx = std::make_unique<llvm::LLVMContext>();
  ModuleOptions mo;
  mo.name = "ember_network";
  EMBER_ASSIGN_OR_RETURN(auto mod, buildModule(prog, *ctx, *TM, mo));
  auto jtmb = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!jtmb)
    return jtmb.takeError();
  jtmb->setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
  auto jit = llvm::orc::LLJITBuilder()
                 .setJITTargetMachineBuilder(std::move(*jtmb))
                 .create();
  if (!jit)
    return jit.takeError();
  mod->setDataLayout((*jit)->getDataLayout());
  EMBER_RETURN_IF_ERR((*jit)->addIRModule(
      llvm::orc::ThreadSafeModule(std::move(mod), std::move(ctx))));
  auto sym = (*jit)->lookup(mo.name);
  if (!sym)
    return sym.takeError();
  auto entry = sym->toPtr<EntryFn>();
  return std::make_unique<CPUFunction>(
      M, std::move(F), plan, std::move(prog.constants), prog.activationSize,
      std::move(*jit), entry);
}
