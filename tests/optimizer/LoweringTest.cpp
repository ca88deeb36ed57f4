//===- LoweringTest.cpp - New lowering rules against kernels and hand values
//
// The golden files check what the rules build; these check the numbers:
// the lowered graph against the Interpreter's own Softmax, pooling and
// grouped Conv kernels (compiled with a pipeline that does not lower) and
// against values computed by hand.
//
//===----------------------------------------------------------------------===//
#include "OptTestUtils.h"

#include "ember/Graph/Parser.h"
#include "ember/Graph/Printer.h"
#include "ember/Graph/Verifier.h"
#include "ember/Optimizer/Lower.h"

#include <random>

using namespace ember;
using namespace ember::test;

/// One random tensor in [lo, hi) per input placeholder of \p M.
static std::vector<Tensor> randomInputs(Module &M, unsigned seed, float lo,
                                        float hi) {
  std::mt19937 gen(seed);
  std::vector<Tensor> in;
  for (Placeholder *p : M.getInputPlaceholders()) {
    in.emplace_back(*p->getType());
    in.back().randomize(lo, hi, gen);
  }
  return in;
}

/// Outputs of \p refF (dce only: the Interpreter's own kernels) and of
/// \p lowF (the default pipeline) on the same two inputs.
static void runUnloweredAndLowered(Module &refM, Function &refF, Module &lowM,
                                   Function &lowF,
                                   const std::vector<Tensor> &in,
                                   std::vector<Tensor> &ref,
                                   std::vector<Tensor> &low) {
  auto r =
      runOnInterpreter(refM, refF, *parsePipeline("dce"), {&in[0], &in[1]});
  ASSERT_TRUE(bool(r)) << llvm::toString(r.takeError());
  auto l = runOnInterpreter(lowM, lowF, getDefaultPipeline(), {&in[0], &in[1]});
  ASSERT_TRUE(bool(l)) << llvm::toString(l.takeError());
  ref = std::move(*r);
  low = std::move(*l);
}

static const char *kGraph = R"(function f {
  %x = Placeholder float<2 x 3 x 4> input
  %p = Placeholder float<2 x 3 x 5 x 5> input
  %y0 = Placeholder float<2 x 3 x 4> output
  %y1 = Placeholder float<2 x 3 x 4> output
  %y2 = Placeholder float<2 x 3 x 1 x 1> output
  %s0 = Softmax(%x) {Axis=0}
  Save(%s0, %y0)
  %s1 = Softmax(%x) {Axis=1}
  Save(%s1, %y1)
  %g = AvgPool(%p) {Kernel=[5, 5], Strides=[1, 1], Pads=[0, 0, 0, 0], CountIncludePad=0}
  Save(%g, %y2)
})";

TEST(Lowering, SoftmaxAndGlobalPoolMatchTheKernels) {
  Module refM, lowM;
  auto refF = parseFunction(kGraph, refM);
  auto lowF = parseFunction(kGraph, lowM);
  ASSERT_TRUE(refF && lowF);
  std::vector<Tensor> in = randomInputs(refM, 3, -1.f, 1.f), ref, low;
  std::mt19937 gen(3);
  in[0].randomize(-30.f, 30.f, gen); // large values: the max shift matters
  ASSERT_NO_FATAL_FAILURE(
      runUnloweredAndLowered(refM, **refF, lowM, **lowF, in, ref, low));
  auto counts = countNodeKinds(**lowF);
  EXPECT_EQ(counts.count("Softmax"), 0u);
  EXPECT_EQ(counts.count("AvgPool"), 0u);
  // Same math in another order: a few ulps.
  for (size_t i = 0; i < ref.size(); ++i)
    expectRelClose(low[i], ref[i], 1e-6, "output " + std::to_string(i));
}

TEST(Lowering, SoftmaxHandValues) {
  Module M;
  auto F = parseFunction(R"(function f {
  %x = Constant float<1 x 3> [0, 1000, 1000]
  %y = Placeholder float<1 x 3> output
  %s = Softmax(%x) {Axis=1}
  Save(%s, %y)
})",
                         M);
  ASSERT_TRUE(bool(F));
  // exp(1000) overflows: only the max-shifted form gives [0, 0.5, 0.5].
  auto out = runOnInterpreter(M, **F, getDefaultPipeline(), {});
  ASSERT_TRUE(bool(out)) << llvm::toString(out.takeError());
  EXPECT_EQ((*out)[0].elementAsDouble(0), 0.0);
  EXPECT_NEAR((*out)[0].elementAsDouble(1), 0.5, 1e-7);
  EXPECT_NEAR((*out)[0].elementAsDouble(2), 0.5, 1e-7);
}

TEST(Lowering, ReductionTypesAreChecked) {
  Module M;
  auto bad = parseFunction(R"(function f {
  %x = Placeholder float<2 x 3> input
  %r = ReduceSum(%x) {Axes=[1, 0], KeepDims=0}
})",
                           M);
  ASSERT_FALSE(bool(bad));
  EXPECT_NE(llvm::toString(bad.takeError()).find("must be sorted and distinct"),
            std::string::npos);
  Module M2;
  auto ok = parseFunction(R"(function f {
  %x = Placeholder float<2 x 3 x 4> input
  %r = ReduceMax(%x) {Axes=[0, 2], KeepDims=0}
})",
                          M2);
  ASSERT_TRUE(bool(ok)) << llvm::toString(ok.takeError());
  EXPECT_NE(functionToString(**ok).find("ReduceMax(%x) {Axes=[0, 2], "
                                        "KeepDims=0} : float<3>"),
            std::string::npos);
}

static const char *kPoolGraph = R"(function f {
  %x = Placeholder float<2 x 4 x 5 x 5> input
  %v = Placeholder float<1 x 2 x 3 x 4 x 2> input
  %y0 = Placeholder float<2 x 4 x 1 x 1> output
  %y1 = Placeholder float<1 x 2 x 1 x 1 x 1> output
  %y2 = Placeholder float<1 x 2 x 1 x 1 x 1> output
  %y3 = Placeholder float<2 x 4 x 2 x 2> output
  %m = MaxPool(%x) {Kernel=[5, 5], Strides=[1, 1], Pads=[0, 0, 0, 0]}
  Save(%m, %y0)
  %pa = PoolND(%v) {Kernel=[3, 4, 2], Strides=[1, 1, 1], Pads=[0, 0, 0, 0, 0, 0], Dilations=[1, 1, 1], IsAvg=1, CountIncludePad=0}
  Save(%pa, %y1)
  %pm = PoolND(%v) {Kernel=[3, 4, 2], Strides=[1, 1, 1], Pads=[0, 0, 0, 0, 0, 0], Dilations=[1, 1, 1], IsAvg=0, CountIncludePad=0}
  Save(%pm, %y2)
  %w = MaxPool(%x) {Kernel=[2, 2], Strides=[2, 2], Pads=[0, 0, 0, 0]}
  Save(%w, %y3)
})";

TEST(Lowering, GlobalPoolsBecomeReductions) {
  Module refM, lowM;
  auto refF = parseFunction(kPoolGraph, refM);
  auto lowF = parseFunction(kPoolGraph, lowM);
  ASSERT_TRUE(refF && lowF);
  std::vector<Tensor> in = randomInputs(refM, 5, -3.f, 3.f), ref, low;
  ASSERT_NO_FATAL_FAILURE(
      runUnloweredAndLowered(refM, **refF, lowM, **lowF, in, ref, low));
  auto counts = countNodeKinds(**lowF);
  EXPECT_EQ(counts.count("PoolND"), 0u);
  EXPECT_EQ(counts["MaxPool"], 1u); // the 2x2 window keeps its kernel
  EXPECT_EQ(counts["ReduceMax"], 2u);
  EXPECT_EQ(counts["ReduceMean"], 1u);
  for (size_t i = 0; i < ref.size(); ++i)
    expectRelClose(low[i], ref[i], 1e-6, "output " + std::to_string(i));
}

// Grouped Conv is lowered only where the backend asks (the Interpreter's
// kernel has groups), so the rule is run here with a shouldLower that
// says yes and compared with the Interpreter's grouped kernel.
TEST(Lowering, GroupedConvSplitsIntoConvs) {
  const char *graph = R"(function f {
  %x = Placeholder float<1 x 6 x 5 x 5> input
  %r = Placeholder float<1 x 9 x 3 x 3> input
  %y = Placeholder float<1 x 9 x 3 x 3> output
  %w = Constant float<9 x 2 x 3 x 3>
  %b = Constant float<9>
  %c = Conv(%x, %w, %b, %r) {Strides=[2, 2], Pads=[1, 1, 1, 1], Dilations=[1, 1], Group=3, FusedActivation=5, FusedAlpha=0.2, FusedBeta=0}
  Save(%c, %y)
})";
  Module refM, lowM;
  auto refF = parseFunction(graph, refM);
  auto lowF = parseFunction(graph, lowM);
  ASSERT_TRUE(refF && lowF);
  ASSERT_TRUE(lowerFunction(**lowF, [](const Node &) { return true; }));
  eliminateDeadCode(**lowF);
  llvm::Error err = verifyFunction(**lowF);
  ASSERT_FALSE(bool(err)) << llvm::toString(std::move(err));
  auto counts = countNodeKinds(**lowF);
  EXPECT_EQ(counts["Conv"], 3u);
  EXPECT_EQ(counts["Concat"], 1u);
  for (Node *n : topologicalOrder(**lowF)) {
    if (auto *c = llvm::dyn_cast<ConvNode>(n)) {
      EXPECT_EQ(c->getGroup(), 1);
    }
  }

  std::vector<Tensor> in = randomInputs(refM, 11, -1.f, 1.f), ref, low;
  ASSERT_NO_FATAL_FAILURE(
      runUnloweredAndLowered(refM, **refF, lowM, **lowF, in, ref, low));
  expectRelClose(low[0], ref[0], 1e-6, "grouped conv");
}

/// Parses \p graph twice, lowers Attention and ScaledSoftmax in the second
/// copy (as a backend that asks for it, CUDA), and runs both copies on the
/// Interpreter (dce only: the unlowered one on its fused kernels) on the same
/// random Q, K and V. \p counts: the lowered copy's node kinds.
static void lowerAttentionAndRun(const char *graph,
                                 std::map<std::string, unsigned> &counts,
                                 std::vector<Tensor> &ref,
                                 std::vector<Tensor> &low) {
  Module refM, lowM;
  auto refF = parseFunction(graph, refM);
  auto lowF = parseFunction(graph, lowM);
  ASSERT_TRUE(refF && lowF);
  ASSERT_TRUE(lowerFunction(**lowF, [](const Node &n) {
    return llvm::isa<AttentionNode>(n) || llvm::isa<ScaledSoftmaxNode>(n);
  }));
  eliminateDeadCode(**lowF);
  llvm::Error err = verifyFunction(**lowF);
  ASSERT_FALSE(bool(err)) << llvm::toString(std::move(err));
  counts = countNodeKinds(**lowF);
  std::vector<Tensor> in = randomInputs(refM, 5, -2.f, 2.f);
  std::vector<const Tensor *> ptrs = {&in[0], &in[1], &in[2]};
  auto r = runOnInterpreter(refM, **refF, *parsePipeline("dce"), ptrs);
  ASSERT_TRUE(bool(r)) << llvm::toString(r.takeError());
  auto l = runOnInterpreter(lowM, **lowF, *parsePipeline("dce"), ptrs);
  ASSERT_TRUE(bool(l)) << llvm::toString(l.takeError());
  ref = std::move(*r);
  low = std::move(*l);
}

// ScaledSoftmax and Attention go back to the unfused chain on a backend
// that asks (CUDA): the rules, run here with a shouldLower that says yes
// for them, must give the Interpreter's fused kernels' numbers (causal,
// padding mask, scale).
TEST(Lowering, AttentionBackToUnfused) {
  const char *graph = R"(function f {
  %q = Placeholder float<2 x 2 x 5 x 4> input
  %k = Placeholder float<2 x 2 x 6 x 4> input
  %v = Placeholder float<2 x 2 x 6 x 3> input
  %ya = Placeholder float<2 x 2 x 5 x 3> output
  %ys = Placeholder float<2 x 2 x 5 x 6> output
  %m = Constant float<2 x 1 x 1 x 6> [0, 0, 0, 0, 0, -10000, 0, 0, 0, -10000, -10000, 0]
  %a = Attention(%q, %k, %v, %m) {Scale=0.5, Causal=1}
  Save(%a, %ya)
  %s = MatMul(%q, %k) {TransB=1}
  %p = ScaledSoftmax(%s, %m) {Scale=0.25, Causal=0}
  Save(%p, %ys)
})";
  std::map<std::string, unsigned> counts;
  std::vector<Tensor> ref, low;
  ASSERT_NO_FATAL_FAILURE(lowerAttentionAndRun(graph, counts, ref, low));
  EXPECT_EQ(counts["Attention"], 0u);
  EXPECT_EQ(counts["ScaledSoftmax"], 0u);
  EXPECT_EQ(counts["Softmax"], 2u);
  EXPECT_EQ(counts["MatMul"], 3u);

  for (size_t i = 0; i < ref.size(); ++i)
    expectRelClose(low[i], ref[i], 1e-6, "output " + std::to_string(i));
}

// An Attention's perms go back to Transposes (CUDA): Q and K split as
// [B, T, H, D], V sequence first [T, B, H, D], the result merged back to
// [B, T, H, D]. The unlowered graph runs the Interpreter's kernel, which
// reads through the perms by strides; the lowered one copies through
// Transposes: two separate readings of the op table's definition.
TEST(Lowering, AttentionPermsBackToTransposes) {
  const char *graph = R"(function f {
  %q = Placeholder float<2 x 5 x 2 x 4> input
  %k = Placeholder float<2 x 6 x 2 x 4> input
  %v = Placeholder float<6 x 2 x 2 x 3> input
  %y = Placeholder float<2 x 5 x 2 x 3> output
  %m = Constant float<2 x 1 x 1 x 6> [0, 0, 0, 0, 0, -10000, 0, 0, 0, -10000, -10000, 0]
  %a = Attention(%q, %k, %v, %m) {Scale=0.5, Causal=1, QPerm=[0, 2, 1, 3], KPerm=[0, 2, 1, 3], VPerm=[1, 2, 0, 3], OutPerm=[0, 2, 1, 3]}
  Save(%a, %y)
})";
  std::map<std::string, unsigned> counts;
  std::vector<Tensor> ref, low;
  ASSERT_NO_FATAL_FAILURE(lowerAttentionAndRun(graph, counts, ref, low));
  EXPECT_EQ(counts["Attention"], 0u);
  EXPECT_EQ(counts["Transpose"], 4u);
  EXPECT_EQ(counts["MatMul"], 2u);

  expectRelClose(low[0], ref[0], 1e-6, "attention through perms");
}
