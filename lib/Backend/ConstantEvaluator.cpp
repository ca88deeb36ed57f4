//===- ConstantEvaluator.cpp - The pass context a backend provides --------===//
//
// Constant folding lives in the Optimizer, which may not include backends.
// This file, in the Backend layer, gives it an evaluator: the subgraph that
// computes the requested values is copied into a scratch Module, compiled
// for the registered Interpreter with the minimal pipeline (so folding does
// not recurse) and run once.
//
//===----------------------------------------------------------------------===//
#include "ember/Backend/Pipeline.h"
#include "ember/Base/Progress.h"

#include "llvm/ADT/DenseMap.h"

using namespace ember;

namespace {
/// Copies the subgraph behind some values into a scratch Module.
class SubgraphCopier {
public:
  SubgraphCopier(Module &dst, Function &F) : dst_(dst), F_(F) {}

  llvm::Expected<NodeValue> copy(NodeValue v) {
    EMBER_ASSIGN_OR_RETURN(Node * n, copyNode(v.getNode()));
    return NodeValue(n, v.getResNo());
  }

private:
  llvm::Expected<Node *> copyNode(Node *n) {
    auto it = copies_.find(n);
    if (it != copies_.end())
      return it->second;
    Node *c = nullptr;
    if (auto *k = llvm::dyn_cast<Constant>(n)) {
      c = dst_.createConstant(k->getName(), k->getPayload().clone());
    } else if (isTableOp(n->getKind()) && !llvm::isa<SaveNode>(n)) {
      llvm::SmallVector<NodeValue, 4> ins;
      for (NodeValue v : n->getInputs()) {
        EMBER_ASSIGN_OR_RETURN(NodeValue in, copy(v));
        ins.push_back(in);
      }
      llvm::SmallVector<TypeRef, 1> types;
      for (unsigned i = 0; i < n->getNumResults(); ++i)
        types.push_back(dst_.uniqueType(*n->getType(i)));
      c = F_.createNodeWithTypes(toOpKind(n->getKind()), n->getName(), ins,
                                 types, n->getAttrs());
    } else {
      return makeErrorF("constant evaluation reached non-constant node {0}",
                        n->getName());
    }
    copies_[n] = c;
    return c;
  }

  Module &dst_;
  Function &F_;
  llvm::DenseMap<Node *, Node *> copies_;
};
} // namespace

llvm::Expected<std::vector<Tensor>>
ember::evaluateConstantValues(llvm::ArrayRef<NodeValue> values) {
  EMBER_ASSIGN_OR_RETURN(const Backend *B, getBackend("Interpreter"));
  Module M;
  Function *F = M.createFunction("constants");
  SubgraphCopier copier(M, *F);
  std::vector<Placeholder *> outs;
  for (NodeValue v : values) {
    EMBER_ASSIGN_OR_RETURN(NodeValue c, copier.copy(v));
    outs.push_back(M.createPlaceholder(v.getNode()->getName().str() + ".value",
                                       *v.getType(), /*isOutput=*/true));
    F->createSave(v.getNode()->getName().str() + ".save", c, outs.back());
  }
  CompileOptions opts;
  opts.pipeline = getMinimalPipeline();
  StageNotesMuted mute;
  EMBER_ASSIGN_OR_RETURN(CompiledNetwork net, compileFunction(*F, *B, opts));
  Bindings b;
  b.allocateOutputs(M);
  EMBER_RETURN_IF_ERR(net.function->run(b));
  std::vector<Tensor> result;
  for (Placeholder *p : outs)
    result.push_back(std::move(*b.get(p)));
  return result;
}

PassContext ember::makePassContext(const Backend &B,
                                   const CompileOptions &opts) {
  PassContext ctx;
  ctx.shouldLower = [&B](const Node &n) { return B.shouldLower(n); };
  ctx.isOpSupported = [&B](const Node &n) { return B.isOpSupported(n); };
  ctx.supportsConvActivation = [&B](FusedActivation act) {
    return B.supportsFusedActivation(act);
  };
  ctx.supportsConvResidual = B.supportsConvResidual();
  ctx.supportsMatMulEpilogue = B.supportsMatMulEpilogue();
  ctx.supportsRuntimeConvFilter = B.supportsRuntimeConvFilter();
  ctx.convLayout = opts.convLayout.value_or(B.getPreferredConvLayout());
  ctx.foldQuantizedProducts = opts.integerProducts.value_or(true);
  if (!opts.integerProducts)
    ctx.foldQuantizedProduct = [&B, codegen = opts.codegen](const Node &n) {
      return B.prefersIntegerProduct(n, codegen);
    };
  ctx.evaluate = evaluateConstantValues;
  ctx.precision = opts.codegen.precision;
  return ctx;
}
