//===- Graph.h - Module and Function ---------------------------*- C++ -*-===//
#ifndef EMBER_GRAPH_GRAPH_H
#define EMBER_GRAPH_GRAPH_H

#include "ember/Base/Error.h"
#include "ember/Base/NameUniquer.h"
#include "ember/Graph/Node.h"

#include "llvm/ADT/DenseMap.h"

#include <functional>
#include <list>
#include <map>
#include <memory>
#include <unordered_map>

namespace ember {

class Module;

/// A computation: a list of op nodes over the Module's Constants and
/// Placeholders. Outputs are written by Save nodes.
class Function {
public:
  Function(Module &parent, llvm::StringRef name)
      : parent_(parent), name_(name.str()) {}
  ~Function();

  llvm::StringRef getName() const { return name_; }
  Module &getParent() const { return parent_; }

  using NodeList = std::list<std::unique_ptr<Node>>;
  const NodeList &getNodes() const { return nodes_; }

  /// Creates an op node of \p kind after checking the table's rules and
  /// inferring its result types.
  llvm::Expected<Node *> tryCreateNode(OpKind kind, llvm::StringRef name,
                                       llvm::ArrayRef<NodeValue> inputs,
                                       AttrList attrs);
  /// Creates an op node with the given result types, without inference
  /// (the verifier checks them later). Used by parsers and clones.
  Node *createNodeWithTypes(OpKind kind, llvm::StringRef name,
                            llvm::ArrayRef<NodeValue> inputs,
                            llvm::ArrayRef<TypeRef> results, AttrList attrs);
  /// Removes \p n, which must have no users.
  void eraseNode(Node *n);

  /// All Save nodes, in creation order.
  llvm::SmallVector<SaveNode *, 4> getSaves() const;

#include "ember/Generated/NodeBuilders.inc"

  /// A MatMul without an epilogue (the form every producer but
  /// fuse-matmul-epilogue creates).
  MatMulNode *createMatMul(llvm::StringRef name, NodeValue lhs, NodeValue rhs,
                           int64_t transB) {
    return createMatMul(name, lhs, rhs, {}, transB,
                        int64_t(FusedActivation::None), 0.f, 0.f);
  }
  llvm::Expected<MatMulNode *> tryCreateMatMul(llvm::StringRef name,
                                               NodeValue lhs, NodeValue rhs,
                                               int64_t transB) {
    return tryCreateMatMul(name, lhs, rhs, {}, transB,
                           int64_t(FusedActivation::None), 0.f, 0.f);
  }

private:
  static Node *dieOnError(llvm::Expected<Node *> n);
  template <typename T> static T *dieOnError(llvm::Expected<T *> n) {
    if (!n)
      dieOnError(llvm::Expected<Node *>(n.takeError()));
    return *n;
  }
  static Node *newNodeOfKind(NodeKind kind, llvm::StringRef name,
                             llvm::ArrayRef<NodeValue> inputs,
                             llvm::ArrayRef<TypeRef> results, AttrList attrs);
  std::string uniqueName(llvm::StringRef name);

  Module &parent_;
  std::string name_;
  NodeList nodes_;
  /// Where each node stands in nodes_, so that erasing one is O(1): passes
  /// and dead-code elimination erase up to every node of a large graph.
  llvm::DenseMap<const Node *, NodeList::iterator> positions_;
  NameUniquer names_;
};

/// A condition on graph inputs that the compiled network assumes: a shape,
/// size or axes operand fed at run time was compiled for the value the
/// model's declared shapes imply, and \p check says whether the values of
/// \p inputs (in that order) give that compiled result. In-process runs
/// check it before each call (see docs/RuntimeInputs.md).
struct InputCheck {
  std::vector<const Placeholder *> inputs;
  std::function<llvm::Error(llvm::ArrayRef<const Tensor *>)> check;
};

/// An output whose extent on one axis depends on the data
/// (docs/RuntimeInputs.md): \p output is sized for the static upper bound
/// and \p count, a hidden Int64 [1] output, holds the actual extent.
struct DynamicExtent {
  Placeholder *output;
  unsigned axis;
  Placeholder *count;
};

/// Owns types, Constants, Placeholders and Functions.
class Module {
public:
  Module();
  ~Module();

  /// The uniqued pointer for \p ty.
  TypeRef uniqueType(const Type &ty);
  TypeRef uniqueType(ElemKind kind, llvm::ArrayRef<dim_t> dims) {
    return uniqueType(Type(kind, dims));
  }

  /// Gives result \p resNo of \p n the type \p ty, which differs from its
  /// type only in its quantization parameters (the bytes stay the same).
  void refineResultType(Node *n, unsigned resNo, const Type &ty);

  /// Adds a constant holding \p payload; the name is made unique.
  Constant *createConstant(llvm::StringRef name, Tensor payload);
  /// Adds a placeholder; the name is made unique.
  Placeholder *createPlaceholder(llvm::StringRef name, const Type &ty,
                                 bool isOutput);
  Function *createFunction(llvm::StringRef name);

  const std::list<std::unique_ptr<Constant>> &getConstants() const {
    return constants_;
  }
  const std::list<std::unique_ptr<Placeholder>> &getPlaceholders() const {
    return placeholders_;
  }
  const std::list<std::unique_ptr<Function>> &getFunctions() const {
    return functions_;
  }
  Placeholder *getPlaceholderByName(llvm::StringRef name) const;
  /// Input placeholders in creation (graph-input) order.
  llvm::SmallVector<Placeholder *, 4> getInputPlaceholders() const;
  /// Output placeholders in creation (graph-output) order.
  llvm::SmallVector<Placeholder *, 4> getOutputPlaceholders() const;
  /// Removes constants that no node uses.
  void eraseUnusedConstants();

  /// Conditions on input values that compiled code assumes (InputCheck).
  void addInputCheck(InputCheck c) { inputChecks_.push_back(std::move(c)); }
  const std::vector<InputCheck> &getInputChecks() const { return inputChecks_; }

  /// Links an output to the hidden output holding its actual extent.
  void addDynamicExtent(DynamicExtent d) { extents_.push_back(d); }
  const std::vector<DynamicExtent> &getDynamicExtents() const {
    return extents_;
  }
  /// The link of \p output, or null when its extent is static.
  const DynamicExtent *dynamicExtentOf(const Placeholder *output) const;
  /// Whether \p p is the hidden count of some output (not an ONNX output).
  bool isExtentCount(const Placeholder *p) const;

  /// Registers a run-time check's message (docs/RuntimeInputs.md "Run-time
  /// checks"); returns its number, counting from 1 (0 means passed).
  int64_t addRuntimeCheck(std::string message) {
    checkMessages_.push_back(std::move(message));
    return int64_t(checkMessages_.size());
  }
  const std::vector<std::string> &getRuntimeChecks() const {
    return checkMessages_;
  }
  /// The hidden Int64 [1] output each call writes the number of a failed
  /// run-time check into (0: all passed), or null without checks.
  void setCheckStatus(Placeholder *p) { checkStatus_ = p; }
  Placeholder *getCheckStatus() const { return checkStatus_; }
  /// Whether \p p is a hidden output (an extent count or the check status).
  bool isHiddenOutput(const Placeholder *p) const {
    return p == checkStatus_ || isExtentCount(p);
  }

private:
  std::string uniqueName(llvm::StringRef name);

  std::map<std::string, std::unique_ptr<Type>> types_;
  std::list<std::unique_ptr<Constant>> constants_;
  std::list<std::unique_ptr<Placeholder>> placeholders_;
  std::list<std::unique_ptr<Function>> functions_;
  NameUniquer names_;
  std::vector<InputCheck> inputChecks_;
  std::vector<DynamicExtent> extents_;
  std::vector<std::string> checkMessages_;
  Placeholder *checkStatus_ = nullptr;
};

} // namespace ember

#endif // EMBER_GRAPH_GRAPH_H
