//===- ConvPathRule.cpp - Pixel panels or channel vectors -----------------===//
//
// Which of the two conv GEMMs the CPU lowering runs a convolution through
// when -cpu-conv-path is auto; the measurements behind each threshold are
// kept next to it.
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

/// True when the channel-vector GEMM should run \p I (-cpu-conv-path=auto).
/// The estimate weighs the padding of both layouts (6-channel blocks and
/// 64-pixel panels, walked in 16-pixel tiles on AVX2; 32- or 16-channel
/// blocks, pixels exact). A pointwise
/// convolution reads its activation in place either way; in the
/// channel-vector layout its tiles' rows are a plane apart (~15% slower when
/// nothing is wasted), so it needs a clear gain, and large planes keep the
/// panels; a strided 1x1 one too (read at the stride, a tile's rows touch
/// twice the cache lines: ~20% slower than im2col + panels on ResNet's
/// downsample convolutions). Every other convolution saves the panels'
/// im2col copy (a KH*KW-fold copy of the input; measured 30-50% on ResNet's
/// 3x3 and 7x7 layers), so it takes the channel-vector GEMM unless its
/// channels waste much more. With 16 vector registers (8-lane kernels:
/// AVX2) the channel-vector tiles' epilogue transposes through memory, which
/// the shortest K do not amortize: 3x3 convolutions of 3 channels from
/// 224x224 took 0.45 ms in channel vectors, 0.38 in panels (Zen 3; K = 36
/// from 112x112 was faster in channel vectors).
bool preferChannelVector(const ConvInst &I, const TargetDesc &T) {
  bool wideSimd = useWideKernels(T);
  auto wd = I.getFilter()->getType()->dims();
  auto yd = I.getDest()->getType()->dims();
  int64_t N = yd[2] * yd[3], mPerG = wd[0] / I.getGroup();
  int64_t rest = mPerG % kConvCVBlock;
  int64_t cvRows = mPerG - rest + (rest > 16 ? 32 : rest > 0 ? 16 : 0);
  int64_t panelCols = wideSimd ? kConvNR : kConvNarrowNR;
  double panels = tileUse(N, panelCols) * tileUse(mPerG, kConvBlock);
  double channels = double(mPerG) / double(cvRows);
  if (!isPointwise(I) && !isStrided1x1(I))
    return channels * 1.3 > panels && (wideSimd || wd[1] * wd[2] * wd[3] >= 32);
  // With K past one pass the panels also re-read and re-write the output:
  // ResNet-50's 1x1 1024 -> 512 on 14x14 took 3.0 ms in panels, 1.3 ms in
  // channel vectors (576 -> 96 on 14x14 runs about as fast either way).
  // With more output channels than pixels the filter outweighs the input
  // and is streamed from memory, which the channel-vector GEMM prefetches
  // (squeezenet1_1's classifier 512 -> 1000 on 13x13 1.38 -> 1.18 ms,
  // ResNet-50's 256 -> 1024 on 14x14 about 0.84 -> 0.70 ms each; MobileNetV2's
  // 96 -> 576 on 14x14 ran ~7 % slower at two threads). With 16 registers
  // the panels' 6x16 tiles do better on the filter-heavy ones unless the
  // plane wastes much of its panels (Zen 3: 96 -> 576 on 14x14 0.24 ms in
  // panels, 0.30 in channel vectors; 256 -> 1024 on 14x14 1.19 against
  // 1.34; 512 -> 2048 on 7x7 1.59 against 1.35). Their waste is counted
  // in 16-pixel tiles there: counted in 64-pixel panels, 14x14 planes
  // looked filter-heavy (256 -> 1024 on 14x14 1.37 ms in channel vectors,
  // 1.20 in panels, Zen 3). A whole pass of K tips it to the channel
  // vectors again (Zen 3, interleaved runs: 512 -> 1000 on 13x13 2.33 ->
  // 2.07 ms, 512 -> 1024 on 14x14 2.82 -> 2.43; with K of 256-384 the two
  // were even, with 96 the panels 7 % faster).
  // Strided 1x1 convolutions on 16-register targets keep the panels (im2col
  // of the strided pixels) even where the filter dominates (Zen 3, ResNet-50
  // downsamples: 512 -> 1024 from 28x28 2.86 -> 2.51 ms at one thread, 1.84
  // -> 1.43 at two; 1024 -> 2048 from 14x14 3.40 -> 3.14, 2.07 -> 1.86).
  if (!wideSimd && isStrided1x1(I))
    return false;
  int64_t K = wd[1];
  bool filterHeavy =
      mPerG > N && (wideSimd || tileUse(N, panelCols) < 0.8 || K >= kConvPassK);
  if ((K > kConvPassK || filterHeavy) && N <= kConvCVMaxPixels)
    return true;
  // With 16 registers, long K on planes of 14x14 or less also favours the
  // channel vectors (Zen 3, interleaved runs on 14x14: 384 -> 64 0.122 ->
  // 0.113 ms, 480 -> 80 0.213 -> 0.183; with K = 192 the panels were 25 %
  // faster, on 28x28 even or faster).
  if (!wideSimd && K >= 384 && N <= 256)
    return true;
  return N <= kConvCVMaxPixels && channels * 0.85 > panels;
}

} // namespace cpu
} // namespace ember
