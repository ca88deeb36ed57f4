//===- ImportControlFlow.h - If, Loop and Scan ------------------*- C++ -*-===//
#ifndef EMBER_LIB_IMPORTER_IMPORTCONTROLFLOW_H
#define EMBER_LIB_IMPORTER_IMPORTCONTROLFLOW_H

#include "ImportContext.h"

#include "ember/Importer/ONNXImporter.h"

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

} // namespace ember

#endif
