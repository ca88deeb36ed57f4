//===- TrimConvTapsTest.cpp - Dead taps with weights that are not finite --===//
//
// The golden test trim-conv-taps checks the cuts and their numbers on random
// weights; this one checks the exception: a dead tap whose weight is not
// finite would turn the padding's zeros into NaN where a kernel multiplies
// them (ONNX's zero padding), so the filter must stay as it is.
//
//===----------------------------------------------------------------------===//
#include "OptTestUtils.h"

#include "ember/Graph/Parser.h"

#include <limits>

using namespace ember;
using namespace ember::test;

static const char *kGraph = R"(function f {
  %x = Placeholder float<1 x 1 x 2 x 2> input
  %y = Placeholder float<1 x 1 x 1 x 1> output
  %w = Constant float<1 x 1 x 3 x 3> [1, 1, 1, 1, 1, 1, 1, 1, 1]
  %b = Constant float<1> [0]
  %c = Conv(%x, %w, %b) {Strides=[1, 1], Pads=[0, 0, 1, 1], Dilations=[1, 1], Group=1}
  Save(%c, %y)
})";

/// Runs trim-conv-taps on kGraph with the last filter tap (which only
/// ever reads the bottom-right padding) set to \p lastTap; returns how
/// many convolutions were trimmed and the Interpreter's output on ones
/// (the Interpreter skips padding taps, so it cannot tell the two apart).
static std::pair<unsigned, float> trimWithLastTap(float lastTap) {
  Module M;
  auto F = parseFunction(kGraph, M);
  EXPECT_TRUE(bool(F)) << llvm::toString(F.takeError());
  for (auto &c : M.getConstants())
    if (c->getName() == "w")
      reinterpret_cast<float *>(c->getPayloadMutable().data())[8] = lastTap;
  PassContext ctx;
  PassInstrumentOptions opts;
  opts.verifyEach = true;
  auto changed =
      runPipeline(**F, *parsePipeline("trim-conv-taps,dce"), ctx, opts);
  EXPECT_TRUE(bool(changed)) << llvm::toString(changed.takeError());
  Tensor x(ElemKind::Float32, {1, 1, 2, 2});
  for (dim_t i = 0; i < 4; ++i)
    reinterpret_cast<float *>(x.data())[i] = 1.f;
  auto out = runOnInterpreter(M, **F, *parsePipeline("dce"), {&x});
  EXPECT_TRUE(bool(out)) << llvm::toString(out.takeError());
  float y = reinterpret_cast<const float *>((*out)[0].data())[0];
  return {ctx.counters["trim-conv-taps.trimmed"], y};
}

TEST(TrimConvTaps, CutsFiniteDeadTaps) {
  auto [trimmed, y] = trimWithLastTap(5.f);
  EXPECT_EQ(trimmed, 1u);
  EXPECT_EQ(y, 4.f); // the four live taps, each 1 * 1
}

TEST(TrimConvTaps, KeepsAnInfiniteDeadTap) {
  auto [trimmed, y] = trimWithLastTap(std::numeric_limits<float>::infinity());
  EXPECT_EQ(trimmed, 0u);
  (void)y;
}
