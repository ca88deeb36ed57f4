//===- ConvBF16Direct.h - Stride-1 BFloat16 convs, no patches --*- C++ -*-===//
//
// A convolution with a BFloat16 filter, stride 1 and dilation 1 on a target
// with AMX-BF16 or AVX512-BF16 reads its B operand straight from a
// zero-padded, channel-paired BFloat16 copy of its input
// (libjit/ConvBF16Direct.inc: AMX tiles; libjit/ConvBF16DirectDot.inc:
// vdpbf16ps): one conversion of the input per image instead of a patch
// matrix of KH KW times its size.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_BACKENDS_CPU_CONVBF16DIRECT_H
#define EMBER_BACKENDS_CPU_CONVBF16DIRECT_H

#include "ConvPlan.h"
#include "MatMulBF16.h"

#include <optional>

namespace ember {
namespace cpu {

/// The layout and task split of a direct BFloat16 convolution.
struct ConvBF16Direct {
  /// The product kernel: AMX tiles or vdpbf16ps (DotProduct).
  BF16MatMulKernel kernel;
  /// Input channels, and padded to the kernel's K step: whole tile rows of
  /// BFloat16 (32) on AMX, a channel pair (2) for vdpbf16ps.
  int64_t C, Cp;
  /// Virtual pixels per block of sums (AMX: two tiles, 32; vdpbf16ps: the
  /// tile's 64) and output channels per unit of the task split (AMX: a
  /// block of two tiles, 32; vdpbf16ps: the tile's 6 rows).
  int64_t pixelBlock, rowUnit;
  /// vdpbf16ps: channel pairs per K block (their reach of the copy within
  /// half of L1); AMX: the 32-channel chunks of Cp.
  int64_t kc;
  /// The input plane, the padded plane's rows and row width, the stride
  /// s (both axes), the rows and row width of each of the s x s phases of
  /// the padded plane the copy holds (padded row r s + ph, column c s + pw
  /// at phase (ph, pw), row r, column c; for s = 1, Hp x Wp), and the
  /// 32-bit words (channel pairs) of one channel pair's phases with their
  /// tail.
  int64_t H, W, Hp, Wp, s, Hs, Ws, S;
  int64_t KH, KW, OH, OW;
  /// Output channels, padded to whole tiles (16) on AMX, and the laid-out
  /// filter's row stride (KH KW Cp).
  int64_t M, Mp, lda;
  /// Output pixels walked over a phase's width (OH Ws), rounded up to a
  /// whole pixel block.
  int64_t virtualPixels;
  int64_t rowsPerTask, rowTasks, pixelsPerTask, pixelTasks;
  /// Parallel tasks of the padded copy (channel pairs split evenly).
  int64_t padTasks;
  /// vdpbf16ps with output channels in the lanes and real pixels
  /// broadcast (ember_conv_bf16_direct_cv): the filter in panels of 64
  /// channels (lda: one panel's BFloat16 values), pixelBlock the real
  /// pixels of a block of sums, rowUnit a panel, virtualPixels the real
  /// ones (OH OW).
  bool channelVector = false;
  /// BFloat16 values of the laid-out filter.
  int64_t filterElems() const {
    return channelVector ? Mp / rowUnit * lda : Mp * lda;
  }
  /// Bytes of one image's padded copy.
  uint64_t copyBytes() const { return uint64_t(Cp / 2 * S * 4); }
};

/// The direct layout of \p I on target \p T, where it applies: group 1,
/// dilation 1, the AMX or vdpbf16ps kernel for I's output channels
/// (chooseBF16MatMul; the widening kernel keeps the patch GEMM); on AMX a
/// 3x3 filter with stride 1 (the AMX kernel's taps), on vdpbf16ps any
/// filter of 2 to kConvDirectMaxTaps taps (the patch matrix copies the
/// input once per tap over the stride's square) with stride 1 or 2 on
/// both axes; and little work wasted on padding: at most a quarter of the
/// virtual pixels past the output rows (Ws - OW of every Ws), and of the
/// padded channels (Cp - C of every Cp) at most a quarter on AMX, an
/// eighth on vdpbf16ps with pixels in the lanes, a half with output
/// channels in the lanes (3-channel stems). On vdpbf16ps, output channels
/// in the lanes (channelVector) where they fill 64-lane panels better than
/// the real pixels fill the 64-pixel blocks of virtual ones. Tasks: output
/// channels split first where the filter is the larger operand, pixels
/// otherwise; a task's share of the copy within half of \p T's L2; at least
/// kConvMinTasks tasks where the blocks allow.
std::optional<ConvBF16Direct> chooseConvBF16Direct(const ConvInst &I,
                                                   const TargetDesc &T);

/// The plan planConv reports for \p I laid out as \p d.
ConvPlan planConvBF16Direct(const ConvInst &I, const ConvBF16Direct &d,
                            const TargetDesc &T);

/// Appends to \p out the kernels of \p I laid out as \p d, per image: its
/// padded copy (ember_conv_bf16_pad, or _pad_phases for stride 2, into
/// scratch), then the product and
/// epilogue (ember_conv_bf16_direct or _direct_dp); the filter is laid out
/// here, in the constant image.
void lowerConvBF16Direct(const ConvInst &I, const ConvBF16Direct &d,
                         const MatMulBF16Context &ctx,
                         std::vector<kir::Kernel> &out);

} // namespace cpu
} // namespace ember

#endif // EMBER_BACKENDS_CPU_CONVBF16DIRECT_H
