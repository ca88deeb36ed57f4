//===- CPUBackend.cpp - The CPU backend's capabilities --------------------===//
#include "CPU.h"
#include "ConvPlan.h"
#include "Int8Elementwise.h"
#include "MatMulInt8.h"
#include "libjit/LibjitABI.h"

#include "ember/Base/Error.h"
#include "ember/Base/Progress.h"

#include <algorithm>

using namespace ember;
using namespace ember::cpu;

TargetDesc cpu::kernelTarget(const TargetDesc &T,
                             const CPUCodegenOptions &opts) {
  TargetDesc K = T;
  if (opts.simdWidth) {
    K.vectorBits = opts.simdWidth;
    if (opts.simdWidth >= 512)
      K.vectorRegisters = std::max(K.vectorRegisters, 32u);
  }
  return K;
}

bool cpu::useWideKernels(const TargetDesc &T) {
  return T.floatLanes() >= 16 && T.vectorRegisters >= 32;
}

bool CPUBackend::isOpSupported(const Node &n) const {
  return isTableOp(n.getKind()) && cpuSupports(n);
}

bool CPUBackend::shouldLower(const Node &n) const {
  // Conv has its own libjit kernel, MatMul reads broadcast and transposed
  // operands in place and a float32 Softmax over the last axis is one pass
  // per row (SoftmaxLowering.cpp); everything else with a lowering rule is
  // lowered exactly as for the Interpreter, but for the requantized integer
  // products the int8 kernel stores directly.
  // ScaledSoftmax and Attention are libjit kernels (AttentionLowering.cpp);
  // an Attention with heads wider than the kernel's blocks is lowered.
  if (auto *a = llvm::dyn_cast<AttentionNode>(&n))
    return a->getQ().dims().back() > libjit::kAttnMaxHeadDim ||
           a->getV().dims().back() > libjit::kAttnMaxHeadDim;
  if (llvm::isa<ScaledSoftmaxNode>(n))
    return false;
  if (auto *s = llvm::dyn_cast<SoftmaxNode>(&n))
    return s->getAxis() + 1 != int64_t(s->getInput().dims().size()) ||
           s->getInput().getType()->getElemKind() != ElemKind::Float32;
  return !llvm::isa<ConvNode>(n) && !llvm::isa<MatMulNode>(n) &&
         !keepsRequantProduct(n) && !keepsInt8Elementwise(n);
}

llvm::Error CPUBackend::printConvPlans(const IRFunction &F,
                                       const CodegenOptions &opts,
                                       llvm::raw_ostream &os) const {
  EMBER_ASSIGN_OR_RETURN(TargetDesc desc, TargetDesc::create(opts.target));
  cpu::printConvPlans(F, kernelTarget(desc, opts.cpu), opts.cpu, os);
  return llvm::Error::success();
}

llvm::Error CPUBackend::saveBundle(const Module &M, const IRFunction &F,
                                   const MemoryPlan &plan,
                                   const BundleOptions &opts) const {
  EMBER_ASSIGN_OR_RETURN(TargetDesc desc,
                         TargetDesc::create(opts.codegen.target));
  EMBER_ASSIGN_OR_RETURN(auto TM, createTargetMachine(desc));
  TargetDesc kt = kernelTarget(desc, opts.codegen.cpu);
  EMBER_ASSIGN_OR_RETURN(
      CPUProgram prog,
      lowerForCPU(F, plan, kt, opts.codegen.cpu, opts.weightCopied));
  noteStageDone("lower");
  return writeBundle(M, F, plan, prog, *TM, useWideKernels(kt), opts);
}
