//===- DepthwiseInt8.cpp - Requantized 8-bit depthwise conv ---------------===//
//
// Depthwise RequantConv as one parallel loop over the N * C channel planes,
// each a call of ember_dwconv_i8q_vnni (libjit/DepthwiseInt8Vnni.inc) where
// the target has AVX512-VNNI and AVX512-VBMI, else of ember_dwconv_i8q
// (libjit/DepthwiseInt8.inc), with the channel's taps, bias and multiplier:
// the Int32 sums of the lowered IntConv and the requantizing store of the
// integer GEMM's kernel, so the bytes equal the Interpreter's.
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

/// Whether kernel target \p T runs the vpdpbusd kernel: it needs
/// AVX512-VNNI for the four-tap products, AVX512-VBMI (and BW) for the
/// byte permutation that gathers each lane's taps, and the 16-lane kernels
/// (useWideKernels: 64-byte vectors). Sixteen lanes of stride \p sw must
/// reach their four taps of dilation \p dw within one 64-byte load.
bool dwVnni(const TargetDesc &T, int64_t sw, int64_t dw) {
  return useWideKernels(T) && T.has(ISAExt::AVX512BW) &&
         T.has(ISAExt::AVX512VBMI) && T.has(ISAExt::AVX512VNNI) &&
         15 * sw + 3 * dw < 64;
}

/// The filter as ember_dwconv_i8q_vnni reads it: per channel, sum w, then
/// per row the taps in words of four bytes (zero past KW), tap kw in byte
/// kw mod 4 of word kw / 4, as vpdpbusd pairs them with its lanes' quads.
std::vector<int32_t> packDwWords(const std::vector<int8_t> &taps, int64_t C,
                                 int64_t KH, int64_t KW) {
  int64_t G = (KW + 3) / 4, per = 1 + KH * G;
  std::vector<int32_t> words(size_t(C * per), 0);
  for (int64_t c = 0; c < C; ++c) {
    int32_t *cw = words.data() + c * per;
    for (int64_t kh = 0; kh < KH; ++kh)
      for (int64_t kw = 0; kw < KW; ++kw) {
        int8_t tap = taps[size_t((c * KH + kh) * KW + kw)];
        cw[0] += tap;
        uint32_t byte = uint32_t(uint8_t(tap)) << (8 * (kw % 4));
        cw[1 + kh * G + kw / 4] =
            int32_t(uint32_t(cw[1 + kh * G + kw / 4]) | byte);
      }
  }
  return words;
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
  auto st = I.getStrides(), pads = I.getPads(), dil = I.getDilations();
  ExprRef c = k.rem(k.var(e), C);
  std::vector<CallArg> args = {bufArg(y, k.mul(k.var(e), OH * OW)),
                               bufArg(x, k.mul(k.var(e), H * W)),
                               bufArg(w, k.mul(c, KH * KW))};
  bool vnni = dwVnni(ctx.target, st[1], dil[1]);
  if (vnni) {
    std::vector<int32_t> words = packDwWords(weights, C, KH, KW);
    kir::Buffer b = appendConstant(
        ctx.constants, words.data(), words.size() * sizeof(int32_t),
        I.getFilter()->getName().str() + ".i8.dwq", ElemKind::Int32);
    args.push_back(bufArg(k.addBuffer(b), k.mul(c, 1 + KH * ((KW + 3) / 4))));
  }
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
  kir::Stmt call = vnni ? EMBER_LIBJIT_CALL(k, ember_dwconv_i8q_vnni, args)
                        : EMBER_LIBJIT_CALL(k, ember_dwconv_i8q, args);
  k.body() = {Kernel::loop(e, int64_t(xd[0]) * C, /*parallel=*/true, {call})};
  out.push_back(std::move(k));
}
