//===- ConvInt8.cpp - 8-bit integer convolutions on the CPU ---------------===//
//
// IntConv and RequantConv as calls of libjit's integer product kernel (see
// MatMulInt8.cpp for the operands and the zero-point correction). Two
// orientations:
// - A = the filter [OC][K] (K padded to quads), B = the image's im2col
//   matrix packed in panels into scratch (ember_im2col_u8; with whole
//   channel quads per group, ember_quads_u8 then ember_im2col_quads, K in
//   (tap, c) order so that each word is a copy), C = the [OC][OH * OW]
//   output in place;
// - for a RequantConv whose pixels would leave most of a last vector
//   empty (prefersPixelRows), A = the pixels' rows [P][K]
//   (ember_pixels_u8, ember_im2col_rows), B = the filter packed in panels
//   of output channels, stored transposed into NCHW.
// Depthwise RequantConvs go to DepthwiseInt8.cpp.
//
//===----------------------------------------------------------------------===//
#include "Int8Lowering.h"

#include "CPU.h"
#include "DepthwiseInt8.h"

#include "ember/Backend/TargetDesc.h"

#include <algorithm>
#include <type_traits>

using namespace ember;
using namespace ember::cpu;
using namespace ember::cpu::i8;
using kir::CallArg;
using kir::ExprRef;
using kir::Kernel;

namespace {

/// The filter [OC][K] with K padded to quads (the kernel's A), and its row
/// sums; K = cg * taps in the order (c, tap) of the filter, or (tap, c)
/// with \p tapMajor (the rows of ember_im2col_quads).
PackedB packFilter(const Weights &w, int64_t oc, int64_t cg, int64_t taps,
                   bool tapMajor) {
  int64_t K = cg * taps, lda = (K + 3) / 4 * 4;
  PackedB out{std::vector<uint8_t>(size_t(oc * lda), 0),
              std::vector<int32_t>(size_t(oc), 0)};
  for (int64_t o = 0; o < oc; ++o)
    for (int64_t c = 0; c < cg; ++c)
      for (int64_t t = 0; t < taps; ++t) {
        int32_t x = w.at(o * K + c * taps + t);
        out.bytes[o * lda + (tapMajor ? t * cg + c : c * taps + t)] =
            uint8_t(x);
        out.sums[o] += x;
      }
  return out;
}

/// \p n rounded up to a multiple of 64 (a cache line).
size_t roundUp64(uint64_t n) { return size_t(n + 63) / 64 * 64; }

/// The shape of one IntConv as per-image, per-group products.
struct ConvShape {
  int64_t N, C, H, W, OC, KH, KW, OH, OW, G, cg, ocg, K, k4, P, nr, np;
  /// The quads path (ember_quads_u8, ember_im2col_quads): its padded
  /// image's rows and columns, 0 where the conv takes ember_im2col_u8.
  int64_t Hp = 0, Wp = 0;
  /// Bytes of one packed im2col matrix.
  int64_t packedBytes() const { return np * k4 * nr * 4; }
  /// Bytes of one image's and group's channel quads.
  int64_t quadBytes() const { return cg / 4 * Hp * Wp * 4; }
};

template <class InstT> ConvShape convShape(const InstT &I, int64_t nr) {
  auto xd = I.getInput()->getType()->dims();
  auto wd = I.getFilter()->getType()->dims();
  auto yd = I.getDest()->getType()->dims();
  ConvShape s;
  s.N = xd[0], s.C = xd[1], s.H = xd[2], s.W = xd[3];
  s.OC = wd[0], s.cg = wd[1], s.KH = wd[2], s.KW = wd[3];
  s.OH = yd[2], s.OW = yd[3], s.G = I.getGroup(), s.ocg = s.OC / s.G;
  s.K = s.cg * s.KH * s.KW, s.k4 = (s.K + 3) / 4, s.P = s.OH * s.OW;
  s.nr = nr, s.np = (s.P + nr - 1) / nr;
  auto st = I.getStrides(), pads = I.getPads(), dil = I.getDilations();
  // Whole channel quads make a quad of K four channels at one tap, one
  // word of a channel-interleaved image; a 1x1 window at unit stride
  // without padding reads its input's words in place already (the
  // pointwise path of ember_im2col_u8).
  bool pointwise = s.KH == 1 && s.KW == 1 && st[0] == 1 && st[1] == 1 &&
                   llvm::all_of(pads, [](int64_t p) { return p == 0; });
  if (s.cg % 4 == 0 && !pointwise) {
    s.Hp = (s.OH - 1) * st[0] + (s.KH - 1) * dil[0] + 1;
    s.Wp = (s.OW - 1) * st[1] + (s.KW - 1) * dil[1] + 1;
  }
  return s;
}

/// The kernel that interleaves every image's and group's channel quads
/// into \p quads (ember_quads_u8, one quad per call).
template <class InstT>
Kernel packQuads(const InstT &I, const ConvShape &s, const kir::Buffer &quads,
                 const Int8Context &ctx) {
  Kernel k((I.getName() + ".quads").str());
  unsigned d = k.addBuffer(quads);
  unsigned x = k.addBuffer(kir::bufferFor(I.getInput(), ctx.plan));
  unsigned zx = k.addBuffer(kir::bufferFor(I.getInputZero(), ctx.plan));
  unsigned e = k.newVar();
  // e = (image * G + group) * cg / 4 + quad: the input's channel 4e.
  auto pads = I.getPads();
  std::vector<CallArg> args = {bufArg(d, k.mul(k.var(e), s.Hp * s.Wp * 4)),
                               bufArg(x, k.mul(k.var(e), 4 * s.H * s.W))};
  for (int64_t v : {s.H, s.W, s.Hp, s.Wp, pads[0], pads[1]})
    args.push_back(valArg(k.constInt(v)));
  args.push_back(
      valArg(k.cast(k.load(zx, k.constInt(0)), kir::ScalarKind::Int64)));
  args.push_back(valArg(k.constInt(activationFlip(I.getInput()))));
  k.body() = {Kernel::loop(e, s.N * s.C / 4, /*parallel=*/true,
                           {EMBER_LIBJIT_CALL(k, ember_quads_u8, args)})};
  return k;
}

/// The kernel that packs every image's and group's im2col matrix into
/// \p packed from the channel quads \p quads (ember_im2col_quads).
template <class InstT>
Kernel packIm2colQuads(const InstT &I, const ConvShape &s,
                       const kir::Buffer &packed, const kir::Buffer &quads) {
  Kernel k((I.getName() + ".im2col").str());
  unsigned d = k.addBuffer(packed);
  unsigned xq = k.addBuffer(quads);
  unsigned e = k.newVar();
  // e = (image * G + group) * np + panel.
  ExprRef gi = k.div(k.var(e), s.np), t = k.rem(k.var(e), s.np);
  auto strides = I.getStrides(), dil = I.getDilations();
  std::vector<CallArg> args = {bufArg(d, k.mul(gi, s.packedBytes())),
                               bufArg(xq, k.mul(gi, s.quadBytes()))};
  for (int64_t v :
       {s.cg / 4, s.Hp, s.Wp, s.KH, s.KW, strides[0], strides[1], dil[0],
        dil[1], s.OW, s.P, s.nr, activationFlip(I.getInput())})
    args.push_back(valArg(k.constInt(v)));
  args.push_back(valArg(t));
  args.push_back(valArg(k.add(t, k.constInt(1))));
  k.body() = {Kernel::loop(e, s.N * s.G * s.np, /*parallel=*/true,
                           {EMBER_LIBJIT_CALL(k, ember_im2col_quads, args)})};
  return k;
}

/// The kernel that packs every image's and group's im2col matrix into
/// \p packed.
template <class InstT>
Kernel packIm2col(const InstT &I, const ConvShape &s, const kir::Buffer &packed,
                  const Int8Context &ctx) {
  Kernel k((I.getName() + ".im2col").str());
  unsigned d = k.addBuffer(packed);
  unsigned x = k.addBuffer(kir::bufferFor(I.getInput(), ctx.plan));
  unsigned zx = k.addBuffer(kir::bufferFor(I.getInputZero(), ctx.plan));
  unsigned e = k.newVar();
  // e = (image * G + group) * np + panel.
  ExprRef gi = k.div(k.var(e), s.np), t = k.rem(k.var(e), s.np);
  ExprRef img = k.div(gi, s.G), g = k.rem(gi, s.G);
  auto strides = I.getStrides(), pads = I.getPads(), dil = I.getDilations();
  std::vector<CallArg> args = {
      bufArg(d, k.mul(gi, s.packedBytes())),
      bufArg(x, k.mul(k.add(k.mul(img, s.C), k.mul(g, s.cg)), s.H * s.W))};
  for (int64_t v : {s.cg, s.H, s.W, s.KH, s.KW, strides[0], strides[1], pads[0],
                    pads[1], dil[0], dil[1], s.OW, s.P, s.nr})
    args.push_back(valArg(k.constInt(v)));
  args.push_back(
      valArg(k.cast(k.load(zx, k.constInt(0)), kir::ScalarKind::Int64)));
  args.push_back(valArg(k.constInt(activationFlip(I.getInput()))));
  args.push_back(valArg(t));
  args.push_back(valArg(k.add(t, k.constInt(1))));
  k.body() = {Kernel::loop(e, s.N * s.G * s.np, /*parallel=*/true,
                           {EMBER_LIBJIT_CALL(k, ember_im2col_u8, args)})};
  return k;
}

/// The requantizing store of RequantConv \p I: output channels are the
/// rows, from \p oc0; partial sums in scratch at \p partialAt past the
/// packed im2col matrices.
RequantCall convRequant(Kernel &k, const RequantConvInst &I, const ConvShape &s,
                        const Int8Plan &plan, const Int8Context &ctx,
                        unsigned y, ExprRef cAt, ExprRef oc0) {
  size_t packed = size_t(s.N * s.G * s.packedBytes() + 63) / 64 * 64;
  auto [bias, bRow] = channelVector(k, I.getBias(), ctx, oc0);
  auto [mult, mRow] = channelVector(k, I.getMultiplier(), ctx, oc0);
  RequantCall q{bufArg(y, cAt),
                partialSums(k, plan, s.K, s.N * s.OC * s.P,
                            ctx.scratchOffset + packed, ctx, cAt),
                bias,
                bRow,
                0,
                mult,
                mRow,
                0,
                {},
                {},
                {}};
  requantBounds(k, I, ctx, q);
  return q;
}

/// True when RequantConv \p s runs as the transposed product (pixels as
/// A's rows, output channels as panels: lowerConvRows): a last vector of
/// pixels that is mostly padding (P = 49 fills 49 of 64 lanes) costs more
/// multiply-add instructions (K / 4 per vector and row) than the
/// transposed product's byte-by-byte store of its outputs adds.
bool prefersPixelRows(const ConvShape &s, const Int8Plan &plan) {
  if (plan.kernel == Int8Kernel::Amx)
    return false; // tiles take the filter as A
  int64_t L = plan.tiling.panelCols / plan.tiling.vectors;
  auto up = [&](int64_t n) { return (n + L - 1) / L * L; };
  int64_t saved = (s.ocg * up(s.P) - s.P * up(s.ocg)) / L * s.k4;
  return saved > s.P * s.ocg;
}

/// Each group's filter as B panels of its output channels, K in (tap, c)
/// order (ember_im2col_rows' rows), and their sums.
PackedB packFilterPanels(const Weights &w, const ConvShape &s) {
  int64_t taps = s.KH * s.KW, nr = s.nr, k4 = s.k4;
  int64_t np = (s.ocg + nr - 1) / nr, elems = np * k4 * nr * 4;
  PackedB out{std::vector<uint8_t>(size_t(s.G * elems), 0),
              std::vector<int32_t>(size_t(s.OC), 0)};
  for (int64_t g = 0; g < s.G; ++g)
    for (int64_t j = 0; j < s.ocg; ++j)
      for (int64_t c = 0; c < s.cg; ++c)
        for (int64_t t = 0; t < taps; ++t) {
          int32_t x = w.at(((g * s.ocg + j) * s.cg + c) * taps + t);
          int64_t k = t * s.cg + c;
          out.bytes[g * elems + ((j / nr * k4 + k / 4) * nr + j % nr) * 4 +
                    k % 4] = uint8_t(x);
          out.sums[g * s.ocg + j] += x;
        }
  return out;
}

/// Scratch of the transposed product: per image and group, the padded
/// pixel-major input, then A's rows [P][K], then partial sums [P][ocg].
struct RowsScratch {
  int64_t Hp, Wp;
  kir::Buffer pixels, rows;
  size_t partialAt;
};

RowsScratch rowsScratch(const RequantConvInst &I, const ConvShape &s,
                        const Int8Context &ctx) {
  auto st = I.getStrides(), dil = I.getDilations();
  RowsScratch r;
  r.Hp = (s.OH - 1) * st[0] + (s.KH - 1) * dil[0] + 1;
  r.Wp = (s.OW - 1) * st[1] + (s.KW - 1) * dil[1] + 1;
  uint64_t pix = uint64_t(s.N * s.G * r.Hp * r.Wp * s.cg);
  uint64_t rows = uint64_t(s.N * s.G * s.P * s.K);
  size_t at = ctx.scratchOffset;
  r.pixels = {Region::Activation, at, pix, ElemKind::UInt8, "intconv.pixels"};
  at += roundUp64(pix);
  r.rows = {Region::Activation, at, rows, ElemKind::UInt8, "intconv.rows"};
  r.partialAt = at + roundUp64(rows);
  ctx.scratchSize =
      std::max<size_t>(ctx.scratchSize, r.partialAt - ctx.scratchOffset);
  return r;
}

/// The kernels that lay out A's rows: the pixel-major input (one input row
/// per call), then the rows (one output row of pixels per call).
void packPixelRows(const RequantConvInst &I, const ConvShape &s,
                   const RowsScratch &r, const Int8Context &ctx,
                   std::vector<Kernel> &out) {
  auto st = I.getStrides(), pads = I.getPads(), dil = I.getDilations();
  Kernel kp((I.getName() + ".pixels").str());
  unsigned d = kp.addBuffer(r.pixels);
  unsigned x = kp.addBuffer(kir::bufferFor(I.getInput(), ctx.plan));
  unsigned zx = kp.addBuffer(kir::bufferFor(I.getInputZero(), ctx.plan));
  unsigned e = kp.newVar();
  // e = (image * G + group) * Hp + padded row.
  ExprRef gi = kp.div(kp.var(e), r.Hp), py = kp.rem(kp.var(e), r.Hp);
  std::vector<CallArg> args = {bufArg(d, kp.mul(gi, r.Hp * r.Wp * s.cg)),
                               bufArg(x, kp.mul(gi, s.cg * s.H * s.W))};
  for (int64_t v : {s.cg, s.H, s.W, r.Wp, pads[0], pads[1]})
    args.push_back(valArg(kp.constInt(v)));
  args.push_back(
      valArg(kp.cast(kp.load(zx, kp.constInt(0)), kir::ScalarKind::Int64)));
  args.push_back(valArg(kp.constInt(activationFlip(I.getInput()))));
  args.push_back(valArg(py));
  args.push_back(valArg(kp.add(py, kp.constInt(1))));
  kp.body() = {Kernel::loop(e, s.N * s.G * r.Hp, /*parallel=*/true,
                            {EMBER_LIBJIT_CALL(kp, ember_pixels_u8, args)})};
  out.push_back(std::move(kp));
  Kernel kr((I.getName() + ".im2col").str());
  unsigned dr = kr.addBuffer(r.rows), xp = kr.addBuffer(r.pixels);
  unsigned er = kr.newVar();
  // er = (image * G + group) * OH + output row.
  ExprRef gr = kr.div(kr.var(er), s.OH), oy = kr.rem(kr.var(er), s.OH);
  ExprRef p0 = kr.mul(oy, s.OW);
  std::vector<CallArg> rargs = {bufArg(dr, kr.mul(gr, s.P * s.K)),
                                bufArg(xp, kr.mul(gr, r.Hp * r.Wp * s.cg))};
  for (int64_t v :
       {s.cg, r.Wp, s.KH, s.KW, st[0], st[1], dil[0], dil[1], s.OW, s.K})
    rargs.push_back(valArg(kr.constInt(v)));
  rargs.push_back(valArg(p0));
  rargs.push_back(valArg(kr.add(p0, kr.constInt(s.OW))));
  kr.body() = {Kernel::loop(er, s.N * s.G * s.OH, /*parallel=*/true,
                            {EMBER_LIBJIT_CALL(kr, ember_im2col_rows, rargs)})};
  out.push_back(std::move(kr));
}

/// RequantConv \p I as the transposed product (see prefersPixelRows):
/// C^T[p][oc] = rows[p][k] * filter^T[k][oc], stored requantized into
/// NCHW (yRow 1, yCol P), the input's zero point the row correction.
void lowerConvRows(const RequantConvInst &I, const Weights &w,
                   const ConvShape &s, const Int8Plan &plan,
                   const Int8Context &ctx, std::vector<Kernel> &out) {
  PackedB pb = packFilterPanels(w, s);
  std::string name = I.getFilter()->getName().str();
  kir::Buffer bBuf =
      appendConstant(ctx.constants, pb.bytes.data(), pb.bytes.size(),
                     name + ".i8.panels", ElemKind::Int8);
  kir::Buffer sBuf =
      appendConstant(ctx.constants, pb.sums.data(), pb.sums.size() * 4,
                     name + ".i8.sums", ElemKind::Int32);
  RowsScratch r = rowsScratch(I, s, ctx);
  packPixelRows(I, s, r, ctx, out);
  int64_t np = (s.ocg + s.nr - 1) / s.nr;
  MatMulTasks tasks =
      splitMatMul(s.P, np, plan.tiling, matMulTarget(ctx.target));
  Kernel k(I.getName());
  unsigned y = k.addBuffer(kir::bufferFor(I.getDest(), ctx.plan));
  unsigned a = k.addBuffer(r.rows), b = k.addBuffer(bBuf);
  unsigned sums = k.addBuffer(sBuf);
  unsigned zx = k.addBuffer(kir::bufferFor(I.getInputZero(), ctx.plan));
  unsigned e = k.newVar();
  TaskSpan ts = taskSpan(k, k.var(e), tasks, s.P, np);
  // ts.g = image * G + group.
  ExprRef g = k.rem(ts.g, s.G), img = k.div(ts.g, s.G);
  ExprRef oc0 = k.mul(g, s.ocg);
  Int8Call call{s.ocg,
                s.K,
                s.K,
                plan.tiling.kBlock,
                ts.i0,
                ts.i1,
                ts.t0,
                ts.t1,
                0,
                0,
                bufArg(zx),
                0,
                activationFlip(I.getInput()),
                bufArg(sums, oc0),
                1,
                0};
  auto [bias, bCol] = channelVector(k, I.getBias(), ctx, oc0);
  auto [mult, mCol] = channelVector(k, I.getMultiplier(), ctx, oc0);
  ExprRef yAt = k.mul(k.add(k.mul(img, s.OC), oc0), s.P);
  RequantCall q{bufArg(y, yAt),
                partialSums(k, plan, s.K, s.N * s.G * s.P * s.ocg, r.partialAt,
                            ctx, k.mul(ts.g, s.P * s.ocg)),
                bias,
                0,
                bCol,
                mult,
                0,
                mCol,
                {},
                {},
                {},
                1,
                s.P};
  requantBounds(k, I, ctx, q);
  k.body() = {Kernel::loop(
      e, s.N * s.G * tasks.rowTasks * tasks.colTasks, /*parallel=*/true,
      {callInt8(k, plan, CallArg{}, bufArg(a, k.mul(ts.g, s.P * s.K)),
                bufArg(b, k.mul(g, np * s.k4 * s.nr * 4)), call, &q)})};
  out.push_back(std::move(k));
}

/// IntConv or RequantConv \p I (the latter with a requantizing store along
/// its output channels).
template <class InstT>
bool lowerConv(const InstT &I, const Int8Context &ctx,
               std::vector<Kernel> &out) {
  constexpr bool requant = std::is_same_v<InstT, RequantConvInst>;
  std::optional<Weights> w =
      constantWeights(I.getFilter(), I.getFilterZero(), ctx);
  Int8Plan plan = chooseInt8Plan(ctx.target);
  if (I.getDest()->getType()->size() == 0 && requant)
    return true; // nothing to store
  if (!w || !haveTile(plan, ctx.target) || I.getDest()->getType()->size() == 0)
    return false;
  if constexpr (requant)
    if (isDepthwiseInt8(I)) {
      size_t n = I.getFilter()->getType()->size();
      std::vector<int8_t> taps(n);
      for (size_t i = 0; i < n; ++i)
        taps[i] = int8_t(w->at(int64_t(i)));
      lowerDepthwiseInt8(I, taps, ctx, out);
      return true;
    }
  ConvShape s = convShape(I, plan.tiling.panelCols);
  if constexpr (requant)
    if (prefersPixelRows(s, plan)) {
      lowerConvRows(I, *w, s, plan, ctx, out);
      return true;
    }
  PackedB pa = packFilter(*w, s.OC, s.cg, s.KH * s.KW, s.Hp > 0);
  std::string name = I.getFilter()->getName().str();
  kir::Buffer aBuf =
      appendConstant(ctx.constants, pa.bytes.data(), pa.bytes.size(),
                     name + ".i8.rows", ElemKind::Int8);
  kir::Buffer sBuf =
      appendConstant(ctx.constants, pa.sums.data(), pa.sums.size() * 4,
                     name + ".i8.sums", ElemKind::Int32);
  uint64_t bytes = uint64_t(s.N * s.G * s.packedBytes());
  kir::Buffer packed{Region::Activation, ctx.scratchOffset, bytes,
                     ElemKind::UInt8, "intconv.im2col"};
  // AMX's last B tile of a panel may read up to 15 quad rows past it
  // (MatMulInt8AMX.inc): that much slack stays readable after the panels.
  uint64_t slack = plan.kernel == Int8Kernel::Amx ? 15 * s.nr * 4 : 0;
  ctx.scratchSize = std::max<size_t>(ctx.scratchSize, bytes + slack);
  if (s.Hp > 0) {
    // The quads go past the panels, their slack and the partial sums.
    size_t at = ctx.scratchOffset + roundUp64(bytes + slack) +
                roundUp64(uint64_t(s.N * s.OC * s.P) * 4);
    uint64_t qBytes = uint64_t(s.N * s.G * s.quadBytes());
    kir::Buffer quads{Region::Activation, at, qBytes, ElemKind::UInt8,
                      "intconv.quads"};
    ctx.scratchSize =
        std::max<size_t>(ctx.scratchSize, at - ctx.scratchOffset + qBytes);
    out.push_back(packQuads(I, s, quads, ctx));
    out.push_back(packIm2colQuads(I, s, packed, quads));
  } else {
    out.push_back(packIm2col(I, s, packed, ctx));
  }
  MatMulTasks tasks =
      splitMatMul(s.ocg, s.np, plan.tiling, matMulTarget(ctx.target));
  Kernel k(I.getName());
  unsigned c = k.addBuffer(kir::bufferFor(I.getDest(), ctx.plan));
  unsigned a = k.addBuffer(aBuf), sums = k.addBuffer(sBuf);
  unsigned b = k.addBuffer(packed);
  unsigned zx = k.addBuffer(kir::bufferFor(I.getInputZero(), ctx.plan));
  unsigned e = k.newVar();
  TaskSpan ts = taskSpan(k, k.var(e), tasks, s.ocg, s.np);
  // ts.g = image * G + group; its first output channel is g * ocg.
  ExprRef oc0 = k.mul(k.rem(ts.g, s.G), s.ocg);
  ExprRef img = k.div(ts.g, s.G);
  Int8Call call{s.P,
                s.K,
                s.k4 * 4,
                plan.tiling.kBlock,
                ts.i0,
                ts.i1,
                ts.t0,
                ts.t1,
                1,
                0,
                bufArg(sums, oc0),
                1,
                0,
                bufArg(zx),
                0,
                activationFlip(I.getInput())};
  ExprRef cAt = k.mul(k.add(k.mul(img, s.OC), oc0), s.P);
  std::optional<RequantCall> q;
  if constexpr (requant)
    q = convRequant(k, I, s, plan, ctx, c, cAt, oc0);
  k.body() = {Kernel::loop(
      e, s.N * s.G * tasks.rowTasks * tasks.colTasks, /*parallel=*/true,
      {callInt8(k, plan, bufArg(c, cAt), bufArg(a, k.mul(oc0, s.k4 * 4)),
                bufArg(b, k.mul(ts.g, s.packedBytes())), call,
                q ? &*q : nullptr)})};
  out.push_back(std::move(k));
  return true;
}

} // namespace

bool i8::lowerConvInt8(const IntConvInst &I, const Int8Context &ctx,
                       std::vector<Kernel> &out) {
  return lowerConv(I, ctx, out);
}

bool i8::lowerConvInt8(const RequantConvInst &I, const Int8Context &ctx,
                       std::vector<Kernel> &out) {
  return lowerConv(I, ctx, out);
}
