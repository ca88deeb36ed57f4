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

// Three 16 MiB weight transposes (like a transformer's MatMul weights):
// folded in batches, and each batch's weights freed before the next is
// evaluated, so the Module never holds a weight and its folded copy for
// more than one batch at a time.
TEST(ConstantFold, LargeFoldsAreBatchedAndFreeTheirWeights) {
  registerAllBackends();
  Module M;
  auto F = parseFunction(R"(function f {
  %x = Placeholder float<1 x 2048> input
  %y = Placeholder float<1 x 2048> output
  %a = Constant float<2048 x 2048>
  %b = Constant float<2048 x 2048>
  %c = Constant float<2048 x 2048>
  %ta = Transpose(%a) {Shuffle=[1, 0]}
  %tb = Transpose(%b) {Shuffle=[1, 0]}
  %tc = Transpose(%c) {Shuffle=[1, 0]}
  %u = MatMul(%x, %ta)
  %v = MatMul(%u, %tb)
  %w = MatMul(%v, %tc)
  Save(%w, %y)
})",
                         M);
  ASSERT_TRUE(bool(F)) << llvm::toString(F.takeError());
  auto constantBytes = [&] {
    uint64_t n = 0;
    for (auto &c : M.getConstants())
      n += c->getPayload().sizeInBytes();
    return n;
  };
  const uint64_t weight = 2048 * 2048 * sizeof(float);
  std::vector<size_t> batchSizes;
  std::vector<uint64_t> heldAtCall;
  PassContext ctx;
  ctx.evaluate = [&](llvm::ArrayRef<NodeValue> values) {
    batchSizes.push_back(values.size());
    heldAtCall.push_back(constantBytes());
    return evaluateConstantValues(values);
  };
  ASSERT_TRUE(bool(runPipeline(**F, *parsePipeline("constant-fold"), ctx, {})));
  EXPECT_EQ(ctx.counters["constant-fold.folded"], 3u);
  ASSERT_GE(batchSizes.size(), 2u);
  for (size_t n : batchSizes)
    EXPECT_LE(n, 2u);
  // Before each evaluation the Module holds the three weights' worth of
  // bytes, originals and folded ones together, never more.
  for (uint64_t held : heldAtCall)
    EXPECT_EQ(held, 3 * weight);
  EXPECT_EQ(constantBytes(), 3 * weight);
  // The folded constants are the transposes of the originals: spot-check
  // one element against a fresh parse (the parser's fill is deterministic).
  Module ref;
  auto R = parseFunction(R"(function f {
  %y = Placeholder float<2048 x 2048> output
  %a = Constant float<2048 x 2048>
  Save(%a, %y)
})",
                         ref);
  ASSERT_TRUE(bool(R));
  const Tensor &orig = ref.getConstants().front()->getPayload();
  for (auto &c : M.getConstants())
    if (c->getName().starts_with("ta")) {
      auto h = c->getPayload().getHandle<float>();
      auto o = orig.getHandle<float>();
      EXPECT_EQ(h.at({5, 7}), o.at({7, 5}));
    }
}

/// Runs splat-fold on a Broadcast of an Int64 constant whose two entries
/// are \p v; returns the Splat's value if one was made.
static std::optional<double> splatOfBroadcastInt64(int64_t v) {
  Module M;
  auto F = parseFunction(R"(function f {
  %y = Placeholder i64<3 x 2> output
  %c = Constant i64<1 x 2>
  %b = Broadcast(%c) {Dims=[3, 2]}
  Save(%b, %y)
})",
                         M);
  EXPECT_TRUE(bool(F)) << llvm::toString(F.takeError());
  Tensor &t = M.getConstants().front()->getPayloadMutable();
  t.getHandle<int64_t>().raw(0) = v;
  t.getHandle<int64_t>().raw(1) = v;
  PassContext ctx;
  auto changed = runPipeline(**F, *parsePipeline("splat-fold,dce"), ctx, {});
  EXPECT_TRUE(bool(changed));
  for (const auto &n : (*F)->getNodes())
    if (const auto *s = llvm::dyn_cast<SplatNode>(n.get()))
      return double(s->getValue());
  return std::nullopt;
}

TEST(SplatFold, KeepsInt64ValuesAFloatCannotHold) {
  // A Splat holds a float: 2^40 folds; 2^62 + 1 (equal entries that a
  // double would round to 2^62) and 2^63 - 1 (rounds out of int64's range)
  // stay constants.
  EXPECT_EQ(splatOfBroadcastInt64(int64_t(1) << 40), std::ldexp(1.0, 40));
  EXPECT_EQ(splatOfBroadcastInt64((int64_t(1) << 62) + 1), std::nullopt);
  EXPECT_EQ(splatOfBroadcastInt64(std::numeric_limits<int64_t>::max()),
            std::nullopt);
}
