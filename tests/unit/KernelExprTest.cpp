//===- KernelExprTest.cpp - Kernel IR constants ---------------------------===//
//
// A float constant of the kernel IR also carries an integer view. Lowering
// builds constants that no integer holds (a max pool starts from -inf);
// their integer view must saturate, not be an undefined conversion (UBSan
// in the ASan build of the CUDA digits bundle).
//
//===----------------------------------------------------------------------===//
#include "ember/Kernel/Kernel.h"

#include "gtest/gtest.h"

#include <limits>

using namespace ember;

TEST(KernelExpr, FloatConstantsSaturateTheirIntegerView) {
  kir::Kernel k("consts");
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(k.constFloat(-inf)->ival, kMin);
  EXPECT_EQ(k.constFloat(inf)->ival, kMax);
  EXPECT_EQ(k.constFloat(std::nan(""))->ival, 0);
  EXPECT_EQ(k.constFloat(1e30)->ival, kMax);
  EXPECT_EQ(k.constFloat(-1e30)->ival, kMin);
  EXPECT_EQ(k.constFloat(-0x1p63)->ival, kMin);
  EXPECT_EQ(k.constFloat(-2.75)->ival, -2);
  EXPECT_EQ(k.constFloat(0.25)->fval, 0.25);
}
