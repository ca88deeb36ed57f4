//===- ConstantEval.cpp - Evaluate constant subgraphs on a backend --------===//
#include "ember/Backend/ConstantEval.h"

#include "ember/Backend/Pipeline.h"
#include "ember/Base/Error.h"

#include <map>

using namespace ember;

namespace {
/// Copies the subgraph that computes a value into another Module.
class SubgraphCloner {
public:
  SubgraphCloner(Module &M, Function &F) : M_(M), F_(F) {}

  llvm::Expected<NodeValue> clone(NodeValue v) {
    EMBER_ASSIGN_OR_RETURN(Node * n, cloneNode(v.getNode()));
    return NodeValue(n, v.getResNo());
  }

private:
  llvm::Expected<Node *> cloneNode(Node *n) {
    auto it = map_.find(n);
    if (it != map_.end())
      return it->second;
    Node *copy = nullptr;
    if (auto *c = llvm::dyn_cast<Constant>(n)) {
      copy = M_.createConstant(c->getName(), c->getPayload().clone());
    } else if (isTableOp(n->getKind())) {
      llvm::SmallVector<NodeValue, 4> ins;
      for (NodeValue in : n->getInputs()) {
        EMBER_ASSIGN_OR_RETURN(NodeValue c, clone(in));
        ins.push_back(c);
      }
      EMBER_ASSIGN_OR_RETURN(copy, F_.tryCreateNode(toOpKind(n->getKind()),
                                                    n->getName(), ins,
                                                    n->getAttrs()));
    } else {
      return makeErrorF("'{0}' is not constant", n->getName());
    }
    map_[n] = copy;
    return copy;
  }

  Module &M_;
  Function &F_;
  std::map<Node *, Node *> map_;
};
} // namespace

llvm::Expected<Tensor> ember::evaluateConstant(NodeValue v, const Backend &B) {
  Module M;
  Function *F = M.createFunction("fold");
  SubgraphCloner cloner(M, *F);
  EMBER_ASSIGN_OR_RETURN(NodeValue root, cloner.clone(v));
  if (auto *c = llvm::dyn_cast<Constant>(root.getNode()))
    return c->getPayload().clone();
  Placeholder *out = M.createPlaceholder("result", *root.getType(), true);
  F->createSave("save.result", root, out);
  EMBER_ASSIGN_OR_RETURN(CompiledNetwork net,
                         compileFunction(*F, B, CompileOptions()));
  Bindings b;
  b.allocateOutputs(M);
  EMBER_RETURN_IF_ERR(net.function->run(b));
  return b.get(out)->clone();
}
