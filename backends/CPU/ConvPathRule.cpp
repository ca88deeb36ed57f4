//===- ConvPathRule.cpp - Pixel panels or channel vectors -----------------===//
//
// Which of the two conv GEMMs the CPU lowering runs a convolution through
// when -cpu-conv-path is auto. The mechanisms are stated next to each
// threshold; the measurements that chose them are in
// docs/PerformanceHistory.md#conv-path-rule.
//
//===----------------------------------------------------------------------===//
#include "ConvTiling.h"

#include <algorithm>

namespace ember {
namespace cpu {

/// True for a 1x1, stride-1, unpadded convolution: its patch matrix is the
/// activation itself, so the GEMM reads it in place.
bool isPointwise(const ConvInst &I) {
  auto xd = I.getInput()->getType()->dims();
  auto wd = I.getFilter()->getType()->dims();
  auto yd = I.getDest()->getType()->dims();
  auto st = I.getStrides();
  return wd[2] == 1 && wd[3] == 1 && st[0] == 1 && st[1] == 1 &&
         yd[2] == xd[2] && yd[3] == xd[3] && I.getPads()[0] == 0 &&
         I.getPads()[1] == 0;
}

/// True for a 1x1 unpadded convolution with a stride (a ResNet downsample):
/// the channel-vector GEMM reads its activation at the stride, in place.
bool isStrided1x1(const ConvInst &I) {
  auto wd = I.getFilter()->getType()->dims();
  auto pads = I.getPads();
  return wd[2] == 1 && wd[3] == 1 && !isPointwise(I) &&
         std::all_of(pads.begin(), pads.end(), [](auto p) { return p == 0; });
}

double panelTileUse(const ConvInst &I, const TargetDesc &T) {
  auto wd = I.getFilter()->getType()->dims();
  auto yd = I.getDest()->getType()->dims();
  int64_t panelCols = useWideKernels(T) ? kConvNR : kConvNarrowNR;
  return tileUse(yd[2] * yd[3], panelCols) *
         tileUse(wd[0] / I.getGroup(), kConvBlock);
}

double channelTileUse(const ConvInst &I) {
  int64_t mPerG = I.getFilter()->getType()->dims()[0] / I.getGroup();
  int64_t rest = mPerG % kConvCVBlock;
  int64_t cvRows = mPerG - rest + (rest > 16 ? 32 : rest > 0 ? 16 : 0);
  return double(mPerG) / double(cvRows);
}

/// True when the channel-vector GEMM should run \p I (-cpu-conv-path=auto).
/// The estimate weighs the padding of both layouts (6-channel blocks and
/// 64-pixel panels, walked in 16-pixel tiles on AVX2; 32- or 16-channel
/// blocks, pixels exact). A pointwise convolution reads its activation in
/// place either way; in the channel-vector layout its tiles' rows are a
/// plane apart, each in cache lines of its own, so it needs a clear gain
/// and large planes keep the panels; a strided 1x1 one too (read at the
/// stride, a tile's rows touch twice the cache lines). Every other
/// convolution saves the panels' im2col copy (a KH*KW-fold copy of the
/// input), so it takes the channel-vector GEMM unless its channels waste
/// much more. With 16 vector registers (8-lane kernels: AVX2) the
/// channel-vector tiles' epilogue transposes through memory, which the
/// shortest K (under 32: a 3-channel 3x3 stem) do not amortize. The
/// weights 1.3 and 0.85 and the bounds below were chosen by measurement,
/// see docs/PerformanceHistory.md#conv-path-rule.
bool preferChannelVector(const ConvInst &I, const TargetDesc &T,
                         const char **why) {
  const char *unused;
  const char *&reason = why ? *why : unused;
  bool wideSimd = useWideKernels(T);
  auto wd = I.getFilter()->getType()->dims();
  auto yd = I.getDest()->getType()->dims();
  int64_t N = yd[2] * yd[3], mPerG = wd[0] / I.getGroup();
  int64_t panelCols = wideSimd ? kConvNR : kConvNarrowNR;
  double panels = panelTileUse(I, T), channels = channelTileUse(I);
  if (!isPointwise(I) && !isStrided1x1(I)) {
    if (!wideSimd && wd[1] * wd[2] * wd[3] < 32) {
      reason = "K under 32 with 16 registers does not amortize the "
               "channel-vector epilogue";
      return false;
    }
    reason = "no im2col copy unless channel tiles waste 1.3x the panels'";
    return channels * 1.3 > panels;
  }
  // With K past one pass the panels also re-read and re-write the output
  // once per pass, where the channel-vector GEMM keeps the whole K in
  // registers. With more output channels than pixels the filter outweighs
  // the input and is streamed from memory, which the channel-vector GEMM
  // prefetches. With 16 registers the panels' 6x16 tiles do better on the
  // filter-heavy ones unless the plane wastes much of its panels; their
  // waste is counted in 16-pixel tiles there (counted in 64-pixel panels,
  // 14x14 planes looked filter-heavy). A whole pass of K tips it to the
  // channel vectors again. Strided 1x1 convolutions on 16-register targets
  // keep the panels (im2col of the strided pixels) even where the filter
  // dominates. Chosen by measurement, see
  // docs/PerformanceHistory.md#conv-path-rule.
  if (!wideSimd && isStrided1x1(I)) {
    reason = "strided 1x1 with 16 registers keeps the panels";
    return false;
  }
  int64_t K = wd[1];
  bool filterHeavy =
      mPerG > N && (wideSimd || tileUse(N, panelCols) < 0.8 || K >= kConvPassK);
  if ((K > kConvPassK || filterHeavy) && N <= kConvCVMaxPixels) {
    reason = K > kConvPassK ? "K past one pass of the panels"
                            : "filter outweighs the input";
    return true;
  }
  // With 16 registers, long K on planes of 14x14 or less also favours the
  // channel vectors (K from 384 and N up to 256 chosen by measurement, see
  // docs/PerformanceHistory.md#conv-path-rule).
  if (!wideSimd && K >= 384 && N <= 256) {
    reason = "long K on a small plane with 16 registers";
    return true;
  }
  reason = N > kConvCVMaxPixels ? "large plane read in place by the panels"
                                : "1x1: channel tiles need a clear gain "
                                  "(0.85x) over the panels";
  return N <= kConvCVMaxPixels && channels * 0.85 > panels;
}

} // namespace cpu
} // namespace ember
