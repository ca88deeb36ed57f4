//===- FoldScaleIntoConv.cpp - A channel scale moves into the Conv filter -===//
//
// Conv(x * Broadcast(s), w) with s of shape [1, C, 1, 1] (one factor per
// input channel, e.g. the excitation of a squeeze-and-excitation block) and
// group 1 is Conv(x, w * Broadcast(s)): input channel c only ever meets
// filter column c, and zero padding stays zero when scaled. For a single
// image the product then costs M * C * KH * KW multiplies instead of
// C * H * W, and the activation is not read and written once more. Taken
// where the backend's convolution accepts a filter computed at run time
// (PassContext) and the filter has at most 1/32 of the activation's
// elements: per element, the filter's broadcast multiply and its packing
// for the GEMM cost 10-30 times the activation's multiply (measured, see
// docs/PerformanceHistory.md#scale-folded-into-conv).
//
//===----------------------------------------------------------------------===//
#include "PassUtils.h"
#include "Passes.h"

using namespace ember;

/// Activation elements per filter element below which the scale stays.
constexpr dim_t kMinActivationPerFilter = 32;

/// The per-channel factors s ([1, C, 1, 1]) if \p v is Broadcast(s) to
/// the shape of the 4-D single-image activation \p x; else an empty value.
static NodeValue channelScaleOf(NodeValue v, NodeValue x) {
  auto *bc = llvm::dyn_cast<BroadcastNode>(v.getNode());
  if (!bc)
    return {};
  auto xd = x.getType()->dims();
  auto sd = bc->getInput().getType()->dims();
  if (xd.size() != 4 || xd[0] != 1 || sd.size() != 4 || sd[0] != 1 ||
      sd[1] != xd[1] || sd[2] != 1 || sd[3] != 1 ||
      bc->getInput().getType()->getElemKind() != x.getType()->getElemKind())
    return {};
  return bc->getInput();
}

bool FoldScaleIntoConvPass::run(Function &F, PassContext &ctx) {
  if (!ctx.supportsRuntimeConvFilter)
    return false;
  bool changed = false;
  for (Node *n : nodesInOrder(F)) {
    auto *conv = llvm::dyn_cast<ConvNode>(n);
    if (!conv || conv->getGroup() != 1)
      continue;
    auto *mul = llvm::dyn_cast<MulNode>(conv->getInput().getNode());
    if (!mul || !hasOneUse(mul))
      continue;
    NodeValue x, s;
    for (unsigned i = 0; i < 2 && !s.getNode(); ++i) {
      x = mul->getNthInput(1 - i);
      s = channelScaleOf(mul->getNthInput(i), x);
    }
    // Float only: scaling a quantized filter would change its scale.
    NodeValue w = conv->getFilter();
    if (!s.getNode() || x.getType()->getElemKind() != ElemKind::Float32 ||
        w.getType()->getElemKind() != ElemKind::Float32 ||
        kMinActivationPerFilter * w.getType()->size() > x.getType()->size())
      continue;
    std::string name = conv->getName().str();
    auto wd = w.getType()->dims();
    NodeValue scaled = F.createMul(
        name + ".scaled_filter", w,
        F.createBroadcast(name + ".scale", s,
                          llvm::SmallVector<int64_t, 4>(wd.begin(), wd.end())));
    llvm::SmallVector<NodeValue, 4> ops(conv->getInputs().begin(),
                                        conv->getInputs().end());
    ops[0] = x;
    ops[1] = scaled;
    Node *folded = cloneNode(F, *conv, ops, conv->getAttrs());
    replaceNode(conv, folded);
    F.eraseNode(conv);
    F.eraseNode(mul);
    ++ctx.counters["fold-scale-into-conv.folded"];
    changed = true;
  }
  return changed;
}
