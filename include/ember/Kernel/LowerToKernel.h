//===- LowerToKernel.h - Planned IR to kernels -----------------*- C++ -*-===//
//
// The one place where IR instructions become kernel-IR loop nests. Every
// backend that renders kernels calls lowerToKernels; a backend that has its
// own library kernel for some instruction (the CPU's convolution, say)
// claims it through the hook and emits a kernel with a Call.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_KERNEL_LOWERTOKERNEL_H
#define EMBER_KERNEL_LOWERTOKERNEL_H

#include "ember/Kernel/Kernel.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLFunctionalExtras.h"

namespace ember {
namespace kir {

/// True if the shared lowering has a kernel for node \p n (its op, its
/// result and operand element kinds, and attributes such as Pad's mode).
bool hasKernelLowering(const Node &n);

/// The kernel-IR buffer of IR value \p v, placed by \p plan.
Buffer bufferFor(Value *v, const MemoryPlan &plan);

/// The mutable-region offset of the run-time check status (the Int64 that
/// Module::getCheckStatus names; docs/RuntimeInputs.md "Run-time checks"),
/// or -1 when \p F's module has no checks. The bundle entries read it.
int64_t checkStatusOffset(const IRFunction &F, const MemoryPlan &plan);

/// The element offset of one matrix of a MatMul operand whose batch dims
/// are \p opBatch, for flat batch index \p bi over the result's batch dims
/// \p outBatch (same rank): a dim of 1 against a larger one is broadcast,
/// read with stride 0. Each matrix of the operand spans \p matrixElems.
ExprRef matMulBatchOffset(Kernel &k, ExprRef bi, llvm::ArrayRef<dim_t> outBatch,
                          llvm::ArrayRef<dim_t> opBatch, int64_t matrixElems);

/// A backend hook: lowers \p I itself (appending to \p out) and returns
/// true, or returns false to use the shared lowering.
using CustomLowering = llvm::function_ref<llvm::Expected<bool>(
    const Instruction &I, std::vector<Kernel> &out)>;

/// A backend hook that reserves \p bytes of private scratch memory for the
/// rest of the run (nullopt: none available).
using ScratchAllocator =
    llvm::function_ref<std::optional<Buffer>(uint64_t bytes)>;

/// Lowers every instruction of \p F, in order, into kernels. Consecutive
/// elementwise instructions over the same number of elements are fused into
/// one loop when no buffer is partially overlapped; intermediate
/// activations that only the fused group reads are not stored. Broadcasts
/// read only elementwise stay virtual; when the memory plan reuses a virtual
/// broadcast's source before its readers ran, the source is first copied
/// to scratch from \p scratch (when given) instead of materializing the
/// broadcast. Instructions for which \p absorbed is true are not lowered:
/// the backend does their work inside a later instruction's kernels.
llvm::Expected<std::vector<Kernel>>
lowerToKernels(const IRFunction &F, const MemoryPlan &plan,
               CustomLowering custom, ScratchAllocator scratch = {},
               llvm::function_ref<bool(const Instruction &)> absorbed = {});

/// True for the loop ops' instructions (loopcarry ... loopfinal).
bool isLoopInst(const Instruction &I);
/// Each loopbegin of \p F mapped to its loopend and back (findLoops), for
/// the lowering of the loop-op kernels.
llvm::DenseMap<const Instruction *, const Instruction *>
loopPartners(const IRFunction &F);
/// Loop op \p I as one sequential kernel: a copy for loopcarry, loopparam
/// and loopfinal; the test for loopbegin (\p partner: its loopend) and
/// the latch and test for loopend (\p partner: its loopbegin), writing the
/// answer (1: run the body, 0: leave the loop) to the one-byte \p flag,
/// on which the backend's host code branches (LoopOps.cpp).
Kernel lowerLoopOp(const Instruction &I, const Instruction &partner,
                   const MemoryPlan &plan, const Buffer &flag);

} // namespace kir
} // namespace ember

#endif // EMBER_KERNEL_LOWERTOKERNEL_H
