//===- PoolLowering.cpp - Separable max and average pools per plane ------===//
//
// Float32 max and average pools that neither channel-vector nor depthwise
// lowering claims become one libjit call of ember_pool_plane_f32 per
// channel plane (libjit/Pool.inc): per output row, its input rows reduced
// column by column, then the padded result along the row.
//
//===----------------------------------------------------------------------===//
#include "Depthwise.h"
#include "LibCall.h"
#include "ember/Kernel/LowerToKernel.h"

#include <algorithm>

using namespace ember;
using namespace ember::cpu;
using kir::CallArg;
using kir::Kernel;

namespace {
/// libjit's kPoolBand: floats of a band of padded rows (a stride-2 band's
/// two phases take half as many each).
constexpr int64_t kPoolBand = 2048;

/// True when one padded row fits libjit's band.
bool fitsPoolRow(int64_t W, int64_t KW, int64_t OW, int64_t sw, int64_t pl) {
  int64_t PH = OW + (KW - 1) / 2;
  int64_t PW = std::max({W + pl, (OW - 1) * sw + KW, sw == 2 ? 2 * PH : 0});
  return PW <= kPoolBand;
}

template <class PoolInst>
std::optional<Kernel> poolPlanes(const PoolInst &I, bool isMax, bool countPad,
                                 const MemoryPlan &plan) {
  auto xd = I.getInput()->getType()->dims();
  auto yd = I.getDest()->getType()->dims();
  auto kn = I.getKernel(), st = I.getStrides(), pads = I.getPads();
  if (I.getDest()->getType()->getElemKind() != ElemKind::Float32 ||
      xd.size() != 4 || kn.size() != 2 || pads.size() != 4)
    return std::nullopt;
  int64_t H = xd[2], W = xd[3], OH = yd[2], OW = yd[3];
  if (!fitsPoolRow(W, kn[1], OW, st[1], pads[1]))
    return std::nullopt;
  Kernel k(I.getName());
  unsigned y = k.addBuffer(kir::bufferFor(I.getDest(), plan));
  unsigned x = k.addBuffer(kir::bufferFor(I.getInput(), plan));
  unsigned e = k.newVar();
  std::vector<CallArg> args = {bufArg(y, k.mul(k.var(e), OH * OW)),
                               bufArg(x, k.mul(k.var(e), H * W))};
  for (int64_t v : {H, W, kn[0], kn[1], OH, OW, st[0], st[1], pads[0], pads[1],
                    pads[2], pads[3], int64_t(isMax), int64_t(countPad)})
    args.push_back(valArg(k.constInt(v)));
  k.body() = {Kernel::loop(e, xd[0] * xd[1], /*parallel=*/true,
                           {EMBER_LIBJIT_CALL(k, ember_pool_plane_f32, args)})};
  return k;
}
} // namespace

std::optional<Kernel> cpu::lowerPoolPlanes(const Instruction &I,
                                           const DepthwiseContext &ctx) {
  if (ctx.path != ConvPath::Auto)
    return std::nullopt;
  if (auto *p = llvm::dyn_cast<MaxPoolInst>(&I))
    return poolPlanes(*p, /*isMax=*/true, /*countPad=*/false, ctx.plan);
  if (auto *p = llvm::dyn_cast<AvgPoolInst>(&I))
    return poolPlanes(*p, /*isMax=*/false, p->getCountIncludePad(), ctx.plan);
  return std::nullopt;
}
