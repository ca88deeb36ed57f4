//===- PrecisionTest.cpp - -precision: flags, the pass, BFloat16 text -----===//
//
// The flag parsers; convert-precision on a small graph (operands cast to
// BFloat16, the weight's Cast folded into a BFloat16 constant rounded to
// nearest even, the result still Float32; nothing under fp32 or when the
// kind is kept; an epilogue kept); BFloat16 MatMuls in graph and IR text
// (print, parse, print) and in the memory plan (2-byte buffers).
//
//===----------------------------------------------------------------------===//
#include "TestUtils.h"

#include "ember/Graph/Parser.h"
#include "ember/Graph/Printer.h"
#include "ember/IR/IRGen.h"
#include "ember/IR/IRParser.h"
#include "ember/IR/IRPrinter.h"
#include "ember/IR/Scheduler.h"

#include <cstring>
#include <limits>

using namespace ember;

namespace {
/// y = MatMul(x, w) + Relu: w [3 x 2] with values that round differently
/// to BFloat16 (1 + 2^-8 is a tie: to even, 1; 1 + 3 * 2^-9 rounds up).
const char *kNet = R"(function f {
  %x = Placeholder float<4 x 3> input
  %w = Constant float<3 x 2> [1.00390625, 1.005859375, -2, 0.5, 3, 1]
  %y = Placeholder float<4 x 2> output
  %m = MatMul(%x, %w) {TransB = 0}
  %r = Relu(%m)
  Save(%r, %y)
})";

std::string print(const Function &F) {
  std::string text;
  llvm::raw_string_ostream os(text);
  printFunction(F, os);
  return os.str();
}

/// Runs convert-precision then the folding cleanups on \p F.
void convert(Function &F, const PrecisionOptions &p) {
  registerAllBackends();
  PassContext ctx;
  ctx.precision = p;
  ctx.evaluate = evaluateConstantValues;
  auto P = parsePipeline("convert-precision,constant-fold,dce");
  ASSERT_TRUE(bool(P));
  auto changed = runPipeline(F, *P, ctx, PassInstrumentOptions());
  ASSERT_TRUE(bool(changed)) << llvm::toString(changed.takeError());
}

MatMulNode *theMatMul(Function &F) {
  for (auto &n : F.getNodes())
    if (auto *m = llvm::dyn_cast<MatMulNode>(n.get()))
      return m;
  return nullptr;
}
} // namespace

TEST(Precision, ParsesFlags) {
  auto bf16 = parseFloatPrecision("bf16");
  ASSERT_TRUE(bool(bf16));
  EXPECT_EQ(*bf16, FloatPrecision::BF16);
  auto fp16 = parseFloatPrecision("fp16");
  ASSERT_TRUE(bool(fp16));
  EXPECT_EQ(*fp16, FloatPrecision::FP16);
  auto bad = parseFloatPrecision("fp8");
  ASSERT_FALSE(bool(bad));
  EXPECT_EQ(llvm::toString(bad.takeError()), "-precision 'fp8' is not fp32, "
                                             "bf16 or fp16");
  auto kinds = parseKeepPrecisionKinds("MatMul, Relu");
  ASSERT_TRUE(bool(kinds));
  EXPECT_EQ(*kinds, (std::vector<std::string>{"MatMul", "Relu"}));
  auto gemm = parseKeepPrecisionKinds("Gemm");
  ASSERT_FALSE(bool(gemm));
  EXPECT_NE(llvm::toString(gemm.takeError()).find("name MatMul"),
            std::string::npos);
  auto unknown = parseKeepPrecisionKinds("MatMul,Nope");
  ASSERT_FALSE(bool(unknown));
  EXPECT_NE(llvm::toString(unknown.takeError()).find("'Nope'"),
            std::string::npos);
}

TEST(Precision, ConvertsMatMulOperandsToBF16) {
  Module M;
  auto F = parseFunction(kNet, M);
  ASSERT_TRUE(bool(F)) << llvm::toString(F.takeError());
  PrecisionOptions p;
  p.precision = FloatPrecision::BF16;
  convert(**F, p);
  MatMulNode *mm = theMatMul(**F);
  ASSERT_NE(mm, nullptr);
  EXPECT_EQ(mm->getType()->getElemKind(), ElemKind::Float32);
  auto *cast = llvm::dyn_cast<CastNode>(mm->getLHS().getNode());
  ASSERT_NE(cast, nullptr);
  EXPECT_EQ(cast->getType()->getElemKind(), ElemKind::BFloat16);
  // The weight: folded at compile time, rounded to nearest even.
  auto *w = llvm::dyn_cast<Constant>(mm->getRHS().getNode());
  ASSERT_NE(w, nullptr);
  ASSERT_EQ(w->getType()->getElemKind(), ElemKind::BFloat16);
  const uint16_t *bits =
      reinterpret_cast<const uint16_t *>(w->getPayload().data());
  EXPECT_EQ(bits[0], 0x3f80); // 1 + 2^-8: a tie, to even
  EXPECT_EQ(bits[1], 0x3f81); // 1 + 3 * 2^-9: up
  EXPECT_EQ(bits[2], 0xc000); // -2 exactly
}

TEST(Precision, KeepsFP32WhenNotAsked) {
  for (bool keep : {false, true}) {
    Module M;
    auto F = parseFunction(kNet, M);
    ASSERT_TRUE(bool(F));
    std::string before = print(**F);
    PrecisionOptions p;
    if (keep) {
      p.precision = FloatPrecision::BF16;
      p.keepKinds = {"MatMul"};
    }
    convert(**F, p);
    EXPECT_EQ(print(**F), before);
  }
}

// A MatMul that already has an epilogue (bias and GELU) is converted too
// and keeps it: the bias stays Float32, applied after the Float32 sums.
TEST(Precision, ConvertsMatMulWithEpilogue) {
  Module M;
  auto F = parseFunction(R"(function f {
  %x = Placeholder float<4 x 3> input
  %w = Constant float<3 x 2> [1, 2, 3, 4, 5, 6]
  %b = Constant float<2> [0.5, -0.5]
  %y = Placeholder float<4 x 2> output
  %m = MatMul(%x, %w, %b) {TransB=0, FusedActivation=7, FusedAlpha=0, FusedBeta=0}
  Save(%m, %y)
})",
                         M);
  ASSERT_TRUE(bool(F)) << llvm::toString(F.takeError());
  PrecisionOptions p;
  p.precision = FloatPrecision::BF16;
  convert(**F, p);
  MatMulNode *mm = theMatMul(**F);
  ASSERT_NE(mm, nullptr);
  EXPECT_EQ(mm->getLHS().getElemKind(), ElemKind::BFloat16);
  EXPECT_EQ(mm->getRHS().getElemKind(), ElemKind::BFloat16);
  ASSERT_EQ(mm->getEpilogue().size(), 1u);
  EXPECT_EQ(mm->getEpilogue()[0].getElemKind(), ElemKind::Float32);
  EXPECT_EQ(mm->getFusedActivation(), int64_t(FusedActivation::Gelu));
}

/// Three convolutions: a plain one (converted), a depthwise one and one
/// whose filter is an input (both kept in Float32).
const char *kConvNet = R"(function f {
  %x = Placeholder float<1 x 2 x 3 x 3> input
  %wi = Placeholder float<2 x 2 x 1 x 1> input
  %y1 = Placeholder float<1 x 2 x 3 x 3> output
  %y2 = Placeholder float<1 x 2 x 3 x 3> output
  %y3 = Placeholder float<1 x 2 x 3 x 3> output
  %w = Constant float<2 x 2 x 1 x 1> [1.00390625, 1.005859375, -2, 0.5]
  %wd = Constant float<2 x 1 x 1 x 1> [1, 2]
  %b = Constant float<2> [0, 1]
  %c1 = Conv(%x, %w, %b) {Strides=[1, 1], Pads=[0, 0, 0, 0], Dilations=[1, 1], Group=1}
  %c2 = Conv(%x, %wd, %b) {Strides=[1, 1], Pads=[0, 0, 0, 0], Dilations=[1, 1], Group=2}
  %c3 = Conv(%x, %wi, %b) {Strides=[1, 1], Pads=[0, 0, 0, 0], Dilations=[1, 1], Group=1}
  Save(%c1, %y1)
  Save(%c2, %y2)
  Save(%c3, %y3)
})";

TEST(Precision, ConvertsConvFiltersToBF16) {
  for (bool keep : {false, true}) {
    Module M;
    auto F = parseFunction(kConvNet, M);
    ASSERT_TRUE(bool(F)) << llvm::toString(F.takeError());
    PrecisionOptions p;
    p.precision = FloatPrecision::BF16;
    if (keep)
      p.keepKinds = {"Conv"};
    convert(**F, p);
    std::vector<ConvNode *> convs;
    for (auto &n : (*F)->getNodes())
      if (auto *c = llvm::dyn_cast<ConvNode>(n.get()))
        convs.push_back(c);
    ASSERT_EQ(convs.size(), 3u);
    for (ConvNode *c : convs) {
      EXPECT_EQ(c->getInput().getElemKind(), ElemKind::Float32);
      EXPECT_EQ(c->getType()->getElemKind(), ElemKind::Float32);
      bool converted = !keep && c->getName() == "c1";
      EXPECT_EQ(c->getFilter().getElemKind(),
                converted ? ElemKind::BFloat16 : ElemKind::Float32)
          << c->getName().str();
      if (!converted)
        continue;
      // Folded at compile time, rounded to nearest even.
      auto *w = llvm::dyn_cast<Constant>(c->getFilter().getNode());
      ASSERT_NE(w, nullptr);
      const uint16_t *bits =
          reinterpret_cast<const uint16_t *>(w->getPayload().data());
      EXPECT_EQ(bits[0], 0x3f80);
      EXPECT_EQ(bits[1], 0x3f81);
    }
  }
}

TEST(Precision, BF16MatMulPrintsParsesAndPlans) {
  Module M;
  auto F = parseFunction(kNet, M);
  ASSERT_TRUE(bool(F));
  PrecisionOptions p;
  p.precision = FloatPrecision::BF16;
  convert(**F, p);
  std::string text = print(**F);
  EXPECT_NE(text.find("bfloat16<4 x 3>"), std::string::npos) << text;
  Module M2;
  auto G = parseFunction(text, M2);
  ASSERT_TRUE(bool(G)) << llvm::toString(G.takeError()) << "\n" << text;
  EXPECT_EQ(print(**G), text);
  auto ir = generateIR(**F, scheduleFunction(**F));
  ASSERT_TRUE(bool(ir)) << llvm::toString(ir.takeError());
  std::string irText = irToString(**ir);
  auto parsed = parseIR(irText, "bf16", &M);
  ASSERT_TRUE(bool(parsed)) << llvm::toString(parsed.takeError());
  EXPECT_EQ(irToString(*parsed->function), irText);
  // The BFloat16 copy of x takes 2 bytes an element.
  MemoryPlan plan = planMemory(**ir);
  bool found = false;
  for (auto &I : (*ir)->getInstrs())
    if (auto *a = llvm::dyn_cast<AllocActivationInst>(I.get()))
      if (a->getType()->getElemKind() == ElemKind::BFloat16) {
        EXPECT_EQ(a->getType()->sizeInBytes(), 4u * 3u * 2u);
        found = true;
      }
  EXPECT_TRUE(found) << irText;
  llvm::Error err = verifyMemoryPlan(**ir, plan);
  EXPECT_FALSE(bool(err)) << llvm::toString(std::move(err));
}

TEST(Precision, ParsesWeightsPrecision) {
  using P = FloatPrecision;
  for (auto [text, want] :
       {std::pair{"fp32", P::FP32}, std::pair{"fp16", P::FP16},
        std::pair{"bf16", P::BF16}}) {
    auto w = parseWeightsPrecision(text, P::FP32);
    ASSERT_TRUE(bool(w)) << text;
    EXPECT_EQ(*w, want);
  }
  // The same type as -precision is redundant but allowed.
  EXPECT_TRUE(bool(parseWeightsPrecision("fp16", P::FP16)));
  EXPECT_TRUE(bool(parseWeightsPrecision("bf16", P::BF16)));
  auto mixed = parseWeightsPrecision("fp16", P::BF16);
  ASSERT_FALSE(bool(mixed));
  EXPECT_EQ(llvm::toString(mixed.takeError()),
            "-weights-precision=fp16 does not combine with -precision=bf16 "
            "(its ops read bf16 weights)");
  auto mixed2 = parseWeightsPrecision("bf16", P::FP16);
  ASSERT_FALSE(bool(mixed2));
  llvm::consumeError(mixed2.takeError());
  auto bad = parseWeightsPrecision("int8", P::FP32);
  ASSERT_FALSE(bool(bad));
  EXPECT_EQ(llvm::toString(bad.takeError()),
            "-weights-precision 'int8' is not fp32, fp16 or bf16");
}

namespace {
/// The Cast pair in front of operand \p v: Cast(Cast(x, \p narrow),
/// Float32); returns the inner Cast's input x, or a null NodeValue.
NodeValue roundTripSource(NodeValue v, ElemKind narrow) {
  auto *wide = llvm::dyn_cast<CastNode>(v.getNode());
  if (!wide || wide->getType()->getElemKind() != ElemKind::Float32)
    return NodeValue();
  NodeValue in = wide->getInput();
  return in.getElemKind() == narrow ? in : NodeValue();
}
} // namespace

// Float16 values of kNet's weight: 1 + 2^-8 and 1 + 3 * 2^-9 are exact
// (11 significant bits); 1 + 2^-11 (a tie) rounds to even, 1 + 3 * 2^-11
// up, 70000 (past 65504, the largest finite) overflows to infinity.
const char *kNetFP16 = R"(function f {
  %x = Placeholder float<4 x 3> input
  %w = Constant float<3 x 2> [1.00048828125, 1.00146484375, 1.00390625, 70000, -2, 0.5]
  %y = Placeholder float<4 x 2> output
  %m = MatMul(%x, %w) {TransB = 0}
  %r = Relu(%m)
  Save(%r, %y)
})";

// -precision=fp16: both operands of the Float32 MatMul go through a Cast
// pair. The weight's pair folds at compile time into a Float32 Constant
// holding the fp16-rounded values (nearest even, past 65504 to infinity);
// with -weights-precision=fp16 as well, only the inner Cast folds, into a
// Float16 Constant widened at run time.
TEST(Precision, RoundsMatMulOperandsToFP16) {
  for (bool narrow : {false, true}) {
    Module M;
    auto F = parseFunction(kNetFP16, M);
    ASSERT_TRUE(bool(F)) << llvm::toString(F.takeError());
    PrecisionOptions p;
    p.precision = FloatPrecision::FP16;
    if (narrow)
      p.weights = FloatPrecision::FP16;
    convert(**F, p);
    MatMulNode *mm = theMatMul(**F);
    ASSERT_NE(mm, nullptr);
    EXPECT_EQ(mm->getLHS().getElemKind(), ElemKind::Float32);
    EXPECT_EQ(mm->getRHS().getElemKind(), ElemKind::Float32);
    NodeValue x = roundTripSource(mm->getLHS(), ElemKind::Float16);
    ASSERT_TRUE(x.getNode()) << print(**F);
    EXPECT_TRUE(llvm::isa<CastNode>(x.getNode()));
    const float want[] = {1.f, 1.001953125f, 1.00390625f,
                          std::numeric_limits<float>::infinity(), -2.f};
    if (!narrow) {
      auto *c = llvm::dyn_cast<Constant>(mm->getRHS().getNode());
      ASSERT_NE(c, nullptr) << print(**F);
      ASSERT_EQ(c->getType()->getElemKind(), ElemKind::Float32);
      const float *v = reinterpret_cast<const float *>(c->getPayload().data());
      for (int i = 0; i < 5; ++i)
        EXPECT_EQ(v[i], want[i]) << i;
      continue;
    }
    NodeValue w = roundTripSource(mm->getRHS(), ElemKind::Float16);
    auto *c = llvm::dyn_cast_or_null<Constant>(w.getNode());
    ASSERT_NE(c, nullptr) << print(**F);
    const uint16_t *bits =
        reinterpret_cast<const uint16_t *>(c->getPayload().data());
    EXPECT_EQ(bits[0], 0x3c00); // 1 + 2^-11: a tie, to even
    EXPECT_EQ(bits[1], 0x3c02); // 1 + 3 * 2^-11: up
    EXPECT_EQ(bits[2], 0x3c04); // 1 + 2^-8: exact
    EXPECT_EQ(bits[3], 0x7c00); // 70000: +infinity
    EXPECT_EQ(bits[4], 0xc000); // -2
  }
}

// -weights-precision: the constant weight is stored narrow and widened at
// run time; the activation is not rounded; nothing when the kind is kept.
TEST(Precision, StoresWeightsNarrow) {
  for (auto kind : {ElemKind::Float16, ElemKind::BFloat16}) {
    for (bool keep : {false, true}) {
      Module M;
      auto F = parseFunction(kNet, M);
      ASSERT_TRUE(bool(F));
      std::string before = print(**F);
      PrecisionOptions p;
      p.weights = kind == ElemKind::Float16 ? FloatPrecision::FP16
                                            : FloatPrecision::BF16;
      if (keep)
        p.keepKinds = {"MatMul"};
      convert(**F, p);
      if (keep) {
        EXPECT_EQ(print(**F), before);
        continue;
      }
      MatMulNode *mm = theMatMul(**F);
      ASSERT_NE(mm, nullptr);
      EXPECT_TRUE(llvm::isa<Placeholder>(mm->getLHS().getNode()));
      NodeValue w = roundTripSource(mm->getRHS(), kind);
      auto *c = llvm::dyn_cast_or_null<Constant>(w.getNode());
      ASSERT_NE(c, nullptr) << print(**F);
      EXPECT_EQ(c->getType()->sizeInBytes(), 3u * 2u * 2u);
    }
  }
}

// -precision=fp16 on convolutions: the plain one reads Float16-rounded
// input and filter; the depthwise one and the one with a run-time filter
// stay Float32. With -weights-precision=fp16 as well, the depthwise
// filter is stored narrow too; the run-time filter is not a weight.
TEST(Precision, RoundsConvOperandsToFP16) {
  for (bool weights : {false, true}) {
    Module M;
    auto F = parseFunction(kConvNet, M);
    ASSERT_TRUE(bool(F)) << llvm::toString(F.takeError());
    PrecisionOptions p;
    p.precision = FloatPrecision::FP16;
    if (weights)
      p.weights = FloatPrecision::FP16;
    convert(**F, p);
    for (auto &n : (*F)->getNodes()) {
      auto *c = llvm::dyn_cast<ConvNode>(n.get());
      if (!c)
        continue;
      bool input = c->getName() == "c1";
      bool filter = input || (weights && c->getName() == "c2");
      EXPECT_EQ(
          bool(roundTripSource(c->getInput(), ElemKind::Float16).getNode()),
          input)
          << c->getName().str();
      // Stored narrow only with -weights-precision; -precision=fp16 alone
      // folds c1's rounded filter back into a Float32 Constant.
      NodeValue w = roundTripSource(c->getFilter(), ElemKind::Float16);
      EXPECT_EQ(bool(w.getNode()), filter && weights) << c->getName().str();
      if (filter && weights) {
        EXPECT_TRUE(llvm::isa<Constant>(w.getNode())) << c->getName().str();
      }
    }
  }
}
