//===- Kernels.h - Reference kernels of the Interpreter --------*- C++ -*-===//
#ifndef EMBER_BACKENDS_INTERPRETER_KERNELS_H
#define EMBER_BACKENDS_INTERPRETER_KERNELS_H

#include "ember/IR/MemoryPlanner.h"

namespace ember {
namespace interp {

/// Resolves IR values to addresses in the three regions of one run.
class ExecContext {
public:
  ExecContext(const MemoryPlan &plan, char *constants, char *mutables,
              char *activations)
      : plan_(plan), bases_{constants, mutables, activations} {}
  char *addr(Value *v) const {
    Placement p = plan_.locate(v);
    return bases_[unsigned(p.region)] + p.offset;
  }
  template <typename T> T *ptr(Value *v) const {
    return reinterpret_cast<T *>(addr(v));
  }

private:
  const MemoryPlan &plan_;
  char *bases_[3];
};

/// The offset of the matrix of a MatMul operand with batch dims \p op for
/// flat batch index \p bi of the result's batch dims \p out (a dim of 1
/// against a larger one is broadcast), each matrix \p matrix elements.
dim_t batchOffset(dim_t bi, llvm::ArrayRef<dim_t> out, llvm::ArrayRef<dim_t> op,
                  dim_t matrix);

/// MatMul of BFloat16 operands into Float32 (MatMulBF16.cpp).
void matMulBF16(const MatMulInst &I, const ExecContext &ctx);

/// True if the Interpreter has a kernel for \p op on element kind \p kind.
bool hasKernel(OpKind op, ElemKind kind);

/// Executes one table instruction.
void executeOp(const Instruction &I, const ExecContext &ctx);

// Per-family entry points (Elementwise.cpp, Linear.cpp, DataMovement.cpp).
bool executeElementwise(const Instruction &I, const ExecContext &ctx);
bool executeLinear(const Instruction &I, const ExecContext &ctx);
bool executeDataMovement(const Instruction &I, const ExecContext &ctx);
/// ChannelShuffle (Shuffle.cpp).
bool executeShuffle(const Instruction &I, const ExecContext &ctx);
/// ReduceSum and ReduceMax (Reduce.cpp).
bool executeReduce(const Instruction &I, const ExecContext &ctx);
/// IntMatMul and IntConv (Quantized.cpp).
bool executeQuantized(const Instruction &I, const ExecContext &ctx);

} // namespace interp
} // namespace ember

#endif
