//===- DepthwiseInt8.cpp - Requantized 8-bit depthwise conv ---------------===//
//
// Depthwise RequantConv as one parallel loop over the N * C channel planes,
// each a call of ember_dwconv_i8q (libjit/DepthwiseInt8.inc) with the
// channel's taps, bias and multiplier: the Int32 sums of the lowered
// IntConv and the requantizing store of the integer GEMM's kernel, so the
// bytes equal the Interpreter's.
//
//===----------------------------------------------------------------------===//
#include "DepthwiseInt8.h"

#include "CPU.h"
#include "LibCall.h"

#include "ember/Kernel/LowerToKernel.h"

using namespace ember;
using namespace ember::cpu;
using kir::CallArg;
using kir::ExprRef;
using kir::Kernel;

bool cpu::isDepthwiseInt8(const RequantConvInst &I) {
  auto xd = I.getInput()->getType()->dims();
  auto wd = I.getFilter()->getType()->dims();
  auto yd = I.getDest()->getType()->dims();
  return xd.size() == 4 && int64_t(xd[1]) == I.getGroup() && wd[0] == xd[1] &&
         wd[1] == 1 && int64_t(yd[3]) <= libjit::kDwInt8Row;
}

namespace {
/// \p v (one element or one per channel) at channel \p c.
CallArg perChannel(Kernel &k, Value *v, const MemoryPlan &plan, ExprRef c) {
  unsigned b = k.addBuffer(kir::bufferFor(v, plan));
  return v->getType()->size() == 1 ? bufArg(b) : bufArg(b, c);
}
} // namespace

void cpu::lowerDepthwiseInt8(const RequantConvInst &I,
                             const std::vector<int8_t> &weights,
                             const Int8Context &ctx, std::vector<Kernel> &out) {
  auto xd = I.getInput()->getType()->dims();
  auto wd = I.getFilter()->getType()->dims();
  auto yd = I.getDest()->getType()->dims();
  int64_t C = xd[1], H = xd[2], W = xd[3], KH = wd[2], KW = wd[3];
  int64_t OH = yd[2], OW = yd[3];
  kir::Buffer wBuf =
      appendConstant(ctx.constants, weights.data(), weights.size(),
                     I.getFilter()->getName().str() + ".i8.dw", ElemKind::Int8);
  Kernel k(I.getName());
  unsigned y = k.addBuffer(kir::bufferFor(I.getDest(), ctx.plan));
  unsigned x = k.addBuffer(kir::bufferFor(I.getInput(), ctx.plan));
  unsigned w = k.addBuffer(wBuf);
  unsigned zx = k.addBuffer(kir::bufferFor(I.getInputZero(), ctx.plan));
  unsigned zy = k.addBuffer(kir::bufferFor(I.getOutZero(), ctx.plan));
  unsigned e = k.newVar(); // image * C + channel
  ExprRef c = k.rem(k.var(e), C);
  auto st = I.getStrides(), pads = I.getPads(), dil = I.getDilations();
  std::vector<CallArg> args = {bufArg(y, k.mul(k.var(e), OH * OW)),
                               bufArg(x, k.mul(k.var(e), H * W)),
                               bufArg(w, k.mul(c, KH * KW))};
  for (int64_t v :
       {H, W, KH, KW, OH, OW, st[0], st[1], pads[0], pads[1], dil[0], dil[1]})
    args.push_back(valArg(k.constInt(v)));
  bool xSigned = I.getInput()->getType()->getElemKind() == ElemKind::Int8;
  args.push_back(valArg(k.constInt(xSigned)));
  args.push_back(bufArg(zx));
  args.push_back(perChannel(k, I.getBias(), ctx.plan, c));
  args.push_back(perChannel(k, I.getMultiplier(), ctx.plan, c));
  // The bounds of the store: [max(zero, qmin) with Relu, qmax].
  bool ySigned = I.getElemTy() == ElemKind::Int8;
  ExprRef zero = k.cast(k.load(zy, k.constInt(0)), kir::ScalarKind::Int64);
  ExprRef lo = k.constInt(ySigned ? -128 : 0);
  if (I.getRelu())
    lo = k.binary(kir::BinOp::Max, zero, lo);
  args.push_back(valArg(zero));
  args.push_back(valArg(lo));
  args.push_back(valArg(k.constInt(ySigned ? 127 : 255)));
  k.body() = {Kernel::loop(e, int64_t(xd[0]) * C, /*parallel=*/true,
                           {EMBER_LIBJIT_CALL(k, ember_dwconv_i8q, args)})};
  out.push_back(std::move(k));
}
