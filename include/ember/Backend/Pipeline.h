//===- Pipeline.h - Graph to runnable code for one backend -----*- C++ -*-===//
#ifndef EMBER_BACKEND_PIPELINE_H
#define EMBER_BACKEND_PIPELINE_H

#include "ember/Backend/Backend.h"
#include "ember/Optimizer/PassManager.h"

#include "llvm/Support/raw_ostream.h"

#include <optional>

namespace ember {

/// Options and dump hooks for compileFunction.
struct CompileOptions {
  /// Where to print the optimized, lowered graph (null: nowhere).
  llvm::raw_ostream *dumpGraph = nullptr;
  /// Where to write the lowered graph as Graphviz.
  llvm::raw_ostream *dumpGraphDot = nullptr;
  /// Where to print the IR with its memory plan.
  llvm::raw_ostream *dumpIR = nullptr;
  /// Where to print the backend's convolution plans (null: nowhere).
  llvm::raw_ostream *printConvPlans = nullptr;
  /// Run the IR optimizer (in-place reuse, concat into place, copy removal,
  /// live-range shrinking) before memory planning.
  bool optimizeIR = true;
  /// The graph pipeline; unset means getDefaultPipeline().
  std::optional<Pipeline> pipeline;
  /// Overrides the backend's preferred convolution layout (testing: run
  /// the NHWC path of the conv-layout pass on the Interpreter).
  std::optional<ConvLayout> convLayout;
  /// Overrides whether QDQ pairs around Conv/MatMul/Gemm become exact
  /// integer products (fold-qdq) instead of the backend's preference.
  std::optional<bool> integerProducts;
  /// Instruments around every pass (print, verify, time, statistics).
  PassInstrumentOptions passes;
  /// Target and code generation choices for the backend's compile.
  CodegenOptions codegen;
};

/// Everything a compile produces.
struct CompiledNetwork {
  std::shared_ptr<const IRFunction> ir;
  MemoryPlan plan;
  /// The peak of live activation bytes of the node schedule, before the IR
  /// optimizer (see schedulePeakBytes).
  size_t schedulePeak = 0;
  std::unique_ptr<CompiledFunction> function;
};

/// The PassContext for \p B: its shouldLower and Conv epilogue
/// capabilities, and constant evaluation through the Interpreter.
/// \p opts may override the preferred Conv layout.
PassContext makePassContext(const Backend &B,
                            const CompileOptions &opts = CompileOptions());

/// Evaluates \p values, which must be computed from Constants only, by
/// compiling a copy of their subgraph for the registered Interpreter
/// backend and running it. Errors if the Interpreter is not registered or
/// cannot run a node.
llvm::Expected<std::vector<Tensor>>
evaluateConstantValues(llvm::ArrayRef<NodeValue> values);

/// Runs the pipeline on \p F for \p B: verify, the graph pipeline (passes
/// before lowering, lowering as the backend asks, passes after), a support
/// check that lists every node the backend cannot run, scheduling, IRGen,
/// IR verification, the IR optimizer (verified after every pass in debug
/// builds), memory planning and its verification, then backend code
/// generation.
llvm::Expected<CompiledNetwork> compileFunction(Function &F, const Backend &B,
                                                const CompileOptions &opts);

/// Whether the values bound in \p b satisfy \p M's input checks (shape
/// operands fed at run time; see Module::getInputChecks).
llvm::Error checkInputValues(const Module &M, const Bindings &b);

/// The error of the failed run-time check whose number the run wrote
/// into \p M's check status (Module::getCheckStatus), or success.
llvm::Error checkRunStatus(const Module &M, const Bindings &b);

/// \p f, made to check \p M's input values before each run and its
/// run-time checks' status after it (unchanged if \p M has neither).
/// compileFunction applies it.
std::unique_ptr<CompiledFunction>
withInputChecks(const Module &M, std::unique_ptr<CompiledFunction> f);

/// The steps of compileFunction up to memory planning (no code generation),
/// IR optimization included. \p schedulePeak, if given, receives the
/// schedule's peak of live activation bytes.
llvm::Expected<std::unique_ptr<IRFunction>>
optimizeAndGenerateIR(Function &F, const Backend &B, const CompileOptions &opts,
                      size_t *schedulePeak = nullptr);

} // namespace ember

#endif // EMBER_BACKEND_PIPELINE_H
