//===- PassManager.h - Graph passes, the registry and pipelines -*- C++ -*-===//
//
// A pass is a small named class that rewrites a Function and says whether
// it changed it. Every pass is listed in one registry (PassRegistry.cpp); a
// pipeline is data: a list of stages, each a list of pass names run once or
// repeated until none of them changes the graph. runPipeline wraps every
// pass with the instruments (print, verify, time, dot dumps).
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_OPTIMIZER_PASSMANAGER_H
#define EMBER_OPTIMIZER_PASSMANAGER_H

#include "ember/Graph/Graph.h"
#include "ember/Optimizer/Precision.h"

#include "llvm/Support/raw_ostream.h"

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace ember {

/// Evaluates values computed from Constants only and returns one tensor per
/// value, in order. Provided by the Backend layer (it compiles the subgraph
/// for the Interpreter); the Optimizer never includes a backend.
using EvaluateFn = std::function<llvm::Expected<std::vector<Tensor>>(
    llvm::ArrayRef<NodeValue>)>;

/// What the passes may ask about the target, and the hooks they may use.
struct PassContext {
  /// The backend's Backend::shouldLower (the "lower" pass asks it per node).
  std::function<bool(const Node &)> shouldLower = [](const Node &) {
    return true;
  };
  /// The backend's Backend::isOpSupported (widen-half asks it per node).
  std::function<bool(const Node &)> isOpSupported = [](const Node &) {
    return true;
  };
  /// Whether the backend's Conv applies \p act in its epilogue.
  std::function<bool(FusedActivation)> supportsConvActivation =
      [](FusedActivation) { return false; };
  /// Whether the backend's MatMul applies a fused epilogue (bias, residual,
  /// the activations of supportsConvActivation).
  bool supportsMatMulEpilogue = false;
  /// Whether the backend's Conv adds a Residual operand.
  bool supportsConvResidual = false;
  /// Whether the backend's Conv takes a filter computed at run time at
  /// little extra cost (fold-scale-into-conv makes such filters).
  bool supportsRuntimeConvFilter = false;
  /// The activation layout the backend's convolution prefers.
  ConvLayout convLayout = ConvLayout::NCHW;
  /// Whether fold-qdq turns QDQ pairs into integer products. A compile sets
  /// it from the backend (only where its integer kernels beat the float
  /// product of the dequantized operands) or the user's choice; a pass list
  /// that names fold-qdq runs it.
  bool foldQuantizedProducts = true;
  /// When set, fold-qdq folds only the products (Conv, MatMul, Gemm) it
  /// accepts: the backend's per-node choice where the user made none.
  std::function<bool(const Node &)> foldQuantizedProduct;
  /// The -precision choices convert-precision applies.
  PrecisionOptions precision;
  /// Constant evaluation; when empty, constant folding does nothing.
  EvaluateFn evaluate;
  /// Counters a pass may bump ("fold-batchnorm.folded" -> 53).
  std::map<std::string, unsigned> counters;
};

/// One graph transformation.
class Pass {
public:
  virtual ~Pass() = default;
  /// The registry name ("cse", "fold-batchnorm", ...).
  virtual llvm::StringRef getName() const = 0;
  /// A one-line description for -help style listings.
  virtual llvm::StringRef getDescription() const = 0;
  /// Rewrites \p F; returns true if anything changed.
  virtual bool run(Function &F, PassContext &ctx) = 0;
};

/// Creates the pass called \p name, or returns null for an unknown name.
std::unique_ptr<Pass> createPass(llvm::StringRef name);
/// Every registered pass name, in registry order.
std::vector<std::string> getPassNames();

/// A list of passes run in order, once or until none changes the graph.
struct PipelineStage {
  std::vector<std::string> passes;
  bool fixedPoint = false;
};
/// A pipeline is just data.
using Pipeline = std::vector<PipelineStage>;

/// Parses "dce,cse,(arith-simplify,cse)*" into stages: a parenthesised
/// group followed by '*' repeats to a fixed point. Unknown names are errors.
llvm::Expected<Pipeline> parsePipeline(llvm::StringRef text);
/// Renders a pipeline in the syntax parsePipeline reads.
std::string pipelineToString(const Pipeline &P);

/// Passes run before lowering, lowering itself, and the passes after it.
Pipeline getDefaultPipeline();
/// Lowering and dead-code elimination only (used to evaluate constants).
Pipeline getMinimalPipeline();

/// Instruments around every pass; the tools fill these from flags.
struct PassInstrumentOptions {
  std::set<std::string> printAfter;            ///< -print-after=PASS
  bool printAfterAll = false;                  ///< -print-after-all
  bool verifyEach = false;                     ///< -verify-each
  bool timePasses = false;                     ///< -time-passes
  std::set<std::string> disabled;              ///< -disable-pass=NAME
  std::map<std::string, std::string> dotAfter; ///< PASS -> FILE
  bool printStats = false;                     ///< -print-optimization-stats
  /// Where prints, timings and statistics go (null: llvm::errs()).
  llvm::raw_ostream *os = nullptr;
};

/// Runs \p P on \p F. With verifyEach, a verifier failure names the pass
/// that broke the graph. Unknown pass names are errors. Returns whether
/// anything changed.
llvm::Expected<bool> runPipeline(Function &F, const Pipeline &P,
                                 PassContext &ctx,
                                 const PassInstrumentOptions &opts);

/// Runs the single pass \p P with the instruments (for tests and tools
/// that hold a Pass object rather than a name).
llvm::Expected<bool> runPass(Function &F, Pass &P, PassContext &ctx,
                             const PassInstrumentOptions &opts);

/// Prints node counts per kind before and after, side by side.
void printNodeCountTable(const std::map<std::string, unsigned> &before,
                         const std::map<std::string, unsigned> &after,
                         llvm::raw_ostream &os);

} // namespace ember

#endif // EMBER_OPTIMIZER_PASSMANAGER_H
