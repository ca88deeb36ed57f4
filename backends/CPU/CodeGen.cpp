//===- CodeGen.cpp - The network's LLVM module ----------------------------===//
//
// Links the target's libjit bitcode, renders every kernel, adds the entry
// points and runs LLVM's O3 pipeline for the target machine.
//
//===----------------------------------------------------------------------===//
#include "CPU.h"

#include "ember/Base/Error.h"

#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Linker/Linker.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/MemoryBuffer.h"

#include <map>
#include <string>

using namespace ember;
using namespace ember::cpu;

extern "C" const char ember_libjit_x86_64_start[], ember_libjit_x86_64_end[];
extern "C" const char ember_libjit_aarch64_start[], ember_libjit_aarch64_end[];

/// Reads the embedded libjit bitcode for \p TM's architecture lazily: its
/// functions' bodies stay in the bitcode until materializeUsed asks for them.
static llvm::Expected<std::unique_ptr<llvm::Module>>
loadLibjit(llvm::LLVMContext &ctx, const llvm::TargetMachine &TM) {
  bool arm = TM.getTargetTriple().getArch() == llvm::Triple::aarch64;
  const char *start =
      arm ? ember_libjit_aarch64_start : ember_libjit_x86_64_start;
  const char *end = arm ? ember_libjit_aarch64_end : ember_libjit_x86_64_end;
  auto buf = llvm::MemoryBuffer::getMemBuffer(
      llvm::StringRef(start, end - start), "libjit.bc", false);
  auto M = llvm::getOwningLazyBitcodeModule(std::move(buf), ctx);
  if (!M)
    return makeErrorF("internal error: cannot read libjit bitcode: {0}",
                      llvm::toString(M.takeError()));
  return std::move(*M);
}

/// Reads in the bodies of the libjit functions the network's code reaches
/// and drops the others. A network uses a few dozen of libjit's hundreds of
/// functions; parsing, verifying and optimizing all of them took most of a
/// small model's compile time (docs/PerformanceHistory.md#code-generation).
static llvm::Error materializeUsed(llvm::Module &M) {
  llvm::SmallPtrSet<const llvm::Value *, 32> seen;
  llvm::SmallVector<const llvm::Value *, 256> work;
  // Functions and global variables are constants too.
  auto visit = [&](const llvm::Value *v) {
    if (llvm::isa<llvm::Constant>(v) && seen.insert(v).second)
      work.push_back(v);
  };
  // The roots: what buildModule wrote (materialized bodies, the weights).
  for (llvm::Function &f : M)
    if (!f.isMaterializable() && !f.isDeclaration())
      visit(&f);
  for (llvm::GlobalVariable &g : M.globals())
    if (!g.hasLocalLinkage())
      visit(&g);
  while (!work.empty()) {
    const llvm::Value *v = work.pop_back_val();
    if (auto *cf = llvm::dyn_cast<llvm::Function>(v)) {
      auto *f = const_cast<llvm::Function *>(cf);
      if (f->isMaterializable())
        if (llvm::Error e = f->materialize())
          return e;
      for (const llvm::Instruction &i : llvm::instructions(*f))
        for (const llvm::Value *op : i.operands())
          visit(op);
    } else if (auto *g = llvm::dyn_cast<llvm::GlobalVariable>(v)) {
      if (g->hasInitializer())
        visit(g->getInitializer());
    } else if (auto *c = llvm::dyn_cast<llvm::Constant>(v)) {
      for (const llvm::Value *op : c->operands())
        visit(op);
    }
  }
  llvm::SmallVector<llvm::Function *, 256> unused;
  for (llvm::Function &f : M)
    if (!seen.count(&f)) {
      f.deleteBody();
      unused.push_back(&f);
    }
  for (llvm::Function *f : unused)
    if (f->use_empty())
      f->eraseFromParent();
  return M.materializeAll();
}

/// Defines libjit's ember_wide_simd (1: the 16-lane kernels, see
/// useWideKernels), as a constant the optimizer folds into the kernels'
/// branches.
static void defineTargetConstants(llvm::Module &M, bool wide) {
  llvm::GlobalVariable *g = M.getNamedGlobal("ember_wide_simd");
  if (!g)
    return;
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

/// libjit kernels written with explicit vectors (v16 / v8): the loop
/// vectorizer's width does not concern them.
static bool isHandVectorized(llvm::StringRef name) {
  return name.starts_with("ember_") && name != "ember_dwconv_f32";
}

/// Lets the loop vectorizer use 512-bit vectors in kernels whose loops it
/// vectorizes (elementwise, pooling and reduction loop nests, the plane
/// depthwise kernel) on AVX-512 targets, whose LLVM tuning (znver4/5
/// among them) otherwise prefers 256-bit ones: those loops are bound by
/// their vector instructions, which 512-bit vectors halve
/// (docs/PerformanceHistory.md#code-generation).
static void preferWideVectors(llvm::ArrayRef<llvm::Function *> fns) {
  for (llvm::Function *fn : fns) {
    bool hand = false;
    llvm::SmallVector<llvm::Function *, 2> callees;
    for (llvm::Instruction &i : llvm::instructions(*fn))
      if (auto *call = llvm::dyn_cast<llvm::CallInst>(&i))
        if (llvm::Function *f = call->getCalledFunction()) {
          hand |= isHandVectorized(f->getName());
          callees.push_back(f);
        }
    if (hand)
      continue;
    fn->addFnAttr("prefer-vector-width", "512");
    for (llvm::Function *f : callees)
      if (!f->isDeclaration())
        f->addFnAttr("prefer-vector-width", "512");
  }
}

/// Where the entries jump after calling a loop's kernels: per kernel index,
/// the block a jump lands on (the body's first kernel, the one after the
/// loop), created on demand.
class LoopBlocks {
public:
  LoopBlocks(const CPUProgram &prog, llvm::Function *fn) : prog_(prog) {
    for (const CPULoop &l : prog.loops)
      for (size_t t : {l.begin + 1, l.end + 1})
        at_.try_emplace(t, llvm::BasicBlock::Create(fn->getContext(), "", fn));
  }

  /// Before kernel \p i: continues in its block if a jump lands there.
  void enter(llvm::IRBuilder<> &b, size_t i) const {
    auto it = at_.find(i);
    if (it == at_.end())
      return;
    b.CreateBr(it->second);
    b.SetInsertPoint(it->second);
  }

  /// After kernel \p i: a loopbegin whose test says no jumps past its
  /// loop, a loopend whose test says yes back to the body's start.
  void leave(llvm::IRBuilder<> &b, size_t i, llvm::Value *activations) {
    for (const CPULoop &l : prog_.loops) {
      if (i != l.begin && i != l.end)
        continue;
      llvm::Value *flag = b.CreateLoad(
          b.getInt8Ty(),
          b.CreateConstGEP1_64(b.getInt8Ty(), activations, l.flagOffset));
      llvm::Value *more = b.CreateICmpNE(flag, b.getInt8(0));
      auto *fall = llvm::BasicBlock::Create(b.getContext(), "",
                                            b.GetInsertBlock()->getParent());
      if (i == l.begin)
        b.CreateCondBr(more, fall, at_.at(l.end + 1));
      else
        b.CreateCondBr(more, at_.at(l.begin + 1), fall);
      b.SetInsertPoint(fall);
    }
  }

private:
  const CPUProgram &prog_;
  std::map<size_t, llvm::BasicBlock *> at_;
};

/// What the entries return: the run-time check status (an int64 in the
/// mutable region \p mut, the number of a failed check, else 0) as an i32,
/// or 0 without checks (docs/Bundle.md "Return codes").
static llvm::Value *entryStatus(llvm::IRBuilder<> &b, const CPUProgram &prog,
                                llvm::Value *mut) {
  if (prog.checkOffset < 0)
    return b.getInt32(0);
  llvm::Value *at = b.CreateConstGEP1_64(b.getInt8Ty(), mut, prog.checkOffset);
  return b.CreateTrunc(b.CreateLoad(b.getInt64Ty(), at), b.getInt32Ty());
}

/// Adds `i32 NAME(ptr, ptr, ptr)`, which calls every kernel over its whole
/// range in order, looping where prog.loops say. With \p profile:
/// `void NAME_profile(ptr, ptr, ptr, ptr hook, ptr ctx)`, which also calls
/// hook(ctx, i) before kernel i (again at each iteration of a loop) and
/// hook(ctx, numKernels) after the last one.
static void addEntry(llvm::Module &M, const CPUProgram &prog,
                     llvm::ArrayRef<llvm::Function *> fns,
                     llvm::GlobalVariable *weights, llvm::StringRef name,
                     bool profile) {
  llvm::IRBuilder<> b(M.getContext());
  llvm::Type *ptr = b.getPtrTy(), *i64 = b.getInt64Ty();
  llvm::SmallVector<llvm::Type *, 5> params = {ptr, ptr, ptr};
  if (profile)
    params.append({ptr, ptr});
  auto *ft = llvm::FunctionType::get(profile ? b.getVoidTy() : b.getInt32Ty(),
                                     params, false);
  auto *fn = llvm::Function::Create(ft, llvm::GlobalValue::ExternalLinkage,
                                    profile ? name + "_profile" : name, M);
  b.SetInsertPoint(llvm::BasicBlock::Create(M.getContext(), "entry", fn));
  LoopBlocks blocks(prog, fn);
  llvm::Value *c = fn->getArg(0);
  if (weights)
    c = b.CreateSelect(b.CreateIsNull(c), weights, c);
  auto *hookTy = llvm::FunctionType::get(b.getVoidTy(), {ptr, i64}, false);
  auto tick = [&](size_t i) {
    if (profile)
      b.CreateCall(hookTy, fn->getArg(3), {fn->getArg(4), b.getInt64(i)});
  };
  for (size_t i = 0; i < fns.size(); ++i) {
    blocks.enter(b, i);
    tick(i);
    llvm::Value *ext = b.getInt64(kernelExtent(prog.kernels[i]));
    b.CreateCall(fns[i], {c, fn->getArg(1), fn->getArg(2), b.getInt64(0), ext});
    blocks.leave(b, i, fn->getArg(2));
  }
  blocks.enter(b, fns.size());
  tick(fns.size());
  if (profile)
    b.CreateRetVoid();
  else
    b.CreateRet(entryStatus(b, prog, fn->getArg(1)));
}

/// Declares `i32 NAME_mt(ptr, ptr, ptr, i32)` or, with \p profile,
/// `void NAME_mt_profile(ptr, ptr, ptr, i32, ptr hook, ptr ctx)`, and sets
/// \p b at the start of its body.
static llvm::Function *createThreadedEntry(llvm::Module &M,
                                           llvm::IRBuilder<> &b,
                                           llvm::StringRef name, bool profile) {
  llvm::Type *ptr = b.getPtrTy();
  llvm::SmallVector<llvm::Type *, 6> params = {ptr, ptr, ptr, b.getInt32Ty()};
  if (profile)
    params.append({ptr, ptr});
  auto *ft = llvm::FunctionType::get(profile ? b.getVoidTy() : b.getInt32Ty(),
                                     params, false);
  auto *fn =
      llvm::Function::Create(ft, llvm::GlobalValue::ExternalLinkage,
                             name + (profile ? "_mt_profile" : "_mt"), M);
  b.SetInsertPoint(llvm::BasicBlock::Create(M.getContext(), "entry", fn));
  return fn;
}

/// For a network with a loop: `NAME_mt` (and `NAME_mt_profile`) run the
/// one-thread entry, ignoring the thread count. The team schedule waits
/// on per-kernel-index counters that assume each kernel runs once per call
/// (libjit/Runtime.cpp); a loop would run its body's kernels again.
static void addSerialThreadedEntry(llvm::Module &M, llvm::StringRef name,
                                   bool profile) {
  llvm::IRBuilder<> b(M.getContext());
  llvm::Function *fn = createThreadedEntry(M, b, name, profile);
  llvm::SmallVector<llvm::Value *, 5> args = {fn->getArg(0), fn->getArg(1),
                                              fn->getArg(2)};
  if (profile)
    args.append({fn->getArg(4), fn->getArg(5)});
  llvm::Value *rc = b.CreateCall(
      M.getFunction((profile ? name + "_profile" : name).str()), args);
  if (profile)
    b.CreateRetVoid();
  else
    b.CreateRet(rc);
}

/// Adds the schedule `void NAME.schedule(ptr team, ptr, ptr, ptr, i64 tid,
/// i64 numThreads)`: thread tid runs its share of every parallel kernel
/// through ember_team_for (its static slice first, then chunks left of
/// late threads' slices; ember_team_seq runs the sequential ones on thread
/// 0), and waits for each kernel to be complete (ember_team_wait) before
/// the next one, except between sequential kernels, which all run on
/// thread 0 anyway. Then `i32 NAME_mt(ptr, ptr, ptr, i32)` hands the
/// schedule to ember_team_run (libjit/Runtime.cpp). With \p profile:
/// `void NAME_mt_profile(ptr, ptr, ptr, i32, ptr hook, ptr ctx)`, whose
/// schedule calls ember_team_tick(i) before kernel i and, after waiting
/// for the last kernel, with the kernel count (hook as in addEntry, on
/// thread 0).
static void addThreadedEntry(llvm::Module &M, const CPUProgram &prog,
                             llvm::ArrayRef<llvm::Function *> fns,
                             llvm::GlobalVariable *weights,
                             llvm::StringRef name, bool profile) {
  llvm::LLVMContext &ctx = M.getContext();
  llvm::IRBuilder<> b(ctx);
  llvm::Type *ptr = b.getPtrTy(), *i64 = b.getInt64Ty();
  auto *st = llvm::FunctionType::get(b.getVoidTy(),
                                     {ptr, ptr, ptr, ptr, i64, i64}, false);
  auto *sched = llvm::Function::Create(
      st, llvm::GlobalValue::InternalLinkage,
      name + (profile ? ".schedule_profile" : ".schedule"), M);
  b.SetInsertPoint(llvm::BasicBlock::Create(ctx, "entry", sched));
  llvm::Value *team = sched->getArg(0), *tid = sched->getArg(4);
  llvm::Function *waitFn = M.getFunction("ember_team_wait");
  llvm::Function *tickFn = M.getFunction("ember_team_tick");
  llvm::Function *forFn = M.getFunction("ember_team_for");
  llvm::Function *seqFn = M.getFunction("ember_team_seq");
  auto tick = [&](size_t i) {
    if (profile)
      b.CreateCall(tickFn, {team, tid, b.getInt64(i)});
  };
  auto isSeq = [&](size_t i) { return !prog.kernels[i].getParallelLoop(); };
  for (size_t i = 0; i < fns.size(); ++i) {
    tick(i);
    llvm::Value *ext = b.getInt64(kernelExtent(prog.kernels[i]));
    llvm::Value *idx = b.getInt64(int64_t(i));
    b.CreateCall(isSeq(i) ? seqFn : forFn, {team, tid, fns[i], ext, idx});
    // The profiling schedule also waits for the last kernel, so that its
    // final tick sees the whole team done.
    bool last = i + 1 == fns.size();
    if (last ? profile : !(isSeq(i) && isSeq(i + 1)))
      b.CreateCall(waitFn, {team, idx, ext});
  }
  tick(fns.size());
  b.CreateRetVoid();

  llvm::Function *fn = createThreadedEntry(M, b, name, profile);
  llvm::Value *c = fn->getArg(0);
  if (weights)
    c = b.CreateSelect(b.CreateIsNull(c), weights, c);
  llvm::Value *null = llvm::ConstantPointerNull::get(b.getPtrTy());
  b.CreateCall(
      M.getFunction("ember_team_run"),
      {sched, c, fn->getArg(1), fn->getArg(2), b.CreateSExt(fn->getArg(3), i64),
       profile ? fn->getArg(4) : null, profile ? fn->getArg(5) : null});
  if (profile)
    b.CreateRetVoid();
  else
    b.CreateRet(entryStatus(b, prog, fn->getArg(1)));
}

/// Adds `void NAME_threads_release(void)`, which ends the workers NAME_mt
/// keeps between calls (libjit/Runtime.cpp's pool).
static void addThreadsRelease(llvm::Module &M, llvm::StringRef name) {
  llvm::IRBuilder<> b(M.getContext());
  auto *fn = llvm::Function::Create(
      llvm::FunctionType::get(b.getVoidTy(), false),
      llvm::GlobalValue::ExternalLinkage, name + "_threads_release", M);
  b.SetInsertPoint(llvm::BasicBlock::Create(M.getContext(), "entry", fn));
  b.CreateCall(M.getFunction("ember_pool_release"));
  b.CreateRetVoid();
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

/// A fresh module holding libjit (bodies still lazy) for \p TM, with its
/// functions private to the network and ember_wide_simd defined.
static llvm::Expected<std::unique_ptr<llvm::Module>>
startModule(llvm::LLVMContext &ctx, llvm::TargetMachine &TM,
            const ModuleOptions &opts, llvm::StringRef id) {
  EMBER_ASSIGN_OR_RETURN(std::unique_ptr<llvm::Module> M, loadLibjit(ctx, TM));
  M->setModuleIdentifier(id);
  M->setTargetTriple(TM.getTargetTriple().str());
  M->setDataLayout(TM.createDataLayout());
  // Library kernels are private to the network once linked.
  for (llvm::Function &f : *M)
    if (!f.isDeclaration())
      f.setLinkage(llvm::GlobalValue::InternalLinkage);
  // libjit marks its kernels `used` so clang emits them; once linked, unused
  // ones may go.
  if (auto *used = M->getNamedGlobal("llvm.compiler.used"))
    used->eraseFromParent();
  defineTargetConstants(*M, opts.wideKernels);
  return M;
}

/// Materializes what \p M uses, sets the target on it, verifies and
/// optimizes it.
static llvm::Error finishModule(llvm::Module &M, llvm::TargetMachine &TM,
                                llvm::ArrayRef<llvm::Function *> kernels,
                                bool wideKernels) {
  if (llvm::Error e = materializeUsed(M))
    return makeErrorF("internal error: cannot read libjit bitcode: {0}",
                      llvm::toString(std::move(e)));
  setTargetAttrs(M, TM);
  if (wideKernels)
    preferWideVectors(kernels);
  std::string err;
  llvm::raw_string_ostream es(err);
  if (llvm::verifyModule(M, &es))
    return makeErrorF("internal error: invalid LLVM module: {0}", es.str());
  optimize(M, TM);
  return llvm::Error::success();
}

/// The symbol of kernel \p i of \p prog while the partitions are linked
/// (internal again once they are); it keeps the kernel's name for
/// profilers.
static std::string kernelSymbol(const CPUProgram &prog, size_t i) {
  return ("kernel." + llvm::Twine(i) + "." + prog.kernels[i].getName()).str();
}

namespace {
/// Which kernels share a compiled body: per kernel, the first kernel of its
/// shape key when another kernel has the same key, else kAlone.
struct SharedShapes {
  static constexpr size_t kAlone = ~size_t(0);
  std::vector<size_t> first;

  explicit SharedShapes(const CPUProgram &prog) {
    std::map<std::string, std::pair<size_t, size_t>> seen; // first, count
    std::vector<std::string> keys;
    for (size_t i = 0; i < prog.kernels.size(); ++i) {
      keys.push_back(kernelShapeKey(prog.kernels[i]));
      auto [it, fresh] = seen.try_emplace(keys.back(), i, 0);
      ++it->second.second;
    }
    for (const std::string &key : keys) {
      const auto &[firstOfKey, count] = seen[key];
      first.push_back(count > 1 ? firstOfKey : kAlone);
    }
  }
};
} // namespace

static std::string sharedBodySymbol(const CPUProgram &prog, size_t first) {
  return kernelSymbol(prog, first) + ".shared";
}

/// Renders kernel \p i of \p prog into \p M: alone, or as a call of its
/// shape's shared body, which the shape's first kernel renders and the
/// others declare (it is in the module of the first, linked before theirs).
/// Appends the functions whose loops the optimizer vectorizes to \p loops.
static llvm::Function *renderNetKernel(const CPUProgram &prog, size_t i,
                                       const SharedShapes &shapes,
                                       llvm::Module &M,
                                       std::vector<llvm::Function *> &loops) {
  const kir::Kernel &k = prog.kernels[i];
  size_t first = shapes.first[i];
  if (first == SharedShapes::kAlone) {
    loops.push_back(renderKernel(k, M));
    return loops.back();
  }
  std::string name = sharedBodySymbol(prog, first);
  llvm::Function *body = M.getFunction(name);
  if (!body && first == i) {
    body = renderSharedBody(k, M, name);
    loops.push_back(body);
  } else if (!body) {
    body = llvm::Function::Create(sharedBodyType(k, M.getContext()),
                                  llvm::GlobalValue::ExternalLinkage, name, M);
  }
  // Other modules' kernels may call it until the partitions are linked.
  body->setLinkage(llvm::GlobalValue::ExternalLinkage);
  return renderKernelCalling(k, body, M);
}

/// Kernels per partition module. LLVM's O3 pipeline keeps the analyses of
/// every function of a module (dominator trees, loop info, scalar
/// evolution, memory SSA of the inlined and vectorized kernels) until the
/// pipeline ends, so one module of a few hundred kernels peaked at several
/// hundred MiB, far above the weights of a convolutional network. Each
/// partition also pays for itself (libjit read again, module-wide passes,
/// libjit helpers that are not inlined optimized once per partition): 16
/// kernels keep that to a fraction of the compile while bounding the peak
/// (docs/Reliability.md#compile-memory).
static constexpr size_t kKernelsPerPartition = 16;

/// Renders kernels [begin, end) of \p prog into their own module, optimizes
/// it and links it into \p M, which declares them.
static llvm::Error addPartition(llvm::Module &M, const CPUProgram &prog,
                                const SharedShapes &shapes, size_t begin,
                                size_t end, llvm::TargetMachine &TM,
                                const ModuleOptions &opts) {
  EMBER_ASSIGN_OR_RETURN(
      auto P, startModule(M.getContext(), TM, opts,
                          (opts.name + ".part" + llvm::Twine(begin)).str()));
  // The runtime's destructor (the worker pool) belongs to the main module;
  // kept here, it would root a second pool.
  for (const char *g : {"llvm.global_ctors", "llvm.global_dtors"})
    if (auto *gv = P->getNamedGlobal(g))
      gv->eraseFromParent();
  std::vector<llvm::Function *> loops;
  for (size_t i = begin; i < end; ++i) {
    llvm::Function *f = renderNetKernel(prog, i, shapes, *P, loops);
    f->setName(kernelSymbol(prog, i));
    f->setLinkage(llvm::GlobalValue::ExternalLinkage);
  }
  EMBER_RETURN_IF_ERR(finishModule(*P, TM, loops, opts.wideKernels));
  if (llvm::Linker::linkModules(M, std::move(P)))
    return makeError("internal error: cannot link a kernel partition");
  return llvm::Error::success();
}

llvm::Expected<std::unique_ptr<llvm::Module>>
cpu::buildModule(const CPUProgram &prog, llvm::LLVMContext &ctx,
                 llvm::TargetMachine &TM, const ModuleOptions &opts) {
  EMBER_ASSIGN_OR_RETURN(auto M, startModule(ctx, TM, opts, opts.name));
  // The first kKernelsPerPartition kernels live in the entries' module
  // (a small network stays one module); the entries call the others by
  // declaration, each partition module defining some of them.
  const size_t n = prog.kernels.size();
  const size_t inMain = std::min(kKernelsPerPartition, n);
  const SharedShapes shapes(prog);
  std::vector<llvm::Function *> fns, loops;
  for (size_t i = 0; i < inMain; ++i) {
    fns.push_back(renderNetKernel(prog, i, shapes, *M, loops));
    fns.back()->setName(kernelSymbol(prog, i));
  }
  auto *kernelTy = inMain ? fns.front()->getFunctionType() : nullptr;
  for (size_t i = inMain; i < n; ++i)
    fns.push_back(llvm::Function::Create(kernelTy,
                                         llvm::GlobalValue::ExternalLinkage,
                                         kernelSymbol(prog, i), *M));
  llvm::GlobalVariable *weights = nullptr;
  if (opts.embedWeights) {
    auto *data = llvm::ConstantDataArray::get(
        ctx, llvm::ArrayRef<uint8_t>(prog.constants));
    weights = new llvm::GlobalVariable(*M, data->getType(), true,
                                       llvm::GlobalValue::ExternalLinkage, data,
                                       opts.name + "_weights");
    weights->setAlignment(llvm::Align(64));
  }
  for (bool profile : {false, true}) {
    if (profile && !opts.profileEntry)
      break;
    addEntry(*M, prog, fns, weights, opts.name, profile);
    if (prog.loops.empty())
      addThreadedEntry(*M, prog, fns, weights, opts.name, profile);
    else
      addSerialThreadedEntry(*M, opts.name, profile);
  }
  addThreadsRelease(*M, opts.name);
  EMBER_RETURN_IF_ERR(finishModule(*M, TM, loops, opts.wideKernels));
  for (size_t b = inMain; b < n; b += kKernelsPerPartition)
    EMBER_RETURN_IF_ERR(addPartition(
        *M, prog, shapes, b, std::min(b + kKernelsPerPartition, n), TM, opts));
  for (size_t i = 0; i < n; ++i) {
    if (i >= inMain)
      M->getFunction(kernelSymbol(prog, i))
          ->setLinkage(llvm::GlobalValue::InternalLinkage);
    if (shapes.first[i] == i)
      M->getFunction(sharedBodySymbol(prog, i))
          ->setLinkage(llvm::GlobalValue::InternalLinkage);
  }
  return M;
}
