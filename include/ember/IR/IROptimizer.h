//===- IROptimizer.h - Passes over the instruction-level IR ----*- C++ -*-===//
//
// Each pass is a function IRFunction& -> changed. Passes keep the meaning of
// every existing instruction kind: they only rename buffers (so that an
// elementwise instruction may name the same buffer @out and @in, or a
// producer may write straight into a tensorview of a bigger buffer), erase
// instructions and move allocation markers. Backends resolve every operand
// with MemoryPlan::locate, so they need nothing new to run the result.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_IR_IROPTIMIZER_H
#define EMBER_IR_IROPTIMIZER_H

#include "ember/IR/IR.h"

namespace ember {

/// Erases unused tensorviews, allocations used only by their deallocation,
/// and instructions (dead stores) whose results are never read.
bool eliminateDeadIR(IRFunction &F);

/// Concat into place: when every input of a concat is a buffer of its own
/// that the concat's destination can hold as a contiguous slice (all dims
/// before the axis are 1), the producers write into tensorviews of the
/// destination and the concat is erased. A concat whose inputs already lie
/// back to back in one buffer becomes a view of that buffer.
bool concatInPlace(IRFunction &F);

/// Removes the copy into a network output when the copied buffer can be
/// the output itself: its writers then write the output directly.
bool copyIntoOutputs(IRFunction &F);

/// Buffer sharing: a copy between two activations of one type, after which
/// neither is written again, is erased and the two become one buffer.
bool propagateCopies(IRFunction &F);

/// In-place reuse: an elementwise instruction writes over an input
/// activation of its result type whose last use it is.
bool reuseInPlace(IRFunction &F);

/// In-place convolution residuals: a convolution writes over its residual
/// activation where that is the residual's last use. Not in the default
/// pipeline: only for backends whose conv epilogues read residual element i
/// before they write output element i (Backend::convResidualInPlace).
bool reuseConvResidual(IRFunction &F);

/// Sinks allocations and views to their first use and hoists deallocations
/// to right after the last use.
bool shrinkLiveRanges(IRFunction &F);

/// A named IR pass.
struct IRPass {
  const char *name;
  bool (*run)(IRFunction &F);
};

/// Every pass, in the order the default pipeline runs them.
llvm::ArrayRef<IRPass> getIRPasses();

/// The pass called \p name, or null.
const IRPass *lookupIRPass(llvm::StringRef name);

/// Runs \p passes (by name) in order; with \p verifyEach, verifyIR runs after
/// each pass and an error names the pass that broke the IR.
llvm::Error runIRPasses(IRFunction &F, llvm::ArrayRef<std::string> passes,
                        bool verifyEach);

/// Runs the default pipeline (every pass in getIRPasses order).
llvm::Error optimizeIR(IRFunction &F, bool verifyEach);

} // namespace ember

#endif // EMBER_IR_IROPTIMIZER_H
