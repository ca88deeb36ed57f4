//===- BaseTest.cpp - ElemKind, Type, Tensor ------------------------------===//
#include "ember/Base/Error.h"
#include "ember/Base/NameUniquer.h"
#include "ember/Base/Tensor.h"

#include "gtest/gtest.h"

using namespace ember;

TEST(Base, ElemKindSizesAndNames) {
  EXPECT_EQ(elemSize(ElemKind::Float32), 4u);
  EXPECT_EQ(elemSize(ElemKind::Int64), 8u);
  EXPECT_EQ(elemSize(ElemKind::Bool), 1u);
  for (ElemKind k : {ElemKind::Float32, ElemKind::Float16, ElemKind::Int8Q,
                     ElemKind::Int64, ElemKind::Bool, ElemKind::Int8,
                     ElemKind::UInt8, ElemKind::Int16, ElemKind::UInt16,
                     ElemKind::UInt32, ElemKind::UInt64, ElemKind::Float64})
    EXPECT_EQ(parseElemKind(elemKindName(k)), k);
  EXPECT_EQ(elemSize(ElemKind::Float64), 8u);
  EXPECT_EQ(elemSize(ElemKind::UInt16), 2u);
  EXPECT_FALSE(parseElemKind("float128").has_value());
}

// Every kind's name, size and family, written out by hand: the one table
// in Type.cpp that all of them are read from must give exactly these.
TEST(Base, EveryElemKindHasItsNameSizeAndFamily) {
  struct Expect {
    ElemKind kind;
    const char *name;
    size_t size;
    bool isFloat, isInteger, isQuantized;
  };
  const Expect all[] = {{ElemKind::Float32, "float", 4, true, false, false},
                        {ElemKind::Float16, "float16", 2, true, false, false},
                        {ElemKind::BFloat16, "bfloat16", 2, true, false, false},
                        {ElemKind::Int8Q, "i8q", 1, false, false, true},
                        {ElemKind::UInt8Q, "u8q", 1, false, false, true},
                        {ElemKind::Int32Q, "i32q", 4, false, false, true},
                        {ElemKind::Int32, "i32", 4, false, true, false},
                        {ElemKind::Int64, "i64", 8, false, true, false},
                        {ElemKind::Bool, "bool", 1, false, false, false},
                        {ElemKind::Int8, "i8", 1, false, true, false},
                        {ElemKind::UInt8, "u8", 1, false, true, false},
                        {ElemKind::Int16, "i16", 2, false, true, false},
                        {ElemKind::UInt16, "u16", 2, false, true, false},
                        {ElemKind::UInt32, "u32", 4, false, true, false},
                        {ElemKind::UInt64, "u64", 8, false, true, false},
                        {ElemKind::Float64, "double", 8, true, false, false}};
  ASSERT_EQ(std::size(all), size_t(ElemKind::Float64) + 1);
  for (const Expect &e : all) {
    SCOPED_TRACE(e.name);
    EXPECT_EQ(elemKindName(e.kind), e.name);
    EXPECT_EQ(parseElemKind(e.name), e.kind);
    EXPECT_EQ(elemSize(e.kind), e.size);
    EXPECT_EQ(isFloatKind(e.kind), e.isFloat);
    EXPECT_EQ(isIntegerKind(e.kind), e.isInteger);
    EXPECT_EQ(isQuantizedKind(e.kind), e.isQuantized);
  }
}

TEST(Base, TypeShapeAndStrides) {
  Type t(ElemKind::Float32, {2, 3, 4});
  EXPECT_EQ(t.size(), 24);
  EXPECT_EQ(t.sizeInBytes(), 96u);
  EXPECT_EQ(t.strides(), (llvm::SmallVector<dim_t, kMaxRank>{12, 4, 1}));
  EXPECT_EQ(t.toString(), "float<2 x 3 x 4>");
  EXPECT_NE(t, Type(ElemKind::Int64, {2, 3, 4}));
  EXPECT_EQ(t, Type(ElemKind::Float32, {2, 3, 4}));
  Type scalar(ElemKind::Float32, {});
  EXPECT_EQ(scalar.size(), 1);
}

TEST(Base, TensorIsAlignedZeroedAndIndexable) {
  Tensor t(ElemKind::Float32, {2, 3});
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t.data()) % kTensorAlignment, 0u);
  auto h = t.getHandle<float>();
  for (float v : h)
    EXPECT_EQ(v, 0.f);
  h.at({1, 2}) = 5.f;
  EXPECT_EQ(h.raw(5), 5.f);
  Tensor c = t.clone();
  EXPECT_TRUE(c.isBitwiseEqual(t));
  c.getHandle<float>().raw(0) = 1e-6f;
  EXPECT_FALSE(c.isBitwiseEqual(t));
  EXPECT_TRUE(c.isClose(t, 1e-5f, 0.f));
  EXPECT_FALSE(c.isClose(t, 1e-7f, 0.f));
  c.reshape({3, 2});
  EXPECT_EQ(c.dims(), (llvm::ArrayRef<dim_t>{3, 2}));
}

TEST(Base, RandomizeIsDeterministicPerSeed) {
  std::mt19937 g1(7), g2(7);
  Tensor a(ElemKind::Float32, {16}), b(ElemKind::Float32, {16});
  a.randomize(-1, 1, g1);
  b.randomize(-1, 1, g2);
  EXPECT_TRUE(a.isBitwiseEqual(b));
  for (float v : a.getHandle<float>()) {
    EXPECT_GE(v, -1.f);
    EXPECT_LT(v, 1.f);
  }
}

TEST(Base, ErrorsCarryMessages) {
  llvm::Error e = makeErrorF("bad {0} in {1}", "thing", 3);
  EXPECT_EQ(errorToString(std::move(e)), "bad thing in 3");
}

TEST(Base, NameUniquerHandsOutFreshNames) {
  NameUniquer u;
  EXPECT_EQ(u.get("a"), "a");
  EXPECT_EQ(u.get("a"), "a_1");
  EXPECT_EQ(u.get("a_1"), "a_1_1");
  EXPECT_EQ(u.get("a"), "a_2");
  EXPECT_EQ(u.get(""), "v");
}
