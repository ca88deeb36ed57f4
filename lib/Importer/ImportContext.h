//===- ImportContext.h - State shared by the op importers ------*- C++ -*-===//
#ifndef EMBER_LIB_IMPORTER_IMPORTCONTEXT_H
#define EMBER_LIB_IMPORTER_IMPORTCONTEXT_H

#include "ember/Base/Error.h"
#include "ember/Graph/Graph.h"

#include <onnx/onnx_pb.h>

#include <map>
#include <string>

namespace ember {

/// The graph being built and the ONNX value names bound so far.
class ImportContext {
public:
  ImportContext(Module &M, Function &F, int64_t opset)
      : M_(M), F_(F), opset_(opset) {}

  Module &module() { return M_; }
  Function &fn() { return F_; }
  int64_t opset() const { return opset_; }

  /// Binds ONNX value \p name to \p v.
  void bind(const std::string &name, NodeValue v) { values_[name] = v; }
  bool isBound(const std::string &name) const { return values_.count(name); }
  /// The value of ONNX name \p name, or an error naming the node.
  llvm::Expected<NodeValue> get(const std::string &name);

  /// Input \p i of \p node; fails if missing or unbound.
  llvm::Expected<NodeValue> input(const onnx::NodeProto &node, int i);
  /// True if \p node has a non-empty input at \p i.
  static bool hasInput(const onnx::NodeProto &node, int i) {
    return i < node.input_size() && !node.input(i).empty();
  }
  /// The payload of input \p i when it is a Constant; fails otherwise.
  llvm::Expected<const Tensor *> constantInput(const onnx::NodeProto &node,
                                               int i);
  /// A constant integer list (int64 or int32) from input \p i.
  llvm::Expected<std::vector<int64_t>> constantInts(const onnx::NodeProto &node,
                                                    int i);
  /// Binds output 0 of \p node to \p v, and fails if another output is used.
  llvm::Error setOutput(const onnx::NodeProto &node, NodeValue v);

  /// Applies ONNX multidirectional broadcasting to \p a and \p b.
  llvm::Expected<std::pair<NodeValue, NodeValue>>
  broadcastPair(const onnx::NodeProto &node, NodeValue a, NodeValue b);
  /// Broadcasts \p v to \p dims (unidirectional).
  llvm::Expected<NodeValue> broadcastTo(const onnx::NodeProto &node,
                                        NodeValue v,
                                        llvm::ArrayRef<dim_t> dims);

  /// A float32 constant of \p dims filled with \p value.
  NodeValue splatConstant(llvm::StringRef name, llvm::ArrayRef<dim_t> dims,
                          float value);

  /// "node 'name' (OpType)" for messages.
  static std::string describe(const onnx::NodeProto &node);
  /// Prefixes \p err with the node description.
  static llvm::Error nodeError(const onnx::NodeProto &node,
                               const llvm::Twine &msg);

private:
  Module &M_;
  Function &F_;
  int64_t opset_;
  std::map<std::string, NodeValue> values_;

public:
  /// Secondary outputs (e.g. Dropout's mask) that no importer produces, with
  /// the node that declares them; an error if anything consumes one.
  std::vector<std::pair<std::string, std::string>> usedExtraOutputs_;
};

/// Typed attribute access with defaults and clean errors.
class AttrReader {
public:
  explicit AttrReader(const onnx::NodeProto &node);
  bool has(llvm::StringRef name) const { return find(name) != nullptr; }
  llvm::Expected<int64_t> getInt(llvm::StringRef name,
                                 std::optional<int64_t> dflt) const;
  llvm::Expected<float> getFloat(llvm::StringRef name,
                                 std::optional<float> dflt) const;
  llvm::Expected<std::vector<int64_t>>
  getInts(llvm::StringRef name,
          std::optional<std::vector<int64_t>> dflt) const;
  llvm::Expected<std::string> getString(llvm::StringRef name,
                                        std::optional<std::string> dflt) const;
  const onnx::AttributeProto *find(llvm::StringRef name) const;

private:
  llvm::Error missing(llvm::StringRef name) const;
  llvm::Error wrongType(llvm::StringRef name, const char *want) const;
  const onnx::NodeProto &node_;
};

/// An op importer: builds nodes for one ONNX node.
using ImportFn = llvm::Error (*)(ImportContext &ctx,
                                 const onnx::NodeProto &node);

/// One row of the import table: op_type over an opset range.
struct ImportRule {
  const char *opType;
  int64_t minOpset, maxOpset;
  ImportFn fn;
};

/// The import table (OpImporters.cpp).
llvm::ArrayRef<ImportRule> getImportRules();

} // namespace ember

#endif
