//===- Norm.cpp - Lowering of normalizations ------------------------------===//
#include "LowerRules.h"

using namespace ember;

NodeValue ember::broadcastChannelVector(Function &F, llvm::StringRef name,
                                        NodeValue vec,
                                        llvm::ArrayRef<dim_t> dims) {
  llvm::SmallVector<int64_t, kMaxRank> shape(dims.size(), 1);
  shape[1] = vec.dims()[0];
  NodeValue r = F.createReshape(name.str() + ".r", vec, shape);
  return F.createBroadcast(name.str() + ".b", r, dims);
}

/// y = x * s + (bias - mean * s) with s = scale / sqrt(var + eps), the
/// per-channel factors computed on [C] vectors (constant-folded later when
/// the parameters are constants).
Replacement ember::lowerBatchNorm(Function &F, BatchNormNode &n) {
  std::string name = n.getName().str();
  NodeValue x = n.getInput();
  NodeValue var = n.getVar();
  ElemKind k = var.getElemKind();
  NodeValue eps = F.createSplat(name + ".eps", var.dims(), k, n.getEpsilon());
  NodeValue denom =
      F.createSqrt(name + ".std", F.createAdd(name + ".vareps", var, eps));
  NodeValue s = F.createDiv(name + ".s", n.getScale(), denom);
  NodeValue shift = F.createSub(name + ".shift", n.getBias(),
                                F.createMul(name + ".ms", n.getMean(), s));
  NodeValue sb = broadcastChannelVector(F, name + ".sb", s, x.dims());
  NodeValue tb = broadcastChannelVector(F, name + ".tb", shift, x.dims());
  NodeValue y =
      F.createAdd(name + ".add", F.createMul(name + ".mul", x, sb), tb);
  return {y};
}
