//===- LoopLowering.cpp - Loops kept as loops on the CPU ------------------===//
//
// The loop ops' kernels come from the shared lowering (lib/Kernel/LoopOps.cpp);
// here the loops are found among the CPU's kernels, for the entries
// (CodeGen.cpp), which branch on the loop flag after calling a loopbegin or
// loopend kernel.
//
//===----------------------------------------------------------------------===//
#include "CPU.h"

using namespace ember;
using namespace ember::cpu;
using kir::Kernel;

std::vector<CPULoop> cpu::findKernelLoops(llvm::ArrayRef<Kernel> kernels,
                                          uint64_t flagOffset) {
  std::vector<CPULoop> loops;
  std::vector<size_t> open; // loops nest without crossing (verifyIR)
  for (size_t i = 0; i < kernels.size(); ++i) {
    llvm::ArrayRef<const Instruction *> src = kernels[i].getSources();
    if (src.size() != 1)
      continue;
    if (src[0]->getKind() == ValueKind::LoopBeginInst) {
      open.push_back(loops.size());
      loops.push_back({i, i, flagOffset});
    } else if (src[0]->getKind() == ValueKind::LoopEndInst && !open.empty()) {
      loops[open.back()].end = i;
      open.pop_back();
    }
  }
  return loops;
}
