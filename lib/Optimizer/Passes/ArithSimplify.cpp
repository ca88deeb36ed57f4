//===- ArithSimplify.cpp - Algebraic identities and splat arithmetic ------===//
//
// x*1, 1*x, x+0, 0+x, x-0, x/1, x^1 become x and Neg(Neg(x)) becomes x, where
// the 1 or 0 is a Splat or a uniform Constant; so does a Where whose condition
// is uniform (Attention's zeroed empty rows under a constant mask). x^2 becomes
// x*x (the same correctly rounded value): a shared exponent Splat is a loaded
// operand, not a constant, in all but one of its readers' kernels, and pow with
// a loaded exponent is a libm call per element. Arithmetic whose operands are
// all float Splats becomes one Splat. Rewrites that are wrong for NaN or
// infinity (x*0 -> 0, x-x -> 0) are not done.
//
//===----------------------------------------------------------------------===//
#include "PassUtils.h"
#include "Passes.h"

#include <algorithm>
#include <cmath>

using namespace ember;

/// The operand a binary identity, or a Where of a uniform condition,
/// reduces \p n to, or an empty value.
static NodeValue identityOperand(Node *n) {
  if (auto *w = llvm::dyn_cast<WhereNode>(n))
    return isUniform(w->getCond(), 1)   ? w->getLHS()
           : isUniform(w->getCond(), 0) ? w->getRHS()
                                        : NodeValue();
  if (n->getNumInputs() != 2)
    return NodeValue();
  NodeValue a = n->getNthInput(0), b = n->getNthInput(1);
  switch (n->getKind()) {
  case NodeKind::Mul:
    return isUniform(b, 1) ? a : isUniform(a, 1) ? b : NodeValue();
  case NodeKind::Add:
    return isUniform(b, 0) ? a : isUniform(a, 0) ? b : NodeValue();
  case NodeKind::Sub:
    return isUniform(b, 0) ? a : NodeValue();
  case NodeKind::Div:
  case NodeKind::Pow:
    return isUniform(b, 1) ? a : NodeValue();
  default:
    return NodeValue();
  }
}

/// Evaluates \p n on splat operands, if it is arithmetic we know.
static std::optional<float> evalOnSplats(const Node *n) {
  llvm::SmallVector<float, 2> v;
  for (NodeValue in : n->getInputs()) {
    auto *s = llvm::dyn_cast<SplatNode>(in.getNode());
    if (!s)
      return std::nullopt;
    v.push_back(s->getValue());
  }
  if (v.empty() || n->getType()->getElemKind() != ElemKind::Float32)
    return std::nullopt;
  switch (n->getKind()) {
  case NodeKind::Add:
    return v[0] + v[1];
  case NodeKind::Sub:
    return v[0] - v[1];
  case NodeKind::Mul:
    return v[0] * v[1];
  case NodeKind::Div:
    return v[0] / v[1];
  case NodeKind::Max:
    return std::max(v[0], v[1]);
  case NodeKind::Min:
    return std::min(v[0], v[1]);
  case NodeKind::Pow:
    return std::pow(v[0], v[1]);
  case NodeKind::Neg:
    return -v[0];
  case NodeKind::Abs:
    return std::fabs(v[0]);
  case NodeKind::Sqrt:
    return std::sqrt(v[0]);
  case NodeKind::Exp:
    return std::exp(v[0]);
  case NodeKind::Log:
    return std::log(v[0]);
  case NodeKind::Tanh:
    return std::tanh(v[0]);
  case NodeKind::Relu:
    return v[0] > 0.f ? v[0] : 0.f;
  case NodeKind::Sigmoid:
    return 1.f / (1.f + std::exp(-v[0]));
  default:
    return std::nullopt;
  }
}

/// x^2 as x*x for a float \p n of x's own type, else an empty value.
static NodeValue squareAsMul(Function &F, Node *n) {
  auto *p = llvm::dyn_cast<PowNode>(n);
  if (!p || !isFloatKind(p->getType()->getElemKind()))
    return NodeValue();
  NodeValue x = p->getNthInput(0);
  if (!isUniform(p->getNthInput(1), 2) || x.getType() != p->getType())
    return NodeValue();
  return F.createMul(n->getName().str() + ".square", x, x);
}

static NodeValue simplify(Function &F, Node *n) {
  if (NodeValue x = identityOperand(n))
    return x;
  if (NodeValue sq = squareAsMul(F, n))
    return sq;
  if (auto *neg = llvm::dyn_cast<NegNode>(n))
    if (auto *inner = llvm::dyn_cast<NegNode>(neg->getInput().getNode()))
      return inner->getInput();
  if (auto v = evalOnSplats(n)) {
    llvm::SmallVector<int64_t, kMaxRank> dims(n->getType()->dims().begin(),
                                              n->getType()->dims().end());
    return F.createSplat(n->getName().str() + ".splat", dims, ElemKind::Float32,
                         *v);
  }
  return NodeValue();
}

bool ArithSimplifyPass::run(Function &F, PassContext &ctx) {
  bool changed = false;
  for (Node *n : nodesInOrder(F)) {
    NodeValue r = simplify(F, n);
    if (!r)
      continue;
    n->getNthResult(0).replaceAllUsesWith(r);
    F.eraseNode(n);
    ++ctx.counters["arith-simplify.simplified"];
    changed = true;
  }
  return changed;
}
