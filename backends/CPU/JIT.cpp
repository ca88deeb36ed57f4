//===- JIT.cpp - In-process runs through ORC LLJIT ------------------------===//
#include "CPU.h"

#include "ember/Backend/Profile.h"
#include "ember/Base/Error.h"

#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/ExecutionEngine/Orc/ThreadSafeModule.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <type_traits>

using namespace ember;
using namespace ember::cpu;

namespace {
using EntryFn = int (*)(uint8_t *, uint8_t *, uint8_t *);
using Clock = std::chrono::steady_clock;
/// NAME_profile's timer hook (recordTick): ctx is a KernelClock.
using HookFn = void (*)(void *, int64_t);
using ProfileFn = void (*)(uint8_t *, uint8_t *, uint8_t *, HookFn, void *);
using EntryMtFn = int (*)(uint8_t *, uint8_t *, uint8_t *, int);
using ProfileMtFn = void (*)(uint8_t *, uint8_t *, uint8_t *, int, HookFn,
                             void *);

/// The entry points of a JIT-compiled network.
struct Entries {
  EntryFn entry;
  EntryMtFn entryMt;
  ProfileFn profiled;
  ProfileMtFn profiledMt;
  void (*threadsRelease)();
};

/// Seconds per kernel: each tick ends the kernel of the previous one. A
/// kernel in a loop's body is ticked once per iteration, so its times add.
struct KernelClock {
  std::vector<double> seconds;
  Clock::time_point last;
  int64_t current = -1;
};

void recordTick(void *ctx, int64_t i) {
  auto *clock = static_cast<KernelClock *>(ctx);
  Clock::time_point now = Clock::now();
  if (clock->current >= 0)
    clock->seconds[clock->current] +=
        std::chrono::duration<double>(now - clock->last).count();
  clock->last = now;
  clock->current = i;
}

/// A JIT-compiled network and its three regions.
class CPUFunction final : public CompiledFunction {
public:
  CPUFunction(const Module &M, std::shared_ptr<const IRFunction> F,
              const MemoryPlan &plan, std::vector<uint8_t> constants,
              size_t activationSize, std::unique_ptr<llvm::orc::LLJIT> jit,
              Entries entries, std::vector<KernelTime> kernels)
      : M_(M), F_(std::move(F)), plan_(plan),
        constants_(Type(ElemKind::Int8Q, {dim_t(constants.size()) + 1})),
        mutables_(Type(ElemKind::Int8Q, {dim_t(plan.mutableSize) + 1})),
        activations_(Type(ElemKind::Int8Q, {dim_t(activationSize) + 1})),
        jit_(std::move(jit)), entries_(entries), kernels_(std::move(kernels)) {
    // A network without constants has an empty image (data() may be null).
    if (!constants.empty())
      std::memcpy(constants_.data(), constants.data(), constants.size());
  }

  /// The network's worker threads run JIT-compiled code: end them before
  /// that code goes.
  ~CPUFunction() override { entries_.threadsRelease(); }

  llvm::Error run(Bindings &b) override {
    EMBER_RETURN_IF_ERR(copyInputs(b));
    int rc = threads_ > 1
                 ? entries_.entryMt(constants(), mutables(), activations(),
                                    int(threads_))
                 : entries_.entry(constants(), mutables(), activations());
    // With run-time checks the code is a failed check's number, which the
    // status output holds too: withInputChecks' wrapper reports it.
    if (rc && !M_.getCheckStatus())
      return makeErrorF("CPU: the network returned {0}", rc);
    copyOutputs(b);
    return llvm::Error::success();
  }

  llvm::Error runProfiled(Bindings &b, Profile &profile) override {
    EMBER_RETURN_IF_ERR(copyInputs(b));
    KernelClock clock;
    clock.seconds.assign(kernels_.size() + 1, 0.0);
    if (threads_ > 1)
      entries_.profiledMt(constants(), mutables(), activations(), int(threads_),
                          recordTick, &clock);
    else
      entries_.profiled(constants(), mutables(), activations(), recordTick,
                        &clock);
    copyOutputs(b);
    if (profile.kernels.empty())
      profile.kernels = kernels_;
    for (size_t i = 0; i < kernels_.size(); ++i)
      profile.kernels[i].seconds += clock.seconds[i];
    ++profile.runs;
    return llvm::Error::success();
  }

  llvm::Error setNumThreads(unsigned n) override {
    threads_ = std::max(1u, n);
    return llvm::Error::success();
  }

private:
  uint8_t *constants() {
    return reinterpret_cast<uint8_t *>(constants_.data());
  }
  uint8_t *mutables() { return reinterpret_cast<uint8_t *>(mutables_.data()); }
  uint8_t *activations() {
    return reinterpret_cast<uint8_t *>(activations_.data());
  }

  llvm::Error copyInputs(Bindings &b) {
    return copyInputsToRegion(M_, *F_, plan_, b, mutables());
  }

  void copyOutputs(Bindings &b) {
    copyOutputsFromRegion(M_, *F_, plan_, b, mutables());
  }

  const Module &M_;
  std::shared_ptr<const IRFunction> F_;
  MemoryPlan plan_;
  Tensor constants_, mutables_, activations_;
  std::unique_ptr<llvm::orc::LLJIT> jit_;
  Entries entries_;
  unsigned threads_ = 1;
  std::vector<KernelTime> kernels_; ///< Names and sources, no times.
};
} // namespace

llvm::Expected<std::unique_ptr<CompiledFunction>>
CPUBackend::compile(const Module &M, std::shared_ptr<const IRFunction> F,
                    const MemoryPlan &plan, const CodegenOptions &opts) const {
  EMBER_ASSIGN_OR_RETURN(TargetDesc desc, TargetDesc::create(opts.target));
  if (llvm::Triple(desc.triple).getArch() !=
      llvm::Triple(llvm::sys::getProcessTriple()).getArch())
    return makeErrorF("CPU: in-process runs need the host's architecture, "
                      "not target '{0}'",
                      desc.triple);
  EMBER_ASSIGN_OR_RETURN(auto TM, createTargetMachine(desc));
  TargetDesc kt = kernelTarget(desc, opts.cpu);
  EMBER_ASSIGN_OR_RETURN(CPUProgram prog, lowerForCPU(*F, plan, kt, opts.cpu));
  auto ctx = std::make_unique<llvm::LLVMContext>();
  ModuleOptions mo;
  mo.name = "ember_network";
  mo.profileEntry = true;
  mo.wideKernels = useWideKernels(kt);
  std::vector<KernelTime> kernels;
  for (const kir::Kernel &k : prog.kernels)
    kernels.push_back(KernelTime{
        k.getName().str(), {k.getSources().begin(), k.getSources().end()}, 0});
  EMBER_ASSIGN_OR_RETURN(auto mod, buildModule(prog, *ctx, *TM, mo));
  auto jtmb = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!jtmb)
    return jtmb.takeError();
  jtmb->setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
  jtmb->setCPU(desc.cpu);
  jtmb->getFeatures() = llvm::SubtargetFeatures(desc.features);
  auto jit = llvm::orc::LLJITBuilder()
                 .setJITTargetMachineBuilder(std::move(*jtmb))
                 .create();
  if (!jit)
    return jit.takeError();
  mod->setDataLayout((*jit)->getDataLayout());
  EMBER_RETURN_IF_ERR((*jit)->addIRModule(
      llvm::orc::ThreadSafeModule(std::move(mod), std::move(ctx))));
  Entries entries;
  auto lookup = [&](llvm::StringRef suffix, auto &slot) -> llvm::Error {
    auto sym = (*jit)->lookup(mo.name + suffix.str());
    if (!sym)
      return sym.takeError();
    slot = sym->toPtr<std::remove_reference_t<decltype(slot)>>();
    return llvm::Error::success();
  };
  EMBER_RETURN_IF_ERR(lookup("", entries.entry));
  EMBER_RETURN_IF_ERR(lookup("_mt", entries.entryMt));
  EMBER_RETURN_IF_ERR(lookup("_profile", entries.profiled));
  EMBER_RETURN_IF_ERR(lookup("_mt_profile", entries.profiledMt));
  EMBER_RETURN_IF_ERR(lookup("_threads_release", entries.threadsRelease));
  return std::make_unique<CPUFunction>(
      M, std::move(F), plan, std::move(prog.constants), prog.activationSize,
      std::move(*jit), entries, std::move(kernels));
}
