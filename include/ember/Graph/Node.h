//===- Node.h - Graph nodes, values and use-lists --------------*- C++ -*-===//
#ifndef EMBER_GRAPH_NODE_H
#define EMBER_GRAPH_NODE_H

#include "ember/Base/Tensor.h"
#include "ember/Graph/OpInfo.h"

#include "llvm/Support/Casting.h"

#include <string>
#include <vector>

namespace ember {

class Function;
class Node;

/// Every node kind: the op-table kinds first (so a NodeKind below
/// Constant converts to the OpKind of the same value), then storage nodes.
enum class NodeKind : uint16_t {
#define EMBER_OP(N) N,
#include "ember/Generated/OpKinds.inc"
#undef EMBER_OP
  Constant,
  Placeholder,
};

/// True when \p kind is described by the op table.
inline bool isTableOp(NodeKind kind) { return kind < NodeKind::Constant; }
inline OpKind toOpKind(NodeKind kind) { return OpKind(unsigned(kind)); }
inline NodeKind toNodeKind(OpKind kind) { return NodeKind(unsigned(kind)); }

/// A result of a node: the node plus the result number.
class NodeValue {
public:
  NodeValue() = default;
  NodeValue(Node *node, unsigned resNo = 0) : node_(node), resNo_(resNo) {}

  Node *getNode() const { return node_; }
  unsigned getResNo() const { return resNo_; }
  TypeRef getType() const;
  llvm::ArrayRef<dim_t> dims() const { return getType()->dims(); }
  ElemKind getElemKind() const { return getType()->getElemKind(); }
  explicit operator bool() const { return node_ != nullptr; }

  /// Makes every user of this value use \p other instead.
  void replaceAllUsesWith(NodeValue other) const;

  bool operator==(const NodeValue &o) const {
    return node_ == o.node_ && resNo_ == o.resNo_;
  }
  bool operator!=(const NodeValue &o) const { return !(*this == o); }
  bool operator<(const NodeValue &o) const {
    return node_ != o.node_ ? node_ < o.node_ : resNo_ < o.resNo_;
  }

private:
  Node *node_ = nullptr;
  unsigned resNo_ = 0;
};

/// One use of a node's result: operand \p idx of \p user.
struct NodeUse {
  Node *user;
  unsigned idx;
};

/// A node in the graph. Op nodes are created through Function's builders;
/// Constants and Placeholders through Module.
class Node {
public:
  Node(const Node &) = delete;
  Node &operator=(const Node &) = delete;
  virtual ~Node();

  NodeKind getKind() const { return kind_; }
  llvm::StringRef getName() const { return name_; }
  void setName(llvm::StringRef name) { name_ = name.str(); }
  /// The op-table name of the kind ("Conv", "Constant", ...).
  llvm::StringRef getKindName() const;

  unsigned getNumInputs() const { return inputs_.size(); }
  NodeValue getNthInput(unsigned i) const { return inputs_[i]; }
  llvm::ArrayRef<NodeValue> getInputs() const { return inputs_; }
  /// Replaces operand \p i, keeping use-lists consistent.
  void setNthInput(unsigned i, NodeValue v);

  unsigned getNumResults() const { return results_.size(); }
  TypeRef getType(unsigned resNo = 0) const { return results_[resNo]; }
  NodeValue getNthResult(unsigned i) { return NodeValue(this, i); }
  NodeValue getNthResult(unsigned i) const {
    return NodeValue(const_cast<Node *>(this), i);
  }

  const AttrList &getAttrs() const { return attrs_; }
  const Attr &attr(unsigned i) const { return attrs_[i]; }

  llvm::ArrayRef<NodeUse> getUsers() const { return users_; }
  bool hasUsers() const { return !users_.empty(); }
  /// The number of uses of result \p resNo.
  unsigned getNumUsesOf(unsigned resNo) const;

  Function *getParent() const { return parent_; }

protected:
  Node(NodeKind kind, llvm::StringRef name, llvm::ArrayRef<NodeValue> inputs,
       llvm::ArrayRef<TypeRef> results, AttrList attrs);

  /// Operands from \p start on (the variadic tail).
  llvm::SmallVector<NodeValue, 4> getInputsFrom(unsigned start) const {
    return llvm::SmallVector<NodeValue, 4>(inputs_.begin() + start,
                                           inputs_.end());
  }

private:
  friend class Function;
  friend class Module;
  void addUser(Node *user, unsigned idx) { users_.push_back({user, idx}); }
  void removeUser(Node *user, unsigned idx);
  /// Drops this node's uses of its operands (before deletion).
  void dropInputs();

  NodeKind kind_;
  std::string name_;
  llvm::SmallVector<NodeValue, 4> inputs_;
  llvm::SmallVector<TypeRef, 1> results_;
  AttrList attrs_;
  std::vector<NodeUse> users_;
  Function *parent_ = nullptr;
};

/// A tensor of weights known at compile time, owned by the Module.
class Constant final : public Node {
public:
  static bool classof(const Node *n) {
    return n->getKind() == NodeKind::Constant;
  }
  const Tensor &getPayload() const { return payload_; }
  Tensor &getPayloadMutable() { return payload_; }

private:
  friend class Module;
  Constant(llvm::StringRef name, TypeRef ty, Tensor payload)
      : Node(NodeKind::Constant, name, {}, {ty}, {}),
        payload_(std::move(payload)) {}
  Tensor payload_;
};

/// A named tensor whose value the caller binds at run time: a network input
/// or the destination of a Save (an output).
class Placeholder final : public Node {
public:
  static bool classof(const Node *n) {
    return n->getKind() == NodeKind::Placeholder;
  }
  bool isOutput() const { return isOutput_; }

private:
  friend class Module;
  Placeholder(llvm::StringRef name, TypeRef ty, bool isOutput)
      : Node(NodeKind::Placeholder, name, {}, {ty}, {}), isOutput_(isOutput) {}
  bool isOutput_;
};

/// True for Constants and Placeholders (nodes owned by the Module).
inline bool isStorage(const Node *n) {
  return llvm::isa<Constant>(n) || llvm::isa<Placeholder>(n);
}

#include "ember/Generated/Nodes.h"

} // namespace ember

#endif // EMBER_GRAPH_NODE_H
