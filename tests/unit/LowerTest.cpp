//===- LowerTest.cpp - Lowering rules against hand-computed values --------===//
#include "ember/Graph/Printer.h"
#include "ember/Graph/Verifier.h"
#include "ember/Optimizer/Lower.h"

#include "TestUtils.h"

using namespace ember;
using namespace ember::test;

TEST(Lower, GemmBecomesMatMulAndArithmetic) {
  Module M;
  Function *F = M.createFunction("f");
  auto *a = M.createPlaceholder("a", Type(ElemKind::Float32, {2, 3}), false);
  Tensor bt = makeTensor({2, 3}, {1, 0, 1, 0, 1, 0}); // B^T
  auto *b = M.createConstant("b", std::move(bt));
  auto *c = M.createConstant("c", makeTensor({2, 2}, {1, 2, 3, 4}));
  auto *y = M.createPlaceholder("y", Type(ElemKind::Float32, {2, 2}), true);
  auto *g = F->createGemm("g", a, b, c, 2.f, 0.5f, 0, 1);
  F->createSave("s", g, y);
  EXPECT_TRUE(lowerFunction(*F, [](const Node &) { return true; }));
  eliminateDeadCode(*F);
  EXPECT_FALSE(bool(verifyFunction(*F)));
  auto counts = countNodeKinds(*F);
  EXPECT_EQ(counts.count("Gemm"), 0u);
  EXPECT_EQ(counts["MatMul"], 1u);
  EXPECT_EQ(counts["Transpose"], 1u);

  // a = [[1,2,3],[4,5,6]]; a*B = [[1+3, 2], [4+6, 5]]
  auto out = compileAndRun(M, *F, "Interpreter",
                           tensors(makeTensor({2, 3}, {1, 2, 3, 4, 5, 6})));
  ASSERT_EQ(out.size(), 1u);
  expectNear(out[0], makeTensor({2, 2}, {2 * 4 + 0.5f, 2 * 2 + 1, 2 * 10 + 1.5f,
                                         2 * 5 + 2}),
             1e-6f);
}

TEST(Lower, BatchNormBecomesScaleAndShift) {
  Module M;
  Function *F = M.createFunction("f");
  auto *x = M.createPlaceholder("x", Type(ElemKind::Float32, {1, 2, 1, 2}),
                                false);
  auto *y = M.createPlaceholder("y", Type(ElemKind::Float32, {1, 2, 1, 2}),
                                true);
  auto *scale = M.createConstant("scale", makeTensor({2}, {2, 3}));
  auto *bias = M.createConstant("bias", makeTensor({2}, {1, -1}));
  auto *mean = M.createConstant("mean", makeTensor({2}, {0.5f, 1}));
  auto *var = M.createConstant("var", makeTensor({2}, {4, 9}));
  auto *bn = F->createBatchNorm("bn", x, scale, bias, mean, var, 0.f);
  F->createSave("s", bn, y);
  auto out = compileAndRun(M, *F, "Interpreter",
                           tensors(makeTensor({1, 2, 1, 2}, {0.5f, 2.5f, 1, 4})));
  ASSERT_EQ(out.size(), 1u);
  // channel 0: (x-0.5)*2/2+1 ; channel 1: (x-1)*3/3-1
  expectNear(out[0], makeTensor({1, 2, 1, 2}, {1, 3, -1, 2}), 1e-6f);
  EXPECT_EQ(countNodeKinds(*F).count("BatchNorm"), 0u);
}

TEST(Lower, OnlyWhatTheBackendAsksFor) {
  Module M;
  Function *F = M.createFunction("f");
  auto *a = M.createPlaceholder("a", Type(ElemKind::Float32, {2, 2}), false);
  auto *c = M.createConstant("c", Tensor(ElemKind::Float32, {2, 2}));
  auto *y = M.createPlaceholder("y", Type(ElemKind::Float32, {2, 2}), true);
  F->createSave("s", F->createGemm("g", a, a, c, 1.f, 1.f, 0, 0), y);
  EXPECT_FALSE(lowerFunction(*F, [](const Node &n) {
    return !llvm::isa<GemmNode>(n);
  }));
  EXPECT_EQ(countNodeKinds(*F)["Gemm"], 1u);
}

TEST(Lower, DeadCodeElimination) {
  Module M;
  Function *F = M.createFunction("f");
  auto *x = M.createPlaceholder("x", Type(ElemKind::Float32, {2}), false);
  auto *y = M.createPlaceholder("y", Type(ElemKind::Float32, {2}), true);
  auto *unused = M.createConstant("unused", Tensor(ElemKind::Float32, {2}));
  F->createTanh("dead2", F->createAdd("dead", x, unused));
  F->createSave("s", F->createRelu("r", x), y);
  EXPECT_TRUE(eliminateDeadCode(*F));
  EXPECT_EQ(F->getNodes().size(), 2u);
  EXPECT_TRUE(M.getConstants().empty());
}
