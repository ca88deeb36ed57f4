//===- SoftmaxLowering.cpp - Last-axis Softmax as libjit calls -----------===//
//
// A float32 Softmax over its input's last axis (every attention's, every
// classifier's) normalizes contiguous rows: one call of libjit's
// ember_softmax_f32 (Softmax.inc) per row, in a parallel loop. The CPU
// backend keeps such Softmax nodes (CPUBackend::shouldLower); one over
// another axis is lowered to reductions and elementwise ops as for the
// Interpreter.
//
//===----------------------------------------------------------------------===//

#include "CPU.h"
#include "LibCall.h"
#include "ember/Kernel/LowerToKernel.h"

using namespace ember;
using kir::Kernel;

std::optional<Kernel> cpu::lowerSoftmaxRows(const Instruction &I,
                                            const MemoryPlan &plan) {
  auto *s = llvm::dyn_cast<SoftmaxInst>(&I);
  if (!s)
    return std::nullopt;
  TypeRef in = s->getInput()->getType();
  if (in->getElemKind() != ElemKind::Float32 ||
      s->getDest()->getType()->getElemKind() != ElemKind::Float32 ||
      s->getAxis() + 1 != int64_t(in->rank()) || in->size() == 0)
    return std::nullopt;
  int64_t row = in->dims().back();
  Kernel k(I.getName());
  unsigned y = k.addBuffer(kir::bufferFor(s->getDest(), plan));
  unsigned x = k.addBuffer(kir::bufferFor(s->getInput(), plan));
  unsigned r = k.newVar();
  std::vector<kir::CallArg> args = {bufArg(y, k.mul(k.var(r), row)),
                                    bufArg(x, k.mul(k.var(r), row)),
                                    valArg(k.constInt(row))};
  k.body() = {Kernel::loop(r, in->size() / row, /*parallel=*/true,
                           {EMBER_LIBJIT_CALL(k, ember_softmax_f32, args)})};
  return k;
}
