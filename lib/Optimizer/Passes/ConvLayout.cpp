//===- ConvLayout.cpp - Convolutions in the backend's preferred layout ----===//
//
// For a backend that prefers channels-last convolution, every Conv becomes
//   Transpose{0,3,1,2}(ConvNHWC(Transpose{0,2,3,1}(x), Transpose{0,2,3,1}(w),
//                               b, Transpose{0,2,3,1}(residual)))
// with the same attributes and epilogue. The pass only inserts transposes at
// the edges; transpose-opt then cancels the pairs between consecutive
// convolutions (and sinks them through elementwise ops), and constant-fold
// turns the filter's transpose into a Constant. For an NCHW backend the
// pass does nothing.
//
//===----------------------------------------------------------------------===//
#include "PassUtils.h"
#include "Passes.h"

using namespace ember;

static const int64_t kToNHWC[] = {0, 2, 3, 1};
static const int64_t kToNCHW[] = {0, 3, 1, 2};

bool ConvLayoutPass::run(Function &F, PassContext &ctx) {
  if (ctx.convLayout != ConvLayout::NHWC)
    return false;
  bool changed = false;
  for (Node *n : nodesInOrder(F)) {
    auto *conv = llvm::dyn_cast<ConvNode>(n);
    if (!conv)
      continue;
    std::string name = conv->getName().str();
    llvm::SmallVector<NodeValue, 4> ops = {
        F.createTranspose(name + ".nhwc", conv->getInput(), kToNHWC),
        F.createTranspose(name + ".ohwi", conv->getFilter(), kToNHWC),
        conv->getBias()};
    for (NodeValue r : conv->getResidual())
      ops.push_back(F.createTranspose(name + ".res.nhwc", r, kToNHWC));
    auto nhwc = F.tryCreateNode(OpKind::ConvNHWC, name, ops, conv->getAttrs());
    CHECK(bool(nhwc)) << errorToString(nhwc.takeError());
    NodeValue back =
        F.createTranspose(name + ".nchw", (*nhwc)->getNthResult(0), kToNCHW);
    conv->getResult().replaceAllUsesWith(back);
    F.eraseNode(conv);
    ++ctx.counters["conv-layout.converted"];
    changed = true;
  }
  return changed;
}
