//===- DepthwiseLowering.cpp - Depthwise convolutions and pools ----------===//
//
// Depthwise convolutions (group == C == M) become one of two libjit
// kernels: ember_dwconv_f32 per channel plane (Depthwise.inc, vectors along
// rows), or ember_dwconv_cv_f32 per block of 16 channels and band of output
// rows (DepthwiseCV.inc, channels as the vector lanes). Max pools on narrow
// rows can take the latter's max-pool form, ember_maxpool_cv_f32, and
// average pools on narrow rows its convolution form with taps 1 / (KH * KW)
// (and stride-1 ones on rows up to 32 the per-plane kernel, with the same
// taps): under -cpu-conv-path=channels, or where the separable pool kernel
// (PoolLowering.cpp, tried first) does not fit; the others keep the shared
// kernel lowering.
//
//===----------------------------------------------------------------------===//
#include "Depthwise.h"
#include "LibCall.h"
#include "NarrowWeights.h"
#include "ember/Kernel/LowerToKernel.h"

#include <algorithm>
#include <cstring>

using namespace ember;
using namespace ember::cpu;
using kir::CallArg;
using kir::ExprRef;
using kir::Kernel;

namespace {
/// Channels per call of the channel-vector depthwise kernel (the 16 lanes
/// of DepthwiseCV.inc's vectors), the vectors of its input band and the output
/// pixels per channel of a band (kDwCVBand, kDwCVOut).
constexpr int64_t kDwCVBlock = 16, kDwCVBandVectors = 640,
                  kDwCVBandPixels = 512;
} // namespace

/// The window geometry of a channel-vector depthwise convolution or max
/// pool (libjit's DepthwiseCV.inc): one NCHW image plane to another.
struct CVWindow {
  int64_t N, C, H, W, OH, OW, KH, KW, sh, sw, pt, pl, dh, dw;

  static CVWindow of(const ConvInst &I) {
    auto xd = I.getInput()->getType()->dims();
    auto wd = I.getFilter()->getType()->dims();
    auto yd = I.getDest()->getType()->dims();
    auto st = I.getStrides(), pads = I.getPads(), dil = I.getDilations();
    return {xd[0], xd[1], xd[2], xd[3],   yd[2],   yd[3],  wd[2],
            wd[3], st[0], st[1], pads[0], pads[1], dil[0], dil[1]};
  }
  /// A max or average pool's window (no dilation).
  template <class PoolInst> static CVWindow ofPool(const PoolInst &I) {
    auto xd = I.getInput()->getType()->dims();
    auto yd = I.getDest()->getType()->dims();
    auto kn = I.getKernel(), st = I.getStrides(), pads = I.getPads();
    return {xd[0], xd[1], xd[2], xd[3],   yd[2],   yd[3], kn[0],
            kn[1], st[0], st[1], pads[0], pads[1], 1,     1};
  }

  /// Output rows per band: the band's (R - 1) * sh + (KH - 1) * dh + 1
  /// input rows of PW vectors (and slack) fit the kernel's stack buffer and
  /// its R * OW pixels its output buffer; 0 when not even one output row's
  /// do (rows that wide keep the plane kernels).
  int64_t bandRows() const {
    int64_t PW = std::max(W + pl, (OW - 1) * sw + (KW - 1) * dw + 1);
    // Narrow output rows are computed k rows at a time, reading up to k
    // rows past the band (filled slack).
    int64_t k = OW < 16 ? 16 / OW : 0;
    int64_t spare = kDwCVBandVectors / PW - (KH - 1) * dh - 1 - k * sh;
    if (spare < 0 || OW > kDwCVBandPixels)
      return 0;
    return std::min({spare / sh + 1, kDwCVBandPixels / OW, OH});
  }

  /// A kernel calling \p callee once per (image, block of 16 channels, band
  /// of output rows) with the arguments \p head makes from the block's first
  /// plane index (image * C + first channel), the block and its first
  /// channel; then the block's channel count, the geometry (with the
  /// dilations when \p dilated), what \p tail makes and the band's rows
  /// [oh0, oh1).
  template <class HeadFn, class TailFn>
  Kernel tasks(llvm::StringRef name, const LibKernel &callee, bool dilated,
               HeadFn head, TailFn tail) const {
    int64_t R = bandRows(), nbands = (OH + R - 1) / R;
    int64_t nblk = (C + kDwCVBlock - 1) / kDwCVBlock;
    Kernel k(name);
    // e = (img * nblk + blk) * nbands + band.
    unsigned e = k.newVar();
    ExprRef band = k.rem(k.var(e), nbands);
    ExprRef blk = k.rem(k.div(k.var(e), nbands), nblk);
    ExprRef img = k.div(k.var(e), nbands * nblk);
    ExprRef c0 = k.mul(blk, kDwCVBlock);
    ExprRef oh0 = k.mul(band, R);
    using kir::BinOp;
    std::vector<CallArg> a = head(k, k.add(k.mul(img, C), c0), blk, c0);
    a.push_back(
        valArg(k.binary(BinOp::Min, k.binary(BinOp::Sub, k.constInt(C), c0),
                        k.constInt(kDwCVBlock))));
    std::vector<int64_t> geometry = {H, W, KH, KW, OH, OW, sh, sw, pt, pl};
    if (dilated)
      geometry.insert(geometry.end(), {dh, dw});
    for (int64_t v : geometry)
      a.push_back(valArg(k.constInt(v)));
    for (CallArg &t : tail(k))
      a.push_back(t);
    a.push_back(valArg(oh0));
    a.push_back(valArg(
        k.binary(BinOp::Min, k.add(oh0, k.constInt(R)), k.constInt(OH))));
    k.body() = {Kernel::loop(e, N * nblk * nbands, /*parallel=*/true,
                             {checkedLibCall(k, callee, std::move(a))})};
    return k;
  }
};

/// What the depthwise kernels compute, for a convolution or an average
/// pool: y = act(sum of taps * x + bias + residual) per channel.
struct DwSpec {
  llvm::StringRef name;
  CVWindow g;
  kir::Buffer y, x;
  /// The taps in the layout of the kernel that reads them: [C][KH * KW]
  /// for the per-plane kernel, [block][KH * KW][16] for the channel-vector
  /// one; shared: one block for every channel (an average pool's), with a
  /// bias of 16 zeros (channel-vector only).
  kir::Buffer taps, bias;
  bool shared;
  /// Adds the convolution's residual, if any (null: none).
  const ConvInst *conv;
  int64_t act;
  float alpha, beta;

  CallArg residual(Kernel &k, const MemoryPlan &plan, ExprRef off) const {
    return conv ? convResidualArg(k, *conv, plan, off) : valArg(k.constInt(0));
  }
};

/// The depthwise window of \p spec (per-channel taps, or one set for every
/// channel when shared): one direct libjit call per (image, channel).
static Kernel lowerDepthwisePlanes(const DwSpec &spec, const MemoryPlan &plan) {
  const CVWindow &g = spec.g;
  int64_t T = g.KH * g.KW, HW = g.H * g.W, OHOW = g.OH * g.OW;
  Kernel k(spec.name);
  unsigned y = k.addBuffer(spec.y);
  unsigned x = k.addBuffer(spec.x);
  unsigned w = k.addBuffer(spec.taps);
  unsigned b = k.addBuffer(spec.bias);
  unsigned e = k.newVar();
  ExprRef c = k.rem(k.var(e), g.C);
  ExprRef tapOff = spec.shared ? k.constInt(0) : k.mul(c, T);
  ExprRef biasOff = spec.shared ? k.constInt(0) : c;
  std::vector<CallArg> args = {bufArg(y, k.mul(k.var(e), OHOW)),
                               bufArg(x, k.mul(k.var(e), HW)),
                               bufArg(w, tapOff), bufArg(b, biasOff)};
  args.push_back(spec.residual(k, plan, k.mul(k.var(e), OHOW)));
  for (int64_t v : {g.H, g.W, g.KH, g.KW, g.OH, g.OW, g.sh, g.sw, g.pt, g.pl,
                    g.dh, g.dw, spec.act})
    args.push_back(valArg(k.constInt(v)));
  args.push_back(valArg(k.constFloat(spec.alpha)));
  args.push_back(valArg(k.constFloat(spec.beta)));
  // The input floats before and after the plane: the direct stride-1
  // paths read a little into its neighbours (libjit's DepthwiseFlat.inc).
  args.push_back(valArg(k.mul(k.var(e), HW)));
  args.push_back(valArg(k.mul(
      k.binary(kir::BinOp::Sub, k.constInt(g.N * g.C - 1), k.var(e)), HW)));
  k.body() = {Kernel::loop(e, g.N * g.C, /*parallel=*/true,
                           {EMBER_LIBJIT_CALL(k, ember_dwconv_f32, args)})};
  return k;
}

/// True when a depthwise convolution should run channel-vector
/// (-cpu-conv-path=auto): on narrow output rows, where the plane kernel's
/// row vectors are mostly empty, and for windows past 3x3 on rows up to 32.
/// On wider rows the two transposes per element cost more than the plane
/// kernel's waste. With 16 registers of 8 lanes (AVX2) the 16x16
/// transposes and accumulators cost more, and only windows past 3x3 keep
/// the channel-vector kernel. The row bounds 16 and 32 were chosen by
/// measurement, see docs/PerformanceHistory.md#depthwise-rules.
static bool preferDepthwiseCV(const CVWindow &g, bool wideSimd) {
  if (!wideSimd)
    return g.KH * g.KW > 9 && g.OW <= 32;
  return g.OW < 16 || (g.KH * g.KW > 9 && g.OW <= 32);
}

/// True when the plane kernel runs depthwise convolution \p g with column
/// stride 2 (undilated columns) on rows of 9-32 outputs, which beats the
/// channel-vector kernel there: with 512-bit vectors straight from the
/// rows (libjit's dwStride2Rows), and also 3x3 windows on rows of up to 8
/// (5x5 ones keep the channel vectors); with 8-lane vectors as phase
/// bands, rows of up to 8 keeping the channel vectors. Chosen by
/// measurement, see docs/PerformanceHistory.md#depthwise-rules.
static bool takesPlaneStride2(const CVWindow &g, bool wideSimd) {
  bool narrowRowsToo = wideSimd && g.KH * g.KW <= 9;
  return g.sw == 2 && g.dw == 1 && g.OW <= 32 && (g.OW > 8 || narrowRowsToo);
}

/// A depthwise convolution through libjit's ember_dwconv_cv_f32 (channels
/// as the vector lanes, DepthwiseCV.inc) reading spec's taps packed at
/// compile time as [block][KH * KW][16], tasks of (image, block of
/// 16 channels, band of output rows), each band's padded input rows
/// fitting the kernel's stack buffer.
static Kernel lowerDepthwiseCV(const DwSpec &spec, const MemoryPlan &plan) {
  const CVWindow &g = spec.g;
  int64_t T = g.KH * g.KW;
  int64_t HW = g.H * g.W, OHOW = g.OH * g.OW;
  return g.tasks(
      spec.name, EMBER_LIBJIT_KERNEL(ember_dwconv_cv_f32), /*dilated=*/true,
      [&](Kernel &k, ExprRef plane, ExprRef blk, ExprRef c0) {
        unsigned y = k.addBuffer(spec.y);
        unsigned x = k.addBuffer(spec.x);
        unsigned wb = k.addBuffer(spec.taps);
        unsigned b = k.addBuffer(spec.bias);
        return std::vector<CallArg>{
            bufArg(y, k.mul(plane, OHOW)), bufArg(x, k.mul(plane, HW)),
            bufArg(wb,
                   spec.shared ? k.constInt(0) : k.mul(blk, T * kDwCVBlock)),
            bufArg(b, spec.shared ? k.constInt(0) : c0),
            spec.residual(k, plan, k.mul(plane, OHOW))};
      },
      [&](Kernel &k) {
        return std::vector<CallArg>{valArg(k.constInt(spec.act)),
                                    valArg(k.constFloat(spec.alpha)),
                                    valArg(k.constFloat(spec.beta))};
      });
}

/// A max pool through ember_maxpool_cv_f32 (DepthwiseCV.inc): tasks of
/// (image, block of 16 channels, band of output rows), for float32 pools
/// with output rows narrower than 16 pixels, where the generic kernel
/// vectorizes along mostly empty rows
/// (docs/PerformanceHistory.md#depthwise-rules).
/// None when the pool keeps the generic kernel (-cpu-conv-path=panels keeps
/// every one, channels takes every float32 one whose rows fit a band).
std::optional<Kernel> cpu::lowerMaxPoolCV(const MaxPoolInst &I,
                                          const DepthwiseContext &ctx) {
  const MemoryPlan &plan = ctx.plan;
  CVWindow g = CVWindow::ofPool(I);
  bool f32 = I.getDest()->getType()->getElemKind() == ElemKind::Float32;
  if (!f32 || g.bandRows() == 0 || ctx.path == ConvPath::Panels ||
      (ctx.path == ConvPath::Auto && g.OW >= 16))
    return std::nullopt;
  int64_t HW = g.H * g.W, OHOW = g.OH * g.OW;
  return g.tasks(
      I.getName(), EMBER_LIBJIT_KERNEL(ember_maxpool_cv_f32), /*dilated=*/false,
      [&](Kernel &k, ExprRef plane, ExprRef, ExprRef) {
        unsigned y = k.addBuffer(kir::bufferFor(I.getDest(), plan));
        unsigned x = k.addBuffer(kir::bufferFor(I.getInput(), plan));
        return std::vector<CallArg>{bufArg(y, k.mul(plane, OHOW)),
                                    bufArg(x, k.mul(plane, HW))};
      },
      [](Kernel &) { return std::vector<CallArg>{}; });
}

/// Floats of \p I's taps packed for the channel-vector kernel.
static int64_t packedTapsFloats(const ConvInst &I) {
  auto wd = I.getFilter()->getType()->dims();
  return (int64_t(wd[0]) + kDwCVBlock - 1) / kDwCVBlock * kDwCVBlock * wd[2] *
         wd[3];
}

/// \p I's constant taps packed for the channel-vector kernel,
/// [block][KH * KW][16] (zero lanes past C), appended to the constants.
/// Taps widened from a 16-bit constant are packed in 16 bits; the kernel
/// pushed to ctx.pre widens them into the filter's own buffer (the Cast's
/// result, which holds them: see lowerDepthwiseConv).
static kir::Buffer packDepthwiseTaps(const ConvInst &I,
                                     const DepthwiseContext &ctx) {
  auto wd = I.getFilter()->getType()->dims();
  int64_t C = wd[0], T = wd[2] * wd[3];
  std::vector<float> packed(size_t(packedTapsFloats(I)), 0.f);
  kir::Buffer src = kir::bufferFor(I.getFilter(), ctx.plan);
  std::vector<float> wide;
  const float *wsrc =
      floatConstantValues(src, ctx.narrow, ctx.plan, ctx.constants, wide);
  for (int64_t c = 0; c < C; ++c)
    for (int64_t t = 0; t < T; ++t)
      packed[size_t(((c / kDwCVBlock) * T + t) * kDwCVBlock + c % kDwCVBlock)] =
          wsrc[c * T + t];
  std::string name = I.getFilter()->getName().str() + ".packed";
  if (!ctx.narrow)
    return appendConstant(ctx.constants, packed.data(),
                          packed.size() * sizeof(float), name);
  kir::Buffer narrow = appendNarrowConstant(
      ctx.constants, packed, ctx.narrow->getType()->getElemKind(), name);
  kir::Buffer dst{src.region, src.offset, packed.size() * sizeof(float),
                  ElemKind::Float32, name};
  ctx.pre->push_back(widenKernel(name + ".widen", narrow, dst));
  return dst;
}

Kernel cpu::lowerDepthwiseConv(const ConvInst &I, const DepthwiseContext &ctx) {
  CVWindow g = CVWindow::of(I);
  // The channel-vector kernel reads taps packed at compile time; taps
  // widened from 16 bits are packed then too where the widened copy fits
  // the filter's buffer (whole blocks of 16 channels).
  kir::Buffer filter = kir::bufferFor(I.getFilter(), ctx.plan);
  bool packable =
      hasConstantFilter(I) ||
      (ctx.narrow && uint64_t(packedTapsFloats(I)) * 4 <= filter.size);
  bool cv = packable && g.bandRows() > 0 &&
            (ctx.path == ConvPath::Channels ||
             (ctx.path == ConvPath::Auto &&
              preferDepthwiseCV(g, useWideKernels(ctx.target)) &&
              !takesPlaneStride2(g, useWideKernels(ctx.target))));
  DwSpec spec{I.getName(),
              g,
              kir::bufferFor(I.getDest(), ctx.plan),
              kir::bufferFor(I.getInput(), ctx.plan),
              cv ? packDepthwiseTaps(I, ctx) : filter,
              kir::bufferFor(I.getBias(), ctx.plan),
              /*shared=*/false,
              &I,
              int64_t(I.getFusedActivation()),
              I.getFusedAlpha(),
              I.getFusedBeta()};
  // The per-plane kernel reads the filter as the absorbed Cast wrote it.
  if (!cv && ctx.narrow)
    ctx.pre->push_back(widenKernel((I.getName() + ".widen").str(),
                                   kir::bufferFor(ctx.narrow, ctx.plan),
                                   filter));
  return cv ? lowerDepthwiseCV(spec, ctx.plan)
            : lowerDepthwisePlanes(spec, ctx.plan);
}

std::optional<Kernel> cpu::lowerAvgPoolDepthwise(const AvgPoolInst &I,
                                                 const DepthwiseContext &ctx) {
  auto pads = I.getPads();
  bool padded =
      std::any_of(pads.begin(), pads.end(), [](int64_t p) { return p != 0; });
  if (I.getDest()->getType()->getElemKind() != ElemKind::Float32 ||
      (padded && !I.getCountIncludePad()))
    return std::nullopt;
  // On narrow rows the channel-vector kernel beats the shared one with 16
  // registers too, so the AVX-512 rule serves every target. Stride-1 rows
  // of up to 32 take the per-plane kernel's flat bands; on wider rows it
  // was no faster than the shared kernel, which keeps them and other
  // strides. Measurements: docs/PerformanceHistory.md#depthwise-rules.
  CVWindow g = CVWindow::ofPool(I);
  bool planes = g.sh == 1 && g.sw == 1 && g.OW <= 32;
  bool cv =
      g.bandRows() > 0 &&
      (ctx.path == ConvPath::Channels ||
       (ctx.path == ConvPath::Auto && preferDepthwiseCV(g, /*wideSimd=*/true)));
  if (!cv && !(planes && ctx.path == ConvPath::Auto))
    return std::nullopt;
  // One block of taps 1 / (KH * KW) in all 16 lanes serves every channel.
  int64_t T = g.KH * g.KW;
  std::vector<float> taps(size_t(T * kDwCVBlock), 1.f / float(T));
  std::vector<float> zeros(size_t(kDwCVBlock), 0.f);
  std::string name = I.getName().str();
  DwSpec spec{I.getName(),
              g,
              kir::bufferFor(I.getDest(), ctx.plan),
              kir::bufferFor(I.getInput(), ctx.plan),
              appendConstant(ctx.constants, taps.data(),
                             taps.size() * sizeof(float), name + ".taps"),
              appendConstant(ctx.constants, zeros.data(),
                             zeros.size() * sizeof(float), name + ".bias"),
              /*shared=*/true,
              nullptr,
              int64_t(FusedActivation::None),
              0.f,
              0.f};
  return cv ? lowerDepthwiseCV(spec, ctx.plan)
            : lowerDepthwisePlanes(spec, ctx.plan);
}
