//===- PassManagerTest.cpp - Registry, pipelines and instruments ----------===//
#include "OptTestUtils.h"

#include "ember/Graph/Parser.h"
#include "ember/Graph/Printer.h"

#include "llvm/Support/MemoryBuffer.h"

using namespace ember;
using namespace ember::test;

static const char *kGraph = R"(
function f {
  %x = Placeholder float<4> input
  %y = Placeholder float<4> output
  %one = Splat() {Dims=[4], ElemTy=float, Value=1}
  %a = Mul(%x, %one)
  %b = Relu(%a)
  %c = Relu(%a)
  %d = Add(%b, %c)
  Save(%d, %y)
}
)";

static Function *parse(Module &M, const char *text = kGraph) {
  auto F = parseFunction(text, M);
  if (!F) {
    ADD_FAILURE() << llvm::toString(F.takeError());
    return nullptr;
  }
  return *F;
}

TEST(PassManager, RegistryKnowsEveryPass) {
  std::vector<std::string> names = getPassNames();
  EXPECT_GE(names.size(), 14u);
  for (const std::string &n : names) {
    auto p = createPass(n);
    ASSERT_TRUE(p) << n;
    EXPECT_EQ(p->getName(), n);
    EXPECT_FALSE(p->getDescription().empty());
  }
  EXPECT_EQ(createPass("no-such-pass"), nullptr);
}

TEST(PassManager, PipelineSyntaxRoundTrips) {
  auto P = parsePipeline("dce, (cse,arith-simplify)*, lower,(dce)");
  ASSERT_TRUE(bool(P)) << llvm::toString(P.takeError());
  ASSERT_EQ(P->size(), 4u);
  EXPECT_FALSE((*P)[0].fixedPoint);
  EXPECT_TRUE((*P)[1].fixedPoint);
  EXPECT_EQ((*P)[1].passes.size(), 2u);
  EXPECT_FALSE((*P)[3].fixedPoint);
  EXPECT_EQ(pipelineToString(*P), "dce,(cse,arith-simplify)*,lower,dce");
  std::string text = pipelineToString(getDefaultPipeline());
  auto again = parsePipeline(text);
  ASSERT_TRUE(bool(again));
  EXPECT_EQ(pipelineToString(*again), text);

  auto bad = parsePipeline("dce,frobnicate");
  ASSERT_FALSE(bool(bad));
  EXPECT_NE(llvm::toString(bad.takeError()).find("frobnicate"),
            std::string::npos);
  auto unclosed = parsePipeline("(dce");
  EXPECT_FALSE(bool(unclosed));
  llvm::consumeError(unclosed.takeError());
}

TEST(PassManager, FixedPointAndDisable) {
  Module M;
  Function *F = parse(M);
  PassContext ctx;
  PassInstrumentOptions opts;
  opts.verifyEach = true;
  auto changed =
      runPipeline(*F, *parsePipeline("(arith-simplify,cse,dce)*"), ctx, opts);
  ASSERT_TRUE(bool(changed));
  EXPECT_TRUE(*changed);
  auto counts = countNodeKinds(*F);
  EXPECT_EQ(counts["Relu"], 1u);
  EXPECT_EQ(counts.count("Mul"), 0u);

  Module M2;
  Function *F2 = parse(M2);
  opts.disabled = {"cse"};
  ASSERT_TRUE(bool(runPipeline(*F2, *parsePipeline("(arith-simplify,cse,dce)*"),
                               ctx, opts)));
  EXPECT_EQ(countNodeKinds(*F2)["Relu"], 2u); // cse did not run
}

namespace {
/// A deliberately wrong pass: gives a Relu a result type of another shape.
class BreakingPass final : public Pass {
public:
  llvm::StringRef getName() const override { return "breaker"; }
  llvm::StringRef getDescription() const override { return "test"; }
  bool run(Function &F, PassContext &) override {
    for (auto &n : F.getNodes())
      if (llvm::isa<ReluNode>(n.get())) {
        TypeRef wrong = F.getParent().uniqueType(ElemKind::Float32, {5});
        F.createNodeWithTypes(OpKind::Relu, "bad", {n->getNthInput(0)}, {wrong},
                              {});
        return true;
      }
    return false;
  }
};
} // namespace

TEST(PassManager, VerifyEachNamesTheBrokenPass) {
  Module M;
  Function *F = parse(M);
  BreakingPass breaker;
  PassContext ctx;
  PassInstrumentOptions opts;
  opts.verifyEach = true;
  auto r = runPass(*F, breaker, ctx, opts);
  ASSERT_FALSE(bool(r));
  std::string msg = llvm::toString(r.takeError());
  EXPECT_NE(msg.find("pass 'breaker' broke the graph"), std::string::npos)
      << msg;
  EXPECT_NE(msg.find("bad"), std::string::npos) << msg;
}

TEST(PassManager, PrintTimeAndStatsInstruments) {
  Module M;
  Function *F = parse(M);
  std::string out;
  llvm::raw_string_ostream os(out);
  PassContext ctx;
  PassInstrumentOptions opts;
  opts.os = &os;
  opts.printAfter = {"cse"};
  opts.timePasses = true;
  opts.printStats = true;
  ASSERT_TRUE(bool(
      runPipeline(*F, *parsePipeline("arith-simplify,cse,dce"), ctx, opts)));
  os.flush();
  EXPECT_NE(out.find("// after cse\nfunction f {"), std::string::npos) << out;
  EXPECT_EQ(out.find("// after dce"), std::string::npos) << out;
  EXPECT_NE(out.find("pass timings"), std::string::npos) << out;
  EXPECT_NE(out.find("arith-simplify"), std::string::npos) << out;
  // Relu: 2 before, 1 after.
  EXPECT_NE(out.find("Relu                        2        1"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("cse.merged"), std::string::npos) << out;
}

TEST(PassManager, DotAfterWritesAFile) {
  Module M;
  Function *F = parse(M);
  std::string path = ::testing::TempDir() + "/ember-dot-after.dot";
  PassContext ctx;
  PassInstrumentOptions opts;
  opts.dotAfter["dce"] = path;
  ASSERT_TRUE(bool(runPipeline(*F, *parsePipeline("dce"), ctx, opts)));
  auto buf = llvm::MemoryBuffer::getFile(path);
  ASSERT_TRUE(bool(buf));
  EXPECT_TRUE((*buf)->getBuffer().starts_with("digraph"));
  opts.dotAfter["dce"] = "/nonexistent-dir/x.dot";
  auto r = runPipeline(*F, *parsePipeline("dce"), ctx, opts);
  ASSERT_FALSE(bool(r));
  EXPECT_NE(llvm::toString(r.takeError()).find("cannot write"),
            std::string::npos);
}
