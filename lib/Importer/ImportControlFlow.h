//===- ImportControlFlow.h - If, Loop and Scan ------------------*- C++ -*-===//
#ifndef EMBER_LIB_IMPORTER_IMPORTCONTROLFLOW_H
#define EMBER_LIB_IMPORTER_IMPORTCONTROLFLOW_H

#include "ImportContext.h"

#include "ember/Importer/ONNXImporter.h"

#include <optional>

namespace ember {

/// The most nodes an unrolled Loop or Scan may add (trip count times body
/// nodes): beyond it the import fails instead of building a huge graph.
constexpr int64_t kMaxUnrolledNodes = 4096;

/// The largest constant trip count of a Loop kept as a loop: a count that
/// large is a corrupt model rather than a computation (a run-time count
/// has no such limit).
constexpr int64_t kMaxLoopTrips = int64_t(1) << 20;

/// Imports \p g's nodes in order (the main graph or a subgraph);
/// ONNXImporter.cpp.
llvm::Error importNodes(ImportContext &ctx, const onnx::GraphProto &g,
                        const ImportOptions &opts);

/// Records the fully static shapes \p g declares for its outputs and
/// value_info (and the dims they suggest for elementwise inputs): they
/// imply shape operands computed at run time; ONNXImporter.cpp.
void declareStaticShapes(ImportContext &ctx, const onnx::GraphProto &g);

/// True for the op types importControlFlow handles.
bool isControlFlow(llvm::StringRef opType);

/// Imports an If, Loop or Scan node (docs/ControlFlow.md): If with a
/// constant condition imports the taken branch, with a run-time one both
/// branches and a Where per output; Loop and Scan are unrolled when their
/// trip count is known at compile time and the unrolled graph stays within
/// kMaxUnrolledNodes, else a Loop is kept as a loop.
llvm::Error importControlFlow(ImportContext &ctx, const onnx::NodeProto &node,
                              const ImportOptions &opts);

/// A Loop whose carried values that start empty and grow by a Concat along
/// axis 0 each iteration became scan outputs (ImportLoopAppend.cpp).
struct LoopAppends {
  onnx::NodeProto node;
  onnx::GraphProto body;
  /// The Loop's output and the scan output now holding its rows.
  struct Moved {
    std::string output, rows;
  };
  std::vector<Moved> moved;
};

/// The Loop \p node with \p body rewritten so that each carried value that
/// only grows is a scan output, or nothing when none does.
llvm::Expected<std::optional<LoopAppends>>
findLoopAppends(ImportContext &ctx, const onnx::NodeProto &node,
                const onnx::GraphProto &body);

/// After the rewritten Loop is imported: binds each grown value's name to
/// its scan output with the first two axes merged (and its count, if any).
llvm::Error bindLoopAppends(ImportContext &ctx, const onnx::NodeProto &node,
                            const LoopAppends &a);

/// Imports \p body once with its inputs bound to \p inputs and returns its
/// outputs. Names of the enclosing graphs stay visible (ONNX subgraphs may
/// read them); the body's own names are unbound again afterwards, so that
/// an unrolled body can be imported once per iteration.
llvm::Expected<std::vector<NodeValue>>
importBody(ImportContext &ctx, const onnx::NodeProto &node,
           const onnx::GraphProto &body, llvm::ArrayRef<NodeValue> inputs,
           const ImportOptions &opts);

/// Binds the node's outputs to \p values (as many as the node names).
llvm::Error bindOutputs(ImportContext &ctx, const onnx::NodeProto &node,
                        llvm::ArrayRef<NodeValue> values);

/// One Scan (opset 9 form) over \p states and \p inputs: per scan input its
/// axis and direction, per scan output its axis and direction.
struct ScanSpec {
  std::vector<NodeValue> states, inputs;
  std::vector<int64_t> inAxes, inReverse, outAxes, outReverse;
};

/// A Loop kept as a loop, \p body between LoopBegin and LoopEnd
/// (ImportKeptLoop.cpp; docs/ControlFlow.md "Loops kept as loops").
llvm::Error importRealLoop(ImportContext &ctx, const onnx::NodeProto &node,
                           const onnx::GraphProto &body,
                           const ImportOptions &opts);

/// A Scan of \p trips steps kept as a loop (ImportKeptLoop.cpp): gives the
/// final states and the scan outputs.
llvm::Expected<std::vector<NodeValue>>
scanAsLoop(ImportContext &ctx, const onnx::NodeProto &node,
           const onnx::GraphProto &body, const ScanSpec &s, int64_t trips,
           const ImportOptions &opts);

} // namespace ember

#endif
