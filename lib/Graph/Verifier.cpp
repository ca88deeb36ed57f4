//===- Verifier.cpp - Graph verification and traversal --------------------===//
#include "ember/Graph/Verifier.h"

#include "ember/Graph/LoopNest.h"
#include "ember/Graph/QuantTypes.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

using namespace ember;

std::vector<Node *> ember::topologicalOrder(const Function &F) {
  std::vector<Node *> order;
  llvm::DenseSet<Node *> done;
  // Iterative DFS: (node, next operand to visit).
  auto visit = [&](Node *root) {
    if (done.count(root) || isStorage(root))
      return;
    llvm::SmallVector<std::pair<Node *, unsigned>, 32> stack{{root, 0}};
    llvm::DenseSet<Node *> onStack{root};
    while (!stack.empty()) {
      auto &[n, next] = stack.back();
      if (next < n->getNumInputs()) {
        Node *in = n->getNthInput(next++).getNode();
        if (!done.count(in) && !isStorage(in) && !onStack.count(in)) {
          onStack.insert(in);
          stack.push_back({in, 0});
        }
        continue;
      }
      done.insert(n);
      onStack.erase(n);
      order.push_back(n);
      stack.pop_back();
    }
  };
  for (SaveNode *s : F.getSaves())
    visit(s);
  for (auto &n : F.getNodes())
    visit(n.get());
  return order;
}

static llvm::Error verifyNode(const Function &F, const Node &n,
                              const llvm::DenseSet<const Node *> &inF) {
  for (unsigned i = 0; i < n.getNumInputs(); ++i) {
    NodeValue v = n.getNthInput(i);
    const Node *in = v.getNode();
    if (!isStorage(in) && !inF.count(in))
      return makeErrorF("node {0} ({1}): operand {2} ({3}) is not in function "
                        "{4}",
                        n.getName(), n.getKindName(), i, in->getName(),
                        F.getName());
    if (v.getResNo() >= in->getNumResults())
      return makeErrorF("node {0}: operand {1} uses result {2} of {3}, which "
                        "has {4}",
                        n.getName(), i, v.getResNo(), in->getName(),
                        in->getNumResults());
  }
  llvm::SmallVector<TypeRef, 4> inTypes;
  for (NodeValue v : n.getInputs())
    inTypes.push_back(v.getType());
  OpKind kind = toOpKind(n.getKind());
  auto types = checkAndInfer(kind, n.getName(), inTypes, n.getAttrs());
  if (!types)
    return types.takeError();
  if (types->size() != n.getNumResults())
    return makeErrorF("node {0} ({1}): has {2} results, expected {3}",
                      n.getName(), n.getKindName(), n.getNumResults(),
                      types->size());
  // Inference gives kinds and dims; quantization is checked on its own.
  for (unsigned i = 0; i < types->size(); ++i)
    if (!(*types)[i].isSameStorage(*n.getType(i)))
      return makeErrorF("node {0} ({1}): result {2} has type {3}, inference "
                        "gives {4}",
                        n.getName(), n.getKindName(), i,
                        n.getType(i)->toString(), (*types)[i].toString());
  EMBER_RETURN_IF_ERR(verifyQuantTypes(n));
  if (auto *s = llvm::dyn_cast<SaveNode>(&n)) {
    auto *p = llvm::dyn_cast<Placeholder>(s->getOutput().getNode());
    if (!p || !p->isOutput())
      return makeErrorF("node {0} (Save): destination is not an output "
                        "placeholder",
                        n.getName());
  }
  return llvm::Error::success();
}

llvm::Error ember::verifyFunction(const Function &F) {
  llvm::DenseSet<const Node *> inF;
  for (auto &n : F.getNodes()) {
    if (isStorage(n.get()))
      return makeErrorF("storage node {0} inside function {1}", n->getName(),
                        F.getName());
    inF.insert(n.get());
  }
  for (auto &n : F.getNodes())
    EMBER_RETURN_IF_ERR(verifyNode(F, *n, inF));
  // Cycle check: in a topological order every operand comes first.
  std::vector<Node *> order = topologicalOrder(F);
  llvm::DenseMap<const Node *, size_t> pos;
  for (size_t i = 0; i < order.size(); ++i)
    pos[order[i]] = i;
  for (Node *n : order)
    for (NodeValue v : n->getInputs()) {
      auto it = pos.find(v.getNode());
      if (it != pos.end() && it->second >= pos[n])
        return makeErrorF("function {0} has a cycle through node {1}",
                          F.getName(), n->getName());
    }
  // Loops kept as loops pair up and nest (docs/ControlFlow.md).
  if (auto nest = LoopNest::compute(order); !nest)
    return makeErrorF("function {0}: {1}", F.getName(),
                      llvm::toString(nest.takeError()));
  // Every output placeholder is written at most once.
  llvm::DenseSet<const Node *> written;
  for (SaveNode *s : F.getSaves())
    if (!written.insert(s->getOutput().getNode()).second)
      return makeErrorF("output {0} is written by more than one Save",
                        s->getOutput().getNode()->getName());
  return llvm::Error::success();
}
