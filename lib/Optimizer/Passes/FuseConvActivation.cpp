//===- FuseConvActivation.cpp - Activations into the Conv epilogue --------===//
//
// Recognizes an activation applied to a Conv result and moves it into the
// Conv's FusedActivation/FusedAlpha/FusedBeta:
//   Relu(c), Max(c, 0), Max(0, c)           -> Relu
//   Clip(c) {Min, Max}                      -> Clip (Relu6 is Clip 0..6)
//   Sigmoid(c)                              -> Sigmoid
//   Where(Greater(c, 0), c, Mul(c, a))      -> LeakyRelu(a) (the importer's
//                                              LeakyRelu, and PRelu with a
//                                              uniform slope)
//   Mul(c, Clip(Add(Mul(c, a), b), 0, 1))   -> HardSwish(a, b)
//   Mul(c, Sigmoid(c))                      -> SiLU (Swish, EfficientNet)
// The Conv must have no epilogue, and every user of the Conv and of the
// pattern's inner nodes must be inside the pattern, so the rewrite never
// duplicates work. Constants may be Splats or uniform Constants, on
// either side of commutative ops.
//
//===----------------------------------------------------------------------===//
#include "PassUtils.h"
#include "Passes.h"

#include <set>

using namespace ember;

namespace {
/// A recognized activation: the Conv, what to fuse, and the nodes that the
/// fused Conv replaces besides the root.
struct ActivationMatch {
  ConvNode *conv = nullptr;
  FusedActivation act = FusedActivation::None;
  float alpha = 0, beta = 0;
  llvm::SmallVector<Node *, 4> inner;
};
} // namespace

/// The Conv \p v comes from, if it has no epilogue yet.
static ConvNode *plainConv(NodeValue v) {
  auto *conv = llvm::dyn_cast<ConvNode>(v.getNode());
  if (!conv || conv->getFusedActivation() != int64_t(FusedActivation::None))
    return nullptr;
  return conv;
}

/// For a commutative binary \p n: the operand that is not uniform, with
/// the uniform one's value in \p u.
static NodeValue splitUniform(Node *n, double &u) {
  for (unsigned i = 0; i < 2; ++i)
    if (auto v = getUniformValue(n->getNthInput(1 - i))) {
      u = *v;
      return n->getNthInput(i);
    }
  return NodeValue();
}

/// True if every user of \p n is one of \p allowed.
static bool usersWithin(const Node *n, const std::set<const Node *> &allowed) {
  for (const NodeUse &u : n->getUsers())
    if (!allowed.count(u.user))
      return false;
  return true;
}

/// Where(Greater(c, 0), c, Mul(c, a)).
static bool matchLeakyRelu(Node *n, ActivationMatch &m) {
  auto *w = llvm::dyn_cast<WhereNode>(n);
  if (!w)
    return false;
  auto *gt = llvm::dyn_cast<GreaterNode>(w->getCond().getNode());
  auto *mul = llvm::dyn_cast<MulNode>(w->getRHS().getNode());
  if (!gt || !mul || !isUniform(gt->getRHS(), 0))
    return false;
  double a = 0;
  NodeValue c = w->getLHS();
  if (gt->getLHS() != c || splitUniform(mul, a) != c)
    return false;
  m = {plainConv(c), FusedActivation::LeakyRelu, float(a), 0, {gt, mul}};
  return m.conv != nullptr;
}

/// Mul(c, Clip(Add(Mul(c, a), b), 0, 1)), operands of Mul/Add either way.
static bool matchHardSwish(Node *n, ActivationMatch &m) {
  auto *outer = llvm::dyn_cast<MulNode>(n);
  if (!outer)
    return false;
  for (unsigned i = 0; i < 2; ++i) {
    NodeValue c = outer->getNthInput(i);
    auto *clip = llvm::dyn_cast<ClipNode>(outer->getNthInput(1 - i).getNode());
    if (!clip || clip->getMin() != 0.f || clip->getMax() != 1.f)
      continue;
    auto *add = llvm::dyn_cast<AddNode>(clip->getInput().getNode());
    double a = 0, b = 0;
    if (!add)
      continue;
    auto *mul = llvm::dyn_cast_or_null<MulNode>(splitUniform(add, b).getNode());
    if (!mul || splitUniform(mul, a) != c)
      continue;
    m = {plainConv(c),
         FusedActivation::HardSwish,
         float(a),
         float(b),
         {clip, add, mul}};
    if (m.conv)
      return true;
  }
  return false;
}

/// Mul(c, Sigmoid(c)), operands of Mul either way.
static bool matchSiLU(Node *n, ActivationMatch &m) {
  auto *mul = llvm::dyn_cast<MulNode>(n);
  if (!mul)
    return false;
  for (unsigned i = 0; i < 2; ++i) {
    NodeValue c = mul->getNthInput(i);
    auto *sig = llvm::dyn_cast<SigmoidNode>(mul->getNthInput(1 - i).getNode());
    if (!sig || sig->getNthInput(0) != c)
      continue;
    m = {plainConv(c), FusedActivation::SiLU, 0, 0, {sig}};
    if (m.conv)
      return true;
  }
  return false;
}

/// The single-operand activations and Max(c, 0).
static bool matchSimple(Node *n, ActivationMatch &m) {
  NodeValue c;
  m = ActivationMatch();
  switch (n->getKind()) {
  case NodeKind::Relu:
    m.act = FusedActivation::Relu;
    c = n->getNthInput(0);
    break;
  case NodeKind::Sigmoid:
    m.act = FusedActivation::Sigmoid;
    c = n->getNthInput(0);
    break;
  case NodeKind::Clip:
    m.act = FusedActivation::Clip;
    m.alpha = llvm::cast<ClipNode>(n)->getMin();
    m.beta = llvm::cast<ClipNode>(n)->getMax();
    c = n->getNthInput(0);
    break;
  case NodeKind::Max: {
    double z;
    c = splitUniform(n, z);
    if (!c || z != 0)
      return false;
    m.act = FusedActivation::Relu;
    break;
  }
  default:
    return false;
  }
  m.conv = plainConv(c);
  return m.conv != nullptr;
}

/// Matches an activation rooted at \p n whose Conv and inner nodes are used
/// only inside the pattern.
static bool matchActivation(Node *n, ActivationMatch &m) {
  if (n->getNumResults() != 1)
    return false;
  if (!matchSimple(n, m) && !matchLeakyRelu(n, m) && !matchHardSwish(n, m) &&
      !matchSiLU(n, m))
    return false;
  if (m.conv->getType() != n->getType())
    return false;
  std::set<const Node *> inside(m.inner.begin(), m.inner.end());
  inside.insert(n);
  if (!usersWithin(m.conv, inside))
    return false;
  for (Node *i : m.inner)
    if (!usersWithin(i, inside))
      return false;
  return true;
}

bool FuseConvActivationPass::run(Function &F, PassContext &ctx) {
  bool changed = false;
  unsigned actIdx = attrIndex(OpKind::Conv, "FusedActivation");
  unsigned alphaIdx = attrIndex(OpKind::Conv, "FusedAlpha");
  unsigned betaIdx = attrIndex(OpKind::Conv, "FusedBeta");
  for (Node *n : nodesInOrder(F)) {
    ActivationMatch m;
    if (!matchActivation(n, m) || !ctx.supportsConvActivation(m.act))
      continue;
    ConvNode *conv = m.conv;
    AttrList attrs = conv->getAttrs();
    attrs[actIdx] = Attr::makeInt(int64_t(m.act));
    attrs[alphaIdx] = Attr::makeFloat(m.alpha);
    attrs[betaIdx] = Attr::makeFloat(m.beta);
    Node *fused = cloneNode(F, *conv, conv->getInputs(), std::move(attrs));
    n->getNthResult(0).replaceAllUsesWith(fused->getNthResult(0));
    F.eraseNode(n);
    // The matchers list inner nodes users first; the Conv goes last. They
    // all precede n in the topological snapshot, so none is visited later.
    for (Node *i : m.inner)
      F.eraseNode(i);
    F.eraseNode(conv);
    ++ctx.counters["fuse-conv-activation.fused"];
    changed = true;
  }
  return changed;
}
