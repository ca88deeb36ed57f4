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

/// The spatial axes 2..rank-1 of \p x, if a window of \p kernel without
/// padding or dilation covers all of them; else empty.
static llvm::SmallVector<int64_t, 4>
globalWindowAxes(NodeValue x, llvm::ArrayRef<int64_t> kernel,
                 llvm::ArrayRef<int64_t> pads,
                 llvm::ArrayRef<int64_t> dilations = {}) {
  llvm::ArrayRef<dim_t> d = x.dims();
  llvm::SmallVector<int64_t, 4> axes;
  if (kernel.size() + 2 != d.size())
    return {};
  for (int64_t p : pads)
    if (p != 0)
      return {};
  for (int64_t v : dilations)
    if (v != 1)
      return {};
  for (size_t i = 0; i < kernel.size(); ++i) {
    if (kernel[i] != int64_t(d[i + 2]))
      return {};
    axes.push_back(i + 2);
  }
  return axes;
}

/// Global max pooling is a ReduceMax over the spatial axes (kept as 1s).
Replacement ember::lowerMaxPool(Function &F, MaxPoolNode &n) {
  auto axes = globalWindowAxes(n.getInput(), n.getKernel(), n.getPads());
  if (axes.empty())
    return {};
  return {F.createReduceMax(n.getName().str() + ".max", n.getInput(), axes, 1)};
}

/// Global N-d pooling is a ReduceMean (IsAvg) or ReduceMax over the
/// spatial axes; other windows keep the kernel.
Replacement ember::lowerPoolND(Function &F, PoolNDNode &n) {
  auto axes = globalWindowAxes(n.getInput(), n.getKernel(), n.getPads(),
                               n.getDilations());
  if (axes.empty())
    return {};
  std::string name = n.getName().str();
  if (n.getIsAvg())
    return {F.createReduceMean(name + ".mean", n.getInput(), axes, 1)};
  return {F.createReduceMax(name + ".max", n.getInput(), axes, 1)};
}
