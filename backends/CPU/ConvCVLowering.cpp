//===- ConvCVLowering.cpp - Convolutions in channel-vector tiles ----------===//
//
// The channel-vector GEMM (libjit's ConvGemmCV.inc): output channels as
// vector lanes, pixels read in place through an offset table of taps, with
// no patch matrix.
//
//===----------------------------------------------------------------------===//
#include "CPULowering.h"
#include "ConvTiling.h"
#include "LibCall.h"

#include "ember/Kernel/LowerToKernel.h"

#include <algorithm>

using namespace ember;
using namespace ember::cpu;
using kir::CallArg;
using kir::ExprRef;
using kir::Kernel;

/// A non-depthwise convolution through the channel-vector GEMM (libjit's
/// ConvGemmCV.inc): the filter packed in blocks of kConvCVBlock channels,
/// the output read in tiles of kConvCVTile pixels straight from the
/// activation (or its zero-padded copy), without im2col. Per image and
/// group, tasks are (block, chunk of tiles); consecutive tasks share a
/// block's filter, and a chunk's tiles fit kConvCVTaskBytes.
void CPULowering::lowerConvCV(const ConvInst &I, std::vector<Kernel> &out) {
  auto xd = I.getInput()->getType()->dims();
  auto wd = I.getFilter()->getType()->dims();
  auto yd = I.getDest()->getType()->dims();
  auto st = I.getStrides(), pads = I.getPads(), dil = I.getDilations();
  int64_t group = I.getGroup(), M = wd[0], mPerG = M / group;
  int64_t MB = kConvCVBlock, nbg = (mPerG + MB - 1) / MB;
  int64_t C = xd[1], H = xd[2], W = xd[3], KH = wd[2], KW = wd[3];
  int64_t cPerG = C / group, K = cPerG * KH * KW;
  int64_t OH = yd[2], OW = yd[3], N = OH * OW;
  // Where tile pixels are read (see ConvGemmCV.inc): a pointwise
  // convolution reads its activation in place as one row of N pixels; any
  // other reads it along output rows at the stride -- a strided 1x1 one in
  // place (patch row k = input channel k), the rest through an offset table
  // of k = (c, kh, kw), from the activation itself when unpadded, else from
  // a zero-padded copy of each image (Hp x Wp planes).
  bool pointwise = isPointwise(I), strided = !pointwise && isStrided1x1(I);
  bool table = !pointwise && !strided;
  int64_t Hp = (OH - 1) * st[0] + (KH - 1) * dil[0] + 1;
  int64_t Wp = (OW - 1) * st[1] + (KW - 1) * dil[1] + 1;
  bool padded = table && std::any_of(pads.begin(), pads.end(),
                                     [](auto p) { return p != 0; });
  int64_t PS = padded ? Hp * Wp : H * W, RS = padded ? Wp : W;
  int64_t rowPixels = pointwise ? N : OW, rows = pointwise ? 1 : OH;
  // A stride-1 convolution whose rows fill tiles poorly (7x7 planes: half
  // of each 14-pixel tile) walks the plane flat instead: virtual pixel
  // oh * RS + ow reads every tap at a fixed offset, so tiles run across
  // rows and only the RS - OW pixels between rows are wasted.
  int64_t flatPixels = (OH - 1) * RS + OW, vw = 0;
  bool flatOk = table && st[0] == 1 && st[1] == 1;
  int64_t NT = kConvCVTile;
  double rowUse = tileUse(OW, NT);
  double flatUse = tileUse(flatPixels, NT) * double(N) / double(flatPixels);
  if (flatOk && flatUse > 1.05 * rowUse) {
    vw = RS;
    // The flat walk computes the RS - OW pixels between rows and drops them;
    // narrower tiles that fit the rows may waste less (7x7 planes: 70% of a
    // flat walk's pixels are real). A row's last tile computes only its
    // real pixels, so without a flat walk the widest tiles stay, as they
    // do the most multiply-adds per filter load. The margins 1.05 and 1.02
    // and kConvCVWidths' speeds were chosen by measurement, see
    // docs/PerformanceHistory.md#channel-vector-lowering.
    double best = flatUse;
    for (const auto &[nt, speed] : kConvCVWidths)
      if (tileUse(OW, nt) * speed > best * 1.02) {
        best = tileUse(OW, nt) * speed;
        NT = nt;
        vw = 0;
      }
  }
  if (vw) {
    rowPixels = flatPixels;
    rows = 1;
  }
  // The walk is chosen by 14-pixel tiles; 16-register targets compute those
  // strip by strip, so the widest tile there is three whole strips.
  if (!useWideKernels(target_) && NT == kConvCVTile)
    NT = kConvCVNarrowTile;
  int64_t tiles = rows * ((rowPixels + NT - 1) / NT);
  // Past kConvCVKC, libjit walks K in slices over all tiles of a call, so
  // a call may hold up to kConvCVMaxTiles of them whatever K is.
  int64_t perTask =
      K > kConvCVKC
          ? std::min(tiles, kConvCVMaxTiles)
          : std::clamp<int64_t>(
                kConvCVTaskBytes / std::max<int64_t>(1, K * NT * 4), 1, tiles);
  int64_t chunks = (tiles + perTask - 1) / perTask;
  // Tasks go pixel chunk by pixel chunk (all blocks of a chunk in a row)
  // where the filter is smaller than the input: a thread's share of a
  // team's tasks then reads part of the input and all of the (small)
  // filter, instead of all of the input; weight-heavy layers (7x7 planes)
  // keep block-major tasks, each thread streaming part of the filter
  // (docs/PerformanceHistory.md#channel-vector-lowering).
  bool pixelMajor = M * K <= C * H * W;
  if (pixelMajor)
    chunks = std::max(chunks, std::min<int64_t>(tiles, 2));
  // At least kConvCVMinTasks tasks where there are tiles for them, so that
  // a small plane with few channels still spreads over the threads.
  if (group * nbg * chunks < kConvCVMinTasks)
    chunks =
        std::min(tiles, (kConvCVMinTasks + group * nbg - 1) / (group * nbg));
  // An even number of tasks where there are few, so that two threads get
  // equal shares: MobileNetV2's 7x7 projections 960 -> 160 made 5 tasks
  // of 32 channels, three on one thread; as 10 tasks of half a block's
  // tiles each, both threads do five.
  if (int64_t tasks = group * nbg * chunks;
      tasks % 2 && tasks < kConvCVEvenTasks && chunks < tiles)
    chunks = std::min(tiles, chunks * 2);
  // A pointwise or flat walk reads consecutive pixels along one row.
  bool oneRow = pointwise || vw;
  int64_t ldp = PS, rowStride = oneRow ? 0 : st[0] * RS;
  int64_t tileStride = oneRow ? NT : NT * st[1];
  int64_t ps = oneRow ? 1 : st[1];
  uint64_t padBytes = padded ? uint64_t(C * PS * 4) : 0;
  kir::Buffer packed = packFilter(I, MB, padBytes, out);
  kir::Buffer offsets;
  if (table) {
    std::vector<int32_t> koff;
    koff.reserve(K);
    for (int64_t c = 0; c < cPerG; ++c)
      for (int64_t kh = 0; kh < KH; ++kh)
        for (int64_t kw = 0; kw < KW; ++kw)
          koff.push_back(int32_t(c * PS + kh * dil[0] * RS + kw * dil[1]));
    offsets = appendConstant(prog_.constants, koff.data(), K * 4,
                             I.getName().str() + ".koff", ElemKind::Int32);
  }
  kir::Buffer xpad{Region::Activation, patchOffset(), padBytes,
                   ElemKind::Float32, "conv.padded"};
  scratchSize_ = std::max<size_t>(scratchSize_, xpad.size);
  kir::Buffer input = kir::bufferFor(I.getInput(), plan_);
  using kir::BinOp;
  for (int64_t img = 0; img < xd[0]; ++img) {
    if (padded) {
      Kernel k((I.getName() + ".pad").str());
      unsigned d = k.addBuffer(xpad), x = k.addBuffer(input);
      unsigned c = k.newVar();
      std::vector<CallArg> args = {bufArg(d, k.mul(k.var(c), PS)),
                                   bufArg(x, k.add(k.constInt(img * C * H * W),
                                                   k.mul(k.var(c), H * W)))};
      for (int64_t v : {H, W, Hp, Wp, pads[0], pads[1]})
        args.push_back(valArg(k.constInt(v)));
      k.body() = {
          Kernel::loop(c, C, /*parallel=*/true,
                       {EMBER_LIBJIT_CALL(k, ember_pad_plane_f32, args)})};
      out.push_back(std::move(k));
    }
    Kernel k(I.getName());
    unsigned y = k.addBuffer(kir::bufferFor(I.getDest(), plan_));
    unsigned w = k.addBuffer(packed);
    unsigned p = k.addBuffer(padded ? xpad : input);
    unsigned b = k.addBuffer(kir::bufferFor(I.getBias(), plan_));
    unsigned e = k.newVar();
    ExprRef c, b0;
    if (pixelMajor) {
      // e = (g * chunks + c) * nbg + blk.
      b0 = k.rem(k.var(e), nbg);
      c = k.rem(k.div(k.var(e), nbg), chunks);
    } else {
      // e = (g * nbg + blk) * chunks + c.
      c = k.rem(k.var(e), chunks);
      b0 = k.rem(k.div(k.var(e), chunks), nbg);
    }
    ExprRef g = k.div(k.var(e), chunks * nbg);
    ExprRef t0 = k.div(k.mul(c, tiles), chunks);
    ExprRef t1 = k.div(k.add(k.mul(c, tiles), k.constInt(tiles)), chunks);
    ExprRef yOff = k.mul(k.add(k.constInt(img * M), k.mul(g, mPerG)), N);
    ExprRef pOff = k.mul(g, cPerG * PS);
    if (!padded)
      pOff = k.add(pOff, k.constInt(img * C * H * W));
    std::vector<CallArg> args = {
        bufArg(y, yOff), bufArg(w, k.mul(g, nbg * K * MB)), bufArg(p, pOff)};
    if (table)
      args.push_back(bufArg(k.addBuffer(offsets)));
    else
      args.push_back(valArg(k.constInt(0)));
    args.push_back(bufArg(b, k.mul(g, mPerG)));
    args.push_back(convResidualArg(k, I, plan_, yOff));
    for (int64_t v :
         {K, N, ldp, rowPixels, rowStride, tileStride, ps, mPerG, vw, OW, NT})
      args.push_back(valArg(k.constInt(v)));
    appendFusedActivation(k, I, args);
    for (ExprRef v : {b0, k.add(b0, k.constInt(1)), t0, t1})
      args.push_back(valArg(v));
    k.body() = {
        Kernel::loop(e, group * nbg * chunks, /*parallel=*/true,
                     {EMBER_LIBJIT_CALL(k, ember_conv_gemm_cv_f32, args)})};
    out.push_back(std::move(k));
  }
}
