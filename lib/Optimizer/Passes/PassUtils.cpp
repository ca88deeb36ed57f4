//===- PassUtils.cpp - Small helpers shared by the graph passes -----------===//
#include "PassUtils.h"

#include "ember/Base/ElemAccess.h"
#include "ember/Graph/Verifier.h"

#include "glog/logging.h"

using namespace ember;

std::optional<double> ember::getUniformValue(NodeValue v) {
  if (auto *s = llvm::dyn_cast<SplatNode>(v.getNode()))
    return double(s->getValue());
  auto *c = llvm::dyn_cast<Constant>(v.getNode());
  if (!c || !c->getPayload().size())
    return std::nullopt;
  const Tensor &t = c->getPayload();
  if (isIntegerKind(t.getElemKind())) {
    // Compared as integers: above 2^53, distinct int64 values share a
    // double, and the value returned must be the one every element holds.
    int64_t first = loadElementInt(t.data(), t.getElemKind(), 0);
    for (dim_t i = 1, e = t.size(); i < e; ++i)
      if (loadElementInt(t.data(), t.getElemKind(), i) != first)
        return std::nullopt;
    if (first > (int64_t(1) << 53) || first < -(int64_t(1) << 53))
      return std::nullopt;
    return double(first);
  }
  double first = t.elementAsDouble(0);
  for (dim_t i = 1, e = t.size(); i < e; ++i)
    if (t.elementAsDouble(i) != first)
      return std::nullopt;
  return first;
}

Node *ember::cloneNode(Function &F, const Node &n,
                       llvm::ArrayRef<NodeValue> inputs, AttrList attrs) {
  llvm::SmallVector<TypeRef, 1> types;
  for (unsigned i = 0; i < n.getNumResults(); ++i)
    types.push_back(n.getType(i));
  return F.createNodeWithTypes(toOpKind(n.getKind()), n.getName(), inputs,
                               types, std::move(attrs));
}

Node *ember::createLike(Function &F, const Node &n,
                        llvm::ArrayRef<NodeValue> inputs, AttrList attrs) {
  auto created =
      F.tryCreateNode(toOpKind(n.getKind()), n.getName(), inputs, attrs);
  if (!created)
    LOG(FATAL) << "pass built an invalid " << n.getKindName().str() << ": "
               << errorToString(created.takeError());
  return *created;
}

void ember::replaceNode(Node *from, Node *to) {
  for (unsigned i = 0; i < from->getNumResults(); ++i)
    from->getNthResult(i).replaceAllUsesWith(to->getNthResult(i));
}

std::vector<Node *> ember::nodesInOrder(const Function &F) {
  return topologicalOrder(F);
}

unsigned ember::attrIndex(OpKind kind, llvm::StringRef name) {
  const OpInfo &info = getOpInfo(kind);
  for (unsigned i = 0; i < info.attrs.size(); ++i)
    if (name == info.attrs[i].name)
      return i;
  LOG(FATAL) << "op " << info.name << " has no attribute " << name.str();
}

bool ember::isConstantExpr(NodeValue v, unsigned &budget) {
  if (budget == 0 || --budget == 0)
    return false;
  Node *n = v.getNode();
  if (llvm::isa<Constant>(n) || llvm::isa<SplatNode>(n))
    return true;
  if (n->getNumInputs() == 0 || isLoopOp(toOpKind(n->getKind())))
    return false;
  for (unsigned i = 0, e = n->getNumInputs(); i < e; ++i)
    if (!isConstantExpr(n->getNthInput(i), budget))
      return false;
  return true;
}
