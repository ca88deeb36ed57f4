//===- QuantTypeTest.cpp - Quantized types: uniquing, text, verifier ------===//
#include "ember/Graph/Parser.h"
#include "ember/Graph/Printer.h"
#include "ember/Graph/QuantTypes.h"
#include "ember/Graph/Verifier.h"
#include "ember/Importer/ONNXImporter.h"

#include "ONNXBuilder.h"
#include "TestUtils.h"

#include "gtest/gtest.h"

#include <cmath>

using namespace ember;
using namespace ember::test;

static TypeQuant perTensor(float scale, int32_t zero) {
  TypeQuant q;
  q.scales = {scale};
  q.zeros = {zero};
  return q;
}

static TypeQuant perAxis(int32_t axis, llvm::ArrayRef<float> scales,
                         llvm::ArrayRef<int32_t> zeros) {
  TypeQuant q;
  q.axis = axis;
  q.scales.assign(scales.begin(), scales.end());
  q.zeros.assign(zeros.begin(), zeros.end());
  return q;
}

TEST(QuantType, UniquedByParameters) {
  Module M;
  TypeRef a = M.uniqueType(Type(ElemKind::UInt8, {2, 3}, perTensor(0.5f, 3)));
  TypeRef b = M.uniqueType(Type(ElemKind::UInt8, {2, 3}, perTensor(0.5f, 3)));
  TypeRef c = M.uniqueType(Type(ElemKind::UInt8, {2, 3}, perTensor(0.5f, 4)));
  TypeRef plain = M.uniqueType(Type(ElemKind::UInt8, {2, 3}));
  // A scale one ulp away is another type (uniquing must not round).
  TypeRef d = M.uniqueType(
      Type(ElemKind::UInt8, {2, 3}, perTensor(std::nextafter(0.5f, 1.f), 3)));
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  EXPECT_NE(a, plain);
  EXPECT_NE(a, d);
  EXPECT_TRUE(a->isSameStorage(*plain));
  TypeRef e = M.uniqueType(
      Type(ElemKind::Int8, {2, 3}, perAxis(1, {0.5f, 0.25f, 1}, {0, 1, 2})));
  TypeRef f = M.uniqueType(
      Type(ElemKind::Int8, {2, 3}, perAxis(1, {0.5f, 0.25f, 1}, {0, 1, 2})));
  EXPECT_EQ(e, f);
}

TEST(QuantType, TextRoundTripsExactly) {
  Type types[] = {Type(ElemKind::UInt8, {1, 8}, perTensor(0.0186584499f, 114)),
                  Type(ElemKind::Int32, {4}, perTensor(1e-7f, 0)),
                  Type(ElemKind::Int8, {3, 2},
                       perAxis(0, {0.1f, 3.40282347e38f, 1.17549435e-38f},
                               {-128, 0, 127}))};
  for (const Type &t : types) {
    auto back = parseType(t.toString());
    ASSERT_TRUE(bool(back)) << llvm::toString(back.takeError());
    EXPECT_EQ(*back, t) << t.toString() << " read back as " << back->toString();
  }
  EXPECT_EQ(types[0].toString(), "u8<1 x 8>{scale=0.0186584499,zero=114}");
  EXPECT_EQ(types[2].toString(),
            "i8<3 x 2>{axis=0,scale=[0.100000001, 3.40282347e+38, "
            "1.17549435e-38],zero=[-128, 0, 127]}");
}

// A non-finite scale has no C literal for the bundle header and no meaning
// as a quantization: the type is refused, and a Quantize with such a
// constant scale stays a plain integer result.
TEST(QuantType, NonFiniteScalesAreRefused) {
  for (float bad : {INFINITY, -INFINITY, NAN}) {
    Type t(ElemKind::UInt8, {2}, perTensor(bad, 0));
    llvm::Error err = checkQuantType(t);
    ASSERT_TRUE(bool(err)) << t.toString();
    EXPECT_NE(llvm::toString(std::move(err)).find("is not finite"),
              std::string::npos);
  }
  EXPECT_FALSE(bool(parseType("u8<2>{scale=inf,zero=0}")));
  Module M;
  Function *F = M.createFunction("f");
  auto *x = M.createPlaceholder("x", Type(ElemKind::Float32, {2}), false);
  auto *s = M.createConstant("s", makeTensor({1}, {INFINITY}));
  auto *z = M.createConstant("z", Tensor(ElemKind::Int32, {1}));
  auto *q = F->createQuantize("q", x, s, z, 0, ElemKind::UInt8);
  EXPECT_FALSE(q->getResult().getType()->isQuantized());
}

TEST(QuantType, QuantizeResultTakesConstantParameters) {
  Module M;
  Function *F = M.createFunction("f");
  auto *x = M.createPlaceholder("x", Type(ElemKind::Float32, {2, 3}), false);
  auto *s = M.createConstant("s", makeTensor({1}, {0.25f}));
  Tensor zt(ElemKind::Int32, {1});
  zt.getHandle<int32_t>().raw(0) = 7;
  auto *z = M.createConstant("z", std::move(zt));
  auto *q = F->createQuantize("q", x, s, z, 0, ElemKind::UInt8);
  ASSERT_TRUE(q->getResult().getType()->isQuantized());
  EXPECT_EQ(*q->getResult().getType()->getQuant(), perTensor(0.25f, 7));
  // Ops that compute on the integers do not inherit their operand's
  // quantization.
  auto *r = F->createSign("r", q);
  EXPECT_FALSE(r->getResult().getType()->isQuantized());
  EXPECT_FALSE(bool(verifyFunction(*F)));
}

/// Parses \p text and returns the verifier's (or parser's) message.
static std::string parseError(llvm::StringRef text) {
  Module M;
  auto F = parseFunction(text, M);
  return F ? "" : llvm::toString(F.takeError());
}

TEST(QuantType, VerifierChecksQuantizeAndRequantTypes) {
  const char *good = "function f {\n"
                     "  %x = Placeholder float<2> input\n"
                     "  %y = Placeholder u8<2>{scale=0.5,zero=3} output\n"
                     "  %s = Constant float<1> [0.5]\n"
                     "  %z = Splat() {Dims=[1], ElemTy=i32, Value=3}\n"
                     "  %q = Quantize(%x, %s, %z) {Axis=0, ElemTy=u8} : "
                     "u8<2>{scale=0.5,zero=3}\n"
                     "  Save(%q, %y)\n}\n";
  EXPECT_EQ(parseError(good), "");
  std::string wrongScale = good;
  wrongScale.replace(wrongScale.find("u8<2>{scale=0.5,zero=3}\n  Save"), 23,
                     "u8<2>{scale=0.6,zero=3}");
  EXPECT_NE(parseError(wrongScale).find("does not match its constant scale"),
            std::string::npos)
      << parseError(wrongScale);
  // A RequantAdd's result states its OutScale and OutZero.
  const char *add = "function f {\n"
                    "  %a = Placeholder i8<2> input\n"
                    "  %y = Placeholder i8<2> output\n"
                    "  %s = Constant float<1> [0.5]\n"
                    "  %z = Splat() {Dims=[1], ElemTy=i32, Value=0}\n"
                    "  %o = Splat() {Dims=[1], ElemTy=i32, Value=1}\n"
                    "  %r = RequantAdd(%a, %a, %s, %z, %s, %z, %s, %o) "
                    "{ElemTy=i8, Relu=0} : i8<2>{scale=0.5,zero=0}\n"
                    "  Save(%r, %y)\n}\n";
  EXPECT_NE(parseError(add).find("does not match"), std::string::npos)
      << parseError(add);
}

TEST(QuantType, GraphTextRoundTrips) {
  const char *text =
      "function f {\n"
      "  %x = Placeholder u8<1 x 2>{scale=0.5,zero=128} input\n"
      "  %y = Placeholder i8<1 x 2>{axis=1,scale=[0.25, 1],zero=[-1, -1]} "
      "output\n"
      "  %xs = Constant float<1> [0.5]\n"
      "  %xz = Splat() {Dims=[1], ElemTy=i32, Value=128}\n"
      "  %ys = Constant float<2> [0.25, 1]\n"
      "  %yz = Splat() {Dims=[2], ElemTy=i32, Value=-1}\n"
      "  %d = Dequantize(%x, %xs, %xz) {Axis=0}\n"
      "  %q = Quantize(%d, %ys, %yz) {Axis=1, ElemTy=i8}\n"
      "  Save(%q, %y)\n}\n";
  Module M;
  auto F = parseFunction(text, M);
  ASSERT_TRUE(bool(F)) << llvm::toString(F.takeError());
  std::string once = functionToString(**F);
  EXPECT_NE(once.find("%q = Quantize(%d, %ys, %yz) {Axis=1, ElemTy=i8} : "
                      "i8<1 x 2>{axis=1,scale=[0.25, 1],zero=[-1, -1]}"),
            std::string::npos)
      << once;
  Module M2;
  auto G = parseFunction(once, M2);
  ASSERT_TRUE(bool(G)) << llvm::toString(G.takeError());
  EXPECT_EQ(functionToString(**G), once);
}

/// An ONNX zero point initializer of \p type (UINT8 or INT8) holding \p v.
static void zeroInit(ONNXBuilder &b, const std::string &name, int type,
                     int32_t v) {
  auto *t = b.graph().add_initializer();
  t->set_name(name);
  t->set_data_type(type);
  t->add_int32_data(v);
}

TEST(QuantType, ImportGivesQuantizedInputsAndOutputs) {
  ONNXBuilder b;
  b.input("x", {1, 4}, onnx::TensorProto::UINT8);
  b.output("y", {1, 4}, onnx::TensorProto::INT8);
  b.initializer("xs", {}, {0.5f});
  zeroInit(b, "xz", onnx::TensorProto::UINT8, 128);
  b.initializer("ys", {}, {0.125f});
  zeroInit(b, "yz", onnx::TensorProto::INT8, -3);
  b.node("DequantizeLinear", {"x", "xs", "xz"}, {"xd"});
  b.node("Relu", {"xd"}, {"r"});
  b.node("QuantizeLinear", {"r", "ys", "yz"}, {"y"});
  Module M;
  auto F = importONNXBuffer(b.serialize(), "m", M);
  ASSERT_TRUE(bool(F)) << llvm::toString(F.takeError());
  const Type &in = *M.getPlaceholderByName("x")->getType();
  const Type &out = *M.getPlaceholderByName("y")->getType();
  ASSERT_TRUE(in.isQuantized()) << in.toString();
  EXPECT_EQ(*in.getQuant(), perTensor(0.5f, 128));
  ASSERT_TRUE(out.isQuantized()) << out.toString();
  EXPECT_EQ(*out.getQuant(), perTensor(0.125f, -3));
}
