//===- ConstantFoldTest.cpp - The evaluator hook of constant folding ------===//
#include "OptTestUtils.h"

#include "ember/Graph/Parser.h"
#include "ember/Graph/Printer.h"

using namespace ember;
using namespace ember::test;

static const char *kGraph = R"(function f {
  %x = Placeholder float<2> input
  %y = Placeholder float<2> output
  %z = Placeholder float<2> output
  %a = Constant float<2> [1, 4]
  %good = Sqrt(%a)
  %bad = Exp(%a)
  %u = Add(%x, %good)
  Save(%u, %y)
  %v = Add(%x, %bad)
  Save(%v, %z)
})";

TEST(ConstantFold, OneFailingSubgraphDoesNotBlockTheOthers) {
  registerAllBackends();
  Module M;
  auto F = parseFunction(kGraph, M);
  ASSERT_TRUE(bool(F)) << llvm::toString(F.takeError());
  PassContext ctx;
  unsigned calls = 0;
  // An evaluator that cannot run Exp, like a backend lacking a kernel.
  ctx.evaluate = [&](llvm::ArrayRef<NodeValue> values)
      -> llvm::Expected<std::vector<Tensor>> {
    ++calls;
    for (NodeValue v : values)
      if (llvm::isa<ExpNode>(v.getNode()))
        return makeError("no Exp here");
    return evaluateConstantValues(values);
  };
  PassInstrumentOptions opts;
  opts.verifyEach = true;
  auto changed =
      runPipeline(**F, *parsePipeline("constant-fold,dce"), ctx, opts);
  ASSERT_TRUE(bool(changed)) << llvm::toString(changed.takeError());
  EXPECT_TRUE(*changed);
  EXPECT_EQ(calls, 3u); // both together, then one by one
  EXPECT_EQ(ctx.counters["constant-fold.folded"], 1u);
  EXPECT_EQ(ctx.counters["constant-fold.failed-evaluations"], 1u);
  auto counts = countNodeKinds(**F);
  EXPECT_EQ(counts.count("Sqrt"), 0u);
  EXPECT_EQ(counts["Exp"], 1u);
  // The folded constant holds sqrt([1, 4]).
  for (auto &c : M.getConstants())
    if (c->getName() == "good") {
      EXPECT_EQ(c->getPayload().elementAsDouble(0), 1.0);
      EXPECT_EQ(c->getPayload().elementAsDouble(1), 2.0);
    }
}

TEST(ConstantFold, WithoutAnEvaluatorNothingHappens) {
  Module M;
  auto F = parseFunction(kGraph, M);
  ASSERT_TRUE(bool(F));
  PassContext ctx; // no evaluate hook
  auto changed = runPipeline(**F, *parsePipeline("constant-fold"), ctx, {});
  ASSERT_TRUE(bool(changed));
  EXPECT_FALSE(*changed);
}

TEST(ConstantFold, BroadcastOfAVectorIsNotMaterialized) {
  Module M;
  auto F = parseFunction(R"(function f {
  %x = Placeholder float<1 x 3 x 8 x 8> input
  %y = Placeholder float<1 x 3 x 8 x 8> output
  %v = Constant float<3> [1, 2, 3]
  %w = Constant float<3> [2, 2, 2]
  %s = Mul(%v, %w)
  %r = Reshape(%s) {Dims=[1, 3, 1, 1]}
  %b = Broadcast(%r) {Dims=[1, 3, 8, 8]}
  %m = Mul(%x, %b)
  Save(%m, %y)
})",
                         M);
  ASSERT_TRUE(bool(F));
  registerAllBackends();
  PassContext ctx;
  ctx.evaluate = evaluateConstantValues;
  ASSERT_TRUE(
      bool(runPipeline(**F, *parsePipeline("(constant-fold,dce)*"), ctx, {})));
  std::string text = functionToString(**F);
  // [3] * [3] and the reshape fold; the 192-element Broadcast stays.
  EXPECT_NE(text.find("= Broadcast(%r) {Dims=[1, 3, 8, 8]}"), std::string::npos)
      << text;
  EXPECT_EQ(text.find("= Mul(%v"), std::string::npos) << text;
}
