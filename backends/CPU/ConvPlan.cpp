//===- ConvPlan.cpp - Which path a convolution takes, and why -------------===//
//
// The order of the rules is the order in which the paths are tried: a
// BFloat16 filter (convert-precision) takes the BFloat16 GEMMs; a
// depthwise convolution has its own kernels; a constant 3x3 filter may be
// transformed for Winograd (winogradTile weighs it against the direct
// GEMM); otherwise one of the two GEMM layouts (ConvPathRule.cpp).
//
//===----------------------------------------------------------------------===//
#include "ConvPlan.h"
#include "BF16Storage.h"

#include "ConvBF16.h"
#include "ConvTiling.h"
#include "Winograd.h"

#include "llvm/Support/Format.h"

#include <algorithm>

using namespace ember;
using namespace ember::cpu;

namespace {

/// The shape facts every path's estimate reads.
struct ConvShape {
  int64_t batch, inC, outC, group, kernel, outPixels;
  ConvShape(const ConvInst &I) {
    auto xd = I.getInput()->getType()->dims();
    auto wd = I.getFilter()->getType()->dims();
    auto yd = I.getDest()->getType()->dims();
    batch = int64_t(xd[0]);
    inC = int64_t(xd[1]);
    outC = int64_t(wd[0]);
    group = I.getGroup();
    kernel = int64_t(wd[2] * wd[3]);
    outPixels = int64_t(yd[2] * yd[3]);
  }
  int64_t macs() const {
    return batch * outC * (inC / group) * kernel * outPixels;
  }
};

/// The channel-vector GEMM's offset table holds 32-bit offsets into a
/// group's input planes (padded ones are at most H + pads tall and wide).
bool channelVectorsFit(const ConvInst &I) {
  auto xd = I.getInput()->getType()->dims();
  auto pads = I.getPads();
  int64_t span = int64_t(xd[1]) / I.getGroup() *
                 (int64_t(xd[2]) + pads[0] + pads[2]) *
                 (int64_t(xd[3]) + pads[1] + pads[3]);
  return span < (int64_t(1) << 31);
}

int64_t vectorMacs(double macs, double tileUse, const TargetDesc &T) {
  return int64_t(macs / std::max(tileUse, 1e-9) / T.floatLanes());
}

ConvPlan winogradPlan(const ConvInst &I, const ConvShape &S, int64_t tm,
                      const TargetDesc &T, const CPUCodegenOptions &opts) {
  ConvPlan P;
  P.path = ConvPathKind::Winograd;
  P.winogradTile = tm;
  P.macs = S.macs();
  auto yd = I.getDest()->getType()->dims();
  int64_t tiles = S.batch * ((int64_t(yd[2]) + tm - 1) / tm) *
                  ((int64_t(yd[3]) + tm - 1) / tm);
  int64_t points = (tm + 2) * (tm + 2);
  // The transformed domain multiplies every point of every tile once per
  // (input, output) channel pair; the transforms write V and M.
  P.vectorMacs =
      vectorMacs(double(points) * double(tiles) * double(S.inC * S.outC), 1, T);
  P.copyBytes = (S.inC + S.outC) * tiles * points * int64_t(sizeof(float));
  P.reason = opts.winograd == WinogradMode::Auto
                 ? "auto: estimated cheaper than the direct GEMM"
                 : "forced by -cpu-winograd";
  return P;
}

/// One of the two GEMM layouts (ConvPathRule.cpp), or the one forced.
ConvPlan gemmPlan(const ConvInst &I, const ConvShape &S, const TargetDesc &T,
                  const CPUCodegenOptions &opts) {
  ConvPlan P;
  P.macs = S.macs();
  const char *why = "";
  // A forced row path that does not fit leaves the GEMM choice automatic.
  bool automatic =
      opts.convPath == ConvPath::Auto || opts.convPath == ConvPath::Rows;
  if (channelVectorsFit(I) &&
      (opts.convPath == ConvPath::Channels ||
       (automatic && preferChannelVector(I, T, &why)))) {
    P.path = ConvPathKind::ChannelVectors;
    P.vectorMacs = vectorMacs(double(P.macs), channelTileUse(I), T);
    P.reason = opts.convPath == ConvPath::Channels
                   ? "forced by -cpu-conv-path=channels"
                   : std::string("auto: ") + why;
    return P;
  }
  P.path = ConvPathKind::PixelPanels;
  P.inPlace = isPointwise(I);
  P.vectorMacs = vectorMacs(double(P.macs), panelTileUse(I, T), T);
  if (!P.inPlace)
    P.copyBytes = S.batch * (S.inC / S.group) * S.kernel * S.outPixels *
                  S.group * int64_t(sizeof(float));
  if (opts.convPath == ConvPath::Panels)
    P.reason = "forced by -cpu-conv-path=panels";
  else if (!channelVectorsFit(I))
    P.reason = "input planes too large for 32-bit channel-vector offsets";
  else
    P.reason = std::string("auto: ") + why;
  return P;
}

/// The row-direct plan of \p I, or none where its band does not fit.
std::optional<ConvPlan> rowsPlan(const ConvInst &I, const ConvShape &S,
                                 const TargetDesc &T) {
  std::optional<ConvRowsTiling> t = chooseConvRowsTiling(I, T);
  if (!t)
    return std::nullopt;
  ConvPlan P;
  P.path = ConvPathKind::PixelRows;
  P.rows = *t;
  P.macs = S.macs();
  // Channels sit in registers, not lanes: only the row's last vectors
  // compute padding.
  P.vectorMacs = vectorMacs(double(P.macs), t->pixelUse, T);
  P.copyBytes = S.batch * S.group * t->blocks * t->bands * t->bandFloats *
                int64_t(sizeof(float));
  return P;
}

} // namespace

ConvPlan cpu::planConv(const ConvInst &I, const TargetDesc &T,
                       const CPUCodegenOptions &opts) {
  if (I.getFilter()->getType()->getElemKind() == ElemKind::BFloat16)
    return planConvBF16(I, T);
  ConvShape S(I);
  ConvPlan P;
  P.macs = S.macs();
  if (S.group == S.inC && S.group == S.outC) {
    P.path = ConvPathKind::Depthwise;
    P.vectorMacs = vectorMacs(double(P.macs), 1, T);
    P.reason = "one filter per channel";
    return P;
  }
  if (int64_t tm = hasConstantFilter(I) ? winogradTile(I, T, opts.winograd) : 0)
    return winogradPlan(I, S, tm, T, opts);
  // The row path is weighed only where it may be taken: forced, or for a
  // grouped convolution under the automatic choice.
  bool weighRows = opts.convPath == ConvPath::Rows ||
                   (opts.convPath == ConvPath::Auto && S.group > 1);
  std::optional<ConvPlan> rows = weighRows ? rowsPlan(I, S, T) : std::nullopt;
  if (rows && opts.convPath == ConvPath::Rows) {
    rows->reason = "forced by -cpu-conv-path=rows";
    return *rows;
  }
  ConvPlan gemm = gemmPlan(I, S, T, opts);
  if (rows && rows->vectorMacs <= gemm.vectorMacs) {
    rows->reason = "auto: a grouped convolution whose GEMM tiles would "
                   "compute more than the row tiles";
    return *rows;
  }
  return gemm;
}

static const char *pathName(const ConvPlan &P) {
  switch (P.path) {
  case ConvPathKind::Depthwise:
    return "depthwise";
  case ConvPathKind::Winograd:
    return P.winogradTile == 4 ? "winograd F(4x4,3x3)" : "winograd F(2x2,3x3)";
  case ConvPathKind::ChannelVectors:
    return "channel-vectors";
  case ConvPathKind::PixelPanels:
    return P.inPlace ? "pixel-panels (in place)" : "pixel-panels (im2col)";
  case ConvPathKind::PixelRows:
    return "pixel-rows";
  case ConvPathKind::BF16Gemm:
    return P.bf16Kernel;
  }
  return "?";
}

std::string cpu::describeConvPlan(const ConvPlan &P) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << pathName(P) << ": " << llvm::format("%.3g", double(P.macs) / 1e6)
     << " M MACs as " << llvm::format("%.3g", double(P.vectorMacs) / 1e6)
     << " M vector MACs, " << llvm::format("%.3g", double(P.copyBytes) / 1e6)
     << " MB copied; " << P.reason;
  return os.str();
}

void cpu::printConvPlans(const IRFunction &F, const TargetDesc &T,
                         const CPUCodegenOptions &opts, llvm::raw_ostream &os) {
  BF16Storage bf16(F, T, opts);
  for (auto &I : F.getInstrs()) {
    auto *c = llvm::dyn_cast<ConvInst>(I.get());
    if (!c)
      continue;
    auto st = c->getStrides();
    os << "conv '" << c->getName() << "' "
       << dimsToString(c->getInput()->getType()->dims()) << " * "
       << dimsToString(c->getFilter()->getType()->dims()) << " stride " << st[0]
       << "x" << st[1] << " group " << c->getGroup() << " -> "
       << dimsToString(c->getDest()->getType()->dims()) << ": "
       << describeConvPlan(planConv(*c, T, opts));
    if (bf16.stored(c->getInput()))
      os << "; input stored in BFloat16";
    if (bf16.stored(c->getDest()))
      os << "; output stored in BFloat16";
    os << "\n";
  }
}
