//===- MatMulOperands.h - Strided MatMul operands on the CPU ---*- C++ -*-===//
//
// The CPU's float MatMul reads each operand through element strides: a
// Transpose whose only reader is a MatMul operand is not run; the product
// reads the Transpose's input with the permuted strides instead (in place
// where the operand's last dim is contiguous, else through the packing
// that copies A or B panels anyway).
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_BACKENDS_CPU_MATMULOPERANDS_H
#define EMBER_BACKENDS_CPU_MATMULOPERANDS_H

#include "ember/IR/IR.h"
#include "ember/IR/MemoryPlanner.h"
#include "ember/Kernel/Kernel.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

namespace ember {
namespace cpu {

/// How a MatMul reads one operand: the buffer of \p source, element (i_0,
/// ..., i_{r-1}) of the operand at sum_d i_d * strides[d].
struct MatMulOperand {
  Value *source = nullptr;
  llvm::SmallVector<int64_t, 6> strides;
  /// Stride of the operand's second-to-last and last dims.
  int64_t rowStride() const { return strides[strides.size() - 2]; }
  int64_t colStride() const { return strides.back(); }
};

/// The Transposes of a function that the CPU's MatMul reads through
/// strides instead of running them: each writes a buffer that only one
/// float32 MatMul reads, directly as its LHS or RHS, from an input that is
/// not a constant (a constant one is transposed at compile time) and that
/// nothing overwrites from the Transpose up to and including the MatMul
/// (the memory plan may reuse the input's bytes once the Transpose has read
/// them; then the Transpose runs as before).
class TransposeFolds {
public:
  TransposeFolds(const IRFunction &F, const MemoryPlan &plan);

  /// True if \p T is read through strides by its MatMul (and is not run).
  bool isFolded(const TransposeInst &T) const {
    return folded_.count(T.getDest()) != 0;
  }
  /// How a MatMul reads its operand \p v: through a folded Transpose's
  /// input, or \p v itself row-major.
  MatMulOperand operand(Value *v) const;

private:
  llvm::DenseMap<const Value *, const TransposeInst *> folded_;
};

/// The element offset of one matrix of an operand with batch dims \p opBatch
/// and batch strides \p strides, for flat batch index \p bi over \p outBatch
/// (same rank; a dim of 1 against a larger one is broadcast: stride 0).
kir::ExprRef stridedBatchOffset(kir::Kernel &k, kir::ExprRef bi,
                                llvm::ArrayRef<dim_t> outBatch,
                                llvm::ArrayRef<dim_t> opBatch,
                                llvm::ArrayRef<int64_t> strides);

} // namespace cpu
} // namespace ember

#endif // EMBER_BACKENDS_CPU_MATMULOPERANDS_H
