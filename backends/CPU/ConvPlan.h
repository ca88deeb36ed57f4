//===- ConvPlan.h - Which path a convolution takes, and why -----*- C++ -*-===//
//
// The CPU lowering runs each convolution along one of five paths. The choice
// is a pure function of the convolution's shape, the kernel target and the
// forced paths of CPUCodegenOptions, kept apart from the emission so that
// it can be printed (-print-conv-plans), unit-tested and read in one place.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_BACKENDS_CPU_CONVPLAN_H
#define EMBER_BACKENDS_CPU_CONVPLAN_H

#include "CPU.h"
#include "ConvRows.h"

#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <string>

namespace ember {
namespace cpu {

enum class ConvPathKind {
  /// One filter per channel: DepthwiseLowering.cpp.
  Depthwise,
  /// F(m x m, 3x3) on a transformed constant filter: WinogradLowering.cpp.
  Winograd,
  /// Output channels in vectors, pixels read through an offset table.
  ChannelVectors,
  /// Pixel panels of an im2col patch matrix (or of the activation itself
  /// for a pointwise convolution).
  PixelPanels,
  /// Pixels of output rows in vectors, a block of a group's output
  /// channels in registers, no im2col: ConvRowsLowering.cpp.
  PixelRows,
  /// A BFloat16 filter: BFloat16 GEMMs per group (ConvBF16.cpp).
  BF16Gemm,
};

/// The path of one convolution and what it is estimated to cost.
struct ConvPlan {
  ConvPathKind path = ConvPathKind::PixelPanels;
  /// Winograd's output tile m (2 or 4); 0 on the other paths.
  int64_t winogradTile = 0;
  /// The row-direct path's tiling; meaningful on that path only.
  ConvRowsTiling rows;
  /// Pixel panels read the activation in place (a pointwise convolution)
  /// instead of an im2col copy.
  bool inPlace = false;
  /// Multiply-adds the convolution needs.
  int64_t macs = 0;
  /// Estimated vector multiply-adds the path issues: the useful ones over
  /// the fraction of the register tiles they fill (Winograd: the products
  /// of the transformed domain), in vectors of the target's float lanes.
  int64_t vectorMacs = 0;
  /// Bytes the path copies or transforms besides the GEMM's own reads
  /// (im2col's patch matrix, Winograd's transformed input and output).
  int64_t copyBytes = 0;
  /// BF16Gemm: the libjit kernel.
  const char *bf16Kernel = nullptr;
  /// Why this path: the rule that decided, in a few words.
  std::string reason;
};

/// The plan of \p I on the kernel target \p T (kernelTarget) under the
/// forced paths of \p opts.
ConvPlan planConv(const ConvInst &I, const TargetDesc &T,
                  const CPUCodegenOptions &opts);

/// The plan's one-line description, e.g.
/// "channel-vectors: 3.7 M vector MACs (0.96 of tiles), 0 B copied; auto: ...".
std::string describeConvPlan(const ConvPlan &P);

/// Prints one line per convolution of \p F: its name, shapes and plan.
void printConvPlans(const IRFunction &F, const TargetDesc &T,
                    const CPUCodegenOptions &opts, llvm::raw_ostream &os);

} // namespace cpu
} // namespace ember

#endif // EMBER_BACKENDS_CPU_CONVPLAN_H
