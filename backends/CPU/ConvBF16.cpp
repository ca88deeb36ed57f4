//===- ConvBF16.cpp - Convolutions with a BFloat16 filter on the CPU ------===//
#include "ConvBF16.h"

#include "BF16Storage.h"
#include "CPU.h"
#include "ConvBF16CV.h"
#include "ConvBF16Direct.h"
#include "ConvTiling.h"

#include "ember/Kernel/LowerToKernel.h"

#include "glog/logging.h"

#include "llvm/Support/Format.h"

#include <algorithm>

using namespace ember;
using namespace ember::cpu;
using kir::CallArg;
using kir::ExprRef;
using kir::Kernel;

namespace {
/// The shape of a convolution as a GEMM per image and group.
struct GemmShape {
  int64_t group, mPerG, K, N;
  explicit GemmShape(const ConvInst &I) {
    auto wd = I.getFilter()->getType()->dims();
    auto yd = I.getDest()->getType()->dims();
    group = I.getGroup();
    mPerG = int64_t(wd[0]) / group;
    K = int64_t(wd[1] * wd[2] * wd[3]);
    N = int64_t(yd[2] * yd[3]);
  }
};

} // namespace

/// The channel-vector layout of \p I where its lanes hold more output
/// values than the patch GEMM's pixel panels would. A convolution the
/// direct kernel takes (\p direct) keeps it: the transposed patch rows
/// copy its input KH KW times, the direct kernel's copy once.
static std::optional<ConvBF16CV>
channelVector(const ConvInst &I, const TargetDesc &T, bool direct) {
  if (direct)
    return std::nullopt;
  ConvBF16Tiling t = chooseConvBF16(I, T);
  return chooseConvBF16CV(I, T, laneUse(GemmShape(I).N, t.panels * t.nr));
}

bool cpu::usesConvBF16CV(const ConvInst &I, const TargetDesc &T) {
  return channelVector(I, T, chooseConvBF16Direct(I, T).has_value())
      .has_value();
}

LibKernel ConvBF16Tiling::entry() const {
  switch (plan.kernel) {
  case BF16MatMulKernel::AMX:
    return EMBER_LIBJIT_KERNEL(ember_conv_bf16_amx);
  case BF16MatMulKernel::DotProduct:
    return EMBER_LIBJIT_KERNEL(ember_conv_bf16_dp);
  case BF16MatMulKernel::Widen:
    break;
  }
  return EMBER_LIBJIT_KERNEL(ember_conv_bf16_widen);
}

ConvBF16Tiling cpu::chooseConvBF16(const ConvInst &I, const TargetDesc &T) {
  GemmShape s(I);
  ConvBF16Tiling t;
  t.plan = chooseBF16MatMul(T, s.mPerG);
  bool amx = t.plan.kernel == BF16MatMulKernel::AMX;
  t.nr = t.plan.tiling.panelCols;
  t.kp = std::max<int64_t>(1, ceilDiv(s.K, 2));
  if (amx) // whole B tiles per panel, and A rows of whole tiles
    t.kp = ceilDiv(t.kp, t.plan.tiling.kBlock) * t.plan.tiling.kBlock;
  t.lda = amx ? 2 * t.kp : s.K;
  t.kc = amx ? t.kp : t.plan.tiling.kBlock;
  t.panels = std::max<int64_t>(1, ceilDiv(s.N, t.nr));
  // AMX multiplies panels in pairs (a block of 2 x 2 tiles).
  int64_t unit = amx ? 2 : 1;
  int64_t panelBytes = t.kp * t.nr * 4;
  int64_t fit = std::max<int64_t>(1, int64_t(T.l2Bytes / 2) / panelBytes);
  t.panelsPerTask = std::max(unit, fit / unit * unit);
  int64_t chunks = ceilDiv(t.panels, t.panelsPerTask);
  int64_t rowUnit = t.plan.tiling.rows;
  int64_t blocks = std::max<int64_t>(1, ceilDiv(s.mPerG, rowUnit));
  if (chunks == 1 && s.mPerG * t.lda * 2 > t.panels * panelBytes) {
    t.shared = true;
    t.panelsPerTask = t.panels;
    t.chunks = 1;
    t.packTasks = std::min(t.panels, ceilDiv(kConvMinTasks, s.group));
    int64_t rowTasks =
        std::min(blocks, ceilDiv(kConvMinTasks, s.group * t.chunks));
    t.rowsPerTask = ceilDiv(blocks, rowTasks) * rowUnit;
    t.rowTasks = ceilDiv(s.mPerG, t.rowsPerTask);
    return t;
  }
  if (s.group * chunks < kConvMinTasks) {
    int64_t want =
        std::min(ceilDiv(t.panels, unit), ceilDiv(kConvMinTasks, s.group));
    t.panelsPerTask = ceilDiv(ceilDiv(t.panels, want), unit) * unit;
    // Rounding the share up can leave fewer chunks than wanted (49 panels
    // in 7 of 7), and the rows would then split, each row task packing
    // the chunk's panels again. Rounding down gives the chunks (9: 8 of 6
    // and one of 1, which the team's work stealing balances) and packs
    // each panel once.
    int64_t down = t.panels / want / unit * unit;
    if (ceilDiv(t.panels, t.panelsPerTask) < want && down >= unit)
      t.panelsPerTask = down;
  }
  t.panelsPerTask = std::min(t.panelsPerTask, t.panels);
  t.chunks = ceilDiv(t.panels, t.panelsPerTask);
  // Rows split further where the pixels are too few; each such task packs
  // the chunk's panels again, so never into blocks of fewer than 4 tiles'
  // rows.
  int64_t rowTasks = 1;
  if (s.group * t.chunks < kConvMinTasks)
    rowTasks = std::min(ceilDiv(blocks, 4),
                        ceilDiv(kConvMinTasks, s.group * t.chunks));
  rowTasks = std::max<int64_t>(1, rowTasks);
  t.rowsPerTask = ceilDiv(blocks, rowTasks) * rowUnit;
  t.rowTasks = std::max<int64_t>(1, ceilDiv(s.mPerG, t.rowsPerTask));
  return t;
}

ConvPlan cpu::planConvBF16(const ConvInst &I, const TargetDesc &T) {
  auto d = chooseConvBF16Direct(I, T);
  if (auto cv = channelVector(I, T, d.has_value()))
    return planConvBF16CV(I, *cv, T);
  if (d)
    return planConvBF16Direct(I, *d, T);
  GemmShape s(I);
  ConvBF16Tiling t = chooseConvBF16(I, T);
  auto xd = I.getInput()->getType()->dims();
  ConvPlan P;
  P.path = ConvPathKind::BF16Gemm;
  P.bf16Kernel = t.entry().name;
  P.macs = int64_t(xd[0]) * s.group * s.mPerG * s.K * s.N;
  // A pair of multiply-adds per Float32 lane (vdpbf16ps's rate).
  P.vectorMacs = P.macs / std::max<int64_t>(1, 2 * T.floatLanes());
  P.copyBytes =
      int64_t(xd[0]) * s.group * t.rowTasks * t.panels * t.kp * t.nr * 4;
  std::string s2;
  llvm::raw_string_ostream os(s2);
  os << "BFloat16 filter; tasks of " << t.panelsPerTask << " panels x "
     << t.rowsPerTask << " channels"
     << (t.shared ? ", panels packed once" : "");
  P.reason = os.str();
  return P;
}

/// The filter [M][K] (BFloat16, in the constant image) with rows \p lda
/// apart, zero-padded: the kernels' A.
static kir::Buffer layOutFilter(const ConvInst &I, int64_t lda,
                                const MatMulBF16Context &ctx) {
  TypeRef ft = I.getFilter()->getType();
  int64_t M = int64_t(ft->dims()[0]), K = int64_t(ft->size()) / M;
  std::vector<uint16_t> packed(size_t(M * lda), 0);
  const uint16_t *b = constantFilterBF16(I, ctx);
  for (int64_t m = 0; m < M; ++m)
    std::copy(b + m * K, b + (m + 1) * K, packed.begin() + m * lda);
  return appendConstant(ctx.constants, packed.data(), packed.size() * 2,
                        I.getFilter()->getName().str() + ".bf16.rows",
                        ElemKind::BFloat16);
}

const uint16_t *cpu::constantFilterBF16(const ConvInst &I,
                                        const MatMulBF16Context &ctx) {
  auto *w = llvm::dyn_cast<WeightVar>(getOrigin(I.getFilter()));
  CHECK(w && w->isConstant()) << "BFloat16 conv filter computed at run time";
  kir::Buffer src = kir::bufferFor(I.getFilter(), ctx.plan);
  return reinterpret_cast<const uint16_t *>(ctx.constants.data() + src.offset);
}

void cpu::appendConvGeometry(const ConvInst &I, Kernel &k,
                             std::vector<CallArg> &args) {
  auto xd = I.getInput()->getType()->dims();
  auto wd = I.getFilter()->getType()->dims();
  auto yd = I.getDest()->getType()->dims();
  auto st = I.getStrides(), pads = I.getPads(), dil = I.getDilations();
  for (int64_t v :
       {int64_t(xd[2]), int64_t(xd[3]), int64_t(wd[2]), int64_t(wd[3]),
        int64_t(yd[3]), st[0], st[1], pads[0], pads[1], dil[0], dil[1]})
    args.push_back(valArg(k.constInt(v)));
}

void cpu::appendConvOutputs(const ConvInst &I, Kernel &k,
                            const MatMulBF16Context &ctx, ExprRef yOffset,
                            std::vector<CallArg> &args) {
  CallArg none = valArg(k.constInt(0));
  if (ctx.storage && ctx.storage->stored(I.getDest())) {
    args.push_back(none);
    args.push_back(
        bufArg(k.addBuffer(bf16Buffer(I.getDest(), ctx.plan)), yOffset));
    return;
  }
  args.push_back(
      bufArg(k.addBuffer(kir::bufferFor(I.getDest(), ctx.plan)), yOffset));
  args.push_back(none);
}

void cpu::appendConvInput(const ConvInst &I, Kernel &k,
                          const MatMulBF16Context &ctx, ExprRef xOffset,
                          std::vector<CallArg> &args) {
  CallArg none = valArg(k.constInt(0));
  if (ctx.storage && ctx.storage->stored(I.getInput())) {
    args.push_back(none);
    args.push_back(
        bufArg(k.addBuffer(bf16Buffer(I.getInput(), ctx.plan)), xOffset));
    return;
  }
  args.push_back(
      bufArg(k.addBuffer(kir::bufferFor(I.getInput(), ctx.plan)), xOffset));
  args.push_back(none);
}

std::vector<CallArg> cpu::preparedInputArgs(const ConvInst &I, Kernel &k,
                                            const MatMulBF16Context &ctx,
                                            const kir::Buffer &filter,
                                            const kir::Buffer &prepared,
                                            int64_t yOffset) {
  ExprRef yOff = k.constInt(yOffset);
  std::vector<CallArg> args;
  appendConvOutputs(I, k, ctx, yOff, args);
  unsigned w = k.addBuffer(filter);
  unsigned p = k.addBuffer(prepared);
  unsigned b = k.addBuffer(kir::bufferFor(I.getBias(), ctx.plan));
  args.insert(args.end(), {bufArg(w, k.constInt(0)), bufArg(p, k.constInt(0)),
                           bufArg(b, k.constInt(0)),
                           convResidualArg(k, I, ctx.plan, yOff)});
  return args;
}

/// The kernel that writes image \p img's shared panels (one slot per
/// group) in t.packTasks tasks per group.
static Kernel packShared(const ConvInst &I, const ConvBF16Tiling &t,
                         const MatMulBF16Context &ctx, const kir::Buffer &slots,
                         int64_t img) {
  GemmShape s(I);
  auto xd = I.getInput()->getType()->dims();
  int64_t C = int64_t(xd[1]), plane = int64_t(xd[2] * xd[3]);
  Kernel k((I.getName() + ".pack").str());
  unsigned p = k.addBuffer(slots);
  unsigned x = k.addBuffer(kir::bufferFor(I.getInput(), ctx.plan));
  // e = g * packTasks + pt.
  unsigned e = k.newVar();
  ExprRef g = k.div(k.var(e), t.packTasks);
  ExprRef pt = k.rem(k.var(e), t.packTasks);
  std::vector<CallArg> args = {bufArg(p, k.mul(g, t.slotBytes() / 2)),
                               bufArg(x, k.add(k.constInt(img * C * plane),
                                               k.mul(g, C / s.group * plane)))};
  for (int64_t v : {s.K, s.N, t.nr, t.kp})
    args.push_back(valArg(k.constInt(v)));
  appendConvGeometry(I, k, args);
  args.push_back(valArg(k.div(k.mul(pt, t.panels), t.packTasks)));
  args.push_back(valArg(
      k.div(k.add(k.mul(pt, t.panels), k.constInt(t.panels)), t.packTasks)));
  k.body() = {Kernel::loop(e, s.group * t.packTasks, /*parallel=*/true,
                           {EMBER_LIBJIT_CALL(k, ember_conv_bf16_pack, args)})};
  return k;
}

void cpu::lowerConvBF16(const ConvInst &I, const MatMulBF16Context &ctx,
                        std::vector<Kernel> &out) {
  auto d = chooseConvBF16Direct(I, ctx.target);
  if (auto cv = channelVector(I, ctx.target, d.has_value())) {
    lowerConvBF16CV(I, *cv, ctx, out);
    return;
  }
  if (d) {
    lowerConvBF16Direct(I, *d, ctx, out);
    return;
  }
  GemmShape s(I);
  ConvBF16Tiling t = chooseConvBF16(I, ctx.target);
  auto xd = I.getInput()->getType()->dims();
  int64_t C = int64_t(xd[1]), plane = int64_t(xd[2] * xd[3]);
  int64_t M = s.group * s.mPerG, cPerG = C / s.group;
  int64_t tasks = s.group * t.chunks * t.rowTasks;
  kir::Buffer filter = layOutFilter(I, t.lda, ctx);
  // Shared panels: one slot per group, packed once per image.
  int64_t slotCount = t.shared ? s.group : tasks;
  kir::Buffer slots{Region::Activation, ctx.scratchOffset,
                    uint64_t(slotCount * t.slotBytes()), ElemKind::BFloat16,
                    "conv.bf16.panels"};
  ctx.scratchSize = std::max<size_t>(ctx.scratchSize, slots.size);
  for (int64_t img = 0; img < int64_t(xd[0]); ++img) {
    if (t.shared)
      out.push_back(packShared(I, t, ctx, slots, img));
    Kernel k(I.getName());
    unsigned w = k.addBuffer(filter);
    unsigned x = k.addBuffer(kir::bufferFor(I.getInput(), ctx.plan));
    unsigned b = k.addBuffer(kir::bufferFor(I.getBias(), ctx.plan));
    unsigned p = k.addBuffer(slots);
    // e = (g * chunks + ch) * rowTasks + rt.
    unsigned e = k.newVar();
    ExprRef rt = k.rem(k.var(e), t.rowTasks);
    ExprRef ch = k.rem(k.div(k.var(e), t.rowTasks), t.chunks);
    ExprRef g = k.div(k.var(e), t.rowTasks * t.chunks);
    ExprRef yOff = k.mul(k.add(k.constInt(img * M), k.mul(g, s.mPerG)), s.N);
    auto min = [&](ExprRef v, int64_t hi) {
      return k.binary(kir::BinOp::Min, v, k.constInt(hi));
    };
    ExprRef m0 = k.mul(rt, t.rowsPerTask), t0 = k.mul(ch, t.panelsPerTask);
    std::vector<CallArg> args;
    appendConvOutputs(I, k, ctx, yOff, args);
    args.insert(
        args.end(),
        {bufArg(w, k.mul(g, s.mPerG * t.lda)),
         bufArg(x, k.add(k.constInt(img * C * plane), k.mul(g, cPerG * plane))),
         bufArg(b, k.mul(g, s.mPerG)), convResidualArg(k, I, ctx.plan, yOff),
         bufArg(p, k.mul(t.shared ? g : k.var(e), t.slotBytes() / 2))});
    for (int64_t v : {s.K, t.lda, s.N, t.kp, t.kc, int64_t(!t.shared)})
      args.push_back(valArg(k.constInt(v)));
    appendConvGeometry(I, k, args);
    appendFusedActivation(k, I, args);
    for (ExprRef v :
         {m0, min(k.add(m0, k.constInt(t.rowsPerTask)), s.mPerG), t0,
          min(k.add(t0, k.constInt(t.panelsPerTask)), t.panels)})
      args.push_back(valArg(v));
    k.body() = {Kernel::loop(e, tasks, /*parallel=*/true,
                             {checkedLibCall(k, t.entry(), args)})};
    out.push_back(std::move(k));
  }
}
