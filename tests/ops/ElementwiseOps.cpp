//===- ElementwiseOps.cpp - Elementwise operator tests --------------------===//
#include "OpTestUtils.h"

using namespace ember;
using namespace ember::test;

TEST_P(OpTest, BinaryArithmetic) {
  auto *a = input("a", {4});
  auto *b = input("b", {4});
  save(F->createAdd("add", a, b));
  save(F->createSub("sub", a, b));
  save(F->createMul("mul", a, b));
  save(F->createDiv("div", a, b));
  save(F->createMax("max", a, b));
  save(F->createMin("min", a, b));
  save(F->createPow("pow", a, b));
  auto out = run(tensors(makeTensor({4}, {1, -2, 3, 4}),
                         makeTensor({4}, {2, 2, -1, 0.5f})));
  ASSERT_EQ(out.size(), 7u);
  expectNear(out[0], makeTensor({4}, {3, 0, 2, 4.5f}), 0);
  expectNear(out[1], makeTensor({4}, {-1, -4, 4, 3.5f}), 0);
  expectNear(out[2], makeTensor({4}, {2, -4, -3, 2}), 0);
  expectNear(out[3], makeTensor({4}, {0.5f, -1, -3, 8}), 0);
  expectNear(out[4], makeTensor({4}, {2, 2, 3, 4}), 0);
  expectNear(out[5], makeTensor({4}, {1, -2, -1, 0.5f}), 0);
  expectNear(out[6], makeTensor({4}, {1, 4, 1.f / 3, 2}), 1e-6f);
}

TEST_P(OpTest, UnaryMath) {
  auto *x = input("x", {3});
  save(F->createRelu("relu", x));
  save(F->createSigmoid("sig", x));
  save(F->createTanh("tanh", x));
  save(F->createNeg("neg", x));
  save(F->createAbs("abs", x));
  save(F->createExp("exp", x));
  save(F->createClip("clip", x, -0.5f, 0.5f));
  auto out = run(tensors(makeTensor({3}, {-1, 0, 2})));
  ASSERT_EQ(out.size(), 7u);
  expectNear(out[0], makeTensor({3}, {0, 0, 2}), 0);
  expectNear(out[1], makeTensor({3}, {0.26894142f, 0.5f, 0.88079708f}), 1e-6f);
  expectNear(out[2], makeTensor({3}, {-0.76159416f, 0, 0.96402758f}), 1e-6f);
  expectNear(out[3], makeTensor({3}, {1, 0, -2}), 0);
  expectNear(out[4], makeTensor({3}, {1, 0, 2}), 0);
  expectNear(out[5], makeTensor({3}, {0.36787944f, 1, 7.3890561f}), 1e-5f);
  expectNear(out[6], makeTensor({3}, {-0.5f, 0, 0.5f}), 0);
}

TEST_P(OpTest, SqrtLogAndSplat) {
  auto *x = input("x", {2});
  save(F->createSqrt("sqrt", x));
  save(F->createLog("log", x));
  save(F->createAdd("plus", x,
                    F->createSplat("three", {2}, ElemKind::Float32, 3)));
  auto out = run(tensors(makeTensor({2}, {4, 1})));
  ASSERT_EQ(out.size(), 3u);
  expectNear(out[0], makeTensor({2}, {2, 1}), 1e-6f);
  expectNear(out[1], makeTensor({2}, {1.3862944f, 0}), 1e-6f);
  expectNear(out[2], makeTensor({2}, {7, 4}), 0);
}

INSTANTIATE_TEST_SUITE_P(Backends, OpTest,
                         ::testing::ValuesIn(opTestBackends()));
