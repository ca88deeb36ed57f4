//===- ReduceLowering.cpp - Reductions over trailing axes as libjit calls -===//
//
// ReduceSum and ReduceMean of float32 over a tensor's trailing axes (every
// global average pool) sum one contiguous run per output: one call of
// libjit's ember_sum_f32 (Reduce.inc) per output, in a parallel loop. An
// Int32 ReduceSum over trailing axes (fold-qdq's quantized mean) likewise
// calls ember_sum_i32, and a float32 ReduceMin or ReduceMax over trailing
// axes (DynamicQuantizeLinear's range of a whole activation) calls
// ember_minmax_f32: the generic kernel's reduction is one scalar chain
// there. Other reductions keep the generic kernel.
//
//===----------------------------------------------------------------------===//

#include "CPU.h"
#include "LibCall.h"
#include "ember/Kernel/LowerToKernel.h"

using namespace ember;
using kir::Kernel;

std::optional<Kernel> cpu::lowerTrailingReduce(const Instruction &I,
                                               const MemoryPlan &plan) {
  bool mean = I.getKind() == ValueKind::ReduceMeanInst;
  bool isMax = I.getKind() == ValueKind::ReduceMaxInst;
  bool extreme = isMax || I.getKind() == ValueKind::ReduceMinInst;
  if (!mean && !extreme && I.getKind() != ValueKind::ReduceSumInst)
    return std::nullopt;
  Value *dest = I.getOperand(0).value, *src = I.getOperand(1).value;
  TypeRef in = src->getType();
  ElemKind kind = in->getElemKind();
  bool ints = kind == ElemKind::Int32 && !mean && !extreme;
  if ((kind != ElemKind::Float32 && !ints) ||
      dest->getType()->getElemKind() != kind)
    return std::nullopt;
  // The reduced axes (sorted, distinct) must be the last ones.
  llvm::ArrayRef<int64_t> axes = I.attr(0).ints;
  int64_t rank = in->rank(), r = axes.size();
  for (int64_t i = 0; i < r; ++i)
    if (axes[i] != rank - r + i)
      return std::nullopt;
  int64_t run = 1;
  for (int64_t d = rank - r; d < rank; ++d)
    run *= in->dims()[d];
  // Runs shorter than a vector gain nothing from the libjit call; an empty
  // input keeps the generic kernel.
  if (run < 16 || in->size() == 0)
    return std::nullopt;
  int64_t outputs = in->size() / run;
  Kernel k(I.getName());
  unsigned y = k.addBuffer(kir::bufferFor(dest, plan));
  unsigned x = k.addBuffer(kir::bufferFor(src, plan));
  unsigned o = k.newVar();
  std::vector<kir::CallArg> args = {bufArg(y, k.var(o)),
                                    bufArg(x, k.mul(k.var(o), run)),
                                    valArg(k.constInt(run))};
  if (ints) {
    k.body() = {Kernel::loop(o, outputs, /*parallel=*/true,
                             {EMBER_LIBJIT_CALL(k, ember_sum_i32, args)})};
    return k;
  }
  if (extreme) {
    args.push_back(valArg(k.constInt(isMax)));
    k.body() = {Kernel::loop(o, outputs, /*parallel=*/true,
                             {EMBER_LIBJIT_CALL(k, ember_minmax_f32, args)})};
    return k;
  }
  args.push_back(valArg(k.constFloat(mean ? double(run) : 1.0)));
  k.body() = {Kernel::loop(o, outputs, /*parallel=*/true,
                           {EMBER_LIBJIT_CALL(k, ember_sum_f32, args)})};
  return k;
}
