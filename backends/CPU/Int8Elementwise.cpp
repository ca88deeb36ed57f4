//===- Int8Elementwise.cpp - Quantized elementwise ops on the CPU ---------===//
//
// A RequantAdd becomes one parallel loop over chunks of its bytes, each a
// call of ember_qadd_u8 (libjit/Int8Elementwise.inc), which computes the
// lowered Dequantize -> Add -> [Relu] -> Quantize chain's Float32
// operations in registers: the bytes are read once and written once,
// where the chain writes and reads Float32 tensors between its steps.
//
//===----------------------------------------------------------------------===//
#include "Int8Elementwise.h"

#include "CPU.h"
#include "LibCall.h"

#include "ember/Backend/TargetDesc.h"
#include "ember/Kernel/LowerToKernel.h"

#include <algorithm>

using namespace ember;
using namespace ember::cpu;
using kir::CallArg;
using kir::Kernel;

bool cpu::keepsInt8Elementwise(const Node &n) {
  return llvm::isa<RequantAddNode>(n);
}

namespace {
/// The bytes of one call: a quarter of L1 per stream (three streams stay
/// in L1 while the loop runs; many tasks for the threads; calls long enough
/// that their cost vanishes), a multiple of the kernel's 16-byte vectors.
int64_t chunkBytes(const TargetDesc &T) {
  int64_t l1 = T.l1dBytes ? int64_t(T.l1dBytes) : 32 * 1024;
  return std::max<int64_t>(64, l1 / 4 / 64 * 64);
}

/// The call of ember_qadd_u8 on \p n bytes from element \p start.
kir::Stmt qaddCall(Kernel &k, const RequantAddInst &I,
                   llvm::ArrayRef<unsigned> bufs, kir::ExprRef start,
                   int64_t n) {
  auto isSigned = [](Value *v) {
    return int64_t(v->getType()->getElemKind() == ElemKind::Int8);
  };
  std::vector<CallArg> args = {bufArg(bufs[0], start),
                               bufArg(bufs[1], start),
                               bufArg(bufs[2], start),
                               valArg(k.constInt(n)),
                               valArg(k.constInt(isSigned(I.getLHS()))),
                               valArg(k.constInt(isSigned(I.getRHS()))),
                               valArg(k.constInt(isSigned(I.getDest()))),
                               valArg(k.constInt(I.getRelu() != 0))};
  for (unsigned b = 3; b < 9; ++b)
    args.push_back(bufArg(bufs[b]));
  return EMBER_LIBJIT_CALL(k, ember_qadd_u8, args);
}
} // namespace

std::optional<Kernel> cpu::lowerInt8Elementwise(const Instruction &I,
                                                const MemoryPlan &plan,
                                                const TargetDesc &target) {
  auto *add = llvm::dyn_cast<RequantAddInst>(&I);
  if (!add)
    return std::nullopt;
  Kernel k(I.getName());
  std::vector<unsigned> bufs;
  for (Value *v : {add->getDest(), add->getLHS(), add->getRHS(),
                   add->getLHSScale(), add->getLHSZero(), add->getRHSScale(),
                   add->getRHSZero(), add->getOutScale(), add->getOutZero()})
    bufs.push_back(k.addBuffer(kir::bufferFor(v, plan)));
  int64_t n = int64_t(add->getDest()->getType()->size());
  int64_t chunk = chunkBytes(target), full = n / chunk, tail = n % chunk;
  unsigned e = k.newVar();
  if (full > 0)
    k.body().push_back(
        Kernel::loop(e, full, /*parallel=*/true,
                     {qaddCall(k, *add, bufs, k.mul(k.var(e), chunk), chunk)}));
  if (tail > 0)
    k.body().push_back(qaddCall(k, *add, bufs, k.constInt(full * chunk), tail));
  return k;
}
