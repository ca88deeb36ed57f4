//===- Linear.cpp - Lowering of Gemm --------------------------------------===//
#include "LowerRules.h"

using namespace ember;

Replacement ember::lowerGemm(Function &F, GemmNode &n) {
  std::string name = n.getName().str();
  NodeValue a = n.getA(), b = n.getB();
  if (n.getTransA())
    a = F.createTranspose(name + ".at", a, {1, 0});
  if (n.getTransB())
    b = F.createTranspose(name + ".bt", b, {1, 0});
  NodeValue y = F.createMatMul(name + ".mm", a, b);
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
