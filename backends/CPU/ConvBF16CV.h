//===- ConvBF16CV.h - Channel-vector BFloat16 convolutions -----*- C++ -*-===//
//
// A convolution with a BFloat16 filter on vdpbf16ps that the direct
// kernels do not take (1x1 filters, dilations, ...) and whose pixels fill
// the 64-pixel panels of the patch GEMM (ConvBF16.cpp) worse than its
// output channels fill 64-channel panels, or 48-channel ones where those
// fill more (ResNet's 1x1 layers on 28 x 28 and smaller, MobileNet-V2's
// 96-channel ones) runs with output channels in the vector lanes and pixels
// broadcast (libjit/ConvBF16CV.inc): the input is converted once per image
// into transposed, channel-paired patch rows, the filter laid out at
// compile time in panels of output channels. (The direct kernel has its
// own channel-lane form, ConvBF16Direct.h.)
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_BACKENDS_CPU_CONVBF16CV_H
#define EMBER_BACKENDS_CPU_CONVBF16CV_H

#include "ConvPlan.h"
#include "MatMulBF16.h"

#include <optional>

namespace ember {
namespace cpu {

/// The layout and task split of a channel-vector BFloat16 convolution.
struct ConvBF16CV {
  /// Output channels, patch rows (C KH KW) and their pairs, output pixels.
  int64_t M, K, kp, N;
  /// Output channels per panel (the tile's vectors times the lanes, or
  /// kConvBF16CVNarrowV's where that leaves fewer lanes idle), the panels
  /// of M, and the K block in pairs (chooseMatMulTiling's).
  int64_t nr, panels, kc;
  int64_t panelsPerTask, panelTasks, pixelsPerTask, pixelTasks;
  /// Parallel tasks of the transposed patch rows (16-pixel groups split
  /// evenly).
  int64_t packTasks;
  /// Bytes of one image's patch rows: N rounded up to 16 rows of kp words.
  uint64_t copyBytes() const { return uint64_t((N + 15) / 16 * 16 * kp * 4); }
};

/// The fraction of the lanes a kernel computes that are output values:
/// channels M of the panels' lanes (channel-vector), pixels N of the
/// panels' (patch GEMM) or of the direct kernel's virtual pixels.
double laneUse(int64_t useful, int64_t computed);

/// The channel-vector layout of \p I on target \p T, where it applies:
/// group 1, the vdpbf16ps kernel for I's output channels
/// (chooseBF16MatMul), a plane small enough for libjit's 32-bit lane
/// offsets, and its channels' lane use above \p otherUse, the lane use of
/// the patch GEMM's pixel panels (laneUse).
/// Tasks: channel panels split first, then pixels, at least kConvMinTasks
/// where they allow, a task's patch rows within half of \p T's L2.
std::optional<ConvBF16CV>
chooseConvBF16CV(const ConvInst &I, const TargetDesc &T, double otherUse);

/// The plan planConv reports for \p I laid out as \p cv.
ConvPlan planConvBF16CV(const ConvInst &I, const ConvBF16CV &cv,
                        const TargetDesc &T);

/// Appends to \p out the kernels of \p I laid out as \p cv, per image: its
/// patch rows (ember_conv_bf16_cv_pack, into scratch), then the product
/// and epilogue (ember_conv_bf16_cv_dp); the filter is laid out here, in
/// the constant image.
void lowerConvBF16CV(const ConvInst &I, const ConvBF16CV &cv,
                     const MatMulBF16Context &ctx,
                     std::vector<kir::Kernel> &out);

} // namespace cpu
} // namespace ember

#endif // EMBER_BACKENDS_CPU_CONVBF16CV_H
