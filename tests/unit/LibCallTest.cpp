//===- LibCallTest.cpp - libjit calls are checked when built --------------===//
//
// EMBER_LIBJIT_CALL reads a kernel's parameters from its declaration in
// LibjitABI.h; a call with the wrong count or kind of arguments stops the
// compile at the call's construction (a lowering bug), not in the bundle.
//
//===----------------------------------------------------------------------===//
#include "../../backends/CPU/LibCall.h"
#include "../../backends/CPU/CPU.h"

#include "gtest/gtest.h"

using namespace ember;
using namespace ember::cpu;

namespace {

/// A kernel with a float buffer pair and an int32 buffer.
struct SumKernel {
  kir::Kernel k{"sum"};
  unsigned y, x, i32;
  SumKernel() {
    y = k.addBuffer({Region::Activation, 0, 64, ElemKind::Float32, "y"});
    x = k.addBuffer({Region::Activation, 64, 64, ElemKind::Float32, "x"});
    i32 =
        k.addBuffer({Region::Activation, 128, 64, ElemKind::Int32, "offsets"});
  }
};

} // namespace

TEST(LibCall, AMatchingCallIsBuilt) {
  SumKernel s;
  kir::Stmt call = EMBER_LIBJIT_CALL(
      s.k, ember_sum_f32,
      (std::vector<kir::CallArg>{bufArg(s.y), bufArg(s.x, s.k.constInt(4)),
                                 valArg(s.k.constInt(16)),
                                 valArg(s.k.constFloat(0.25))}));
  EXPECT_EQ(call.kind, kir::StmtKind::Call);
  EXPECT_EQ(call.callee, "ember_sum_f32");
  EXPECT_EQ(call.args.size(), 4u);
  // A constant 0 passes a null pointer (no residual).
  kir::Stmt nullRes = EMBER_LIBJIT_CALL(
      s.k, ember_sum_f32,
      (std::vector<kir::CallArg>{valArg(s.k.constInt(0)), bufArg(s.x),
                                 valArg(s.k.constInt(16)),
                                 valArg(s.k.constFloat(1))}));
  EXPECT_EQ(nullRes.args.size(), 4u);
}

TEST(LibCall, MismatchesStopTheCompile) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  SumKernel s;
  auto call = [&](std::vector<kir::CallArg> args) {
    return EMBER_LIBJIT_CALL(s.k, ember_sum_f32, args);
  };
  EXPECT_DEATH(call({bufArg(s.y), bufArg(s.x), valArg(s.k.constInt(16))}),
               "wrong number of arguments");
  EXPECT_DEATH(call({bufArg(s.y), valArg(s.k.constInt(8)),
                     valArg(s.k.constInt(16)), valArg(s.k.constFloat(1))}),
               "argument 1 of kernel sum: a buffer is expected");
  EXPECT_DEATH(call({bufArg(s.y), bufArg(s.i32), valArg(s.k.constInt(16)),
                     valArg(s.k.constFloat(1))}),
               "argument 1 of kernel sum: i32, expected float");
  EXPECT_DEATH(call({bufArg(s.y), bufArg(s.x), valArg(s.k.constInt(16)),
                     valArg(s.k.constInt(1))}),
               "argument 3 of kernel sum: i64, expected float");
}
