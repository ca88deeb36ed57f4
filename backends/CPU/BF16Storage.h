//===- BF16Storage.h - Activations stored in BFloat16 on the CPU -*- C++
//-*-===//
//
// Under -precision=bf16 a convolution with a BFloat16 filter reads its
// Float32 input rounded to BFloat16 (nearest even). Where every reader of
// a value rounds it so, the value need not be stored in Float32: its
// producer, itself such a convolution, rounds each result to nearest even
// as its epilogue stores it (after bias and activation) and the readers
// take those BFloat16 values as they are. Rounding to nearest even is
// idempotent, so the readers see the very values they would have made, and
// the network's results are unchanged bit for bit; only half the bytes of
// the value are written and read. The value's buffer keeps its Float32
// size in the memory plan (the BFloat16 elements fill its first half).
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_BACKENDS_CPU_BF16STORAGE_H
#define EMBER_BACKENDS_CPU_BF16STORAGE_H

#include "ember/Backend/CodegenOptions.h"
#include "ember/Backend/TargetDesc.h"
#include "ember/IR/IR.h"
#include "ember/IR/MemoryPlanner.h"
#include "ember/Kernel/Kernel.h"

#include "llvm/ADT/DenseSet.h"

namespace ember {
namespace cpu {

/// The activations of a function that the CPU stores in BFloat16.
class BF16Storage {
public:
  /// Picks the values of \p F as the kernels of target \p T (a
  /// kernelTarget) and \p opts allow: an activation buffer (not a view,
  /// not a network input or output) written by one BFloat16 convolution
  /// without a residual, and read only as the input of BFloat16
  /// convolutions whose chosen kernel takes a BFloat16 input
  /// (takesBF16Input).
  BF16Storage(const IRFunction &F, const TargetDesc &T,
              const CPUCodegenOptions &opts);

  /// True if \p v (an activation) is stored in BFloat16.
  bool stored(const Value *v) const { return values_.count(v); }
  /// How many values are.
  size_t size() const { return values_.size(); }

private:
  llvm::DenseSet<const Value *> values_;
};

/// True if BFloat16 convolution \p I, as lowered for \p T, reads its input
/// through a kernel that takes BFloat16 values as well as Float32 ones:
/// the direct kernels' padded copy (ember_conv_bf16_pad and _pad_phases)
/// and the channel-vector GEMM's transposed patch rows
/// (ember_conv_bf16_cv_pack). The pixel-panel patch GEMM's pack and the
/// AMX kernels keep Float32.
bool takesBF16Input(const ConvInst &I, const TargetDesc &T);

/// The buffer of \p v (stored in BFloat16) as BFloat16 elements.
kir::Buffer bf16Buffer(Value *v, const MemoryPlan &plan);

} // namespace cpu
} // namespace ember

#endif // EMBER_BACKENDS_CPU_BF16STORAGE_H
