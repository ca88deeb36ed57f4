//===- LoweringSupport.cpp - What the CPU lowerings share -----------------===//
//
// Which nodes the CPU backend runs, and the helpers every CPU lowering file
// (CPULowering.cpp, the convolution paths, ReduceLowering.cpp) uses:
// constant filters and the fused residual operand.
//
//===----------------------------------------------------------------------===//
#include "CPU.h"
#include "Int8Elementwise.h"
#include "MatMulInt8.h"

#include "ember/Kernel/LowerToKernel.h"

using namespace ember;
using namespace ember::cpu;
using kir::CallArg;
using kir::ExprRef;
using kir::Kernel;

namespace {
/// Op kinds the CPU runs through libjit rather than the shared lowering.
struct LibraryOp {
  OpKind op;
  ElemKind kind;
};
const LibraryOp kLibraryOps[] = {{OpKind::Conv, ElemKind::Float32},
                                 {OpKind::MatMul, ElemKind::Float32},
                                 {OpKind::ScaledSoftmax, ElemKind::Float32},
                                 {OpKind::Attention, ElemKind::Float32}};
} // namespace

bool cpu::cpuSupports(const Node &n) {
  if (isTableOp(n.getKind()) && isLoopOp(toOpKind(n.getKind())))
    return true; // lowerLoopOp
  if (keepsRequantProduct(n) || keepsInt8Elementwise(n))
    return true; // lowerIntProductCPU
  for (const LibraryOp &l : kLibraryOps)
    if (isTableOp(n.getKind()) && l.op == toOpKind(n.getKind()))
      return l.kind == n.getType()->getElemKind();
  return kir::hasKernelLowering(n);
}

bool cpu::hasConstantFilter(const ConvInst &I) {
  auto *w = llvm::dyn_cast<WeightVar>(getOrigin(I.getFilter()));
  return w && w->isConstant();
}

CallArg cpu::convResidualArg(Kernel &k, const ConvInst &I,
                             const MemoryPlan &plan, ExprRef offset) {
  auto res = I.getResidual();
  if (res.empty())
    return valArg(k.constInt(0));
  return bufArg(k.addBuffer(kir::bufferFor(res[0], plan)), offset);
}
