//===- IRPrinter.h - Textual IR --------------------------------*- C++ -*-===//
#ifndef EMBER_IR_IRPRINTER_H
#define EMBER_IR_IRPRINTER_H

#include "ember/IR/MemoryPlanner.h"

#include "llvm/Support/raw_ostream.h"

namespace ember {

/// Prints \p F: the weights, then the numbered instructions with operand
/// roles and attributes. With \p plan, every buffer shows its region,
/// offset and size, and a memory summary follows.
void printIR(const IRFunction &F, llvm::raw_ostream &os,
             const MemoryPlan *plan = nullptr);
std::string irToString(const IRFunction &F, const MemoryPlan *plan = nullptr);

/// Prints the sizes of the three regions of \p plan: constant weights,
/// mutable weights (inputs and outputs), and the activation arena next to
/// its lower bound, their ratio and the no-reuse sum. A non-zero
/// \p schedulePeak (see schedulePeakBytes) is printed too. This is what
/// the tools' -print-memory flag shows.
void printMemorySummary(const MemoryPlan &plan, llvm::raw_ostream &os,
                        size_t schedulePeak = 0);

} // namespace ember

#endif // EMBER_IR_IRPRINTER_H
