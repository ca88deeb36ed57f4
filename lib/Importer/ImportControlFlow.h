//===- ImportControlFlow.h - If, Loop and Scan ------------------*- C++ -*-===//
#ifndef EMBER_LIB_IMPORTER_IMPORTCONTROLFLOW_H
#define EMBER_LIB_IMPORTER_IMPORTCONTROLFLOW_H

#include "ImportContext.h"

#include "ember/Importer/ONNXImporter.h"

namespace ember {

/// The most nodes an unrolled Loop or Scan may add (trip count times body
/// nodes): beyond it the import fails instead of building a huge graph.
constexpr int64_t kMaxUnrolledNodes = 4096;

/// Imports \p g's nodes in order (the main graph or a subgraph);
/// ONNXImporter.cpp.
llvm::Error importNodes(ImportContext &ctx, const onnx::GraphProto &g,
                        const ImportOptions &opts);

/// True for the op types importControlFlow handles.
bool isControlFlow(llvm::StringRef opType);

/// Imports an If, Loop or Scan node (docs/ControlFlow.md): If with a
/// constant condition imports the taken branch, with a run-time one both
/// branches and a Where per output; Loop and Scan are unrolled when their
/// trip count is known at compile time and the unrolled graph stays within
/// kMaxUnrolledNodes.
llvm::Error importControlFlow(ImportContext &ctx, const onnx::NodeProto &node,
                              const ImportOptions &opts);

} // namespace ember

#endif
