//===- ConvBF16Direct.cpp - Stride-1 BFloat16 convolutions, no patches ----===//
#include "ConvBF16Direct.h"

#include "ConvBF16CV.h"

#include "CPU.h"
#include "ConvBF16.h"
#include "ConvTiling.h"

#include "ember/Kernel/LowerToKernel.h"

#include "glog/logging.h"

#include "llvm/Support/raw_ostream.h"

#include <algorithm>

using namespace ember;
using namespace ember::cpu;
using kir::CallArg;
using kir::ExprRef;
using kir::Kernel;

namespace {
int64_t roundUp(int64_t a, int64_t b) { return ceilDiv(a, b) * b; }

/// BFloat16 values in one tile row (64 bytes), and a block's tiles of rows
/// and of columns (MatMulAMX.inc's 2 x 2 block of 16 x 16 sums).
constexpr int64_t kTileK = kAMXTileBytes / 2, kBlock = 2 * kAMXTileRows;
} // namespace

/// How far past a virtual pixel its taps read within one phase of the
/// copy, in words: (KH - 1) / s rows and (KW - 1) / s columns.
static int64_t tapReach(const ConvBF16Direct &d) {
  return (d.KH - 1) / d.s * d.Ws + (d.KW - 1) / d.s;
}

/// The task split of \p d (see chooseConvBF16Direct).
static void splitTasks(ConvBF16Direct &d, const TargetDesc &T) {
  int64_t rowBlocks = ceilDiv(d.M, d.rowUnit);
  int64_t pixelBlocks = ceilDiv(d.virtualPixels, d.pixelBlock);
  bool filterLarger = d.filterElems() * 2 > int64_t(d.copyBytes());
  int64_t rowTasks = 1, pixelTasks = 1;
  if (filterLarger) {
    rowTasks = std::min(rowBlocks, kConvMinTasks);
  } else {
    // A task reads its pixels' share of each phase of the copy and the
    // taps' reach past it, per channel pair.
    int64_t pairBytes = d.Cp / 2 * d.s * d.s * 4;
    int64_t reach = tapReach(d) + 1;
    int64_t fit = std::max<int64_t>(
        d.pixelBlock, (int64_t(T.l2Bytes / 2) / pairBytes - reach) /
                          d.pixelBlock * d.pixelBlock);
    pixelTasks = std::max(ceilDiv(d.virtualPixels, fit),
                          std::min(pixelBlocks, kConvMinTasks));
    if (pixelTasks < kConvMinTasks)
      rowTasks = std::min(rowBlocks, ceilDiv(kConvMinTasks, pixelTasks));
  }
  d.rowsPerTask = ceilDiv(rowBlocks, rowTasks) * d.rowUnit;
  d.rowTasks = ceilDiv(d.M, d.rowsPerTask);
  d.pixelsPerTask = ceilDiv(pixelBlocks, pixelTasks) * d.pixelBlock;
  d.pixelTasks = ceilDiv(d.virtualPixels, d.pixelsPerTask);
  d.padTasks = std::min(d.Cp / 2, kConvMinTasks);
}

/// The kernel's steps for \p d.kernel on \p T: AMX reads 32 channels and
/// 2 x 2 tiles at a time; vdpbf16ps one channel pair and the 16-lane tile
/// libjit instantiates (kMatMulWideMR rows, kMatMulWideV vectors of
/// virtual pixels), with K blocks of pairs whose lines of the copy (the
/// block's pixels and the taps' reach) take at most half of L1.
static void chooseSteps(ConvBF16Direct &d, const TargetDesc &T) {
  if (d.kernel == BF16MatMulKernel::AMX) {
    d.Cp = roundUp(d.C, kTileK);
    d.pixelBlock = d.rowUnit = kBlock;
    d.Mp = roundUp(d.M, kAMXTileRows);
    d.kc = d.Cp / kTileK;
    return;
  }
  d.Cp = roundUp(d.C, 2);
  int64_t lanes = libjit::kMatMulWideV * int64_t(T.floatLanes());
  int64_t l1 = T.l1dBytes ? int64_t(T.l1dBytes) : 32 << 10;
  if (d.channelVector) {
    // K blocks whose panel slice (a tap's 64 words per pair) takes at most
    // half of L1.
    d.pixelBlock = libjit::kConvBF16CVPixels;
    d.rowUnit = lanes;
    d.Mp = roundUp(d.M, lanes);
    d.kc = std::clamp<int64_t>(l1 / 2 / (d.KH * d.KW * lanes * 4), 1, d.Cp / 2);
    return;
  }
  d.pixelBlock = lanes;
  d.rowUnit = libjit::kMatMulWideMR;
  d.Mp = d.M;
  int64_t pairBytes = d.s * d.s * (d.pixelBlock + tapReach(d)) * 4;
  d.kc = std::clamp<int64_t>(l1 / 2 / pairBytes, 1, d.Cp / 2);
}

/// Whether the vdpbf16ps direct layout \p d puts output channels in the
/// lanes: where they fill 64-lane panels better than the virtual pixels
/// (OH Ws, in 64-pixel blocks) hold real ones.
static bool channelLanes(const ConvBF16Direct &d, const TargetDesc &T) {
  int64_t lanes = libjit::kMatMulWideV * int64_t(T.floatLanes());
  return d.kernel == BF16MatMulKernel::DotProduct &&
         laneUse(d.M, roundUp(d.M, lanes)) >
             laneUse(d.OH * d.OW, roundUp(d.OH * d.Ws, lanes));
}

std::optional<ConvBF16Direct> cpu::chooseConvBF16Direct(const ConvInst &I,
                                                        const TargetDesc &T) {
  auto xd = I.getInput()->getType()->dims();
  auto wd = I.getFilter()->getType()->dims();
  auto yd = I.getDest()->getType()->dims();
  auto st = I.getStrides(), dil = I.getDilations(), pads = I.getPads();
  if (I.getGroup() != 1 || dil[0] != 1 || dil[1] != 1 || st[0] != st[1])
    return std::nullopt;
  ConvBF16Direct d;
  d.M = int64_t(wd[0]);
  d.kernel = chooseBF16MatMul(T, d.M).kernel;
  int64_t taps = int64_t(wd[2] * wd[3]);
  if (d.kernel == BF16MatMulKernel::Widen ||
      (d.kernel == BF16MatMulKernel::AMX &&
       (st[0] != 1 || wd[2] != 3 || wd[3] != 3)) ||
      st[0] > 2 || taps < 2 || taps > libjit::kConvDirectMaxTaps)
    return std::nullopt;
  d.s = st[0];
  d.C = int64_t(xd[1]), d.H = int64_t(xd[2]), d.W = int64_t(xd[3]);
  d.KH = int64_t(wd[2]), d.KW = int64_t(wd[3]);
  d.OH = int64_t(yd[2]), d.OW = int64_t(yd[3]);
  d.Hp = d.H + pads[0] + pads[2];
  d.Wp = d.W + pads[1] + pads[3];
  d.Hs = ceilDiv(d.Hp, d.s), d.Ws = ceilDiv(d.Wp, d.s);
  d.channelVector = channelLanes(d, T);
  chooseSteps(d, T);
  // Virtual pixels past the rows cost what the patch GEMM's partial panels
  // do; padded channels are work it does not have (it pads C KH KW to a
  // pair only). The pixel-lane vdpbf16ps kernel, which pays for the patch
  // copy less than AMX, takes at most an eighth of them; the channel-lane
  // one, which computes no virtual pixels and whose copy (C H W values)
  // replaces patches of C KH KW values per pixel, takes up to half (a
  // 3-channel stem with 64 or more output channels).
  int64_t channelShare = d.kernel == BF16MatMulKernel::AMX ? 4
                         : d.channelVector                 ? 2
                                                           : 8;
  if (4 * (d.Ws - d.OW) > d.Ws || channelShare * (d.Cp - d.C) > d.Cp)
    return std::nullopt;
  // The last block's taps read up to a block past the last phase.
  d.S = roundUp(d.s * d.s * d.Hs * d.Ws + (d.KW - 1) / d.s + d.pixelBlock, 16);
  d.lda = d.KH * d.KW * d.Cp;
  d.virtualPixels = roundUp(d.OH * d.Ws, d.pixelBlock);
  if (d.channelVector) {
    d.lda *= d.rowUnit;
    d.virtualPixels = d.OH * d.OW;
  }
  splitTasks(d, T);
  return d;
}

/// The libjit kernel of \p d's product.
static LibKernel directEntry(const ConvBF16Direct &d) {
  if (d.kernel == BF16MatMulKernel::AMX)
    return EMBER_LIBJIT_KERNEL(ember_conv_bf16_direct);
  if (d.channelVector)
    return EMBER_LIBJIT_KERNEL(ember_conv_bf16_direct_cv);
  return EMBER_LIBJIT_KERNEL(ember_conv_bf16_direct_dp);
}

ConvPlan cpu::planConvBF16Direct(const ConvInst &I, const ConvBF16Direct &d,
                                 const TargetDesc &T) {
  int64_t images = int64_t(I.getInput()->getType()->dims()[0]);
  ConvPlan P;
  P.path = ConvPathKind::BF16Gemm;
  P.bf16Kernel = directEntry(d).name;
  P.macs = images * d.M * d.C * d.KH * d.KW * d.OH * d.OW;
  P.vectorMacs = P.macs / std::max<int64_t>(1, 2 * T.floatLanes());
  P.copyBytes = images * int64_t(d.copyBytes());
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "BFloat16 filter, B read from a padded copy (" << d.Cp << " x " << d.Hp
     << " x " << d.Wp;
  if (d.s > 1)
    os << " in " << d.s * d.s << " phases of " << d.Hs << " x " << d.Ws;
  os << "); tasks of " << d.pixelsPerTask << " pixels x " << d.rowsPerTask
     << " channels";
  if (d.channelVector)
    os << ", output channels in the lanes";
  if (d.kernel != BF16MatMulKernel::AMX)
    os << ", K blocks of " << d.kc << " channel pairs";
  P.reason = os.str();
  return P;
}

/// Where filter element (m, c, tap) goes in the kernel's A: AMX's tile
/// columns are 32 channels of one tap, [Mp][KH KW][Cp]; vdpbf16ps
/// broadcasts one channel pair of one tap and walks all taps of a pair
/// before the next, [M][Cp / 2][KH KW][2]; with channels in the lanes, a
/// panel's 64 channels are its vector of one pair and tap, [Mp / 64][Cp /
/// 2][KH KW][64][2].
static int64_t filterAt(const ConvBF16Direct &d, int64_t m, int64_t c,
                        int64_t tap) {
  if (d.kernel == BF16MatMulKernel::AMX)
    return m * d.lda + tap * d.Cp + c;
  if (d.channelVector)
    return m / d.rowUnit * d.lda +
           ((c / 2 * d.KH * d.KW + tap) * d.rowUnit + m % d.rowUnit) * 2 +
           c % 2;
  return m * d.lda + (c / 2 * d.KH * d.KW + tap) * 2 + c % 2;
}

/// The filter [M][C][KH][KW] (BFloat16, a constant) as the kernel's A
/// (filterAt), zero-padded, in the constant image.
static kir::Buffer layOutFilter(const ConvInst &I, const ConvBF16Direct &d,
                                const MatMulBF16Context &ctx) {
  const uint16_t *b = constantFilterBF16(I, ctx);
  std::vector<uint16_t> a(size_t(d.filterElems()), 0);
  for (int64_t m = 0; m < d.M; ++m)
    for (int64_t c = 0; c < d.C; ++c)
      for (int64_t kh = 0; kh < d.KH; ++kh)
        for (int64_t kw = 0; kw < d.KW; ++kw)
          a[filterAt(d, m, c, kh * d.KW + kw)] =
              b[((m * d.C + c) * d.KH + kh) * d.KW + kw];
  return appendConstant(ctx.constants, a.data(), a.size() * 2,
                        I.getFilter()->getName().str() + ".bf16.taps",
                        ElemKind::BFloat16);
}

/// The kernel that writes image \p img's padded copy into \p copy.
static Kernel padKernel(const ConvInst &I, const ConvBF16Direct &d,
                        const MatMulBF16Context &ctx, const kir::Buffer &copy,
                        int64_t img) {
  auto pads = I.getPads();
  int64_t pairs = d.Cp / 2;
  Kernel k((I.getName() + ".pad").str());
  unsigned p = k.addBuffer(copy);
  unsigned e = k.newVar();
  std::vector<CallArg> args = {bufArg(p, k.constInt(0))};
  appendConvInput(I, k, ctx, k.constInt(img * d.C * d.H * d.W), args);
  bool phases = d.s > 1;
  std::vector<int64_t> geometry = {d.C, d.H, d.W, pads[0], pads[1]};
  if (phases)
    geometry.insert(geometry.end(), {d.s, d.Hs, d.Ws});
  else
    geometry.insert(geometry.end(), {d.Hp, d.Wp});
  geometry.push_back(d.S);
  for (int64_t v : geometry)
    args.push_back(valArg(k.constInt(v)));
  args.push_back(valArg(k.div(k.mul(k.var(e), pairs), d.padTasks)));
  args.push_back(valArg(
      k.div(k.add(k.mul(k.var(e), pairs), k.constInt(pairs)), d.padTasks)));
  LibKernel entry = phases ? EMBER_LIBJIT_KERNEL(ember_conv_bf16_pad_phases)
                           : EMBER_LIBJIT_KERNEL(ember_conv_bf16_pad);
  k.body() = {Kernel::loop(e, d.padTasks, /*parallel=*/true,
                           {checkedLibCall(k, entry, args)})};
  return k;
}

void cpu::lowerConvBF16Direct(const ConvInst &I, const ConvBF16Direct &d,
                              const MatMulBF16Context &ctx,
                              std::vector<Kernel> &out) {
  kir::Buffer filter = layOutFilter(I, d, ctx);
  kir::Buffer copy{Region::Activation, ctx.scratchOffset, d.copyBytes(),
                   ElemKind::BFloat16, "conv.bf16.padded"};
  ctx.scratchSize = std::max<size_t>(ctx.scratchSize, copy.size);
  int64_t N = d.OH * d.OW, tasks = d.rowTasks * d.pixelTasks;
  for (int64_t img = 0; img < int64_t(I.getInput()->getType()->dims()[0]);
       ++img) {
    out.push_back(padKernel(I, d, ctx, copy, img));
    Kernel k(I.getName());
    // e = rt * pixelTasks + pt.
    unsigned e = k.newVar();
    ExprRef m0 = k.mul(k.div(k.var(e), d.pixelTasks), d.rowsPerTask);
    ExprRef v0 = k.mul(k.rem(k.var(e), d.pixelTasks), d.pixelsPerTask);
    auto min = [&](ExprRef v, int64_t hi) {
      return k.binary(kir::BinOp::Min, v, k.constInt(hi));
    };
    std::vector<CallArg> args =
        preparedInputArgs(I, k, ctx, filter, copy, img * d.M * N);
    for (int64_t v : {d.lda, d.kc, d.KH, d.KW, d.Ws, d.S, d.OH, d.OW})
      args.push_back(valArg(k.constInt(v)));
    appendFusedActivation(k, I, args);
    for (ExprRef v :
         {m0, min(k.add(m0, k.constInt(d.rowsPerTask)), d.M), v0,
          min(k.add(v0, k.constInt(d.pixelsPerTask)), d.virtualPixels)})
      args.push_back(valArg(v));
    if (d.kernel != BF16MatMulKernel::AMX) // the stride and a phase's words
      for (int64_t v : {d.s, d.Hs * d.Ws})
        args.push_back(valArg(k.constInt(v)));
    k.body() = {Kernel::loop(e, tasks, /*parallel=*/true,
                             {checkedLibCall(k, directEntry(d), args)})};
    out.push_back(std::move(k));
  }
}
