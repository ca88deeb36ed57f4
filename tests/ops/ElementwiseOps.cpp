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

// The ops defined by a formula in the op table, against values computed
// in double by hand (log1p(e^x) for softplus): both the generated kernel and
// the generated Interpreter code must meet them.
TEST_P(OpTest, FormulaOps) {
  auto *x = input("x", {7});
  save(F->createMish("mish", x));
  save(F->createSoftplus("softplus", x));
  save(F->createSoftsign("softsign", x));
  auto out = run(tensors(makeTensor({7}, {-40, -2, -0.5f, 0, 1, 3, 35})));
  ASSERT_EQ(out.size(), 3u);
  expectNear(out[0],
             makeTensor({7}, {-1.6993417e-16f, -0.252501483f, -0.220743775f, 0,
                              0.865098388f, 2.986535f, 35}),
             2e-6f);
  expectNear(out[1],
             makeTensor({7}, {4.24835426e-18f, 0.126928011f, 0.474076984f,
                              0.693147181f, 1.31326169f, 3.04858735f, 35}),
             2e-6f);
  expectNear(out[2],
             makeTensor({7}, {-0.975609756f, -0.666666667f, -0.333333333f, 0,
                              0.5f, 0.75f, 0.972222222f}),
             1e-6f);
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
