//===- CPULowering.h - The CPU's kernel and constant-image builder -*- C++ -*-//
//
// One CPULowering per compile turns planned IR into kernels and the
// constant image. Its member functions live in one file per emission path:
// CPULowering.cpp (the dispatch, MatMul), ConvGemmLowering.cpp (the choice
// among convolution plans, pixel panels with im2col, filter packing) and
// ConvCVLowering.cpp (channel-vector tiles).
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_BACKENDS_CPU_CPULOWERING_H
#define EMBER_BACKENDS_CPU_CPULOWERING_H

#include "BF16Storage.h"
#include "CPU.h"
#include "Depthwise.h"
#include "MatMulOperands.h"
#include "NarrowWeights.h"

#include "llvm/ADT/DenseMap.h"

namespace ember {
namespace cpu {

/// Builds the CPU's kernels and constant image.
class CPULowering {
public:
  CPULowering(const IRFunction &F, const MemoryPlan &plan,
              const TargetDesc &target, const CPUCodegenOptions &opts);

  /// \p weightCopied: see lowerForCPU.
  llvm::Expected<CPUProgram> run(const WeightCopied &weightCopied = {});

private:
  void startConstantImage(const WeightCopied &weightCopied);
  bool lowerOwn(const Instruction &I, std::vector<kir::Kernel> &out);
  void releaseReplacedWeights(const Instruction &I,
                              const std::vector<kir::Kernel> &out, size_t from);
  static size_t alignTo64(size_t n) { return (n + 63) / 64 * 64; }
  kir::Buffer packFilter(const ConvInst &I, int64_t MB, uint64_t scratchUsed,
                         std::vector<kir::Kernel> &out);
  kir::Buffer packedNarrow(const std::vector<float> &packed, WeightVar *src,
                           const kir::Buffer &scratch, llvm::StringRef name,
                           std::vector<kir::Kernel> &out,
                           bool inKernel = false);
  void lowerConv(const ConvInst &I, std::vector<kir::Kernel> &out);
  void lowerConvPanels(const ConvInst &I, std::vector<kir::Kernel> &out);
  void lowerConvCV(const ConvInst &I, std::vector<kir::Kernel> &out);
  kir::Kernel im2col(const ConvInst &I, int64_t img, const kir::Buffer &patches,
                     int64_t cw, int64_t numCols);
  static void appendPatchGeometry(const ConvInst &I, kir::Kernel &k,
                                  std::vector<kir::CallArg> &args);
  size_t scratchOffset() const { return alignTo64(plan_.activationSize); }
  size_t patchOffset() const { return scratchOffset() + snapshotReserve_; }
  /// The loops' flag: the first scratch byte after the snapshots. The
  /// entry reads it right after the loop kernel that writes it, so it may
  /// share bytes with any other kernel's scratch.
  size_t loopFlagOffset() const { return patchOffset(); }
  kir::Buffer packMatMulRHS(const MatMulInst &I, const MatMulOperand &B,
                            int64_t nr, bool b16,
                            std::vector<kir::Kernel> &out);
  void lowerMatMul(const MatMulInst &I, std::vector<kir::Kernel> &out);

  const IRFunction &F_;
  const MemoryPlan &plan_;
  llvm::DenseMap<const Value *, unsigned> readers_;
  NarrowWeights narrow_; ///< 16-bit weights packed here (NarrowWeights.h).
  CPUProgram prog_;
  size_t scratchSize_ = 0; ///< Conv patches, packed B, after the snapshots.
  size_t snapshotReserve_ = 0, snapshotUsed_ = 0; ///< After the arena.
  const TargetDesc &target_;      ///< The kernel target (see lowerForCPU).
  const CPUCodegenOptions &opts_; ///< Forced paths.
  TransposeFolds folds_;          ///< Transposes MatMuls read through strides.
  BF16Storage bf16_; ///< Activations stored in BFloat16 (BF16Storage.h).
  /// Each loopbegin's loopend and each loopend's loopbegin.
  llvm::DenseMap<const Instruction *, const Instruction *> loopPartner_;

  DepthwiseContext dwContext() {
    return {plan_, prog_.constants, opts_.convPath, target_};
  }
};

} // namespace cpu
} // namespace ember

#endif // EMBER_BACKENDS_CPU_CPULOWERING_H
