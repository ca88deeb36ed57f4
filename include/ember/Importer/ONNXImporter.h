//===- ONNXImporter.h - ONNX models into a Module --------------*- C++ -*-===//
#ifndef EMBER_IMPORTER_ONNXIMPORTER_H
#define EMBER_IMPORTER_ONNXIMPORTER_H

#include "ember/Graph/Graph.h"

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace ember {

/// Options that complete what a model file leaves open.
struct ImportOptions {
  /// Values for symbolic dims (dim_param), by symbol name.
  std::vector<std::pair<std::string, int64_t>> symbols;
  /// When set, a symbol that is no dim_param of any graph input is an error
  /// (a user's typo would otherwise be ignored). The tools set it; harnesses
  /// that pass the same generic symbols to every model leave it off.
  bool requireSymbolsUsed = false;
  /// Full types for graph inputs (-model-input), by input name; they replace
  /// the declared type, which must have the same rank and element kind. A
  /// name that is no graph input is an error.
  std::map<std::string, Type> inputTypes;
  /// Graph inputs whose values are known at compile time: they become
  /// Constants (used by the conformance runner for shape-like inputs).
  std::map<std::string, std::shared_ptr<const Tensor>> frozenInputs;
  /// Evaluates a value whose operands are all Constants (transitively). When
  /// set, the importer folds every ONNX node whose inputs are all constant
  /// into a Constant (shape arithmetic); see makeConstantEvaluator in
  /// ember/Backend/ConstantEval.h. Shape and Size fold without it.
  std::function<llvm::Expected<Tensor>(NodeValue)> evaluator;
  /// When set, receives every value of the main graph by its ONNX name
  /// (graph inputs, initializers, node outputs) once the import succeeded:
  /// profile-guided quantization names values this way.
  std::map<std::string, NodeValue> *valueNames = nullptr;
};

/// Loads the ONNX model at \p path into \p M as a new Function named after
/// the graph: initializers become Constants, graph inputs and outputs become
/// Placeholders, outputs are written by Save nodes. A model with ops that
/// Ember cannot import fails with one error listing every such op (type,
/// node name, opset).
llvm::Expected<Function *> importONNXFile(llvm::StringRef path, Module &M,
                                          const ImportOptions &opts = {});

/// Like importONNXFile, from serialized ModelProto bytes. \p name is used in
/// messages in place of a file name.
llvm::Expected<Function *> importONNXBuffer(llvm::StringRef bytes,
                                            llvm::StringRef name, Module &M,
                                            const ImportOptions &opts = {});

} // namespace ember

#endif // EMBER_IMPORTER_ONNXIMPORTER_H
