//===- ConvBF16CV.cpp - Channel-vector BFloat16 convolutions --------------===//
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

/// Pixels per group of the transposed patch rows (one register transpose).
constexpr int64_t kPixelGroup = 16;
} // namespace

double cpu::laneUse(int64_t useful, int64_t computed) {
  return computed > 0 ? double(useful) / double(computed) : 0.0;
}

/// The task split of \p cv: channel panels first (each task reads its
/// filter panels once per block of pixels), then pixels, so that a task's
/// patch rows stay within half of L2 across its panels.
static void splitTasks(ConvBF16CV &cv, const TargetDesc &T) {
  cv.panelTasks = std::min(cv.panels, kConvMinTasks);
  cv.panelsPerTask = ceilDiv(cv.panels, cv.panelTasks);
  cv.panelTasks = ceilDiv(cv.panels, cv.panelsPerTask);
  int64_t groups = ceilDiv(cv.N, kPixelGroup);
  int64_t fit =
      std::max<int64_t>(1, int64_t(T.l2Bytes / 2) / (kPixelGroup * cv.kp * 4));
  int64_t pixelTasks =
      std::max(ceilDiv(groups, fit), ceilDiv(kConvMinTasks, cv.panelTasks));
  pixelTasks = std::min(pixelTasks, groups);
  cv.pixelsPerTask = ceilDiv(groups, pixelTasks) * kPixelGroup;
  cv.pixelTasks = ceilDiv(cv.N, cv.pixelsPerTask);
  cv.packTasks = std::min(groups, kConvMinTasks);
}

std::optional<ConvBF16CV>
cpu::chooseConvBF16CV(const ConvInst &I, const TargetDesc &T, double otherUse) {
  auto xd = I.getInput()->getType()->dims();
  auto wd = I.getFilter()->getType()->dims();
  auto yd = I.getDest()->getType()->dims();
  if (I.getGroup() != 1 || int64_t(xd[2] * xd[3]) >= (int64_t(1) << 31))
    return std::nullopt;
  ConvBF16CV cv;
  cv.M = int64_t(wd[0]);
  BF16MatMulPlan plan = chooseBF16MatMul(T, cv.M);
  // libjit instantiates the 16-lane tile only.
  if (plan.kernel != BF16MatMulKernel::DotProduct ||
      plan.tiling.rows != libjit::kMatMulWideMR ||
      plan.tiling.panelCols != libjit::kMatMulWideV * 16)
    return std::nullopt;
  // Panels of the tile's vectors, or of kConvBF16CVNarrowV where those
  // leave fewer lanes idle (96 channels: 2 x 48 against 2 x 64); a tie
  // keeps the wider panel (more multiply-adds per broadcast pixel).
  int64_t wide = plan.tiling.panelCols,
          narrow = libjit::kConvBF16CVNarrowV * (wide / libjit::kMatMulWideV);
  auto use = [&](int64_t nr) { return laneUse(cv.M, ceilDiv(cv.M, nr) * nr); };
  cv.nr = use(narrow) > use(wide) ? narrow : wide;
  cv.panels = ceilDiv(cv.M, cv.nr);
  if (laneUse(cv.M, cv.panels * cv.nr) <= otherUse)
    return std::nullopt;
  cv.K = int64_t(wd[1] * wd[2] * wd[3]);
  cv.kp = std::max<int64_t>(1, ceilDiv(cv.K, 2));
  cv.N = int64_t(yd[2] * yd[3]);
  cv.kc = matMulKBlock(cv.kp, plan.tiling);
  splitTasks(cv, T);
  return cv;
}

ConvPlan cpu::planConvBF16CV(const ConvInst &I, const ConvBF16CV &cv,
                             const TargetDesc &T) {
  int64_t images = int64_t(I.getInput()->getType()->dims()[0]);
  ConvPlan P;
  P.path = ConvPathKind::BF16Gemm;
  P.bf16Kernel = "ember_conv_bf16_cv_dp";
  P.macs = images * cv.M * cv.K * cv.N;
  P.vectorMacs = P.macs / std::max<int64_t>(1, 2 * T.floatLanes());
  P.copyBytes = images * int64_t(cv.copyBytes());
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "BFloat16 filter, output channels in the lanes (" << cv.panels
     << " panels of " << cv.nr << "), A: transposed patch rows (" << cv.N
     << " x " << cv.kp << " pairs); tasks of " << cv.panelsPerTask
     << " panels x " << cv.pixelsPerTask << " pixels, K blocks of " << cv.kc
     << " pairs";
  P.reason = os.str();
  return P;
}

/// The filter [M][K] (BFloat16, a constant) as the kernel's B: panels of
/// nr output channels, [panels][kp][nr] words of pairs (k = 2q in the low
/// half), zero past M and K.
static kir::Buffer layOutFilter(const ConvInst &I, const ConvBF16CV &cv,
                                const MatMulBF16Context &ctx) {
  const uint16_t *b = constantFilterBF16(I, ctx);
  std::vector<uint16_t> a(size_t(cv.panels * cv.kp * cv.nr * 2), 0);
  for (int64_t m = 0; m < cv.M; ++m)
    for (int64_t k = 0; k < cv.K; ++k)
      a[size_t(((m / cv.nr * cv.kp + k / 2) * cv.nr + m % cv.nr) * 2 + k % 2)] =
          b[m * cv.K + k];
  return appendConstant(ctx.constants, a.data(), a.size() * 2,
                        I.getFilter()->getName().str() + ".bf16.cv",
                        ElemKind::BFloat16);
}

/// The kernel that writes image \p img's transposed patch rows.
static Kernel packKernel(const ConvInst &I, const ConvBF16CV &cv,
                         const MatMulBF16Context &ctx, const kir::Buffer &rows,
                         int64_t img) {
  auto xd = I.getInput()->getType()->dims();
  int64_t groups = ceilDiv(cv.N, kPixelGroup);
  Kernel k((I.getName() + ".pack").str());
  unsigned p = k.addBuffer(rows);
  unsigned e = k.newVar();
  std::vector<CallArg> args = {bufArg(p, k.constInt(0))};
  appendConvInput(I, k, ctx, k.constInt(img * int64_t(xd[1] * xd[2] * xd[3])),
                  args);
  for (int64_t v : {cv.K, cv.N, cv.kp})
    args.push_back(valArg(k.constInt(v)));
  appendConvGeometry(I, k, args);
  auto groupStart = [&](ExprRef task) {
    return k.mul(k.div(k.mul(task, groups), cv.packTasks), kPixelGroup);
  };
  args.push_back(valArg(groupStart(k.var(e))));
  args.push_back(valArg(groupStart(k.add(k.var(e), k.constInt(1)))));
  k.body() = {
      Kernel::loop(e, cv.packTasks, /*parallel=*/true,
                   {EMBER_LIBJIT_CALL(k, ember_conv_bf16_cv_pack, args)})};
  return k;
}

void cpu::lowerConvBF16CV(const ConvInst &I, const ConvBF16CV &cv,
                          const MatMulBF16Context &ctx,
                          std::vector<Kernel> &out) {
  kir::Buffer filter = layOutFilter(I, cv, ctx);
  kir::Buffer rows{Region::Activation, ctx.scratchOffset, cv.copyBytes(),
                   ElemKind::BFloat16, "conv.bf16.rows"};
  ctx.scratchSize = std::max<size_t>(ctx.scratchSize, rows.size);
  int64_t tasks = cv.panelTasks * cv.pixelTasks;
  auto min = [](Kernel &k, ExprRef v, int64_t hi) {
    return k.binary(kir::BinOp::Min, v, k.constInt(hi));
  };
  for (int64_t img = 0; img < int64_t(I.getInput()->getType()->dims()[0]);
       ++img) {
    out.push_back(packKernel(I, cv, ctx, rows, img));
    Kernel k(I.getName());
    // e = pt * pixelTasks + xt.
    unsigned e = k.newVar();
    ExprRef t0 = k.mul(k.div(k.var(e), cv.pixelTasks), cv.panelsPerTask);
    ExprRef n0 = k.mul(k.rem(k.var(e), cv.pixelTasks), cv.pixelsPerTask);
    std::vector<CallArg> args =
        preparedInputArgs(I, k, ctx, filter, rows, img * cv.M * cv.N);
    for (int64_t v : {cv.kp, cv.kc, cv.nr, cv.M, cv.N})
      args.push_back(valArg(k.constInt(v)));
    appendFusedActivation(k, I, args);
    for (ExprRef v :
         {t0, min(k, k.add(t0, k.constInt(cv.panelsPerTask)), cv.panels), n0,
          min(k, k.add(n0, k.constInt(cv.pixelsPerTask)), cv.N)})
      args.push_back(valArg(v));
    k.body() = {
        Kernel::loop(e, tasks, /*parallel=*/true,
                     {EMBER_LIBJIT_CALL(k, ember_conv_bf16_cv_dp, args)})};
    out.push_back(std::move(k));
  }
}
