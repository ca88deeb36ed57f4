//===- CodeGen.cpp - The network's LLVM module ----------------------------===//
//
// Links the target's libjit bitcode, renders every kernel, adds the entry
// points and runs LLVM's O3 pipeline for the target machine.
//
//===----------------------------------------------------------------------===//
#include "CPU.h"

#include "ember/Base/Error.h"

#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Linker/Linker.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"

using namespace ember;
using namespace ember::cpu;

extern "C" const char ember_libjit_x86_64_start[], ember_libjit_x86_64_end[];
extern "C" const char ember_libjit_aarch64_start[], ember_libjit_aarch64_end[];

static void initTargets() {
  static bool done = [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    llvm::InitializeNativeTargetAsmParser();
    LLVMInitializeAArch64TargetInfo();
    LLVMInitializeAArch64Target();
    LLVMInitializeAArch64TargetMC();
    LLVMInitializeAArch64AsmPrinter();
    return true;
  }();
  (void)done;
}

llvm::Expected<std::unique_ptr<llvm::TargetMachine>>
cpu::createTargetMachine(llvm::StringRef triple, llvm::StringRef mcpu) {
  initTargets();
  std::string tt = triple.empty() ? llvm::sys::getProcessTriple()
                                  : llvm::Triple::normalize(triple);
  std::string err;
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(tt, err);
  if (!target)
    return makeErrorF("unknown target '{0}': {1}", tt, err);
  llvm::Triple t(tt);
  if (t.getArch() != llvm::Triple::x86_64 &&
      t.getArch() != llvm::Triple::aarch64)
    return makeErrorF("target '{0}' is not supported (x86_64 and aarch64 are)",
                      tt);
  bool host =
      triple.empty() ||
      t.getArch() == llvm::Triple(llvm::sys::getProcessTriple()).getArch();
  std::string cpu = mcpu.str(), features;
  if (cpu.empty())
    cpu = host ? llvm::sys::getHostCPUName().str() : "generic";
  if (host && (mcpu.empty() || cpu == llvm::sys::getHostCPUName())) {
    llvm::SubtargetFeatures f;
    for (auto &kv : llvm::sys::getHostCPUFeatures())
      f.AddFeature(kv.first(), kv.second);
    features = f.getString();
  }
  std::unique_ptr<llvm::MCSubtargetInfo> sti(
      target->createMCSubtargetInfo(tt, "", ""));
  if (!sti || !sti->isCPUStringValid(cpu))
    return makeErrorF("unknown CPU '{0}' for target '{1}'", cpu, tt);
  llvm::TargetOptions opts;
  std::unique_ptr<llvm::TargetMachine> TM(target->createTargetMachine(
      tt, cpu, features, opts, llvm::Reloc::PIC_, std::nullopt,
      llvm::CodeGenOptLevel::Aggressive));
  if (!TM)
    return makeErrorF("cannot create a target machine for '{0}'", tt);
  return std::move(TM);
}

/// Parses the embedded libjit bitcode for \p TM's architecture.
static llvm::Expected<std::unique_ptr<llvm::Module>>
loadLibjit(llvm::LLVMContext &ctx, const llvm::TargetMachine &TM) {
  bool arm = TM.getTargetTriple().getArch() == llvm::Triple::aarch64;
  const char *start =
      arm ? ember_libjit_aarch64_start : ember_libjit_x86_64_start;
  const char *end = arm ? ember_libjit_aarch64_end : ember_libjit_x86_64_end;
  auto buf = llvm::MemoryBuffer::getMemBuffer(
      llvm::StringRef(start, end - start), "libjit.bc", false);
  auto M = llvm::parseBitcodeFile(buf->getMemBufferRef(), ctx);
  if (!M)
    return makeErrorF("internal error: cannot read libjit bitcode: {0}",
                      llvm::toString(M.takeError()));
  return std::move(*M);
}

/// Defines libjit's ember_wide_simd for \p TM (1: 32 512-bit vector
/// registers), as a constant the optimizer folds into the kernels' branches.
static void defineTargetConstants(llvm::Module &M,
                                  const llvm::TargetMachine &TM) {
  llvm::GlobalVariable *g = M.getNamedGlobal("ember_wide_simd");
  if (!g)
    return;
  bool wide = TM.getTargetTriple().isX86() &&
              TM.getMCSubtargetInfo()->checkFeatures("+avx512f");
  g->setInitializer(
      llvm::ConstantInt::get(llvm::Type::getInt64Ty(M.getContext()), wide));
  g->setConstant(true);
  g->setLinkage(llvm::GlobalValue::InternalLinkage);
}

/// Sets the target CPU and features on every function (libjit's and ours),
/// so the inliner and vectorizer see one target.
static void setTargetAttrs(llvm::Module &M, const llvm::TargetMachine &TM) {
  for (llvm::Function &f : M) {
    if (f.isDeclaration())
      continue;
    f.addFnAttr("target-cpu", TM.getTargetCPU());
    f.addFnAttr("target-features", TM.getTargetFeatureString());
  }
}

/// Adds `i32 NAME(ptr, ptr, ptr)` (threaded: `i32 NAME_mt(ptr, ptr, ptr,
/// i32)`), calling every kernel over its whole range in order.
static void addEntry(llvm::Module &M, const CPUProgram &prog,
                     llvm::ArrayRef<llvm::Function *> fns,
                     llvm::GlobalVariable *weights, llvm::StringRef name,
                     bool threaded) {
  llvm::IRBuilder<> b(M.getContext());
  llvm::Type *ptr = b.getPtrTy();
  llvm::SmallVector<llvm::Type *, 4> params = {ptr, ptr, ptr};
  if (threaded)
    params.push_back(b.getInt32Ty());
  auto *ft = llvm::FunctionType::get(b.getInt32Ty(), params, false);
  auto *fn = llvm::Function::Create(ft, llvm::GlobalValue::ExternalLinkage,
                                    threaded ? name + "_mt" : name, M);
  b.SetInsertPoint(llvm::BasicBlock::Create(M.getContext(), "entry", fn));
  llvm::Value *c = fn->getArg(0);
  if (weights)
    c = b.CreateSelect(b.CreateIsNull(c), weights, c);
  llvm::Value *threads =
      threaded ? b.CreateSExt(fn->getArg(3), b.getInt64Ty()) : nullptr;
  llvm::Function *par = M.getFunction("ember_parallel_run");
  for (size_t i = 0; i < fns.size(); ++i) {
    llvm::Value *ext = b.getInt64(kernelExtent(prog.kernels[i]));
    if (threaded && prog.kernels[i].getParallelLoop())
      b.CreateCall(par,
                   {fns[i], c, fn->getArg(1), fn->getArg(2), ext, threads});
    else
      b.CreateCall(fns[i],
                   {c, fn->getArg(1), fn->getArg(2), b.getInt64(0), ext});
  }
  b.CreateRet(b.getInt32(0));
}

static void optimize(llvm::Module &M, llvm::TargetMachine &TM) {
  llvm::PipelineTuningOptions pto;
  pto.LoopVectorization = pto.SLPVectorization = true;
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb(&TM, pto);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3).run(M, mam);
}

llvm::Expected<std::unique_ptr<llvm::Module>>
cpu::buildModule(const CPUProgram &prog, llvm::LLVMContext &ctx,
                 llvm::TargetMachine &TM, const ModuleOptions &opts) {
  EMBER_ASSIGN_OR_RETURN(std::unique_ptr<llvm::Module> M, loadLibjit(ctx, TM));
  M->setModuleIdentifier(opts.name);
  M->setTargetTriple(TM.getTargetTriple().str());
  M->setDataLayout(TM.createDataLayout());
  // Library kernels are private to the network once linked.
  for (llvm::Function &f : *M)
    if (!f.isDeclaration() && f.getName() != "ember_parallel_run")
      f.setLinkage(llvm::GlobalValue::InternalLinkage);
  if (auto *f = M->getFunction("ember_parallel_run"))
    f->setLinkage(llvm::GlobalValue::InternalLinkage);
  // libjit marks its kernels `used` so clang emits them; once linked, unused
  // ones may go.
  if (auto *used = M->getNamedGlobal("llvm.compiler.used"))
    used->eraseFromParent();
  defineTargetConstants(*M, TM);
  std::vector<llvm::Function *> fns;
  for (const kir::Kernel &k : prog.kernels)
    fns.push_back(renderKernel(k, *M));
  llvm::GlobalVariable *weights = nullptr;
  if (opts.embedWeights) {
    auto *data = llvm::ConstantDataArray::get(
        ctx, llvm::ArrayRef<uint8_t>(prog.constants));
    weights = new llvm::GlobalVariable(*M, data->getType(), true,
                                       llvm::GlobalValue::ExternalLinkage, data,
                                       opts.name + "_weights");
    weights->setAlignment(llvm::Align(64));
  }
  addEntry(*M, prog, fns, weights, opts.name, /*threaded=*/false);
  addEntry(*M, prog, fns, weights, opts.name, /*threaded=*/true);
  setTargetAttrs(*M, TM);
  std::string err;
  llvm::raw_string_ostream es(err);
  if (llvm::verifyModule(*M, &es))
    return makeErrorF("internal error: invalid LLVM module: {0}", es.str());
  optimize(*M, TM);
  return std::move(M);
}
