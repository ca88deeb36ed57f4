//===- ParserTest.cpp - The graph text format round-trips -----------------===//
#include "ember/Graph/Parser.h"
#include "ember/Graph/Printer.h"
#include "ember/Importer/ONNXImporter.h"

#include "gtest/gtest.h"

using namespace ember;

TEST(Parser, RoundTripsAnImportedModel) {
  Module M;
  auto F = importONNXFile(std::string(EMBER_SOURCE_DIR) +
                              "/models/digits/digits.onnx",
                          M, ImportOptions());
  ASSERT_TRUE(bool(F)) << llvm::toString(F.takeError());
  std::string text = functionToString(**F);
  Module M2;
  auto G = parseFunction(text, M2);
  ASSERT_TRUE(bool(G)) << llvm::toString(G.takeError());
  EXPECT_EQ(functionToString(**G), text);
}

TEST(Parser, RoundTripsEveryAttributeKindAndMultipleUses) {
  const char *text = R"(function g {
  %x = Placeholder float<1 x 2 x 3 x 3> input
  %w = Constant float<2 x 2 x 1 x 1>
  %b = Constant float<2>
  %y = Placeholder float<1 x 2 x 3 x 3> output
  %c = Conv(%x, %w, %b, %x) {Strides=[1, 1], Pads=[0, 0, 0, 0], Dilations=[1, 1], Group=1, FusedActivation=2, FusedAlpha=-0.5, FusedBeta=6} : float<1 x 2 x 3 x 3>
  %s = Splat() {Dims=[1, 2, 3, 3], ElemTy=float, Value=0.25} : float<1 x 2 x 3 x 3>
  %m = Mul(%c, %s) : float<1 x 2 x 3 x 3>
  Save(%m, %y)
}
)";
  Module M;
  auto F = parseFunction(text, M);
  ASSERT_TRUE(bool(F)) << llvm::toString(F.takeError());
  EXPECT_EQ(functionToString(**F), text);
}

TEST(Parser, ConstantsTakeValuesAndTypesAreInferred) {
  Module M;
  auto F = parseFunction(R"(function f {
  %a = Constant float<3> [1, 2.5, -3]
  %k = Constant float<2 x 2> [7]
  %y = Placeholder float<3> output
  %r = Relu(%a)
  Save(%r, %y)
})",
                         M);
  ASSERT_TRUE(bool(F)) << llvm::toString(F.takeError());
  auto *a = llvm::cast<Constant>(M.getConstants().front().get());
  EXPECT_EQ(a->getPayload().elementAsDouble(1), 2.5);
  auto *k = llvm::cast<Constant>(M.getConstants().back().get());
  EXPECT_EQ(k->getPayload().elementAsDouble(3), 7);
}

TEST(Parser, ErrorsNameTheLine) {
  auto expectError = [](const char *text, const char *what) {
    Module M;
    auto F = parseFunction(text, M);
    ASSERT_FALSE(bool(F)) << text;
    std::string msg = llvm::toString(F.takeError());
    EXPECT_NE(msg.find(what), std::string::npos) << msg;
  };
  expectError("function f {\n  %r = Relu(%nope)\n}",
              "line 2: unknown value %nope");
  expectError("function f {\n  %r = Frob()\n}", "unknown op 'Frob'");
  expectError("function f {\n  %x = Placeholder float<2 x> input\n}",
              "bad dimension");
  expectError("function f {\n  %x = Placeholder float<2> inout\n}",
              "'input' or 'output'");
  expectError("function f {\n  %x = Constant float<2> [1, 2, 3]\n}",
              "has 3 values");
  expectError("function f {\n  %x = Placeholder float<2> input\n"
              "  %y = Placeholder float<3> input\n  %r = Add(%x, %y)\n}",
              "line 4");
  expectError("function f {\n  %x = Placeholder float<2> input\n"
              "  %r = Relu(%x) : float<3>\n}",
              "inference gives");
  expectError("", "no function");
  // Limits (found or prompted by ember-fuzz-graph).
  expectError("function f {\n  %x = Placeholder float<1 x 1 x 1 x 1 x 1 x 1 "
              "x 1 x 1 x 1> input\n}",
              "rank 9, more than the maximum 8");
  expectError("function f {\n  %x = Placeholder "
              "float<4294967296 x 4294967296 x 4294967296> input\n}",
              "more than 2147483648 elements");
  expectError("function f {\n  %x = Constant float<65536 x 2048>\n}",
              "the most a text constant may hold");
  expectError("function f {\n  %x = Placeholder "
              "i8<2>{scale=0.5,zero=4294967297} input\n}",
              "bad quantization");
  expectError("function f {\n  %x = Placeholder "
              "i8<2 x 3>{axis=1,scale=[0.5, 1],zero=[0, 0]} input\n}",
              "2 scales for dim 1 of 3");
  expectError("function f {\n  %x = Placeholder "
              "u8<2>{axis=1,scale=[0.5, 1],zero=[0, 0]} input\n}",
              "axis 1 is out of range for rank 1");
  expectError("function f {\n  %x = Placeholder "
              "float<2>{scale=0.5,zero=0} input\n}",
              "only Int8, UInt8 and Int32 are quantized");
  expectError("function f {\n  %x = Placeholder float<1 x 4> input\n"
              "  %r = Softmax(%x) {Axis=1.5}\n}",
              "bad integer '1.5'");
}
