//===- ConvRowsLowering.cpp - Direct convolution along output rows --------===//
//
// The tiling rule reads the kernel target: a 16-float vector takes 16 /
// lanes registers, and a tile's accumulators, its row loads and one
// broadcast must fit the vector registers. Rows are covered by the fewest
// vectors that waste the fewest lanes; the channel blocks split a group's
// output channels evenly; a call's band of input rows stays within half of
// L1d (and within libjit's stack buffer) so that every tap reads from L1.
//
//===----------------------------------------------------------------------===//
#include "ConvRows.h"

#include "ConvTiling.h"
#include "LibCall.h"

#include "ember/Kernel/LowerToKernel.h"

#include <algorithm>

using namespace ember;
using namespace ember::cpu;
using kir::CallArg;
using kir::ExprRef;
using kir::Kernel;

namespace {

/// The convolution's geometry in the kernel's terms.
struct RowsGeometry {
  int64_t N, C, H, W, M, KH, KW, OH, OW, sh, sw, pt, pl, dh, dw, group;
  int64_t cPerG, mPerG;
  explicit RowsGeometry(const ConvInst &I) {
    auto xd = I.getInput()->getType()->dims();
    auto wd = I.getFilter()->getType()->dims();
    auto yd = I.getDest()->getType()->dims();
    auto st = I.getStrides(), pads = I.getPads(), dil = I.getDilations();
    N = xd[0], C = xd[1], H = xd[2], W = xd[3];
    M = wd[0], KH = wd[2], KW = wd[3], OH = yd[2], OW = yd[3];
    sh = st[0], sw = st[1], pt = pads[0], pl = pads[1];
    dh = dil[0], dw = dil[1], group = I.getGroup();
    cPerG = C / group, mPerG = M / group;
  }
  /// Floats per column phase of a band row with \p nv-vector tiles (as
  /// ConvRows.inc computes it).
  int64_t phaseFloats(int64_t nv) const {
    int64_t vecs = (OW + 16 * nv - 1) / (16 * nv) * nv;
    return vecs * 16 + ((KW - 1) * dw + sw - 1) / sw;
  }
  /// Floats of the band of \p rows output rows.
  int64_t bandFloats(int64_t rows, int64_t nv) const {
    return cPerG * ((rows - 1) * sh + (KH - 1) * dh + 1) * sw * phaseFloats(nv);
  }
};

/// The pixel vectors per tile: those that waste the fewest lanes of a row,
/// and of those the most (each channel's weight broadcast then feeds more
/// vectors), up to the most whose tile still has room for two channels.
int64_t choosePixelVectors(const RowsGeometry &g, int64_t regsPerVec,
                           int64_t registers) {
  int64_t best = 1;
  double bestUse = 0;
  for (int64_t nv = 1; nv <= libjit::kConvRowsMaxNV; ++nv) {
    if ((3 * nv + 1) * regsPerVec > registers)
      break;
    int64_t span = 16 * nv, tiles = (g.OW + span - 1) / span;
    double use = double(g.OW) / double(tiles * span);
    if (use >= bestUse - 1e-9) {
      best = nv;
      bestUse = use;
    }
    if (tiles == 1)
      break; // More vectors would only compute more padding.
  }
  return best;
}

} // namespace

std::optional<ConvRowsTiling> cpu::chooseConvRowsTiling(const ConvInst &I,
                                                        const TargetDesc &T) {
  RowsGeometry g(I);
  int64_t regsPerVec = std::max<int64_t>(1, 16 / int64_t(T.floatLanes()));
  int64_t registers = int64_t(T.vectorRegisters);
  ConvRowsTiling t;
  t.nv = choosePixelVectors(g, regsPerVec, registers);
  // Accumulators mr * nv, the row's nv loads and one broadcast.
  int64_t fit = (registers / regsPerVec - 1 - t.nv) / t.nv;
  int64_t mr = std::clamp<int64_t>(fit, 1, libjit::kConvRowsMaxMR);
  mr = std::min(mr, g.mPerG);
  t.blocks = (g.mPerG + mr - 1) / mr;
  t.mr = (g.mPerG + t.blocks - 1) / t.blocks;
  if (g.bandFloats(1, t.nv) > libjit::kConvRowsBandFloats)
    return std::nullopt;
  int64_t budget = std::min<int64_t>(libjit::kConvRowsBandFloats,
                                     int64_t(T.l1dBytes / 2 / sizeof(float)));
  int64_t rows = 1;
  while (rows < g.OH && g.bandFloats(rows + 1, t.nv) <= budget)
    ++rows;
  // Enough calls for the threads: split rows further when the groups and
  // blocks alone are fewer than kConvMinTasks.
  int64_t bands = (g.OH + rows - 1) / rows;
  int64_t perBand = g.group * t.blocks;
  if (bands * perBand < kConvMinTasks)
    bands = std::min(g.OH, (kConvMinTasks + perBand - 1) / perBand);
  t.bandRows = (g.OH + bands - 1) / bands;
  t.bands = (g.OH + t.bandRows - 1) / t.bandRows;
  int64_t span = 16 * t.nv;
  t.pixelUse = double(g.OW) / double((g.OW + span - 1) / span * span);
  t.bandFloats = g.bandFloats(t.bandRows, t.nv);
  return t;
}

void cpu::lowerConvRows(const ConvInst &I, const ConvRowsTiling &t,
                        const MemoryPlan &plan, std::vector<Kernel> &out) {
  RowsGeometry g(I);
  int64_t K = g.cPerG * g.KH * g.KW, plane = g.OH * g.OW;
  kir::Buffer input = kir::bufferFor(I.getInput(), plan);
  for (int64_t img = 0; img < g.N; ++img) {
    Kernel k(I.getName());
    unsigned y = k.addBuffer(kir::bufferFor(I.getDest(), plan));
    unsigned x = k.addBuffer(input);
    unsigned w = k.addBuffer(kir::bufferFor(I.getFilter(), plan));
    unsigned b = k.addBuffer(kir::bufferFor(I.getBias(), plan));
    // e = (grp * bands + band) * blocks + blk: consecutive tasks share a
    // band's input rows.
    unsigned e = k.newVar();
    ExprRef blk = k.rem(k.var(e), t.blocks);
    ExprRef band = k.rem(k.div(k.var(e), t.blocks), t.bands);
    ExprRef grp = k.div(k.var(e), t.blocks * t.bands);
    ExprRef m = k.add(k.mul(grp, g.mPerG), k.mul(blk, t.mr));
    ExprRef mc = g.mPerG % t.mr == 0
                     ? k.constInt(t.mr)
                     : k.binary(kir::BinOp::Min, k.constInt(t.mr),
                                k.add(k.constInt(g.mPerG), k.mul(blk, -t.mr)));
    ExprRef oh0 = k.mul(band, t.bandRows);
    ExprRef oh1 = k.binary(kir::BinOp::Min, k.constInt(g.OH),
                           k.add(oh0, k.constInt(t.bandRows)));
    ExprRef yOff = k.mul(k.add(k.constInt(img * g.M), m), plane);
    std::vector<CallArg> args = {
        bufArg(y, yOff),
        bufArg(x, k.add(k.constInt(img * g.C * g.H * g.W),
                        k.mul(grp, g.cPerG * g.H * g.W))),
        bufArg(w, k.mul(m, K)),
        bufArg(b, m),
        convResidualArg(k, I, plan, yOff),
        valArg(k.constInt(g.cPerG)),
        valArg(mc)};
    for (int64_t v : {g.H, g.W, g.KH, g.KW, g.OH, g.OW, g.sh, g.sw, g.pt, g.pl,
                      g.dh, g.dw, t.nv})
      args.push_back(valArg(k.constInt(v)));
    appendFusedActivation(k, I, args);
    args.push_back(valArg(oh0));
    args.push_back(valArg(oh1));
    k.body() = {
        Kernel::loop(e, g.group * t.blocks * t.bands, /*parallel=*/true,
                     {EMBER_LIBJIT_CALL(k, ember_conv_rows_f32, args)})};
    out.push_back(std::move(k));
  }
}
