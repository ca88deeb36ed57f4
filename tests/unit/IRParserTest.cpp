//===- IRParserTest.cpp - The textual IR reads back what it prints --------===//
#include "ember/IR/IRParser.h"
#include "ember/IR/IRGen.h"
#include "ember/IR/IROptimizer.h"
#include "ember/IR/IRPrinter.h"

#include "TestUtils.h"

#include "llvm/Support/MemoryBuffer.h"

using namespace ember;
using namespace ember::test;

/// print(parse(text)), failing the test on a parse error.
static std::string reprint(llvm::StringRef text) {
  auto parsed = parseIR(text, "test");
  if (!parsed) {
    ADD_FAILURE() << llvm::toString(parsed.takeError());
    return "";
  }
  return irToString(*parsed->function);
}

TEST(IRParser, HandWrittenFileRoundTrips) {
  auto buf =
      llvm::MemoryBuffer::getFile(sourceDir() + "/tests/ir/roundtrip.ir");
  ASSERT_TRUE(bool(buf));
  std::string once = reprint((*buf)->getBuffer());
  ASSERT_FALSE(once.empty());
  EXPECT_EQ(reprint(once), once);
  // The file's own code section is written in printed form, so printing
  // reproduces it line for line.
  llvm::StringRef text = (*buf)->getBuffer();
  size_t code = text.find("\ncode {");
  ASSERT_NE(code, llvm::StringRef::npos);
  llvm::StringRef section = text.substr(code, text.find("\n}", code) - code);
  EXPECT_NE(once.find(section.str()), std::string::npos) << once;
}

namespace {
/// conv -> relu -> {maxpool, reshape} -> concat -> save: every instruction
/// kind IRGen produces, with several attribute kinds.
struct Net {
  Module M;
  Function *F = M.createFunction("net");
  Net() {
    auto *x =
        M.createPlaceholder("x", Type(ElemKind::Float32, {1, 2, 4, 4}), false);
    auto *y =
        M.createPlaceholder("y", Type(ElemKind::Float32, {1, 4, 2, 2}), true);
    Tensor w(ElemKind::Float32, {2, 2, 3, 3});
    for (dim_t i = 0; i < w.size(); ++i)
      w.getHandle<float>().raw(i) = float(i % 5) - 2.f;
    auto *wc = M.createConstant("w", std::move(w));
    auto *bc = M.createConstant("b", makeTensor({2}, {0.5f, -0.25f}));
    auto *c = F->createConv("c", x, wc, bc, {}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1,
                            0, 0.f, 0.f);
    auto *r = F->createClip("r", c, -1.5f, 0.1f);
    auto *p = F->createMaxPool("p", r, {2, 2}, {2, 2}, {0, 0, 0, 0});
    auto *s = F->createSigmoid("s", p);
    auto *cat = F->createConcat("cat", {p, s}, 1);
    F->createSave("save", cat, y);
  }
};
} // namespace

TEST(IRParser, GeneratedAndOptimizedIRRoundTrips) {
  Net n;
  auto ir = generateIR(*n.F, scheduleFunction(*n.F));
  ASSERT_TRUE(bool(ir));
  std::string text = irToString(**ir);
  EXPECT_EQ(reprint(text), text);
  ASSERT_FALSE(bool(optimizeIR(**ir, true)));
  std::string opt = irToString(**ir);
  EXPECT_NE(opt, text);
  EXPECT_EQ(reprint(opt), opt);
  // The plan's comments and memory section are skipped when reading.
  MemoryPlan plan = planMemory(**ir);
  EXPECT_EQ(reprint(irToString(**ir, &plan)), opt);
}

TEST(IRParser, ConstantsTakeTheirPayloadFromAModule) {
  Net n;
  auto ir = generateIR(*n.F, scheduleFunction(*n.F));
  ASSERT_TRUE(bool(ir));
  auto parsed = parseIR(irToString(**ir), "net", &n.M);
  ASSERT_TRUE(bool(parsed)) << llvm::toString(parsed.takeError());
  const WeightVar *b = parsed->function->getWeightByName("b");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->getPayload()->getHandle<float>().raw(1), -0.25f);
  // Without a module, constants are zeros of the declared type.
  auto zeros = parseIR(irToString(**ir), "net");
  ASSERT_TRUE(bool(zeros));
  b = zeros->function->getWeightByName("b");
  EXPECT_EQ(b->getPayload()->getHandle<float>().raw(1), 0.f);
}

/// Parses \p body inside a function with weights %x (input) and %y
/// (output) of float<4>, expecting an error containing \p what.
static void expectError(llvm::StringRef body, llvm::StringRef what) {
  std::string text = "function f\ndeclare {\n"
                     "  %x = weight float<4> mutable input\n"
                     "  %y = weight float<4> mutable output\n}\ncode {\n" +
                     body.str() + "\n}\n";
  auto parsed = parseIR(text, "bad.ir");
  ASSERT_FALSE(bool(parsed)) << body.str();
  std::string msg = llvm::toString(parsed.takeError());
  EXPECT_NE(msg.find(what.str()), std::string::npos) << msg;
  EXPECT_NE(msg.find("bad.ir"), std::string::npos) << msg;
}

TEST(IRParser, MalformedInputGivesCleanErrors) {
  expectError("%a = relu @out %y, @in %nope", "bad.ir:7: use of undefined");
  expectError("%a = frobnicate @out %y", "unknown instruction kind");
  expectError("%a.res = allocactivation float<4 x>", "expected a type");
  expectError("%a.res = allocactivation flot<4>", "expected a type");
  expectError("%a = clip @out %y, @in %x {Min=1}", "expected ','");
  expectError("%a = clip @out %y, @in %x {Max=1, Min=2}",
              "expected attribute Min");
  expectError("%a = clip @out %y, @in %x {Min=x, Max=2}",
              "bad value for attribute Min");
  expectError("%a = relu @sideways %y, @in %x", "operand role");
  expectError("%a = relu @out %y, @in %x\n%a = relu @out %y, @in %x",
              "defined twice");
  expectError("%v = tensorview float<8> @in %x {Offset=0}", "does not fit");
  expectError("%a.res = allocactivation float<4>\n"
              "deallocactivation @out %a.res\n"
              "%r = relu @out %a.res, @in %x",
              "after its deallocation");
  expectError("%a.res = allocactivation float<4> extra", "unexpected text");
  expectError("%a = copy @out %y @in %x", "expected ','");
  expectError("deallocactivation @out %x", "deallocactivation @out %alloc");
  expectError("%c = copy @out %y, @in %x\n%r = relu @out %y, @in %c",
              "is an instruction, not a buffer");
  expectError("%a = allocactivation float<99999999 x 99999999 x 99999>",
              "larger than 2^40 bytes");
  auto noFn = parseIR("declare {\n}\n", "t");
  ASSERT_FALSE(bool(noFn));
  EXPECT_NE(llvm::toString(noFn.takeError()).find("function NAME"),
            std::string::npos);
  auto open = parseIR("function f\ncode {\n", "t");
  ASSERT_FALSE(bool(open));
  EXPECT_NE(llvm::toString(open.takeError()).find("missing '}'"),
            std::string::npos);
}

TEST(IRParser, DamagedTextNeverCrashes) {
  Net n;
  auto ir = generateIR(*n.F, scheduleFunction(*n.F));
  ASSERT_TRUE(bool(ir));
  ASSERT_FALSE(bool(optimizeIR(**ir, true)));
  std::string text = irToString(**ir);
  // Truncations and single-character deletions and substitutions at many
  // points: each must parse or give an error, and whatever parses prints.
  unsigned errors = 0;
  for (size_t k = 0; k < text.size(); k += 3) {
    std::string cut = text.substr(0, k);
    std::string del = text.substr(0, k) + text.substr(k + 1);
    std::string sub = text;
    sub[k] = "%@{}<>,=x0\"\n "[k % 13];
    for (const std::string &t : {cut, del, sub}) {
      auto parsed = parseIR(t, "damaged");
      if (!parsed) {
        llvm::consumeError(parsed.takeError());
        ++errors;
        continue;
      }
      EXPECT_FALSE(irToString(*parsed->function).empty());
    }
  }
  EXPECT_GT(errors, 0u);
}
