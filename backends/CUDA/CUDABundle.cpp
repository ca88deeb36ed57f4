//===- CUDABundle.cpp - CUDA bundles: NAME.o, NAME.h, weights -------------===//
//
// NAME.o holds the NVRTC cubin and PTX as read-only data and host launch
// code generated as LLVM IR and emitted through lib/Backend's target
// machine and object writer, so no C compiler is needed at bundle time. The
// host code calls the CUDA runtime (cudaLibraryLoadData, cudaLibraryGetKernel,
// cudaLaunchKernelExC) and, for MatMul/Conv on cuBLASLt/cuDNN, the
// library-op code of host/LibOps.c, linked in as bitcode and made internal:
// a bundle links with -lcudart (or cudart_static), plus -lcublasLt and
// -lcudnn when it uses them (the header says which), and nothing of ours.
// The ABI is in docs/Bundle.md and docs/CUDA.md.
//
//===----------------------------------------------------------------------===//
#include "CUDA.h"
#include "host/LibOps.h"

#include "ember/Backend/BundleWriter.h"

#include "ember/Base/Error.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Linker/Linker.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"

#include <cctype>
#include <map>

using namespace ember;
using namespace ember::cuda;

/// cudaMemcpyKind's cudaMemcpyDeviceToHost (the host code is built without
/// the CUDA headers).
static constexpr uint32_t cudaMemcpyDeviceToHostKind = 2;

extern "C" const char ember_cuda_libops_x86_64_start[];
extern "C" const char ember_cuda_libops_x86_64_end[];

namespace {
/// Builds the host module of a CUDA bundle.
class HostCodeGen {
public:
  HostCodeGen(llvm::Module &M, llvm::StringRef name)
      : M_(M), ctx_(M.getContext()), b_(ctx_), name_(name.str()) {
    ptr_ = b_.getPtrTy();
    i8_ = b_.getInt8Ty();
    i32_ = b_.getInt32Ty();
    i64_ = b_.getInt64Ty();
  }
  void addInit(const CUDABinary &bin, const CUDASource &src,
               const CUDAProgram &prog);
  void addEntry(const CUDASource &src, const CUDAProgram &prog);
  void addNotes(const CUDAProgram &prog);
  /// `NAME_sync_each_step`, `NAME_failed_step` and the internal step check
  /// that the entry calls after every step.
  void addStepCheck();

private:
  llvm::GlobalVariable *global(llvm::Constant *init, const llvm::Twine &n) {
    return new llvm::GlobalVariable(M_, init->getType(), true,
                                    llvm::GlobalValue::PrivateLinkage, init, n);
  }
  llvm::Constant *str(llvm::StringRef s) {
    return global(llvm::ConstantDataArray::getString(ctx_, s), name_ + ".str");
  }
  /// Returns from the current function with \p rc unless it is 0.
  void returnIfError(llvm::Function *fn, llvm::Value *rc);
  /// Launches kernel \p i of \p src on \p fn's stream (argument 3);
  /// returns the status.
  llvm::Value *emitLaunch(llvm::Function *fn, const CUDASource &src, size_t i,
                          llvm::Value *cfg, llvm::Value *args);
  /// Copies \p bytes at device address \p src to host \p dst on \p fn's
  /// stream and waits for it; returns \p fn's failure named \p name.
  void emitReadBack(llvm::Function *fn, llvm::Value *dst, llvm::Value *src,
                    uint64_t bytes, llvm::Value *name);
  /// After a loop test step: reads the loop flag back into \p flag
  /// (waiting for the stream) and branches to \p more or \p done.
  void emitLoopBranch(llvm::Function *fn, const CUDAProgram &prog,
                      llvm::Value *flag, llvm::BasicBlock *more,
                      llvm::BasicBlock *done, llvm::Value *name);
  /// At the end of the entry of a network with run-time checks: reads the
  /// status back and returns kCheckCodeBase + k when check k failed.
  void emitCheckStatus(llvm::Function *fn, const CUDAProgram &prog);
  /// What -sync-each-step reports for step \p n.
  std::string stepName(const CUDASource &src, const CUDAProgram &prog,
                       size_t n) const;

  llvm::Module &M_;
  llvm::LLVMContext &ctx_;
  llvm::IRBuilder<> b_;
  std::string name_;
  llvm::Type *ptr_, *i8_, *i32_, *i64_;
  llvm::GlobalVariable *kernels_ = nullptr;
  llvm::Function *init_ = nullptr;
  /// Library ops: the shared context, one plan each, their descriptors.
  llvm::GlobalVariable *libCtx_ = nullptr, *plans_ = nullptr;
  /// Per library op: 1 where init found the library refusing it.
  llvm::GlobalVariable *fallbacks_ = nullptr;
  /// int step(int rc, cudaStream_t s, const char *name): see addStepCheck.
  llvm::Function *stepCheck_ = nullptr;
  std::vector<llvm::GlobalVariable *> descs_;
};
} // namespace

void HostCodeGen::returnIfError(llvm::Function *fn, llvm::Value *rc) {
  auto *fail = llvm::BasicBlock::Create(ctx_, "fail", fn);
  auto *ok = llvm::BasicBlock::Create(ctx_, "ok", fn);
  b_.CreateCondBr(b_.CreateICmpNE(rc, b_.getInt32(0)), fail, ok);
  b_.SetInsertPoint(fail);
  b_.CreateRet(rc);
  b_.SetInsertPoint(ok);
}

/// `int NAME_init(void)`: loads the cubin (or, where the GPU cannot run it,
/// the PTX) once and looks every kernel up.
void HostCodeGen::addInit(const CUDABinary &bin, const CUDASource &src,
                          const CUDAProgram &prog) {
  auto *loadTy = llvm::FunctionType::get(
      i32_, {ptr_, ptr_, ptr_, ptr_, i32_, ptr_, ptr_, i32_}, false);
  auto load = M_.getOrInsertFunction("cudaLibraryLoadData", loadTy);
  auto get = M_.getOrInsertFunction(
      "cudaLibraryGetKernel",
      llvm::FunctionType::get(i32_, {ptr_, ptr_, ptr_}, false));
  auto *lib = new llvm::GlobalVariable(
      M_, ptr_, false, llvm::GlobalValue::InternalLinkage,
      llvm::ConstantPointerNull::get(llvm::PointerType::get(ctx_, 0)),
      name_ + ".library");
  auto *kty = llvm::ArrayType::get(ptr_, src.launches.size());
  kernels_ = new llvm::GlobalVariable(
      M_, kty, false, llvm::GlobalValue::InternalLinkage,
      llvm::Constant::getNullValue(kty), name_ + ".kernels");
  auto *cubin =
      global(llvm::ConstantDataArray::get(
                 ctx_, llvm::ArrayRef<uint8_t>(
                           reinterpret_cast<const uint8_t *>(bin.cubin.data()),
                           bin.cubin.size())),
             name_ + "_cubin");
  cubin->setAlignment(llvm::Align(64));
  auto *ptx =
      global(llvm::ConstantDataArray::getString(ctx_, bin.ptx), name_ + "_ptx");
  ptx->setAlignment(llvm::Align(64));
  init_ = llvm::Function::Create(llvm::FunctionType::get(i32_, false),
                                 llvm::GlobalValue::ExternalLinkage,
                                 name_ + "_init", M_);
  b_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", init_));
  auto *done = llvm::BasicBlock::Create(ctx_, "done", init_);
  auto *work = llvm::BasicBlock::Create(ctx_, "load", init_);
  b_.CreateCondBr(b_.CreateIsNotNull(b_.CreateLoad(ptr_, lib)), done, work);
  b_.SetInsertPoint(done);
  b_.CreateRet(b_.getInt32(0));
  b_.SetInsertPoint(work);
  llvm::Value *slot = b_.CreateAlloca(ptr_);
  llvm::Value *null =
      llvm::ConstantPointerNull::get(llvm::PointerType::get(ctx_, 0));
  auto loadImage = [&](llvm::Value *image) {
    return b_.CreateCall(load, {slot, image, null, null, b_.getInt32(0), null,
                                null, b_.getInt32(0)});
  };
  llvm::Value *rc = loadImage(cubin);
  auto *viaPtx = llvm::BasicBlock::Create(ctx_, "ptx", init_);
  auto *loaded = llvm::BasicBlock::Create(ctx_, "loaded", init_);
  b_.CreateCondBr(b_.CreateICmpEQ(rc, b_.getInt32(0)), loaded, viaPtx);
  b_.SetInsertPoint(viaPtx);
  returnIfError(init_, loadImage(ptx));
  b_.CreateBr(loaded);
  b_.SetInsertPoint(loaded);
  llvm::Value *handle = b_.CreateLoad(ptr_, slot);
  for (size_t i = 0; i < src.launches.size(); ++i) {
    llvm::Value *at = b_.CreateConstInBoundsGEP2_64(kty, kernels_, 0, i);
    returnIfError(
        init_, b_.CreateCall(get, {at, handle, str(src.launches[i].symbol)}));
  }
  if (!prog.libOps.empty()) {
    // EmberLibContext, the EmberLibPlans and the fallback flags.
    auto *ctxTy = llvm::ArrayType::get(b_.getInt8Ty(), EMBER_LIB_CONTEXT_BYTES);
    libCtx_ = new llvm::GlobalVariable(
        M_, ctxTy, false, llvm::GlobalValue::InternalLinkage,
        llvm::Constant::getNullValue(ctxTy), name_ + ".libctx");
    libCtx_->setAlignment(llvm::Align(16));
    auto *flagsTy = llvm::ArrayType::get(b_.getInt8Ty(), prog.libOps.size());
    fallbacks_ = new llvm::GlobalVariable(
        M_, flagsTy, false, llvm::GlobalValue::InternalLinkage,
        llvm::Constant::getNullValue(flagsTy), name_ + ".fallbacks");
    auto *plansTy = llvm::ArrayType::get(
        llvm::ArrayType::get(i64_, EMBER_LIB_PLAN_BYTES / 8),
        prog.libOps.size());
    plans_ = new llvm::GlobalVariable(
        M_, plansTy, false, llvm::GlobalValue::InternalLinkage,
        llvm::Constant::getNullValue(plansTy), name_ + ".plans");
    plans_->setAlignment(llvm::Align(16));
    // A library that refuses an op leaves it to its generated kernel.
    auto *planTy =
        llvm::FunctionType::get(i32_, {ptr_, ptr_, ptr_, ptr_, ptr_}, false);
    auto planGemm = M_.getOrInsertFunction("ember_lib_try_gemm", planTy);
    auto planConv = M_.getOrInsertFunction("ember_lib_try_conv", planTy);
    auto finish = M_.getOrInsertFunction(
        "ember_lib_finish", llvm::FunctionType::get(i32_, {ptr_}, false));
    for (size_t i = 0; i < prog.libOps.size(); ++i) {
      llvm::SmallVector<uint64_t, 40> d(prog.libOps[i].desc.begin(),
                                        prog.libOps[i].desc.end());
      descs_.push_back(
          global(llvm::ConstantDataArray::get(ctx_, d), name_ + ".desc"));
      llvm::Value *p = b_.CreateConstInBoundsGEP2_64(plansTy, plans_, 0, i);
      bool gemm = prog.libOps[i].desc[0] == EMBER_LIB_GEMM;
      llvm::Value *flag =
          b_.CreateConstInBoundsGEP2_64(flagsTy, fallbacks_, 0, i);
      returnIfError(init_, b_.CreateCall(gemm ? planGemm : planConv,
                                         {libCtx_, p, descs_.back(),
                                          str(prog.libOps[i].name), flag}));
    }
    returnIfError(init_, b_.CreateCall(finish, {libCtx_}));
  }
  b_.CreateStore(handle, lib); // only once every kernel was found
  b_.CreateRet(b_.getInt32(0));
}

/// `int NAME(constants, mutables, activations, stream)`: every kernel in
/// order on \p stream through cudaLaunchKernelExC.
void HostCodeGen::addEntry(const CUDASource &src, const CUDAProgram &prog) {
  // cudaLaunchConfig_t: dim3 gridDim, blockDim; size_t dynamicSmemBytes;
  // cudaStream_t stream; cudaLaunchAttribute *attrs; unsigned numAttrs.
  auto *cfgTy = llvm::StructType::get(
      ctx_, {i32_, i32_, i32_, i32_, i32_, i32_, i64_, ptr_, ptr_, i32_});
  auto *fn = llvm::Function::Create(
      llvm::FunctionType::get(i32_, {ptr_, ptr_, ptr_, ptr_}, false),
      llvm::GlobalValue::ExternalLinkage, name_, M_);
  b_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", fn));
  auto *slotsTy = llvm::ArrayType::get(ptr_, 3);
  llvm::Value *slots = b_.CreateAlloca(slotsTy);
  llvm::Value *args = b_.CreateAlloca(slotsTy);
  llvm::Value *cfg = b_.CreateAlloca(cfgTy);
  returnIfError(fn, b_.CreateCall(init_));
  for (unsigned i = 0; i < 3; ++i) {
    llvm::Value *s = b_.CreateConstInBoundsGEP2_64(slotsTy, slots, 0, i);
    b_.CreateStore(fn->getArg(i), s);
    b_.CreateStore(s, b_.CreateConstInBoundsGEP2_64(slotsTy, args, 0, i));
  }
  auto *runTy = llvm::FunctionType::get(
      i32_, {ptr_, ptr_, ptr_, ptr_, ptr_, ptr_, ptr_}, false);
  auto runGemm = M_.getOrInsertFunction("ember_lib_run_gemm", runTy);
  auto runConv = M_.getOrInsertFunction("ember_lib_run_conv", runTy);
  // The steps a loop test jumps to, each starting a block.
  std::map<size_t, llvm::BasicBlock *> targets;
  for (const StepLoop &l : prog.loops)
    for (size_t t : {l.begin + 1, l.end + 1})
      targets.emplace(t, llvm::BasicBlock::Create(ctx_, "step", fn));
  llvm::Value *flag = prog.loops.empty() ? nullptr : b_.CreateAlloca(i8_);
  for (size_t n = 0; n <= prog.steps.size(); ++n) {
    auto target = targets.find(n);
    if (target != targets.end()) {
      b_.CreateBr(target->second);
      b_.SetInsertPoint(target->second);
    }
    if (n == prog.steps.size())
      break;
    const Step &step = prog.steps[n];
    size_t i = step.index;
    llvm::Value *rc;
    if (!step.isLibrary) {
      rc = emitLaunch(fn, src, i, cfg, args);
    } else {
      // The library op, or its generated kernel where init fell back.
      auto *viaLib = llvm::BasicBlock::Create(ctx_, "lib", fn);
      auto *viaKernel = llvm::BasicBlock::Create(ctx_, "fallback", fn);
      auto *next = llvm::BasicBlock::Create(ctx_, "next", fn);
      llvm::Value *flag = b_.CreateLoad(
          b_.getInt8Ty(), b_.CreateConstInBoundsGEP2_64(
                              fallbacks_->getValueType(), fallbacks_, 0, i));
      b_.CreateCondBr(b_.CreateICmpNE(flag, b_.getInt8(0)), viaKernel, viaLib);
      b_.SetInsertPoint(viaKernel);
      llvm::Value *rcKernel =
          emitLaunch(fn, src, prog.libOps[i].fallback, cfg, args);
      b_.CreateBr(next);
      b_.SetInsertPoint(viaLib);
      llvm::Value *p =
          b_.CreateConstInBoundsGEP2_64(plans_->getValueType(), plans_, 0, i);
      bool gemm = prog.libOps[i].desc[0] == EMBER_LIB_GEMM;
      llvm::Value *rcLib =
          b_.CreateCall(gemm ? runGemm : runConv,
                        {libCtx_, p, descs_[i], fn->getArg(0), fn->getArg(1),
                         fn->getArg(2), fn->getArg(3)});
      b_.CreateBr(next);
      b_.SetInsertPoint(next);
      auto *phi = b_.CreatePHI(i32_, 2);
      phi->addIncoming(rcKernel, viaKernel);
      phi->addIncoming(rcLib, viaLib);
      rc = phi;
    }
    returnIfError(fn, b_.CreateCall(stepCheck_, {rc, fn->getArg(3),
                                                 str(stepName(src, prog, n))}));
    if (prog.testsLoop(n))
      emitLoopBranch(fn, prog, flag, targets[prog.nextStep(n, true)],
                     targets[prog.nextStep(n, false)],
                     str(stepName(src, prog, n) + " (reading its loop flag)"));
  }
  if (prog.checkOffset >= 0)
    emitCheckStatus(fn, prog);
  b_.CreateRet(b_.getInt32(0));
}

void HostCodeGen::emitReadBack(llvm::Function *fn, llvm::Value *dst,
                               llvm::Value *src, uint64_t bytes,
                               llvm::Value *name) {
  auto copy = M_.getOrInsertFunction(
      "cudaMemcpyAsync",
      llvm::FunctionType::get(i32_, {ptr_, ptr_, i64_, i32_, ptr_}, false));
  auto sync = M_.getOrInsertFunction(
      "cudaStreamSynchronize", llvm::FunctionType::get(i32_, {ptr_}, false));
  llvm::Value *rc = b_.CreateCall(
      copy, {dst, src, b_.getInt64(bytes),
             b_.getInt32(cudaMemcpyDeviceToHostKind), fn->getArg(3)});
  returnIfError(fn, b_.CreateCall(stepCheck_, {rc, fn->getArg(3), name}));
  rc = b_.CreateCall(sync, {fn->getArg(3)});
  returnIfError(fn, b_.CreateCall(stepCheck_, {rc, fn->getArg(3), name}));
}

void HostCodeGen::emitCheckStatus(llvm::Function *fn, const CUDAProgram &prog) {
  llvm::Value *status = b_.CreateAlloca(i64_);
  llvm::Value *src =
      b_.CreateConstInBoundsGEP1_64(i8_, fn->getArg(1), prog.checkOffset);
  emitReadBack(fn, status, src, 8, str("reading the run-time check status"));
  llvm::Value *k = b_.CreateTrunc(b_.CreateLoad(i64_, status), i32_);
  auto *failed = llvm::BasicBlock::Create(ctx_, "check_failed", fn);
  auto *passed = llvm::BasicBlock::Create(ctx_, "checks_passed", fn);
  b_.CreateCondBr(b_.CreateICmpNE(k, b_.getInt32(0)), failed, passed);
  b_.SetInsertPoint(failed);
  b_.CreateRet(b_.CreateAdd(k, b_.getInt32(kCUDACheckCodeBase)));
  b_.SetInsertPoint(passed);
}

void HostCodeGen::emitLoopBranch(llvm::Function *fn, const CUDAProgram &prog,
                                 llvm::Value *flag, llvm::BasicBlock *more,
                                 llvm::BasicBlock *done, llvm::Value *name) {
  llvm::Value *src =
      b_.CreateConstInBoundsGEP1_64(i8_, fn->getArg(2), prog.loopFlagOffset);
  emitReadBack(fn, flag, src, 1, name);
  b_.CreateCondBr(b_.CreateICmpNE(b_.CreateLoad(i8_, flag), b_.getInt8(0)),
                  more, done);
  // The caller's next step starts a jump target, branched to from this
  // unreachable block.
  b_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "after", fn));
}

std::string HostCodeGen::stepName(const CUDASource &src,
                                  const CUDAProgram &prog, size_t n) const {
  const Step &s = prog.steps[n];
  std::string at = "step " + std::to_string(n + 1) + " of " +
                   std::to_string(prog.steps.size()) + ", ";
  if (!s.isLibrary)
    return at + "kernel " + src.launches[s.index].symbol + " (" +
           prog.kernels[s.index].getName().str() + ")";
  const LibOp &op = prog.libOps[s.index];
  return at + (op.desc[0] == EMBER_LIB_GEMM ? "cuBLASLt" : "cuDNN") + " op " +
         op.name + " (or its generated kernel " +
         src.launches[op.fallback].symbol + ")";
}

/// `void NAME_sync_each_step(int on)` (debugging: the entry then waits for
/// every step), `const char *NAME_failed_step(void)` (the step whose status
/// the entry returned, "" if none), and the check after every step:
/// `int step(int rc, cudaStream_t s, const char *name)` returns rc, or
/// with sync-each-step on the status of synchronizing s, remembering name
/// where it is not 0.
void HostCodeGen::addStepCheck() {
  auto *on = new llvm::GlobalVariable(M_, i32_, false,
                                      llvm::GlobalValue::InternalLinkage,
                                      b_.getInt32(0), name_ + ".syncEachStep");
  auto *failed = new llvm::GlobalVariable(M_, ptr_, false,
                                          llvm::GlobalValue::InternalLinkage,
                                          str(""), name_ + ".failedStep");
  auto *set = llvm::Function::Create(
      llvm::FunctionType::get(b_.getVoidTy(), {i32_}, false),
      llvm::GlobalValue::ExternalLinkage, name_ + "_sync_each_step", M_);
  b_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", set));
  b_.CreateStore(set->getArg(0), on);
  b_.CreateRetVoid();
  auto *get = llvm::Function::Create(llvm::FunctionType::get(ptr_, false),
                                     llvm::GlobalValue::ExternalLinkage,
                                     name_ + "_failed_step", M_);
  b_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", get));
  b_.CreateRet(b_.CreateLoad(ptr_, failed));
  auto sync = M_.getOrInsertFunction(
      "cudaStreamSynchronize", llvm::FunctionType::get(i32_, {ptr_}, false));
  auto last = M_.getOrInsertFunction("cudaGetLastError",
                                     llvm::FunctionType::get(i32_, false));
  stepCheck_ = llvm::Function::Create(
      llvm::FunctionType::get(i32_, {i32_, ptr_, ptr_}, false),
      llvm::GlobalValue::InternalLinkage, name_ + ".step", M_);
  llvm::Function *fn = stepCheck_;
  auto *entry = llvm::BasicBlock::Create(ctx_, "entry", fn);
  auto *wait = llvm::BasicBlock::Create(ctx_, "wait", fn);
  auto *done = llvm::BasicBlock::Create(ctx_, "done", fn);
  b_.SetInsertPoint(entry);
  llvm::Value *rc = fn->getArg(0);
  b_.CreateCondBr(
      b_.CreateAnd(b_.CreateICmpEQ(rc, b_.getInt32(0)),
                   b_.CreateICmpNE(b_.CreateLoad(i32_, on), b_.getInt32(0))),
      wait, done);
  b_.SetInsertPoint(wait);
  llvm::Value *s = b_.CreateCall(sync, {fn->getArg(1)});
  llvm::Value *l = b_.CreateCall(last);
  llvm::Value *waited =
      b_.CreateSelect(b_.CreateICmpNE(s, b_.getInt32(0)), s, l);
  b_.CreateBr(done);
  b_.SetInsertPoint(done);
  auto *phi = b_.CreatePHI(i32_, 2);
  phi->addIncoming(rc, entry);
  phi->addIncoming(waited, wait);
  auto *fail = llvm::BasicBlock::Create(ctx_, "fail", fn);
  auto *ok = llvm::BasicBlock::Create(ctx_, "ok", fn);
  b_.CreateCondBr(b_.CreateICmpNE(phi, b_.getInt32(0)), fail, ok);
  b_.SetInsertPoint(fail);
  b_.CreateStore(fn->getArg(2), failed);
  b_.CreateRet(phi);
  b_.SetInsertPoint(ok);
  b_.CreateRet(b_.getInt32(0));
}

llvm::Value *HostCodeGen::emitLaunch(llvm::Function *fn, const CUDASource &src,
                                     size_t i, llvm::Value *cfg,
                                     llvm::Value *args) {
  // cudaLaunchConfig_t: dim3 gridDim, blockDim; size_t dynamicSmemBytes;
  // cudaStream_t stream; cudaLaunchAttribute *attrs; unsigned numAttrs.
  auto *cfgTy = llvm::StructType::get(
      ctx_, {i32_, i32_, i32_, i32_, i32_, i32_, i64_, ptr_, ptr_, i32_});
  auto launch = M_.getOrInsertFunction(
      "cudaLaunchKernelExC",
      llvm::FunctionType::get(i32_, {ptr_, ptr_, ptr_}, false));
  auto field = [&](unsigned f, llvm::Value *v) {
    b_.CreateStore(v, b_.CreateStructGEP(cfgTy, cfg, f));
  };
  const LaunchInfo &li = src.launches[i];
  int64_t dims[6] = {li.blocks, 1, 1, li.threads, 1, 1};
  for (unsigned f = 0; f < 6; ++f)
    field(f, b_.getInt32(uint32_t(dims[f])));
  field(6, b_.getInt64(0));
  field(7, fn->getArg(3));
  field(8, llvm::ConstantPointerNull::get(llvm::PointerType::get(ctx_, 0)));
  field(9, b_.getInt32(0));
  auto *kty = kernels_->getValueType();
  llvm::Value *k =
      b_.CreateLoad(ptr_, b_.CreateConstInBoundsGEP2_64(kty, kernels_, 0, i));
  return b_.CreateCall(launch, {cfg, k, args});
}

/// `const char *NAME_notes(void)`: what init decided that a user should
/// know (the library ops running their generated kernels), "" if nothing.
void HostCodeGen::addNotes(const CUDAProgram &prog) {
  auto *fn = llvm::Function::Create(llvm::FunctionType::get(ptr_, false),
                                    llvm::GlobalValue::ExternalLinkage,
                                    name_ + "_notes", M_);
  b_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", fn));
  if (prog.libOps.empty()) {
    b_.CreateRet(str(""));
    return;
  }
  b_.CreateRet(b_.CreateConstInBoundsGEP2_64(libCtx_->getValueType(), libCtx_,
                                             0, EMBER_LIB_NOTES_OFFSET));
}

/// Links the cuBLASLt/cuDNN host code (LibOps.c as bitcode) into \p M and
/// makes it internal, so two bundles can live in one program.
static llvm::Error linkLibOps(llvm::Module &M) {
  if (llvm::Triple(M.getTargetTriple()).getArch() != llvm::Triple::x86_64)
    return makeError("cuBLASLt/cuDNN calls in CUDA bundles need an x86_64 "
                     "host target; use -cuda-gemm=generated "
                     "-cuda-conv=generated");
  auto buf = llvm::MemoryBuffer::getMemBuffer(
      llvm::StringRef(ember_cuda_libops_x86_64_start,
                      ember_cuda_libops_x86_64_end -
                          ember_cuda_libops_x86_64_start),
      "LibOps.bc", false);
  auto lib = llvm::parseBitcodeFile(buf->getMemBufferRef(), M.getContext());
  if (!lib)
    return makeErrorF("internal error: cannot read the LibOps bitcode: {0}",
                      llvm::toString(lib.takeError()));
  (*lib)->setTargetTriple(M.getTargetTriple());
  (*lib)->setDataLayout(M.getDataLayout());
  llvm::StringSet<> defined;
  for (llvm::Function &f : **lib)
    if (!f.isDeclaration())
      defined.insert(f.getName());
  if (llvm::Linker::linkModules(M, std::move(*lib)))
    return makeError("internal error: cannot link the LibOps bitcode");
  for (llvm::Function &f : M)
    if (!f.isDeclaration() && defined.count(f.getName()))
      f.setLinkage(llvm::GlobalValue::InternalLinkage);
  // Drop what the bundle does not call (cuBLASLt code in a bundle without
  // GEMMs, say), and the declarations only that code used.
  for (bool changed = true; changed;) {
    changed = false;
    for (llvm::Function &f : llvm::make_early_inc_range(M))
      if ((f.isDeclaration() || f.hasLocalLinkage()) && f.use_empty()) {
        f.eraseFromParent();
        changed = true;
      }
  }
  return llvm::Error::success();
}

static std::string headerText(llvm::StringRef name, const CUDAProgram &prog,
                              const std::vector<BundleTensorDesc> &ins,
                              const std::vector<BundleTensorDesc> &outs,
                              const Module *M) {
  std::string s;
  llvm::raw_string_ostream os(s);
  std::string guard = name.upper() + "_EMBER_BUNDLE_H";
  os << "/* Generated by Ember's model-compiler: the CUDA bundle '" << name
     << "'. See docs/Bundle.md.\n   Link with:"
     << (prog.usesCublasLt() ? " -lcublasLt" : "")
     << (prog.usesCudnn() ? " -lcudnn" : "") << " -lcudart */\n#ifndef "
     << guard << "\n#define " << guard << "\n\n#include <stdint.h>\n\n"
     << bundleTypesText().str()
     << "\n/* The CUDA runtime's stream type, so that this header compiles "
        "without\n   cuda_runtime.h (the typedef is identical). */\n"
        "#ifndef __DRIVER_TYPES_H__\ntypedef struct CUstream_st "
        "*cudaStream_t;\n#endif\n\n#define "
     << name << "_BUNDLE_ABI_VERSION 3\n#define " << name << "_CONSTANT_SIZE "
     << prog.constants.size() << "u\n#define " << name << "_MUTABLE_SIZE "
     << prog.mutableSize << "u\n#define " << name << "_ACTIVATIONS_SIZE "
     << prog.activationSize << "u\n#define " << name << "_ALIGNMENT 64u\n"
     << "/* 1 if the bundle calls cuBLASLt / cuDNN (link -lcublasLt / "
        "-lcudnn). */\n#define "
     << name << "_USES_CUBLASLT " << int(prog.usesCublasLt()) << "\n#define "
     << name << "_USES_CUDNN " << int(prog.usesCudnn()) << "\n";
  printBundleIOMacros(os, name, ins, outs);
  printBundleCheckMacros(os, name, M, kCUDACheckCodeBase);
  os << "\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n"
     << "/** Loads the kernels onto the current device (once; the entry point "
        "calls\n    it too). Call it before capturing a CUDA graph. Returns 0 "
        "or a\n    cudaError_t (10000 + cublasStatus_t, 20000 + cudnnStatus_t "
        "for the\n    libraries). */\nint "
     << name << "_init(void);\n"
     << "/** Enqueues the network on stream; all three pointers are device "
        "memory,\n    64-byte aligned. Returns 0 or the first error (as "
        "NAME_init); with\n    run-time checks it waits for the stream and "
        "returns 30000 + k when check\n    k failed. */\nint "
     << name
     << "(uint8_t *constantWeights, uint8_t *mutableWeights, "
        "uint8_t *activations,\n    cudaStream_t stream);\n"
     << "/** After NAME_init: lines naming the library ops that run their "
        "generated\n    kernel because cuBLASLt/cuDNN refused them on this "
        "GPU (\"\" if none). */\nconst char *"
     << name << "_notes(void);\n"
     << "/** Debugging: with on != 0, NAME synchronizes after every kernel "
        "and\n    library call and returns the first failure; "
        "NAME_failed_step() then\n    names that step (\"step 3 of 40, "
        "kernel ...\"; \"\" if none). */\nvoid "
     << name << "_sync_each_step(int on);\nconst char *" << name
     << "_failed_step(void);\n"
     << "/** Sizes, inputs and outputs of this bundle. */\n"
     << "extern const EmberBundleInfo " << name << "_info;\n"
     << "#ifdef __cplusplus\n}\n#endif\n\n#endif /* " << guard << " */\n";
  return os.str();
}

llvm::Error cuda::writeCUDABundle(const IRFunction &F, const MemoryPlan &plan,
                                  const CUDAProgram &prog,
                                  const CUDASource &src, const CUDABinary &bin,
                                  const BundleOptions &opts) {
  llvm::StringRef name = opts.networkName;
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0])) ||
      !llvm::all_of(name, [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
      }))
    return makeErrorF("network name '{0}' is not a C identifier", name);
  if (opts.embedWeights)
    return makeError("-embed-weights is not supported by the CUDA backend "
                     "(constants live in device memory)");
  if (opts.sharedObject)
    return makeError("-bundle-shared is not supported by the CUDA backend");
  TargetOptions host = opts.codegen.target;
  if (host.cpu.empty()) // launch code only: no need for the build host's CPU
    host.cpu = llvm::Triple(host.triple.empty() ? llvm::sys::getProcessTriple()
                                                : host.triple)
                           .getArch() == llvm::Triple::x86_64
                   ? "x86-64"
                   : "generic";
  EMBER_ASSIGN_OR_RETURN(TargetDesc desc, TargetDesc::create(host));
  EMBER_ASSIGN_OR_RETURN(auto TM, createTargetMachine(desc));
  if (std::error_code ec = llvm::sys::fs::create_directories(opts.outputDir))
    return makeErrorF("cannot create '{0}': {1}", opts.outputDir, ec.message());
  llvm::LLVMContext ctx;
  llvm::Module M(name, ctx);
  M.setTargetTriple(TM->getTargetTriple().str());
  M.setDataLayout(TM->createDataLayout());
  std::vector<BundleTensorDesc> ins, outs;
  describeBundleIO(F, plan, ins, outs);
  HostCodeGen gen(M, name);
  gen.addInit(bin, src, prog);
  gen.addStepCheck();
  gen.addEntry(src, prog);
  gen.addNotes(prog);
  if (!prog.libOps.empty())
    EMBER_RETURN_IF_ERR(linkLibOps(M));
  addBundleInfo(M, name,
                BundleRegions{prog.constants.size(), prog.mutableSize,
                              prog.activationSize},
                ins, outs, nullptr);
  std::string err;
  llvm::raw_string_ostream es(err);
  if (llvm::verifyModule(M, &es))
    return makeErrorF("internal error: invalid host module: {0}", es.str());
  if (opts.dumpLLVMIR)
    M.print(*opts.dumpLLVMIR, nullptr);
  if (opts.dumpSource)
    *opts.dumpSource << src.text;
  auto path = [&](llvm::StringRef ext) {
    llvm::SmallString<256> p(opts.outputDir);
    llvm::sys::path::append(p, name + ext);
    return std::string(p);
  };
  EMBER_RETURN_IF_ERR(emitObjectFile(M, *TM, path(".o")));
  EMBER_RETURN_IF_ERR(writeBundleFile(
      path(".h"), headerText(name, prog, ins, outs, F.getModule())));
  return writeBundleFile(
      path(".weights.bin"),
      llvm::StringRef(reinterpret_cast<const char *>(prog.constants.data()),
                      prog.constants.size()));
}
