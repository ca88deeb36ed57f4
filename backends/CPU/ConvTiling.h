//===- ConvTiling.h - Conv GEMM tile sizes and path choice -----*- C++ -*-===//
//
// The block and tile sizes the CPU lowering packs conv filters for (those
// libjit's kernels read are LibjitABI.h's), and the rule that picks the
// pixel-panel or the channel-vector GEMM for a convolution.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_BACKENDS_CPU_CONVTILING_H
#define EMBER_BACKENDS_CPU_CONVTILING_H

#include "CPU.h"
#include "libjit/LibjitABI.h"

#include <cstdint>
#include <utility>

namespace ember {
namespace cpu {

/// a / b rounded up, for positive b (tiles, tasks and blocks of a size).
inline int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// Output channels per packed filter block (libjit's kConvMR).
inline constexpr int64_t kConvBlock = libjit::kConvMR;
/// Columns per patch panel (libjit's kConvNR).
inline constexpr int64_t kConvNR = libjit::kConvNR;
/// Columns per pixel-panel tile on 16-register targets, which walk a panel
/// in tiles of this width and skip those past its last column.
inline constexpr int64_t kConvNarrowNR = 16;
/// Patch panels per conv GEMM task (at most: a plane's panels are split
/// into an even number of equal chunks).
inline constexpr int64_t kConvChunk = 4;
/// Panels per chunk of im2col's patch matrix (the GEMM reads each panel's
/// rows at a stride of kPatchChunk * kConvNR floats).
inline constexpr int64_t kPatchChunk = 2;
/// Filter blocks per conv GEMM task (they share the task's panels).
inline constexpr int64_t kConvBlocksPerCall = 16;
/// Output channels per packed filter block of the channel-vector GEMM
/// (libjit's kConvCVMR).
inline constexpr int64_t kConvCVBlock = libjit::kConvCVMR;
/// Pixels per patch tile of the channel-vector GEMM (libjit's kConvCVNR).
inline constexpr int64_t kConvCVTile = libjit::kConvCVNR;
/// The same on 16-register targets, which walk a tile in strips of 6
/// pixels: three whole strips (a 14-pixel tile is 6 + 4 + 4, and a 4-pixel
/// strip does 8 multiply-adds per 6 loads where a 6-pixel one does 12 per
/// 8). At most 18: libjit keeps the partial sums of three strips per tile.
/// Measured against 14, see
/// docs/PerformanceHistory.md#channel-vector-lowering.
inline constexpr int64_t kConvCVNarrowTile = 18;
/// The narrower tile widths libjit's channel-vector GEMM has besides
/// kConvCVTile, with their speed per computed pixel relative to it: fewer
/// pixels do fewer multiply-adds per filter load (chosen by measurement,
/// see docs/PerformanceHistory.md#channel-vector-lowering).
inline constexpr std::pair<int64_t, double> kConvCVWidths[] = {
    {12, 0.98}, {9, 0.94}, {8, 0.92}, {7, 0.9}};
/// K slice of the channel-vector GEMM and the most tiles a call walks K
/// slice by slice (libjit's kConvCVKC, kConvCVMaxTiles).
inline constexpr int64_t kConvCVKC = libjit::kConvCVKC,
                         kConvCVMaxTiles = libjit::kConvCVMaxTiles;
/// Patch bytes one channel-vector task may read (its tiles stay in L2 while
/// it walks its filter blocks).
inline constexpr int64_t kConvCVTaskBytes = 256 << 10;
/// Tasks a channel-vector convolution is split into at least (per image).
inline constexpr int64_t kConvCVMinTasks = 4;
/// Channel-vector convolutions split into an odd number of tasks below
/// this get twice the pixel chunks (see lowerConvCV).
inline constexpr int64_t kConvCVEvenTasks = 16;
/// Pointwise convolutions on planes of more output pixels than this keep
/// the pixel-panel GEMM.
inline constexpr int64_t kConvCVMaxPixels = 1024;
/// Longest K the pixel-panel GEMM accumulates in one pass (libjit's
/// kConvKC); longer ones read and write the output once per pass.
inline constexpr int64_t kConvPassK = libjit::kConvKC;
/// Conv GEMM tasks a layer is split into at least (when it has the blocks),
/// so that a team of threads gets balanced shares.
inline constexpr int64_t kConvMinTasks = 8;
/// True for a 1x1, stride-1, unpadded convolution: its patch matrix is the
/// activation itself, so the GEMM reads it in place.
bool isPointwise(const ConvInst &I);

/// True for a 1x1 unpadded convolution with a stride (a ResNet downsample):
/// the channel-vector GEMM reads its activation at the stride, in place.
bool isStrided1x1(const ConvInst &I);

/// Fraction of the computed tile rows or columns that are real when \p n is
/// covered by tiles of \p t.
inline double tileUse(int64_t n, int64_t t) {
  return double(n) / double((n + t - 1) / t * t);
}

/// The fraction of the pixel panels' register tiles (6 channels x 64 or 16
/// pixels) that \p I's output fills.
double panelTileUse(const ConvInst &I, const TargetDesc &T);

/// The fraction of the channel-vector tiles (32- or 16-channel blocks) that
/// \p I's output channels fill.
double channelTileUse(const ConvInst &I);

/// True when the channel-vector GEMM should run \p I on kernel target \p T
/// (-cpu-conv-path=auto). \p why, if given, is set to the clause that decided,
/// in a few words.
bool preferChannelVector(const ConvInst &I, const TargetDesc &T,
                         const char **why = nullptr);

} // namespace cpu
} // namespace ember

#endif // EMBER_BACKENDS_CPU_CONVTILING_H
