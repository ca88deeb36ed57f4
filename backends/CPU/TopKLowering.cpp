//===- TopKLowering.cpp - Last-axis TopK as libjit calls ------------------===//
//
// A float32 TopK along its input's last axis (a detector's score sort, a
// classifier's top 5) selects from contiguous rows: one call of libjit's
// ember_topk_f32 (TopK.inc, a heap of the K best) per row, in a parallel
// loop, O(n log K) where the portable kernel, kept for the other axes,
// element kinds and the CUDA backend, ranks every pair (O(n^2)).
//
//===----------------------------------------------------------------------===//

#include "CPU.h"
#include "LibCall.h"
#include "ember/Kernel/LowerToKernel.h"

using namespace ember;
using kir::Kernel;

std::optional<Kernel> cpu::lowerTopKRows(const Instruction &I,
                                         const MemoryPlan &plan) {
  auto *t = llvm::dyn_cast<TopKInst>(&I);
  if (!t)
    return std::nullopt;
  TypeRef in = t->getInput()->getType();
  int64_t k = t->getK();
  if (in->getElemKind() != ElemKind::Float32 ||
      t->getDestValues()->getType()->getElemKind() != ElemKind::Float32 ||
      t->getDestIndices()->getType()->getElemKind() != ElemKind::Int64 ||
      t->getAxis() + 1 != in->rank() || in->size() == 0 || k < 1 ||
      k > int64_t(in->dims().back()))
    return std::nullopt;
  int64_t row = in->dims().back();
  Kernel kn(I.getName());
  unsigned vals = kn.addBuffer(kir::bufferFor(t->getDestValues(), plan));
  unsigned idxs = kn.addBuffer(kir::bufferFor(t->getDestIndices(), plan));
  unsigned x = kn.addBuffer(kir::bufferFor(t->getInput(), plan));
  unsigned r = kn.newVar();
  std::vector<kir::CallArg> args = {
      bufArg(vals, kn.mul(kn.var(r), k)),
      bufArg(idxs, kn.mul(kn.var(r), k)),
      bufArg(x, kn.mul(kn.var(r), row)),
      valArg(kn.constInt(row)),
      valArg(kn.constInt(k)),
      valArg(kn.constInt(t->getLargest() ? 1 : 0))};
  kn.body() = {Kernel::loop(r, in->size() / row, /*parallel=*/true,
                            {EMBER_LIBJIT_CALL(kn, ember_topk_f32, args)})};
  return kn;
}
