//===- Linear.cpp - Lowering of Gemm and of MatMul operand forms ----------===//
#include "LowerRules.h"

using namespace ember;

Replacement ember::lowerGemm(Function &F, GemmNode &n) {
  std::string name = n.getName().str();
  NodeValue a = n.getA(), b = n.getB();
  if (n.getTransA())
    a = F.createTranspose(name + ".at", a, {1, 0});
  // A transposed B stays a MatMul operand form: the kernels read it in place
  // (or the backend lowers the MatMul's TransB in turn).
  NodeValue y = F.createMatMul(name + ".mm", a, b, n.getTransB());
  ElemKind k = y.getElemKind();
  if (n.getAlpha() != 1.f)
    y = F.createMul(name + ".alpha", y,
                    F.createSplat(name + ".alphav", y.dims(), k, n.getAlpha()));
  if (n.getBeta() != 0.f) {
    NodeValue c = n.getC();
    if (n.getBeta() != 1.f)
      c = F.createMul(name + ".beta", c,
                      F.createSplat(name + ".betav", c.dims(), k, n.getBeta()));
    y = F.createAdd(name + ".bias", y, c);
  }
  return {y};
}

Replacement ember::lowerMatMulOperands(Function &F, MatMulNode &n) {
  NodeValue a = n.getLHS(), b = n.getRHS();
  unsigned r = a.dims().size();
  bool broadcast = false;
  for (unsigned i = 0; i + 2 < r; ++i)
    broadcast |= a.dims()[i] != b.dims()[i];
  if (!broadcast && !n.getTransB())
    return {};
  std::string name = n.getName().str();
  if (n.getTransB()) {
    llvm::SmallVector<int64_t, kMaxRank> perm;
    for (unsigned i = 0; i < r; ++i)
      perm.push_back(i);
    std::swap(perm[r - 2], perm[r - 1]);
    b = F.createTranspose(name + ".bt", b, perm);
  }
  if (broadcast) {
    llvm::ArrayRef<dim_t> out = n.getResult().dims();
    llvm::SmallVector<int64_t, kMaxRank> ad(a.dims()), bd(b.dims());
    for (unsigned i = 0; i + 2 < r; ++i)
      ad[i] = bd[i] = out[i];
    if (ad != llvm::ArrayRef<int64_t>(a.dims()))
      a = F.createBroadcast(name + ".lhs", a, ad);
    if (bd != llvm::ArrayRef<int64_t>(b.dims()))
      b = F.createBroadcast(name + ".rhs", b, bd);
  }
  return {NodeValue(F.createMatMul(name, a, b, n.getEpilogue(), 0,
                                   n.getFusedActivation(), n.getFusedAlpha(),
                                   n.getFusedBeta()))};
}
