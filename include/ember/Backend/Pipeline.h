//===- Pipeline.h - Graph to runnable code for one backend -----*- C++ -*-===//
#ifndef EMBER_BACKEND_PIPELINE_H
#define EMBER_BACKEND_PIPELINE_H

#include "ember/Backend/Backend.h"

#include "llvm/Support/raw_ostream.h"

namespace ember {

/// Options and dump hooks for compileFunction.
struct CompileOptions {
  /// Where to print the optimized, lowered graph (null: nowhere).
  llvm::raw_ostream *dumpGraph = nullptr;
  /// Where to write the lowered graph as Graphviz.
  llvm::raw_ostream *dumpGraphDot = nullptr;
  /// Where to print the IR with its memory plan.
  llvm::raw_ostream *dumpIR = nullptr;
};

/// Everything a compile produces.
struct CompiledNetwork {
  std::shared_ptr<const IRFunction> ir;
  MemoryPlan plan;
  std::unique_ptr<CompiledFunction> function;
};

/// Runs the pipeline on \p F for \p B: verify, dead-code elimination,
/// lowering as the backend asks, a support check that lists every node the
/// backend cannot run, scheduling, IRGen, IR verification, memory planning
/// and its verification, then backend code generation.
llvm::Expected<CompiledNetwork> compileFunction(Function &F, const Backend &B,
                                                const CompileOptions &opts);

/// The steps of compileFunction up to memory planning (no code generation).
llvm::Expected<std::unique_ptr<IRFunction>>
optimizeAndGenerateIR(Function &F, const Backend &B,
                      const CompileOptions &opts);

} // namespace ember

#endif // EMBER_BACKEND_PIPELINE_H
