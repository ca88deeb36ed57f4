//===- ConvGemmLowering.cpp - Convolution plans to kernels, pixel panels --===//
//
// lowerConv emits the plan planConv picks (ConvPlan.h). The pixel-panel
// GEMM is emitted here: the filter packed in blocks of kConvBlock output
// channels (packFilter, shared with the channel-vector path), the patch
// matrix in 64-pixel panels written by im2col kernels or by the GEMM
// tasks themselves, or the activation itself for a pointwise convolution.
//
//===----------------------------------------------------------------------===//
#include "CPULowering.h"
#include "ConvBF16.h"
#include "ConvPlan.h"
#include "ConvTiling.h"
#include "LibCall.h"

#include "Winograd.h"
#include "ember/Kernel/LowerToKernel.h"

#include <algorithm>
#include <cstring>

using namespace ember;
using namespace ember::cpu;
using kir::CallArg;
using kir::ExprRef;
using kir::Kernel;

/// Re-lays the filter [M][C/g][KH][KW] out as blocks of MB output channels,
/// [g][block][C/g][KH][KW][MB], zero-padding partial blocks. A constant
/// filter is packed here, into the constant image (replacing the original
/// when only this conv reads it and it fits); a filter computed at run time
/// (a graph input, say) is packed by a kernel appended to \p out, into
/// scratch after the conv's own \p scratchUsed bytes.
kir::Buffer CPULowering::packFilter(const ConvInst &I, int64_t MB,
                                    uint64_t scratchUsed,
                                    std::vector<Kernel> &out) {
  Value *filter = I.getFilter();
  auto wd = filter->getType()->dims();
  int64_t M = wd[0], cPerG = wd[1], KH = wd[2], KW = wd[3];
  int64_t group = I.getGroup(), mPerG = M / group;
  int64_t nbg = (mPerG + MB - 1) / MB, K = cPerG * KH * KW;
  uint64_t at = alignTo64(scratchUsed), bytes = group * nbg * K * MB * 4;
  kir::Buffer scratch{Region::Activation, patchOffset() + at, bytes,
                      ElemKind::Float32, "conv.filter.packed"};
  WeightVar *narrow = narrow_.source(filter);
  if (!hasConstantFilter(I) && !narrow) {
    kir::Buffer packed = scratch;
    scratchSize_ = std::max<size_t>(scratchSize_, at + bytes);
    using kir::BinOp;
    Kernel k((I.getName() + ".pack").str());
    unsigned d = k.addBuffer(packed);
    unsigned src = k.addBuffer(kir::bufferFor(filter, plan_));
    // e = ((g * nbg + blk) * K + k) * MB + lane.
    unsigned e = k.newVar();
    ExprRef lane = k.rem(k.var(e), MB), kk = k.rem(k.div(k.var(e), MB), K);
    ExprRef gb = k.div(k.var(e), MB * K);
    ExprRef mg = k.add(k.mul(k.rem(gb, nbg), MB), lane); // channel in group
    ExprRef real = k.binary(BinOp::Lt, mg, k.constInt(mPerG));
    ExprRef m = k.add(k.mul(k.div(gb, nbg), mPerG),
                      k.binary(BinOp::Min, mg, k.constInt(mPerG - 1)));
    ExprRef v =
        k.select(real, k.load(src, k.add(k.mul(m, K), kk)), k.constFloat(0));
    k.body() = {Kernel::loop(e, group * nbg * K * MB, /*parallel=*/true,
                             {Kernel::store(d, k.var(e), v)})};
    out.push_back(std::move(k));
    return packed;
  }
  std::vector<float> packed(size_t(group * nbg * K * MB), 0.f);
  kir::Buffer src = kir::bufferFor(filter, plan_);
  std::vector<float> wide;
  const float *w =
      floatConstantValues(src, narrow, plan_, prog_.constants, wide);
  for (int64_t m = 0; m < M; ++m) {
    int64_t g = m / mPerG, blk = g * nbg + (m % mPerG) / MB;
    int64_t lane = m % mPerG % MB;
    for (int64_t k = 0; k < K; ++k)
      packed[(blk * K + k) * MB + lane] = w[m * K + k];
  }
  std::string name = filter->getName().str() + ".packed";
  if (narrow)
    return packedNarrow(packed, narrow, scratch, name, out);
  if (readers_.lookup(getOrigin(filter)) != 1 || bytes > src.size)
    return appendConstant(prog_.constants, packed.data(), bytes, name);
  std::memcpy(prog_.constants.data() + src.offset, packed.data(), bytes);
  return kir::Buffer{Region::Constant, src.offset, bytes, ElemKind::Float32,
                     name};
}

/// \p packed (a packing of the 16-bit weight \p src's values) stored in
/// \p src's type: returned as such where the kernel widens it itself
/// (\p inKernel); else the kernel appended to \p out widens it into
/// \p scratch before each run, which is returned: the float32 kernels
/// read it as they read a packed constant.
kir::Buffer CPULowering::packedNarrow(const std::vector<float> &packed,
                                      WeightVar *src,
                                      const kir::Buffer &scratch,
                                      llvm::StringRef name,
                                      std::vector<Kernel> &out, bool inKernel) {
  kir::Buffer narrow = appendNarrowConstant(
      prog_.constants, packed, src->getType()->getElemKind(), name.str());
  if (inKernel)
    return narrow;
  out.push_back(widenKernel(name.str() + ".widen", narrow, scratch));
  scratchSize_ = std::max<size_t>(scratchSize_, scratch.offset - patchOffset() +
                                                    scratch.size);
  return scratch;
}

/// The im2col kernel of image \p img: one libjit call per input channel
/// (parallel) writes that channel's rows of its group's patch matrix,
/// P_g[(c*KH + kh)*KW + kw][oh*OW + ow] = x[img][g*C/g + c][ih][iw],
/// in chunks of \p cw columns, [numCols / cw][K][cw], zero-filled from N to
/// \p numCols (a multiple of cw).
Kernel CPULowering::im2col(const ConvInst &I, int64_t img,
                           const kir::Buffer &patches, int64_t cw,
                           int64_t numCols) {
  auto xd = I.getInput()->getType()->dims();
  auto wd = I.getFilter()->getType()->dims();
  int64_t C = xd[1], H = xd[2], W = xd[3], KH = wd[2], KW = wd[3];
  int64_t cPerG = C / I.getGroup(), K = cPerG * KH * KW;
  Kernel k((I.getName() + ".im2col").str());
  unsigned x = k.addBuffer(kir::bufferFor(I.getInput(), plan_));
  unsigned p = k.addBuffer(patches);
  unsigned c = k.newVar();
  using kir::BinOp;
  ExprRef g = k.div(k.var(c), cPerG);
  ExprRef cg = k.rem(k.var(c), cPerG);
  int64_t chunks = numCols / cw;
  std::vector<CallArg> args = {
      bufArg(p, k.mul(g, chunks * K * cw)),
      bufArg(x, k.add(k.constInt(img * C * H * W), k.mul(k.var(c), H * W))),
      valArg(k.mul(cg, KH * KW))};
  for (int64_t v : {cw, K * cw, numCols})
    args.push_back(valArg(k.constInt(v)));
  appendPatchGeometry(I, k, args);
  k.body() = {Kernel::loop(c, C, /*parallel=*/true,
                           {EMBER_LIBJIT_CALL(k, ember_im2col_f32, args)})};
  return k;
}

/// libjit's im2col arguments after the destination ones: H, W, KH, KW, OH,
/// OW, strides, leading pads and dilations of \p I.
void CPULowering::appendPatchGeometry(const ConvInst &I, Kernel &k,
                                      std::vector<CallArg> &args) {
  auto xd = I.getInput()->getType()->dims();
  auto wd = I.getFilter()->getType()->dims();
  auto yd = I.getDest()->getType()->dims();
  auto st = I.getStrides(), pads = I.getPads(), dil = I.getDilations();
  for (int64_t v : {xd[2], xd[3], wd[2], wd[3], yd[2], yd[3], st[0], st[1],
                    pads[0], pads[1], dil[0], dil[1]})
    args.push_back(valArg(k.constInt(v)));
}

/// The plan planConv picks for \p I, emitted.
void CPULowering::lowerConv(const ConvInst &I, std::vector<Kernel> &out) {
  ConvPlan plan = planConv(I, target_, opts_);
  // The row path reads the filter unpacked: it gets it widened, as the Cast
  // that NarrowWeights absorbed would have; the others pack it (packFilter,
  // lowerDepthwiseConv).
  WeightVar *narrow = narrow_.source(I.getFilter());
  if (narrow && plan.path == ConvPathKind::PixelRows)
    out.push_back(widenKernel((I.getName() + ".widen").str(),
                              kir::bufferFor(narrow, plan_),
                              kir::bufferFor(I.getFilter(), plan_)));
  switch (plan.path) {
  case ConvPathKind::Depthwise: {
    DepthwiseContext ctx = dwContext();
    ctx.narrow = narrow;
    ctx.pre = &out;
    Kernel k = lowerDepthwiseConv(I, ctx);
    out.push_back(std::move(k));
    return;
  }
  case ConvPathKind::Winograd:
    lowerWinogradConv(I, plan.winogradTile,
                      {plan_, prog_.constants, patchOffset(), scratchSize_},
                      out);
    return;
  case ConvPathKind::ChannelVectors:
    lowerConvCV(I, out);
    return;
  case ConvPathKind::PixelRows:
    lowerConvRows(I, plan.rows, plan_, out);
    return;
  case ConvPathKind::BF16Gemm:
    lowerConvBF16(
        I,
        {plan_, prog_.constants, target_, patchOffset(), scratchSize_, &bf16_},
        out);
    return;
  case ConvPathKind::PixelPanels:
    lowerConvPanels(I, out);
    return;
  }
}

/// The pixel-panel GEMM of \p I (see the file comment).
void CPULowering::lowerConvPanels(const ConvInst &I, std::vector<Kernel> &out) {
  auto xd = I.getInput()->getType()->dims();
  auto wd = I.getFilter()->getType()->dims();
  auto yd = I.getDest()->getType()->dims();
  int64_t group = I.getGroup(), M = wd[0], mPerG = M / group;
  int64_t MB = kConvBlock, nbg = (mPerG + MB - 1) / MB;
  int64_t K = xd[1] / group * wd[2] * wd[3];
  int64_t N = yd[2] * yd[3], numPanels = (N + kConvNR - 1) / kConvNR;
  // An even number of equal chunks, so that two threads split them evenly
  // (ResNet-50's 1x1 256 -> 64 on 56x56: 13 chunks of 8 panels left one
  // thread 7 of them; 14 chunks of 7 panels split 7 + 7).
  int64_t chunks = (numPanels + kConvChunk - 1) / kConvChunk;
  if (chunks > 1 && chunks % 2 && chunks < numPanels)
    ++chunks;
  // Calls per group along M, each covering about kConvBlocksPerCall blocks,
  // but fewer blocks when that leaves fewer than kConvMinTasks tasks (a
  // 14x14 pointwise conv to 64 channels was one task: one thread did it all).
  int64_t nbc = (nbg + kConvBlocksPerCall - 1) / kConvBlocksPerCall;
  nbc = std::min(nbg, std::max(nbc, (kConvMinTasks + chunks * group - 1) /
                                        (chunks * group)));
  // An even number of tasks, so that two threads split them evenly
  // (ResNet-50's 1x1 256 -> 1024 on 14x14 made 11 tasks of one chunk; one
  // thread did 6 of them).
  if (chunks * group * nbc % 2 && nbc < nbg)
    ++nbc;
  bool direct = isPointwise(I);
  // When one task covers all of a chunk's filter blocks, it writes the
  // chunk's panels itself, [K][maxPanels * 64] in a slot of its own, just
  // before it reads them from cache (MobileNetV2's 3 -> 32 stem on 224x224:
  // a separate im2col wrote 1.35 MB that the GEMM read back, split over
  // only 3 input channels).
  bool own = !direct && nbc == 1;
  int64_t maxPanels = (numPanels + chunks - 1) / chunks;
  // The patch matrix: the activation itself for a pointwise convolution
  // (one chunk of panels; only its last partial panel is copied), the
  // tasks' own panels, or else im2col's copy in chunks of kPatchChunk
  // panels.
  int64_t ldp = direct ? N : (own ? maxPanels : kPatchChunk) * kConvNR;
  int64_t panelsPerChunk = direct || own ? numPanels : kPatchChunk;
  int64_t chunkStride = direct || own ? 0 : K * ldp;
  int64_t groupStride =
      direct ? K * N : (numPanels + kPatchChunk - 1) / kPatchChunk * K * ldp;
  int64_t slot = K * ldp;
  uint64_t scratch = direct ? 0
                     : own  ? chunks * group * slot * 4
                            : groupStride * group * 4;
  kir::Buffer packed = packFilter(I, MB, scratch, out);
  kir::Buffer patches{Region::Activation, patchOffset(), scratch,
                      ElemKind::Float32, "conv.patches"};
  scratchSize_ = std::max<size_t>(scratchSize_, patches.size);
  using kir::BinOp;
  for (int64_t img = 0; img < xd[0]; ++img) {
    if (!direct && !own)
      out.push_back(
          im2col(I, img, patches, kPatchChunk * kConvNR, groupStride / K));
    Kernel k(I.getName());
    unsigned y = k.addBuffer(kir::bufferFor(I.getDest(), plan_));
    unsigned w = k.addBuffer(packed);
    unsigned p =
        k.addBuffer(direct ? kir::bufferFor(I.getInput(), plan_) : patches);
    unsigned b = k.addBuffer(kir::bufferFor(I.getBias(), plan_));
    // e = (chunk * group + g) * nbc + bc: consecutive tasks share a chunk
    // of panels.
    unsigned e = k.newVar();
    ExprRef bc = k.rem(k.var(e), nbc);
    ExprRef g = k.rem(k.div(k.var(e), nbc), group);
    ExprRef ch = k.div(k.var(e), nbc * group);
    ExprRef t0 = k.div(k.mul(ch, numPanels), chunks);
    ExprRef t1 =
        k.div(k.add(k.mul(ch, numPanels), k.constInt(numPanels)), chunks);
    ExprRef b0 = k.div(k.mul(bc, nbg), nbc);
    ExprRef b1 = k.div(k.add(k.mul(bc, nbg), k.constInt(nbg)), nbc);
    ExprRef yOff = k.mul(k.add(k.constInt(img * M), k.mul(g, mPerG)), N);
    ExprRef pOff = k.mul(g, groupStride);
    if (direct)
      pOff = k.add(pOff, k.constInt(img * xd[1] * N));
    // An own slot (e < chunks * group): panel t at slot + (t - t0) * 64,
    // which stays inside the buffer since t0 <= ch * maxPanels <= e * slot.
    ExprRef slotOff = k.mul(k.var(e), slot);
    if (own)
      pOff = k.add(slotOff, k.mul(t0, -kConvNR));
    std::vector<CallArg> args = {
        bufArg(y, yOff), bufArg(w, k.mul(g, nbg * K * MB)), bufArg(p, pOff)};
    args.push_back(bufArg(b, k.mul(g, mPerG)));
    args.push_back(convResidualArg(k, I, plan_, yOff));
    for (int64_t v : {K, N, ldp, panelsPerChunk, chunkStride, mPerG})
      args.push_back(valArg(k.constInt(v)));
    appendFusedActivation(k, I, args);
    for (ExprRef v : {b0, b1, t0, t1})
      args.push_back(valArg(v));
    // No prefetch of the next block's filter: each block is reused over a
    // chunk of panels (with the prefetch it measured slower, see
    // docs/PerformanceHistory.md#panel-lowering).
    args.push_back(valArg(k.constInt(0)));
    std::vector<kir::Stmt> body;
    if (own) {
      int64_t cPerG = xd[1] / group, plane = xd[2] * xd[3];
      std::vector<CallArg> pa = {
          bufArg(p, slotOff),
          valArg(k.constInt(ldp)),
          bufArg(
              k.addBuffer(kir::bufferFor(I.getInput(), plan_)),
              k.add(k.constInt(img * xd[1] * plane), k.mul(g, cPerG * plane))),
          valArg(k.constInt(cPerG)),
          valArg(k.mul(t0, kConvNR)),
          valArg(k.mul(t1, kConvNR))};
      appendPatchGeometry(I, k, pa);
      body.push_back(EMBER_LIBJIT_CALL(k, ember_im2col_cols_f32, pa));
    }
    body.push_back(EMBER_LIBJIT_CALL(k, ember_conv_gemm_f32, args));
    k.body() = {Kernel::loop(e, chunks * group * nbc, /*parallel=*/true,
                             std::move(body))};
    out.push_back(std::move(k));
  }
}
