//===- ModelValidator.h - Structural checks of an ONNX model ---*- C++ -*-===//
//
// A model file comes from a stranger. Before any node is built, the
// validator checks the protobuf's structure (names, order, domains, shapes,
// nesting) so that the importer can assume a well-formed graph, and so that
// nothing is allocated for a tensor the model could never legally hold.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_LIB_IMPORTER_MODELVALIDATOR_H
#define EMBER_LIB_IMPORTER_MODELVALIDATOR_H

#include "ember/Graph/Graph.h"

#include "llvm/Support/Error.h"

#include <onnx/onnx_pb.h>

#include <string>

namespace ember {

/// The deepest nesting of subgraphs (If/Loop/Scan bodies) a model may have.
constexpr unsigned kMaxSubgraphDepth = 8;
/// The most nodes one graph may hold.
constexpr int kMaxGraphNodes = 1 << 20;
/// The largest model file (protobuf cannot parse 2 GiB or more).
constexpr uint64_t kMaxModelBytes = (uint64_t(1) << 31) - 1;

/// Checks \p model before anything is imported: a graph with outputs;
/// opset imports of known domains with positive versions;
/// every node input produced by a graph input, an initializer or an earlier
/// node (an input produced later is reported as a cycle when it is one, as
/// an ordering error otherwise); each value produced once; declared shapes
/// of inputs, outputs and value_info within rank and element limits;
/// supported graph input element types; subgraph nesting at most
/// kMaxSubgraphDepth. The first problem found is returned.
llvm::Error validateModel(const onnx::ModelProto &model);

/// Replaces the external data of every initializer of \p model by its bytes,
/// read from files under \p baseDir. A location must be a relative path
/// that stays inside \p baseDir (symbolic links are resolved), the file
/// must exist, and offset + length must lie within it and match the
/// tensor's shape. An empty \p baseDir (a model from memory) makes any
/// external reference an error.
llvm::Error resolveExternalData(onnx::ModelProto &model,
                                llvm::StringRef baseDir);

/// Checks that every value \p F computes stays within the tensor element
/// limit, so that nothing downstream computes sizes that overflow.
llvm::Error checkFunctionLimits(const Function &F);

} // namespace ember

#endif
