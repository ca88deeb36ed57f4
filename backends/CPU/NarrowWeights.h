//===- NarrowWeights.h - 16-bit weights packed at compile time -*- C++ -*-===//
//
// Under -weights-precision=fp16|bf16 a Conv's filter or a MatMul's B is a
// Cast from a 16-bit constant to float32 (convert-precision). The CPU does
// not run that Cast: the consumer packs the 16-bit values at compile time
// in the layout its float32 kernel reads (the packing only moves values and
// adds zeros, so the packed 16-bit image holds exactly the rounded weights),
// and one vector kernel widens the packed image into scratch before the
// kernel runs (exact: every 16-bit value is a float32). Paths that read the
// filter unpacked get the Cast's own result from the same widening kernel.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_BACKENDS_CPU_NARROWWEIGHTS_H
#define EMBER_BACKENDS_CPU_NARROWWEIGHTS_H

#include "ember/Backend/TargetDesc.h"
#include "ember/IR/IR.h"
#include "ember/IR/MemoryPlanner.h"
#include "ember/Kernel/Kernel.h"

#include "llvm/ADT/DenseMap.h"

#include <vector>

namespace ember {
namespace cpu {

/// The widening Casts of 16-bit constant weights that their one reader, a
/// float32 Conv (as its filter) or MatMul (as its B), does itself.
class NarrowWeights {
public:
  /// \p readers counts the reading instructions of each origin buffer.
  NarrowWeights(const IRFunction &F,
                const llvm::DenseMap<const Value *, unsigned> &readers);

  /// The 16-bit constant whose widening \p v (a filter or B operand) is,
  /// or null where \p v is anything else.
  WeightVar *source(Value *v) const;
  /// True if Cast \p I is done by its reader (and is not run as such).
  bool isAbsorbed(const CastInst &I) const;

private:
  llvm::DenseMap<const Value *, WeightVar *> sources_;
};

/// Whether libjit's kernels widen 16-bit weights of \p kind as they read
/// them on target \p T: bfloat16 everywhere (a shift), float16 where the
/// target converts it with an instruction (AVX-512F's vcvtph2ps, NEON's
/// fcvtl); elsewhere LLVM would call a library routine per element, and a
/// widening kernel before the float32 kernel does the conversion once.
bool widensInKernel(ElemKind kind, const TargetDesc &T);

/// The float32 values of the constant at \p src in \p constants: read in
/// place, or, when \p narrow (the 16-bit copy packed for it) is set,
/// widened from that into \p storage, which must outlive the pointer.
const float *floatConstantValues(const kir::Buffer &src, WeightVar *narrow,
                                 const MemoryPlan &plan,
                                 const std::vector<uint8_t> &constants,
                                 std::vector<float> &storage);

/// Appends \p values (each one a value of the 16-bit \p kind) to
/// \p constants as \p kind.
kir::Buffer appendNarrowConstant(std::vector<uint8_t> &constants,
                                 const std::vector<float> &values,
                                 ElemKind kind, std::string name);

/// The kernel that writes float32 \p dst, element by element, as the
/// widening of the 16-bit \p src (as many elements as \p dst holds).
kir::Kernel widenKernel(std::string name, const kir::Buffer &src,
                        const kir::Buffer &dst);

} // namespace cpu
} // namespace ember

#endif // EMBER_BACKENDS_CPU_NARROWWEIGHTS_H
