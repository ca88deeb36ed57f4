//===- Softmax.cpp - Lowering of Softmax ----------------------------------===//
#include "LowerRules.h"

using namespace ember;

/// softmax(x) = e / sum(e) with e = exp(x - max(x)) along the axis; the max
/// keeps exp from overflowing.
Replacement ember::lowerSoftmax(Function &F, SoftmaxNode &n) {
  std::string name = n.getName().str();
  NodeValue x = n.getInput();
  llvm::ArrayRef<dim_t> dims = x.dims();
  llvm::SmallVector<int64_t, kMaxRank> shape(dims.begin(), dims.end());
  int64_t axis = n.getAxis();
  NodeValue mx = F.createReduceMax(name + ".max", x, {axis}, 1);
  NodeValue shifted = F.createSub(name + ".shift", x,
                                  F.createBroadcast(name + ".maxb", mx, shape));
  NodeValue e = F.createExp(name + ".exp", shifted);
  NodeValue sum = F.createReduceSum(name + ".sum", e, {axis}, 1);
  NodeValue y = F.createDiv(name + ".div", e,
                            F.createBroadcast(name + ".sumb", sum, shape));
  return {y};
}
