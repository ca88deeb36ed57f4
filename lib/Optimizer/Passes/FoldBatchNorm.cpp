//===- FoldBatchNorm.cpp - Fold inference BatchNorm into Conv or Gemm -----===//
//
// BatchNorm(y) = y * s + t per channel, s = scale / sqrt(var + eps) and
// t = bias - mean * s. When y is a Conv (or Gemm) used only by the
// BatchNorm, with constant weights, the scaling moves into new weights:
//   Conv:  W'[m] = W[m] * s[m],  b' = b * s + t
//   Gemm:  column m of op(B) scaled by s[m],  C' = beta * C * s + t, beta' = 1
// The original weights are left to dead-code elimination (another node may
// share them).
//
//===----------------------------------------------------------------------===//
#include "PassUtils.h"
#include "Passes.h"

#include <cmath>

using namespace ember;

namespace {
/// Per-channel scale and shift of one BatchNorm with constant parameters.
struct Affine {
  std::vector<float> s, t;
};
} // namespace

static const Tensor *floatPayload(NodeValue v) {
  auto *c = llvm::dyn_cast<Constant>(v.getNode());
  if (!c || c->getType()->getElemKind() != ElemKind::Float32)
    return nullptr;
  return &c->getPayload();
}

static std::optional<Affine> getAffine(BatchNormNode *bn) {
  const Tensor *scale = floatPayload(bn->getScale());
  const Tensor *bias = floatPayload(bn->getBias());
  const Tensor *mean = floatPayload(bn->getMean());
  const Tensor *var = floatPayload(bn->getVar());
  if (!scale || !bias || !mean || !var)
    return std::nullopt;
  Affine a;
  auto sc = scale->getHandle<float>(), b = bias->getHandle<float>(),
       m = mean->getHandle<float>(), v = var->getHandle<float>();
  for (dim_t c = 0; c < sc.size(); ++c) {
    float s = sc.raw(c) / std::sqrt(v.raw(c) + bn->getEpsilon());
    a.s.push_back(s);
    a.t.push_back(b.raw(c) - m.raw(c) * s);
  }
  return a;
}

/// The payload of \p v to rewrite: the Constant itself when \p user is its
/// only user (no copy of large weights), else a new Constant with a copy.
static Constant *ownedCopy(Function &F, NodeValue v, const Node *user,
                           llvm::StringRef name) {
  auto *c = llvm::cast<Constant>(v.getNode());
  if (c->getUsers().size() == 1 && c->getUsers()[0].user == user)
    return c;
  return F.getParent().createConstant(name, c->getPayload().clone());
}

static bool foldIntoConv(Function &F, BatchNormNode *bn, ConvNode *conv,
                         const Affine &a) {
  if (!floatPayload(conv->getFilter()) || !floatPayload(conv->getBias()) ||
      !conv->getResidual().empty() ||
      conv->getFusedActivation() != int64_t(FusedActivation::None))
    return false;
  std::string name = conv->getName().str();
  Constant *cw = ownedCopy(F, conv->getFilter(), conv, name + ".bnw");
  Constant *cb = ownedCopy(F, conv->getBias(), conv, name + ".bnb");
  Tensor &nw = cw->getPayloadMutable();
  float *w = reinterpret_cast<float *>(nw.data());
  float *b = reinterpret_cast<float *>(cb->getPayloadMutable().data());
  dim_t channels = nw.dims()[0], perChannel = nw.size() / channels;
  for (dim_t m = 0; m < channels; ++m) {
    for (dim_t i = 0; i < perChannel; ++i)
      w[m * perChannel + i] *= a.s[m];
    b[m] = b[m] * a.s[m] + a.t[m];
  }
  Node *folded =
      cloneNode(F, *conv, {conv->getInput(), cw, cb}, conv->getAttrs());
  bn->getResult().replaceAllUsesWith(folded->getNthResult(0));
  return true;
}

static bool foldIntoGemm(Function &F, BatchNormNode *bn, GemmNode *g,
                         const Affine &a) {
  const Tensor *b = floatPayload(g->getB());
  const Tensor *c = floatPayload(g->getC());
  if (!b || !c || g->getTransA())
    return false;
  Tensor nb = b->clone(), nc = c->clone();
  auto hb = nb.getHandle<float>();
  auto hc = nc.getHandle<float>();
  dim_t rows = nb.dims()[0], cols = nb.dims()[1];
  for (dim_t r = 0; r < rows; ++r)
    for (dim_t k = 0; k < cols; ++k)
      hb.at({r, k}) *= a.s[g->getTransB() ? r : k];
  for (dim_t n = 0; n < nc.dims()[0]; ++n)
    for (dim_t m = 0; m < nc.dims()[1]; ++m)
      hc.at({n, m}) = g->getBeta() * hc.at({n, m}) * a.s[m] + a.t[m];
  Module &M = F.getParent();
  std::string name = g->getName().str();
  Constant *cb = M.createConstant(name + ".bnb", std::move(nb));
  Constant *cc = M.createConstant(name + ".bnc", std::move(nc));
  NodeValue folded = F.createGemm(name, g->getA(), cb, cc, g->getAlpha(), 1.f,
                                  0, g->getTransB());
  bn->getResult().replaceAllUsesWith(folded);
  return true;
}

bool FoldBatchNormPass::run(Function &F, PassContext &ctx) {
  bool changed = false;
  for (Node *n : nodesInOrder(F)) {
    auto *bn = llvm::dyn_cast<BatchNormNode>(n);
    if (!bn || !hasOneUse(bn->getInput().getNode()))
      continue;
    std::optional<Affine> a = getAffine(bn);
    if (!a)
      continue;
    Node *producer = bn->getInput().getNode();
    bool folded = false;
    if (auto *conv = llvm::dyn_cast<ConvNode>(producer))
      folded = foldIntoConv(F, bn, conv, *a);
    else if (auto *g = llvm::dyn_cast<GemmNode>(producer))
      folded = folded || (bn->getInput().dims().size() == 2 &&
                          foldIntoGemm(F, bn, g, *a));
    if (!folded)
      continue;
    F.eraseNode(bn);
    F.eraseNode(producer);
    ++ctx.counters["fold-batchnorm.folded"];
    changed = true;
  }
  return changed;
}
