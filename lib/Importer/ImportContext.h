//===- ImportContext.h - State shared by the op importers ------*- C++ -*-===//
#ifndef EMBER_LIB_IMPORTER_IMPORTCONTEXT_H
#define EMBER_LIB_IMPORTER_IMPORTCONTEXT_H

#include "ember/Base/Error.h"
#include "ember/Graph/Graph.h"

#include <onnx/onnx_pb.h>

#include <map>
#include <optional>
#include <string>
#include <utility>

namespace ember {

/// The graph being built and the ONNX value names bound so far.
class ImportContext {
public:
  ImportContext(Module &M, Function &F, int64_t opset)
      : M_(M), F_(F), opset_(opset) {}

  Module &module() { return M_; }
  Function &fn() { return F_; }
  int64_t opset() const { return opset_; }
  /// Sets the default-domain opset the importers see: an op of another
  /// domain composed from default-domain importers fixes the semantics it
  /// borrows (ImportQuantMS.cpp), then restores the model's.
  void setOpset(int64_t opset) { opset_ = opset; }

  /// Binds ONNX value \p name to \p v.
  void bind(const std::string &name, NodeValue v) { values_[name] = v; }
  /// True if \p name is a bound tensor value (not a sequence).
  bool isBound(const std::string &name) const { return values_.count(name); }
  /// Binds ONNX sequence value \p name to its elements: sequences are
  /// import-time lists (ImportSequence.cpp), so every position the Sequence
  /// ops take must be a constant.
  void bindSequence(const std::string &name, std::vector<NodeValue> elems) {
    sequences_[name] = std::move(elems);
  }
  bool isSequence(const std::string &name) const {
    return sequences_.count(name);
  }
  /// The elements of sequence input \p i of \p node, or an error.
  llvm::Expected<std::vector<NodeValue>>
  sequenceInput(const onnx::NodeProto &node, int i) const;
  /// The bound names, to be put back with restoreScope once a subgraph
  /// (an If branch, a Loop or Scan body) has been imported.
  std::map<std::string, NodeValue> saveScope() const { return values_; }
  void restoreScope(std::map<std::string, NodeValue> scope) {
    values_ = std::move(scope);
  }
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
  /// A constant integer list (int64 or int32) from input \p i. Where input
  /// \p i is a graph input that the op's declared output shapes determine
  /// (docs/RuntimeInputs.md), constantInput and constantInts give the
  /// implied value and the node gets a run-time check of the input
  /// (finishRuntimeInputs).
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

  /// Records the static dims a model declares for value \p name (graph
  /// outputs and value_info).
  void declare(const std::string &name, std::vector<int64_t> dims) {
    declared_[name] = std::move(dims);
  }
  /// The declared static dims of \p name, or null.
  const std::vector<int64_t> *declaredDims(const std::string &name) const {
    auto it = declared_.find(name);
    return it == declared_.end() ? nullptr : &it->second;
  }
  /// Records dims that a declared shape suggests for \p name without the
  /// model declaring them (elementwise ops keep the dims unless they
  /// broadcast); only an operand checked at run time may rely on them.
  void suggest(const std::string &name, std::vector<int64_t> dims) {
    suggested_.emplace(name, std::move(dims));
  }
  /// The declared dims of \p name, else the suggested ones, else null.
  const std::vector<int64_t> *
  declaredOrSuggestedDims(const std::string &name) const {
    if (const std::vector<int64_t> *d = declaredDims(name))
      return d;
    auto it = suggested_.find(name);
    return it == suggested_.end() ? nullptr : &it->second;
  }
  /// An input of the node being imported that was given its implied value
  /// (null for a genuine run-time value, see checkAtRunTime).
  struct RuntimeInput {
    int index;
    Placeholder *input;
    Constant *implied;
    /// The kind the graph input is cast to before the node reads it.
    std::optional<ElemKind> cast;
  };
  /// Marks input \p i of \p node, a graph input used as a genuine run-time
  /// value, to be checked at run time by importing the node again with its
  /// value (which rejects the values a constant operand could not have).
  void checkAtRunTime(int i, Placeholder *p,
                      std::optional<ElemKind> cast = std::nullopt) {
    runtimeInputs_.push_back({i, p, nullptr, cast});
  }
  /// The node's implied inputs; finishRuntimeInputs consumes them.
  std::vector<RuntimeInput> &runtimeInputs() { return runtimeInputs_; }

  /// A value whose extent on \p axis depends on the data: sized for the
  /// static bound, the actual extent is \p count (Int64 [1]).
  struct Extent {
    unsigned axis;
    NodeValue count;
  };
  void setExtent(const std::string &name, Extent e) { extents_[name] = e; }
  /// The data-dependent extent of value \p name, or null.
  const Extent *extentOf(const std::string &name) const {
    auto it = extents_.find(name);
    return it == extents_.end() ? nullptr : &it->second;
  }

  /// A shape (Int64 [n], Shape of a value with a data-dependent extent)
  /// whose entry \p at is that extent \p count, computed in the graph, in
  /// place of the bound \p bound[at]: ConstantOfShape and Expand size their
  /// result for \p bound and carry the count.
  struct ShapeExtent {
    std::vector<int64_t> bound;
    unsigned at;
    NodeValue count;
  };
  void setShapeExtent(const std::string &name, ShapeExtent e) {
    shapeExtents_[name] = std::move(e);
  }
  const ShapeExtent *shapeExtentOf(const std::string &name) const {
    auto it = shapeExtents_.find(name);
    return it == shapeExtents_.end() ? nullptr : &it->second;
  }

  /// Statuses of run-time checks (ImportChecks.cpp): Int64 [1], 0 where the
  /// check passed, else its number (Module::addRuntimeCheck).
  void addCheckStatus(NodeValue status) { checks_.push_back(status); }
  /// The pending statuses, leaving none: a loop body's checks become the
  /// loop's, an If branch's are masked by the branch's condition.
  std::vector<NodeValue> takeCheckStatuses() {
    return std::exchange(checks_, {});
  }

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
  std::map<std::string, std::vector<NodeValue>> sequences_;
  std::map<std::string, std::vector<int64_t>> declared_;
  std::map<std::string, std::vector<int64_t>> suggested_;
  std::vector<RuntimeInput> runtimeInputs_;
  std::map<std::string, Extent> extents_;
  std::map<std::string, ShapeExtent> shapeExtents_;
  std::vector<NodeValue> checks_;

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
  getInts(llvm::StringRef name, std::optional<std::vector<int64_t>> dflt) const;
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

/// The value input \p i of \p node (a graph input \p p) must have for
/// the node's outputs to take their declared shapes, as a Constant; an
/// error if the op's declared shapes do not determine it (ImportRuntime.cpp).
llvm::Expected<Constant *> impliedInput(ImportContext &ctx,
                                        const onnx::NodeProto &node, int i,
                                        Placeholder *p);

/// After \p fn imported \p node with implied inputs: checks that the
/// outputs got their declared shapes and adds the Module's run-time check
/// that re-imports the node with the inputs' actual values.
llvm::Error finishRuntimeInputs(ImportContext &ctx, const onnx::NodeProto &node,
                                ImportFn fn);

/// After \p node was imported: carries the data-dependent extent of its
/// inputs to its outputs where the op keeps that axis, or fails naming the
/// node (ImportDynamic.cpp, docs/RuntimeInputs.md).
llvm::Error propagateExtents(ImportContext &ctx, const onnx::NodeProto &node);

/// Carries the shape extent of a Shape's result through the ops that
/// move its entries (Gather, Unsqueeze, Squeeze, Concat, Identity, Cast to
/// integers), or binds their result to a Constant when the counted entry
/// is left out (ImportShapeExtent.cpp).
llvm::Error propagateShapeExtents(ImportContext &ctx,
                                  const onnx::NodeProto &node);

/// After Reshape \p node of \p x to \p shape (\p raw: the entries before
/// 0 and -1 were resolved): the data-dependent extent of \p x kept on the
/// output axis of the same rows, which the shape computes from the count
/// (or holds -1 at); else an error naming the node.
llvm::Error reshapeExtent(ImportContext &ctx, const onnx::NodeProto &node,
                          NodeValue x, llvm::ArrayRef<int64_t> raw,
                          llvm::ArrayRef<int64_t> shape);

/// True when data-dependent counts \p a and \p b are provably equal: one
/// value, or the same computation on equal operands (ImportDynamic.cpp).
bool sameCount(NodeValue a, NodeValue b);

/// Indices \p idx of a Gather along \p axis of input 0 of \p node: where
/// that input has a data-dependent extent there, negative indices count
/// from the extent, not from the bound (ImportDynamic.cpp).
llvm::Expected<NodeValue> indicesFromExtent(ImportContext &ctx,
                                            const onnx::NodeProto &node,
                                            NodeValue idx, int64_t axis);

/// The dims \p dims (Int64, those of input 0 of Shape \p node from dim
/// \p start on) with the data-dependent extent of that input, computed in
/// the graph, in place of its bound; \p dims itself when it has none.
llvm::Expected<NodeValue> withExtentDim(ImportContext &ctx,
                                        const onnx::NodeProto &node,
                                        NodeValue dims, int64_t start);

/// \p v (value \p name, read by \p node) with the entries past its
/// data-dependent extent set to \p fill; \p v itself when it has none.
llvm::Expected<NodeValue> zeroPastExtent(ImportContext &ctx,
                                         const onnx::NodeProto &node,
                                         NodeValue v, const std::string &name,
                                         double fill = 0);

/// Shape input \p i of ConstantOfShape or Expand \p node (output rank
/// \p rank, 0 for the shape's own): its constant values, or for the Shape
/// of a value with a data-dependent extent its bound, and then output 0 of
/// \p node gets that extent (ImportDynamic.cpp).
llvm::Expected<std::vector<int64_t>>
shapeWithExtent(ImportContext &ctx, const onnx::NodeProto &node, int i,
                int64_t rank);

/// Input \p x of reduction \p node (Reduce*, ArgMax, ArgMin) with the
/// entries past a data-dependent extent on a reduced axis set to the
/// reduction's identity; \p x itself otherwise.
llvm::Expected<NodeValue>
maskForReduction(ImportContext &ctx, const onnx::NodeProto &node, NodeValue x);

/// ReduceMean \p node's result \p y (of \p x masked by maskForReduction)
/// divided by the data-dependent extent it reduced rather than its bound.
llvm::Expected<NodeValue> meanOverExtent(ImportContext &ctx,
                                         const onnx::NodeProto &node,
                                         NodeValue x, NodeValue y);

/// Graph output \p name computed as \p v, saved to \p p: when \p v has a
/// data-dependent extent, the entries past it are zeroed and the count is
/// saved to a hidden output linked to \p p in the Module.
llvm::Expected<NodeValue>
finishDynamicOutput(ImportContext &ctx, const std::string &name, NodeValue v);
/// Links \p p (saved from graph output \p name) to its count output.
void linkDynamicOutput(ImportContext &ctx, const std::string &name,
                       Placeholder *p);

} // namespace ember

#endif
