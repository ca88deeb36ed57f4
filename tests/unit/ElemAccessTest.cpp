//===- ElemAccessTest.cpp - Kind-generic element access -------------------===//
#include "ember/Base/ElemAccess.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

using namespace ember;

// Half bit patterns checked by hand against IEEE binary16.
TEST(ElemAccess, HalfConversion) {
  EXPECT_EQ(floatToHalf(1.f), 0x3c00);
  EXPECT_EQ(floatToHalf(-2.f), 0xc000);
  EXPECT_EQ(floatToHalf(65504.f), 0x7bff);          // largest half
  EXPECT_EQ(floatToHalf(1e6f), 0x7c00);             // overflows to inf
  EXPECT_EQ(floatToHalf(5.9604645e-8f), 0x0001);    // smallest subnormal
  EXPECT_EQ(floatToHalf(1.f + 1.f / 2048), 0x3c00); // tie rounds to even
  EXPECT_EQ(floatToHalf(1.f + 3.f / 2048), 0x3c02); // tie rounds to even
  EXPECT_FLOAT_EQ(halfToFloat(0x3555), 0.333251953125f);
  EXPECT_FLOAT_EQ(halfToFloat(0x0001), 5.9604645e-8f);
  EXPECT_TRUE(std::isinf(halfToFloat(0xfc00)));
  EXPECT_TRUE(std::isnan(halfToFloat(floatToHalf(NAN))));
  for (uint32_t h = 0; h < 0x7c00; h += 7) // round trip of finite halves
    EXPECT_EQ(floatToHalf(halfToFloat(uint16_t(h))), h);
}

TEST(ElemAccess, LoadStoreEveryKind) {
  alignas(8) char buf[64];
  for (ElemKind k :
       {ElemKind::Float32, ElemKind::Float16, ElemKind::Float64, ElemKind::Int8,
        ElemKind::UInt8, ElemKind::Int16, ElemKind::UInt16, ElemKind::Int32,
        ElemKind::UInt32, ElemKind::Int64, ElemKind::UInt64}) {
    std::memset(buf, 0, sizeof(buf));
    storeElement(buf, k, 3, 42.0);
    EXPECT_EQ(loadElement(buf, k, 3), 42.0) << elemKindName(k).str();
    EXPECT_EQ(loadElement(buf, k, 2), 0.0) << elemKindName(k).str();
  }
  storeElement(buf, ElemKind::Int32, 0, -7.9); // truncates toward zero
  EXPECT_EQ(loadElementInt(buf, ElemKind::Int32, 0), -7);
  storeElement(buf, ElemKind::Bool, 0, 0.5);
  EXPECT_EQ(loadElementInt(buf, ElemKind::Bool, 0), 1);
  int64_t big = (int64_t(1) << 62) + 1; // exact through loadElementInt
  std::memcpy(buf, &big, 8);
  EXPECT_EQ(loadElementInt(buf, ElemKind::Int64, 0), big);
}

TEST(ElemAccess, UInt64BeyondInt64) {
  alignas(8) char buf[16];
  storeElement(buf, ElemKind::UInt64, 0, -1.0); // wraps like int64 -> uint64
  EXPECT_EQ(loadElement(buf, ElemKind::UInt64, 0), 18446744073709551615.0);
  storeElement(buf, ElemKind::UInt64, 1, INFINITY); // saturates
  uint64_t v;
  std::memcpy(&v, buf + 8, 8);
  EXPECT_EQ(v, ~uint64_t(0));
  storeElement(buf, ElemKind::UInt64, 1, 1e19);
  EXPECT_EQ(loadElement(buf, ElemKind::UInt64, 1), 1e19);
}
