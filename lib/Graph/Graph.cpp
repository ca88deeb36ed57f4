//===- Graph.cpp - Nodes, Functions and Modules ---------------------------===//
#include "ember/Graph/Graph.h"
#include "ember/Graph/QuantTypes.h"

#include "glog/logging.h"

#include <algorithm>

using namespace ember;

//===----------------------------------------------------------------------===//
// Node
//===----------------------------------------------------------------------===//

TypeRef NodeValue::getType() const { return node_->getType(resNo_); }

void NodeValue::replaceAllUsesWith(NodeValue other) const {
  if (other == *this)
    return;
  // Copy: setNthInput edits the use-list we iterate.
  std::vector<NodeUse> users(node_->getUsers().begin(),
                             node_->getUsers().end());
  for (const NodeUse &u : users)
    if (u.user->getNthInput(u.idx) == *this)
      u.user->setNthInput(u.idx, other);
}

Node::Node(NodeKind kind, llvm::StringRef name,
           llvm::ArrayRef<NodeValue> inputs, llvm::ArrayRef<TypeRef> results,
           AttrList attrs)
    : kind_(kind), name_(name.str()), inputs_(inputs.begin(), inputs.end()),
      results_(results.begin(), results.end()), attrs_(std::move(attrs)) {
  for (unsigned i = 0; i < inputs_.size(); ++i)
    inputs_[i].getNode()->addUser(this, i);
}

Node::~Node() {
  CHECK(users_.empty()) << "deleting node " << name_ << " with users";
}

llvm::StringRef Node::getKindName() const {
  switch (kind_) {
  case NodeKind::Constant:
    return "Constant";
  case NodeKind::Placeholder:
    return "Placeholder";
  default:
    return getOpInfo(toOpKind(kind_)).name;
  }
}

void Node::setNthInput(unsigned i, NodeValue v) {
  inputs_[i].getNode()->removeUser(this, i);
  inputs_[i] = v;
  v.getNode()->addUser(this, i);
}

unsigned Node::getNumUsesOf(unsigned resNo) const {
  unsigned n = 0;
  for (const NodeUse &u : users_)
    n += u.user->getNthInput(u.idx).getResNo() == resNo;
  return n;
}

void Node::removeUser(Node *user, unsigned idx) {
  auto it = std::find_if(users_.begin(), users_.end(), [&](const NodeUse &u) {
    return u.user == user && u.idx == idx;
  });
  CHECK(it != users_.end()) << "use-list of " << name_ << " is inconsistent";
  users_.erase(it);
}

void Node::dropInputs() {
  for (unsigned i = 0; i < inputs_.size(); ++i)
    inputs_[i].getNode()->removeUser(this, i);
  inputs_.clear();
}

//===----------------------------------------------------------------------===//
// Function
//===----------------------------------------------------------------------===//

Function::~Function() {
  // Drop operands first so that no node is destroyed while still used.
  for (auto &n : nodes_)
    n->dropInputs();
  positions_.clear();
  nodes_.clear();
}

std::string Function::uniqueName(llvm::StringRef name) {
  return names_.get(name);
}

Node *Function::dieOnError(llvm::Expected<Node *> n) {
  if (!n)
    LOG(FATAL) << "internal error creating a node: "
               << errorToString(n.takeError());
  return *n;
}

llvm::Expected<Node *> Function::tryCreateNode(OpKind kind,
                                               llvm::StringRef name,
                                               llvm::ArrayRef<NodeValue> inputs,
                                               AttrList attrs) {
  llvm::SmallVector<TypeRef, 4> inTypes;
  for (NodeValue v : inputs)
    inTypes.push_back(v.getType());
  EMBER_ASSIGN_OR_RETURN(auto types, checkAndInfer(kind, name, inTypes, attrs));
  // Results are quantized only where the operands say so (QuantTypes.h):
  // an integer op's inference copies operand types, not their meaning.
  std::optional<TypeQuant> quant = resultQuant(kind, inputs, attrs);
  llvm::SmallVector<TypeRef, 1> results;
  for (const Type &t : types)
    results.push_back(parent_.uniqueType(
        quant ? Type(t.getElemKind(), t.dims(), *quant) : t.withoutQuant()));
  return createNodeWithTypes(kind, name, inputs, results, std::move(attrs));
}

Node *Function::createNodeWithTypes(OpKind kind, llvm::StringRef name,
                                    llvm::ArrayRef<NodeValue> inputs,
                                    llvm::ArrayRef<TypeRef> results,
                                    AttrList attrs) {
  Node *n = newNodeOfKind(toNodeKind(kind), uniqueName(name), inputs, results,
                          std::move(attrs));
  n->parent_ = this;
  nodes_.emplace_back(n);
  positions_[n] = std::prev(nodes_.end());
  return n;
}

void Function::eraseNode(Node *n) {
  CHECK(!n->hasUsers()) << "erasing node " << n->getName().str()
                        << " that still has users";
  auto pos = positions_.find(n);
  CHECK(pos != positions_.end()) << "node is not in this function";
  n->dropInputs();
  nodes_.erase(pos->second);
  positions_.erase(pos);
}

llvm::SmallVector<SaveNode *, 4> Function::getSaves() const {
  llvm::SmallVector<SaveNode *, 4> saves;
  for (auto &n : nodes_)
    if (auto *s = llvm::dyn_cast<SaveNode>(n.get()))
      saves.push_back(s);
  return saves;
}

#include "ember/Generated/Nodes.inc"

//===----------------------------------------------------------------------===//
// Module
//===----------------------------------------------------------------------===//

Module::Module() = default;

Module::~Module() {
  // Functions use storage nodes: destroy them first.
  functions_.clear();
}

TypeRef Module::uniqueType(const Type &ty) {
  std::string key = ty.toString();
  auto it = types_.find(key);
  if (it != types_.end())
    return it->second.get();
  auto *p = new Type(ty);
  types_.emplace(key, std::unique_ptr<Type>(p));
  return p;
}

void Module::refineResultType(Node *n, unsigned resNo, const Type &ty) {
  CHECK(n->getType(resNo)->isSameStorage(ty))
      << "refining " << n->getType(resNo)->toString() << " to "
      << ty.toString();
  n->results_[resNo] = uniqueType(ty);
}

std::string Module::uniqueName(llvm::StringRef name) {
  return names_.get(name);
}

Constant *Module::createConstant(llvm::StringRef name, Tensor payload) {
  TypeRef ty = uniqueType(payload.getType());
  auto *c = new Constant(uniqueName(name), ty, std::move(payload));
  constants_.emplace_back(c);
  return c;
}

Placeholder *Module::createPlaceholder(llvm::StringRef name, const Type &ty,
                                       bool isOutput) {
  auto *p = new Placeholder(uniqueName(name), uniqueType(ty), isOutput);
  placeholders_.emplace_back(p);
  return p;
}

Function *Module::createFunction(llvm::StringRef name) {
  functions_.emplace_back(new Function(*this, name));
  return functions_.back().get();
}

Placeholder *Module::getPlaceholderByName(llvm::StringRef name) const {
  for (auto &p : placeholders_)
    if (p->getName() == name)
      return p.get();
  return nullptr;
}

llvm::SmallVector<Placeholder *, 4> Module::getInputPlaceholders() const {
  llvm::SmallVector<Placeholder *, 4> r;
  for (auto &p : placeholders_)
    if (!p->isOutput())
      r.push_back(p.get());
  return r;
}

llvm::SmallVector<Placeholder *, 4> Module::getOutputPlaceholders() const {
  llvm::SmallVector<Placeholder *, 4> r;
  for (auto &p : placeholders_)
    if (p->isOutput())
      r.push_back(p.get());
  return r;
}

const DynamicExtent *Module::dynamicExtentOf(const Placeholder *output) const {
  for (const DynamicExtent &d : extents_)
    if (d.output == output)
      return &d;
  return nullptr;
}

bool Module::isExtentCount(const Placeholder *p) const {
  return llvm::any_of(extents_,
                      [&](const DynamicExtent &d) { return d.count == p; });
}

void Module::eraseUnusedConstants() {
  constants_.remove_if(
      [](const std::unique_ptr<Constant> &c) { return !c->hasUsers(); });
}
