//===- Conv.cpp - Lowering of grouped convolution -------------------------===//
#include "LowerRules.h"

#include "ember/Base/Error.h"

#include "glog/logging.h"

using namespace ember;

/// Slices \p count entries of \p v's axis \p axis from \p start.
static NodeValue sliceAxis(Function &F, const std::string &name, NodeValue v,
                           unsigned axis, dim_t start, dim_t count) {
  llvm::ArrayRef<dim_t> d = v.dims();
  llvm::SmallVector<int64_t, kMaxRank> starts(d.size(), 0), steps(d.size(), 1),
      dims(d.begin(), d.end());
  starts[axis] = start;
  dims[axis] = count;
  return F.createSlice(name, v, starts, steps, dims);
}

/// A Conv with Group = g > 1 is g independent convolutions: group i reads
/// input channels [i*C/g, (i+1)*C/g) with filter rows [i*M/g, (i+1)*M/g)
/// and writes those output channels. Each becomes a Group = 1 Conv with
/// the same window and epilogue (the residual is sliced like the output);
/// a Concat along the channels joins them. For backends whose convolution
/// kernel has no groups; constant filter and bias slices fold later.
Replacement ember::lowerGroupedConv(Function &F, ConvNode &n) {
  int64_t g = n.getGroup();
  if (g <= 1)
    return {};
  std::string name = n.getName().str();
  dim_t cPerG = n.getInput().dims()[1] / g, mPerG = n.getFilter().dims()[0] / g;
  AttrList attrs = n.getAttrs();
  attrs[3] = Attr::makeInt(1); // Group
  llvm::SmallVector<NodeValue, 8> parts;
  for (int64_t i = 0; i < g; ++i) {
    std::string p = name + ".g" + std::to_string(i);
    llvm::SmallVector<NodeValue, 4> ops = {
        sliceAxis(F, p + ".x", n.getInput(), 1, i * cPerG, cPerG),
        sliceAxis(F, p + ".w", n.getFilter(), 0, i * mPerG, mPerG),
        sliceAxis(F, p + ".b", n.getBias(), 0, i * mPerG, mPerG)};
    for (NodeValue r : n.getResidual())
      ops.push_back(sliceAxis(F, p + ".r", r, 1, i * mPerG, mPerG));
    auto conv = F.tryCreateNode(OpKind::Conv, p, ops, attrs);
    CHECK(bool(conv)) << errorToString(conv.takeError());
    parts.push_back((*conv)->getNthResult(0));
  }
  return {F.createConcat(name + ".concat", parts, 1)};
}
