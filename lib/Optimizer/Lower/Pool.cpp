//===- Pool.cpp - Lowering of pooling -------------------------------------===//
#include "LowerRules.h"

using namespace ember;

bool ember::isGlobalAvgPool(const AvgPoolNode &n) {
  llvm::ArrayRef<dim_t> d = n.getInput().dims();
  for (int64_t p : n.getPads())
    if (p != 0)
      return false;
  return n.getKernel()[0] == d[2] && n.getKernel()[1] == d[3];
}

/// A window over the whole image is a mean over H and W: ReduceSum over
/// axes 2 and 3, times 1 / (H * W). Other windows are left to the kernel.
Replacement ember::lowerAvgPool(Function &F, AvgPoolNode &n) {
  if (!isGlobalAvgPool(n))
    return {};
  std::string name = n.getName().str();
  NodeValue x = n.getInput();
  NodeValue sum = F.createReduceSum(name + ".sum", x, {2, 3}, 1);
  llvm::ArrayRef<dim_t> d = sum.dims();
  float scale = 1.f / float(x.dims()[2] * x.dims()[3]);
  NodeValue k = F.createSplat(name + ".scale", {d.begin(), d.end()},
                              sum.getElemKind(), scale);
  return {F.createMul(name + ".mean", sum, k)};
}
