//===- Winograd.h - Winograd lowering of 3x3 convolutions ------*- C++ -*-===//
#ifndef EMBER_BACKENDS_CPU_WINOGRAD_H
#define EMBER_BACKENDS_CPU_WINOGRAD_H

#include "CPU.h"

namespace ember {
namespace cpu {

/// The output tile m of the Winograd convolution F(m x m, 3x3) for \p I (4
/// or 2), or 0 when \p I stays on im2col + GEMM. Eligible: float32, 3x3,
/// stride 1, dilation 1, one group, at least 16 input and 16 output
/// channels, Winograd not turned off (-cpu-winograd=off; f2 / f4 force the
/// tile). In auto mode a cost estimate per channel pair (GEMM columns
/// computed or transformed filter taps streamed, whichever is longer, and
/// the transforms) picks F(4x4) or F(2x2), and the direct GEMM when both
/// estimates exceed its own: F(4x4) on planes of about 14x14 and more (with
/// enough channels), F(2x2) on 7x7. On kernel targets with 16-lane kernels
/// (useWideKernels of \p T) the transforms compute 16 tiles of a row at once.
int64_t winogradTile(const ConvInst &I, const TargetDesc &T, WinogradMode mode);

/// What lowerWinogradConv needs of the CPU lowering.
struct WinogradContext {
  const MemoryPlan &plan;
  /// The constant image: the transformed filter is appended.
  std::vector<uint8_t> &constants;
  /// Where the conv scratch starts in the activation region, and its size
  /// so far (raised to what this conv needs).
  size_t scratchOffset;
  size_t &scratchSize;
};

/// Appends the kernels of \p I as F(\p tm x \p tm, 3x3) to \p out.
void lowerWinogradConv(const ConvInst &I, int64_t tm,
                       const WinogradContext &ctx,
                       std::vector<kir::Kernel> &out);

} // namespace cpu
} // namespace ember

#endif
