//===- CPUBackend.cpp - The CPU backend's capabilities --------------------===//
#include "CPU.h"

#include "ember/Base/Error.h"

using namespace ember;
using namespace ember::cpu;

bool CPUBackend::isOpSupported(const Node &n) const {
  return isTableOp(n.getKind()) && cpuSupports(n);
}

bool CPUBackend::shouldLower(const Node &n) const {
  // Conv has its own libjit kernel and MatMul reads broadcast and transposed
  // operands in place; everything else with a lowering rule is lowered
  // exactly as for the Interpreter.
  return !llvm::isa<ConvNode>(n) && !llvm::isa<MatMulNode>(n);
}

llvm::Error CPUBackend::saveBundle(const Module &M, const IRFunction &F,
                                   const MemoryPlan &plan,
                                   const BundleOptions &opts) const {
  EMBER_ASSIGN_OR_RETURN(auto TM, createTargetMachine(opts.target, opts.mcpu));
  EMBER_ASSIGN_OR_RETURN(CPUProgram prog,
                         lowerForCPU(F, plan, hasWideSimd(*TM)));
  return writeBundle(M, F, plan, prog, opts);
}
