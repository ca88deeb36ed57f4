//===- WinogradLowering.cpp - 3x3 convolutions as Winograd F(m, 3x3) ------===//
//
// An eligible 3x3 stride-1 convolution becomes three kernels (libjit's
// Winograd.inc describes the arithmetic): the input transform (parallel over
// input channels), a + a GEMMs through ember_conv_gemm_f32 (parallel over
// points, filter blocks and panel chunks), and the output transform with
// the conv's epilogue (parallel over output channels). The filter transform
// U = G g G^T is done here, at compile time, in double precision, into the
// packed layout the GEMM reads: per point xi, [block][C][6].
//
// Scratch (after the arena, shared with im2col's patch matrices): V, a*a
// matrices [C][Tpad], then M, a*a matrices [M][T], T the tiles of all
// images and Tpad = T rounded up to the GEMM's 32-column panels. Where V
// and M would pass kWinoWholeBytes, the three kernels run per band of tile
// rows instead, T then being the band's tiles (winoPieces).
//
//===----------------------------------------------------------------------===//
#include "LibCall.h"
#include "Winograd.h"

#include "ember/Base/Error.h"
#include "ember/Kernel/LowerToKernel.h"

#include <cstring>

using namespace ember;
using namespace ember::cpu;
using kir::CallArg;
using kir::ExprRef;
using kir::Kernel;

namespace {
/// libjit's conv GEMM contract: 6-channel filter blocks, 64-column panels.
constexpr int64_t kBlock = 6, kNR = 64;
/// Panels and filter blocks per GEMM task (as CPULowering's conv GEMM).
constexpr int64_t kChunk = 4, kBlocksPerCall = 16;
/// Channels below which the transforms are not amortized by the GEMM.
constexpr int64_t kMinChannels = 16;
/// The cost of streaming one transformed filter tap, in GEMM column steps:
/// the taps stream in while the GEMM computes, so a point costs the larger
/// of its columns and kWeightCost. Fit by measurement, with the transform
/// and direct-GEMM terms of winogradTile, to the 3x3 layers of six zoo
/// networks run whole; the fit and how well it chooses are in
/// docs/PerformanceHistory.md#winograd.
constexpr int64_t kWeightCost = 16;
/// The direct GEMM's per-tap weight cost in the same fit.
constexpr int64_t kDirectWeightCost = 32;

/// Columns the GEMM computes for \p n columns: whole panels, and a tail
/// panel of whole 16-column vectors.
int64_t gemmCols(int64_t n) { return (n + 15) / 16 * 16; }

/// Tiles a transform computes for a tile row of \p tw tiles: whole vectors
/// of 8, or of 16 past 8 tiles on 16-lane targets (libjit's winoRowTiles).
int64_t transformLanes(int64_t tw, bool wideSimd) {
  return wideSimd && tw > 8 ? (tw + 15) / 16 * 16 : (tw + 7) / 8 * 8;
}

/// Tiles of F(tm x tm, 3x3) over the output planes of \p I.
int64_t numTiles(const ConvInst &I, int64_t tm) {
  auto yd = I.getDest()->getType()->dims();
  return int64_t(yd[0]) * ((yd[2] + tm - 1) / tm) * ((yd[3] + tm - 1) / tm);
}

/// Bytes of V and M a band of Winograd tiles may use (a 2 MB L2; at two
/// threads each core holds about half of them).
constexpr int64_t kWinoBandBytes = 2 << 20;
/// The most pieces a convolution is split into: each is three more
/// kernels with their own inlined copies of the transforms and the GEMM,
/// so compile time grows with them (docs/PerformanceHistory.md#winograd).
constexpr int64_t kWinoMaxBands = 16;
/// V and M up to this size stay whole: their round trip mostly hits the
/// caches, and bands would only narrow the GEMMs (chosen by measurement,
/// see docs/PerformanceHistory.md#winograd).
constexpr int64_t kWinoWholeBytes = 8 << 20;
/// GEMM flops that take about as long as one byte of memory traffic (a
/// core's GEMM flop rate over its memory bandwidth; the estimate is in
/// docs/PerformanceHistory.md#winograd), for the band estimate.
constexpr double kWinoFlopsPerByte = 10;

/// \p n floats rounded up to a multiple of 1024 (4 KiB), plus 16 (64 bytes).
int64_t spreadStride(int64_t n) { return (n + 1023) / 1024 * 1024 + 16; }

} // namespace

int64_t cpu::winogradTile(const ConvInst &I, const TargetDesc &T,
                          WinogradMode mode) {
  if (mode == WinogradMode::Off)
    return 0;
  auto xd = I.getInput()->getType()->dims();
  auto wd = I.getFilter()->getType()->dims();
  auto yd = I.getDest()->getType()->dims();
  if (I.getDest()->getType()->getElemKind() != ElemKind::Float32 ||
      wd[2] != 3 || wd[3] != 3 || I.getGroup() != 1 || I.getStrides()[0] != 1 ||
      I.getStrides()[1] != 1 || I.getDilations()[0] != 1 ||
      I.getDilations()[1] != 1 || int64_t(xd[1]) < kMinChannels ||
      int64_t(wd[0]) < kMinChannels || yd[2] == 0 || yd[3] == 0)
    return 0;
  if (mode != WinogradMode::Auto)
    return mode == WinogradMode::F4 ? 4 : 2;
  // Estimated cost per (input, output) channel pair, in GEMM column steps
  // (see gemmCols), of the P points: the GEMM or, if longer, streaming the
  // P transformed filter taps (kWeightCost each: the filters of a network
  // do not stay in cache, and F(4x4)'s are 4x the original); the
  // transforms, per computed tile and point (whole vectors of tiles per
  // tile row), 16 column steps per output and per input channel; and the
  // direct channel-vector GEMM, 9 taps of the plane's columns.
  double M = double(wd[0]), C = double(xd[1]);
  auto winograd = [&](int64_t tm) {
    int64_t TH = (yd[2] + tm - 1) / tm, TW = (yd[3] + tm - 1) / tm;
    double P = double((tm + 2) * (tm + 2));
    double computed =
        double(int64_t(yd[0]) * TH * transformLanes(TW, useWideKernels(T)));
    return P * double(std::max(gemmCols(numTiles(I, tm)), kWeightCost)) +
           P * computed * (16 / M + 16 / C);
  };
  double cost4 = winograd(4), cost2 = winograd(2);
  double direct =
      9 * double(int64_t(yd[0]) * gemmCols(yd[2] * yd[3]) + kDirectWeightCost);
  if (std::min(cost4, cost2) > direct)
    return 0;
  return cost4 < cost2 ? 4 : 2;
}

/// U[xi][m][c] = (G g_{m,c} G^T)[xi], packed [xi][block][C][kBlock].
static std::vector<float> transformFilter(const float *w, int64_t M, int64_t C,
                                          int64_t tm) {
  // Row i: p_i^j / prod_{l != i} (p_i - p_l) for the finite points p =
  // 0, 1, -1, 2, -1/2 (see Winograd.inc); the last row is infinity's.
  static const double G4[6][3] = {{1, 0, 0},
                                  {-1. / 3, -1. / 3, -1. / 3},
                                  {1. / 3, -1. / 3, 1. / 3},
                                  {1. / 15, 2. / 15, 4. / 15},
                                  {-16. / 15, 8. / 15, -4. / 15},
                                  {0, 0, 1}};
  static const double G2[4][3] = {
      {1, 0, 0}, {.5, .5, .5}, {.5, -.5, .5}, {0, 0, 1}};
  int64_t a = tm + 2, nb = (M + kBlock - 1) / kBlock;
  auto G = [&](int64_t i, int64_t j) { return tm == 4 ? G4[i][j] : G2[i][j]; };
  std::vector<float> u(size_t(a * a * nb * C * kBlock), 0.f);
  for (int64_t m = 0; m < M; ++m)
    for (int64_t c = 0; c < C; ++c) {
      const float *g = w + (m * C + c) * 9;
      double gt[6][3]; // G g
      for (int64_t i = 0; i < a; ++i)
        for (int64_t j = 0; j < 3; ++j) {
          double s = 0;
          for (int64_t k = 0; k < 3; ++k)
            s += G(i, k) * g[k * 3 + j];
          gt[i][j] = s;
        }
      for (int64_t i = 0; i < a; ++i)
        for (int64_t j = 0; j < a; ++j) {
          double s = 0;
          for (int64_t k = 0; k < 3; ++k)
            s += gt[i][k] * G(j, k);
          int64_t xi = i * a + j;
          u[((xi * nb + m / kBlock) * C + c) * kBlock + m % kBlock] = float(s);
        }
    }
  return u;
}

namespace {
/// A piece of a Winograd convolution whose transforms and GEMMs run as one
/// set of three kernels: images [img0, img0 + nImg), tile rows [r0, r0 +
/// TH) of each.
struct WinoPiece {
  int64_t img0, nImg, r0, TH;
};
} // namespace

/// Bytes of V and M for \p tiles tiles of P points, C input and M output
/// channels (V's columns rounded up to whole panels).
static int64_t winoScratchBytes(int64_t tiles, int64_t P, int64_t C,
                                int64_t M) {
  int64_t tpad = (tiles + kNR - 1) / kNR * kNR;
  return 4 * (P * spreadStride(C * tpad) + P * spreadStride(M * tiles));
}

/// The pieces of a convolution with nImg images of TH x TW tiles. Where V
/// and M do not fit kWinoBandBytes, the three phases of a piece -- a group
/// of images, a band of tile rows of each -- can pass them through the
/// cache instead of memory (Inception-v3's 147x147 convolutions wrote and
/// read about 25 MB of them), at the price of narrower GEMMs (panels of 32
/// tiles fill worse) and of reading the transformed filter (\p uBytes) once
/// per piece. The estimate, in bytes of memory traffic, counts
/// kWinoFlopsPerByte GEMM flops as one byte; the cheapest of all at once and
/// each split that fits and makes at most kWinoMaxBands pieces in all is
/// taken. A piece spans as many images as fit, not one each: every piece is
/// three kernels of its own, so per-image bands multiplied the code by the
/// batch (a video network's frames: 1,000 kernels, minutes of codegen).
static std::vector<WinoPiece> winoPieces(int64_t nImg, int64_t TH, int64_t TW,
                                         int64_t P, int64_t C, int64_t M,
                                         int64_t uBytes) {
  auto gemm = [&](int64_t tiles) {
    return double(P * gemmCols(tiles) * C * M * 2) / kWinoFlopsPerByte;
  };
  int64_t T = nImg * TH * TW, whole = winoScratchBytes(T, P, C, M);
  if (whole <= kWinoWholeBytes)
    return {{0, nImg, 0, TH}};
  double best = gemm(T) + 2 * double(whole) + double(uBytes);
  int64_t bestImgs = 0, bestRows = 0;
  for (int64_t imgs = nImg; imgs >= 1; --imgs) {
    int64_t groups = (nImg + imgs - 1) / imgs;
    for (int64_t rows = TH; rows >= 1; --rows) {
      int64_t bands = (TH + rows - 1) / rows;
      if (groups * bands > kWinoMaxBands)
        break;
      if ((imgs == nImg && rows == TH) ||
          winoScratchBytes(imgs * rows * TW, P, C, M) > kWinoBandBytes)
        continue;
      double cost = 0;
      for (int64_t i0 = 0; i0 < nImg; i0 += imgs)
        for (int64_t r0 = 0; r0 < TH; r0 += rows)
          cost +=
              gemm(std::min(imgs, nImg - i0) * std::min(rows, TH - r0) * TW) +
              double(uBytes);
      if (cost < best) {
        best = cost;
        bestImgs = imgs;
        bestRows = rows;
      }
    }
  }
  if (!bestRows)
    return {{0, nImg, 0, TH}};
  std::vector<WinoPiece> pieces;
  for (int64_t i0 = 0; i0 < nImg; i0 += bestImgs)
    for (int64_t r0 = 0; r0 < TH; r0 += bestRows)
      pieces.push_back(
          {i0, std::min(bestImgs, nImg - i0), r0, std::min(bestRows, TH - r0)});
  return pieces;
}

void cpu::lowerWinogradConv(const ConvInst &I, int64_t tm,
                            const WinogradContext &ctx,
                            std::vector<Kernel> &out) {
  auto xd = I.getInput()->getType()->dims();
  auto wd = I.getFilter()->getType()->dims();
  auto yd = I.getDest()->getType()->dims();
  int64_t nImg = xd[0], C = xd[1], H = xd[2], W = xd[3], M = wd[0];
  int64_t OH = yd[2], OW = yd[3], a = tm + 2, P = a * a;
  int64_t TH = (OH + tm - 1) / tm, TW = (OW + tm - 1) / tm;
  int64_t nb = (M + kBlock - 1) / kBlock;
  int64_t pt = I.getPads()[0], pl = I.getPads()[1];
  std::string name = I.getName().str();

  kir::Buffer src = kir::bufferFor(I.getFilter(), ctx.plan);
  std::vector<float> u = transformFilter(
      reinterpret_cast<const float *>(ctx.constants.data() + src.offset), M, C,
      tm);
  kir::Buffer ubuf = appendConstant(ctx.constants, u.data(),
                                    u.size() * sizeof(float), name + ".wino_u");
  std::vector<float> zeros(size_t(M), 0.f);
  kir::Buffer zbuf =
      appendConstant(ctx.constants, zeros.data(), zeros.size() * sizeof(float),
                     name + ".wino_zero");
  using kir::BinOp;
  for (const WinoPiece &pc :
       winoPieces(nImg, TH, TW, P, C, M, int64_t(u.size() * sizeof(float)))) {
    int64_t T = pc.nImg * pc.TH * TW;
    int64_t numPanels = (T + kNR - 1) / kNR, Tpad = numPanels * kNR;
    // The transforms touch all P matrices at once: their strides are
    // 4 KiB multiples plus one cache line, so that the P streams fall into
    // different L1 and L2 sets (a 4 KiB multiple would put them all into
    // one).
    int64_t vStride = spreadStride(C * Tpad), mStride = spreadStride(M * T);
    // The output transform reads up to 7 tiles past a row's last one: M
    // has 64 spare bytes at its end.
    uint64_t vBytes = uint64_t(P * vStride) * 4,
             mBytes = uint64_t(P * mStride) * 4 + 64;
    kir::Buffer vbuf{Region::Activation, ctx.scratchOffset, vBytes,
                     ElemKind::Float32, "wino.v"};
    kir::Buffer mbuf{Region::Activation,
                     ctx.scratchOffset + (vBytes + 63) / 64 * 64, mBytes,
                     ElemKind::Float32, "wino.m"};
    ctx.scratchSize =
        std::max<size_t>(ctx.scratchSize, (vBytes + 63) / 64 * 64 + mBytes);
    // A band starts at input row ih = r0 * tm - pt: the input transform sees
    // the plane from there (rows above it are real data, not padding).
    int64_t skip = std::max<int64_t>(0, pc.r0 * tm - pt);
    int64_t bandPt = pt - (pc.r0 * tm - skip);
    int64_t xOff = pc.img0 * C * H * W + skip * W;
    int64_t yOff = pc.img0 * M * OH * OW + pc.r0 * tm * OW;
    int64_t bandOH = std::min(OH - pc.r0 * tm, pc.TH * tm);

    { // Input transform: one call per input channel.
      Kernel k(name + ".wino" + std::to_string(tm) + "_in");
      unsigned x = k.addBuffer(kir::bufferFor(I.getInput(), ctx.plan));
      unsigned v = k.addBuffer(vbuf);
      unsigned c = k.newVar();
      std::vector<CallArg> args = {
          bufArg(v, k.mul(k.var(c), Tpad)),
          bufArg(x, k.add(k.constInt(xOff), k.mul(k.var(c), H * W)))};
      for (int64_t val : {tm, pc.nImg, C * H * W, H - skip, W, bandPt, pl,
                          pc.TH, TW, vStride, T, Tpad})
        args.push_back(valArg(k.constInt(val)));
      k.body() = {
          Kernel::loop(c, C, /*parallel=*/true,
                       {EMBER_LIBJIT_CALL(k, ember_wino_input_f32, args)})};
      out.push_back(std::move(k));
    }
    { // GEMMs: e = ((xi * chunks) + chunk) * nbc + bc.
      int64_t chunks = (numPanels + kChunk - 1) / kChunk;
      int64_t nbc = (nb + kBlocksPerCall - 1) / kBlocksPerCall;
      Kernel k(name);
      unsigned y = k.addBuffer(mbuf);
      unsigned w = k.addBuffer(ubuf);
      unsigned p = k.addBuffer(vbuf);
      unsigned z = k.addBuffer(zbuf);
      unsigned e = k.newVar();
      ExprRef bc = k.rem(k.var(e), nbc);
      ExprRef xi = k.div(k.var(e), chunks * nbc);
      ExprRef t0 = k.mul(k.rem(k.div(k.var(e), nbc), chunks), kChunk);
      ExprRef t1 = k.binary(BinOp::Min, k.add(t0, k.constInt(kChunk)),
                            k.constInt(numPanels));
      ExprRef b0 = k.div(k.mul(bc, nb), nbc);
      ExprRef b1 = k.div(k.add(k.mul(bc, nb), k.constInt(nb)), nbc);
      std::vector<CallArg> args = {
          bufArg(y, k.mul(xi, mStride)), bufArg(w, k.mul(xi, nb * C * kBlock)),
          bufArg(p, k.mul(xi, vStride)), bufArg(z), valArg(k.constInt(0))};
      // One chunk of all panels (G = numPanels, no chunk stride), rows Tpad
      // floats apart; no activation.
      for (int64_t val : {C, T, Tpad, numPanels, int64_t(0), M, int64_t(0)})
        args.push_back(valArg(k.constInt(val)));
      args.push_back(valArg(k.constFloat(0)));
      args.push_back(valArg(k.constFloat(0)));
      for (ExprRef val : {b0, b1, t0, t1})
        args.push_back(valArg(val));
      // The transformed filters (16/9 or 4x the original) are streamed
      // from memory for few panels: each block fetches the next block's
      // into L2 while it computes
      // (docs/PerformanceHistory.md#winograd).
      args.push_back(valArg(k.constInt(1)));
      k.body() = {
          Kernel::loop(e, P * chunks * nbc, /*parallel=*/true,
                       {EMBER_LIBJIT_CALL(k, ember_conv_gemm_f32, args)})};
      out.push_back(std::move(k));
    }
    { // Output transform and epilogue: one call per output channel.
      Kernel k(name + ".wino" + std::to_string(tm) + "_out");
      unsigned y = k.addBuffer(kir::bufferFor(I.getDest(), ctx.plan));
      unsigned mo = k.addBuffer(mbuf);
      unsigned b = k.addBuffer(kir::bufferFor(I.getBias(), ctx.plan));
      unsigned m = k.newVar();
      ExprRef off = k.add(k.constInt(yOff), k.mul(k.var(m), OH * OW));
      std::vector<CallArg> args = {
          bufArg(y, off), bufArg(mo, k.mul(k.var(m), T)), bufArg(b, k.var(m))};
      args.push_back(convResidualArg(k, I, ctx.plan, off));
      for (int64_t val :
           {tm, pc.nImg, M * OH * OW, bandOH, OW, pc.TH, TW, mStride})
        args.push_back(valArg(k.constInt(val)));
      appendFusedActivation(k, I, args);
      k.body() = {
          Kernel::loop(m, M, /*parallel=*/true,
                       {EMBER_LIBJIT_CALL(k, ember_wino_output_f32, args)})};
      out.push_back(std::move(k));
    }
  }
}
