//===- IRTest.cpp - IRGen, IR verifier, memory planner --------------------===//
#include "ember/Backend/Profile.h"
#include "ember/IR/IRGen.h"
#include "ember/IR/IRPrinter.h"

#include "gtest/gtest.h"

using namespace ember;

namespace {
/// x -> relu -> reshape -> sigmoid -> tanh -> y, plus a second branch.
struct Chain {
  Module M;
  Function *F = M.createFunction("chain");
  Placeholder *x =
      M.createPlaceholder("x", Type(ElemKind::Float32, {4, 4}), false);
  Placeholder *y =
      M.createPlaceholder("y", Type(ElemKind::Float32, {16}), true);
  Chain() {
    auto *r = F->createRelu("r", x);
    auto *rs = F->createReshape("rs", r, {16});
    auto *s = F->createSigmoid("s", rs);
    auto *t = F->createTanh("t", s);
    F->createSave("save", t, y);
  }
  std::unique_ptr<IRFunction> ir() {
    auto r = generateIR(*F, scheduleFunction(*F));
    EXPECT_TRUE(bool(r));
    return std::move(*r);
  }
};
} // namespace

TEST(IR, GenerateVerifyAndPrint) {
  Chain c;
  auto ir = c.ir();
  EXPECT_FALSE(bool(verifyIR(*ir)));
  std::string text = irToString(*ir);
  EXPECT_NE(text.find("%x = weight float<4 x 4> mutable input"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("%rs = tensorview float<16> @in %r.res"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("%save = copy @out %y, @in %t.res"), std::string::npos)
      << text;
  EXPECT_NE(text.find("deallocactivation @out %r.res"), std::string::npos);
  // The relu buffer lives until the sigmoid reads it through the view.
  EXPECT_LT(text.find("%s = sigmoid"),
            text.find("deallocactivation @out %r.res"));
}

TEST(IR, PlannerReusesMemoryAndVerifierAcceptsIt) {
  Chain c;
  auto ir = c.ir();
  MemoryPlan plan = planMemory(*ir);
  EXPECT_FALSE(bool(verifyMemoryPlan(*ir, plan)));
  // Three 64-byte activations, never more than two alive at once.
  EXPECT_EQ(plan.activationNaiveSize, 3u * 64);
  EXPECT_EQ(plan.activationLowerBound, 2u * 64);
  EXPECT_EQ(plan.activationSize, 2u * 64);
  EXPECT_EQ(plan.mutableSize, 2u * 64);
  std::string text = irToString(*ir, &plan);
  EXPECT_NE(text.find("@activations+"), std::string::npos);
  EXPECT_NE(text.find("activations 128 bytes (lower bound 128"),
            std::string::npos)
      << text;
}

TEST(IR, MemoryVerifierCatchesOverlap) {
  Chain c;
  auto ir = c.ir();
  MemoryPlan plan = planMemory(*ir);
  // Put every activation at offset 0: r and s are alive together.
  for (auto &I : ir->getInstrs())
    if (llvm::isa<AllocActivationInst>(I.get()))
      plan.placements[I.get()].offset = 0;
  llvm::Error err = verifyMemoryPlan(*ir, plan);
  ASSERT_TRUE(bool(err));
  EXPECT_NE(llvm::toString(std::move(err)).find("overlap"), std::string::npos);
}

TEST(IR, MemoryVerifierCatchesOutOfRegionAndMisalignment) {
  Chain c;
  auto ir = c.ir();
  MemoryPlan plan = planMemory(*ir);
  MemoryPlan shrunk = plan;
  shrunk.activationSize = 64;
  ASSERT_TRUE(bool(verifyMemoryPlan(*ir, shrunk)));
  llvm::consumeError(verifyMemoryPlan(*ir, shrunk));
  MemoryPlan odd = plan;
  odd.placements[ir->getWeights().front().get()].offset = 4;
  llvm::Error err = verifyMemoryPlan(*ir, odd);
  ASSERT_TRUE(bool(err));
  EXPECT_NE(llvm::toString(std::move(err)).find("aligned"), std::string::npos);
}

TEST(IR, VerifierCatchesUseAfterDealloc) {
  Chain c;
  auto ir = c.ir();
  // Move the first dealloc to right after its alloc.
  auto &instrs = ir->getInstrsMutable();
  auto dealloc = std::find_if(instrs.begin(), instrs.end(), [](auto &I) {
    return llvm::isa<DeallocActivationInst>(I.get());
  });
  ASSERT_NE(dealloc, instrs.end());
  auto moved = std::move(*dealloc);
  instrs.erase(dealloc);
  instrs.insert(std::next(instrs.begin()), std::move(moved));
  llvm::Error err = verifyIR(*ir);
  ASSERT_TRUE(bool(err));
  EXPECT_NE(llvm::toString(std::move(err)).find("after its deallocation"),
            std::string::npos);
}

TEST(IR, NodesWithoutInstructionsAreReported) {
  Module M;
  Function *F = M.createFunction("f");
  auto *x = M.createPlaceholder("x", Type(ElemKind::Float32, {2, 2}), false);
  auto *y = M.createPlaceholder("y", Type(ElemKind::Float32, {2, 2}), true);
  auto *c = M.createConstant("c", Tensor(ElemKind::Float32, {2, 2}));
  auto *g = F->createGemm("g", x, x, c, 1.f, 1.f, 0, 0);
  F->createSave("s", g, y);
  // Gemm has an instruction; verify it round-trips through IRGen.
  auto ir = generateIR(*F, scheduleFunction(*F));
  ASSERT_TRUE(bool(ir));
  EXPECT_FALSE(bool(verifyIR(**ir)));
}

TEST(IR, CountFlopsOfIntegerProducts) {
  // The profiler's GFLOP/s column counts an integer product's
  // multiply-adds as it counts a float one's: 2 per tap of each output.
  IRFunction F("f");
  auto act = [&](const char *name, ElemKind k, std::vector<dim_t> d) {
    return F.createAllocActivation(name, F.getType(Type(k, d)));
  };
  auto *x = act("x", ElemKind::UInt8, {2, 8, 5, 5});
  auto *w = act("w", ElemKind::Int8, {16, 4, 3, 3});
  auto *xz = act("xz", ElemKind::Int32, {1});
  auto *wz = act("wz", ElemKind::Int32, {16});
  auto *y = act("y", ElemKind::Int32, {2, 16, 3, 3});
  auto *yq = act("yq", ElemKind::UInt8, {2, 16, 3, 3});
  auto *bias = act("bias", ElemKind::Int32, {16});
  auto *mult = act("mult", ElemKind::Float32, {16});
  auto *yz = act("yz", ElemKind::Int32, {1});
  double convOps = 2.0 * (2 * 16 * 3 * 3) * (4 * 3 * 3);
  auto *ic = F.createIntConvInst("ic", y, x, w, xz, wz, {2, 2}, {1, 1, 1, 1},
                                 {1, 1}, 2);
  EXPECT_EQ(countFlops(*ic), convOps);
  auto *rc =
      F.createRequantConvInst("rc", yq, x, w, xz, wz, bias, mult, yz, {2, 2},
                              {1, 1, 1, 1}, {1, 1}, 2, ElemKind::UInt8, 0);
  EXPECT_EQ(countFlops(*rc), convOps);
  auto *a = act("a", ElemKind::UInt8, {3, 7});
  auto *b = act("b", ElemKind::Int8, {7, 5});
  auto *az = act("az", ElemKind::Int32, {3});
  auto *bz = act("bz", ElemKind::Int32, {5});
  auto *c = act("c", ElemKind::Int32, {3, 5});
  auto *cq = act("cq", ElemKind::Int8, {3, 5});
  auto *mbias = act("mbias", ElemKind::Int32, {5});
  auto *mmult = act("mmult", ElemKind::Float32, {5});
  auto *im = F.createIntMatMulInst("im", c, a, b, az, bz);
  EXPECT_EQ(countFlops(*im), 2.0 * 15 * 7);
  auto *rm = F.createRequantMatMulInst("rm", cq, a, b, az, bz, mbias, mmult, yz,
                                       ElemKind::Int8, 0);
  EXPECT_EQ(countFlops(*rm), 2.0 * 15 * 7);
}
