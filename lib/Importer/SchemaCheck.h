//===- SchemaCheck.h - Nodes against ONNX's operator schemas ---*- C++ -*-===//
//
// Hand-written checks in each op importer miss cases that ONNX's own
// operator schemas state (input/output arity, required inputs, attribute
// names and types, element-type constraints). Checking every node against
// libonnx's schema registry before import turns any such invalid node into
// one error naming it, whatever its op, the way onnxruntime rejects it.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_LIB_IMPORTER_SCHEMACHECK_H
#define EMBER_LIB_IMPORTER_SCHEMACHECK_H

#include "llvm/Support/Error.h"

#include <onnx/onnx_pb.h>

#include <cstdint>

namespace ember {

/// Checks every default-domain node of \p model (subgraphs included)
/// against libonnx's schema of its op at \p opset, the model's
/// default-domain opset. Nodes of other domains and op types libonnx does
/// not know are left to the importer's unsupported-node listing. For an
/// opset newer than libonnx knows, only the inputs that the op's newest
/// known schema requires are checked (attributes and types may have
/// changed since). Returns the first invalid node as
/// "node 'NAME' (OP): ...".
llvm::Error checkNodeSchemas(const onnx::ModelProto &model, int64_t opset);

} // namespace ember

#endif
