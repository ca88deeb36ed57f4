//===- Attention.cpp - Lowering of the attention fusions
//-------------------===//
//
// For a backend without their kernels (CUDA), ScaledSoftmax and Attention
// become again the chains fuse-softmax-mask and fuse-attention took them
// from: Mul by the scale, Add of the broadcast mask (and of a causal
// constant of 0 and -inf), Softmax over the last axis, and the two batched
// MatMuls around it; an Attention's perms become Transposes again.
//
//===----------------------------------------------------------------------===//
#include "LowerRules.h"

#include <cstring>
#include <limits>
#include <vector>

using namespace ember;

/// [1, ..., 1, Tq, Tk] of rank \p rank: 0 where key j <= query i, -inf
/// above, broadcast to \p dims.
static NodeValue causalMask(Function &F, llvm::StringRef name,
                            llvm::ArrayRef<dim_t> dims) {
  size_t r = dims.size();
  dim_t tq = dims[r - 2], tk = dims[r - 1];
  llvm::SmallVector<dim_t, kMaxRank> md(r, 1);
  md[r - 2] = tq;
  md[r - 1] = tk;
  Tensor t(ElemKind::Float32, md);
  std::vector<float> v(tq * tk, 0.f);
  for (dim_t i = 0; i < tq; ++i)
    for (dim_t j = i + 1; j < tk; ++j)
      v[i * tk + j] = -std::numeric_limits<float>::infinity();
  std::memcpy(t.data(), v.data(), v.size() * sizeof(float));
  Constant *c = F.getParent().createConstant(name, std::move(t));
  llvm::SmallVector<int64_t, kMaxRank> shape(dims.begin(), dims.end());
  return F.createBroadcast(name.str() + ".b", c, shape);
}

Replacement ember::lowerScaledSoftmax(Function &F, ScaledSoftmaxNode &n) {
  std::string name = n.getName().str();
  NodeValue x = n.getInput();
  llvm::ArrayRef<dim_t> dims = x.dims();
  llvm::SmallVector<int64_t, kMaxRank> shape(dims.begin(), dims.end());
  if (n.getScale() != 1.f)
    x = F.createMul(
        name + ".scale", x,
        F.createSplat(name + ".s", shape, ElemKind::Float32, n.getScale()));
  for (NodeValue m : n.getMask())
    x = F.createAdd(name + ".mask", x,
                    F.createBroadcast(name + ".maskb", m, shape));
  if (n.getCausal())
    x = F.createAdd(name + ".causal", x,
                    causalMask(F, name + ".causalmask", dims));
  return {F.createSoftmax(name, x, int64_t(dims.size()) - 1)};
}

/// \p x read through \p perm: a Transpose, or \p x for an empty perm.
static NodeValue throughPerm(Function &F, const std::string &name, NodeValue x,
                             llvm::ArrayRef<int64_t> perm) {
  return perm.empty() ? x : F.createTranspose(name, x, perm);
}

Replacement ember::lowerAttention(Function &F, AttentionNode &n) {
  std::string name = n.getName().str();
  NodeValue q = throughPerm(F, name + ".q", n.getQ(), n.getQPerm());
  NodeValue k = throughPerm(F, name + ".k", n.getK(), n.getKPerm());
  NodeValue v = throughPerm(F, name + ".v", n.getV(), n.getVPerm());
  NodeValue s = F.createMatMul(name + ".qk", q, k, {},
                               /*transB=*/1, 0, 0.f, 0.f);
  NodeValue p = F.createScaledSoftmax(name + ".p", s, n.getMask(), n.getScale(),
                                      n.getCausal());
  if (n.getOutPerm().empty())
    return {F.createMatMul(name, p, v, {}, 0, 0, 0.f, 0.f)};
  NodeValue o = F.createMatMul(name + ".pv", p, v, {}, 0, 0, 0.f, 0.f);
  return {F.createTranspose(name, o, n.getOutPerm())};
}
