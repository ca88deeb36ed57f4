//===- LoopTest.cpp - Loops kept as loops through the pipeline ------------===//
//
// A loop built by hand in the graph (docs/ControlFlow.md "Loops kept as
// loops"): the scheduler hoists a loop-invariant node out of the body, the
// planner keeps it alive through every iteration, and the Interpreter runs
// the loop M times.
//
//===----------------------------------------------------------------------===//
#include "ember/Backend/Pipeline.h"
#include "ember/IR/Scheduler.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cmath>

using namespace ember;

namespace {

/// y = x + M * sigmoid(x): the carried value starts at x and adds the
/// invariant sigmoid(x) in every iteration. The Sigmoid is created after
/// the LoopBegin, so only the scheduler's hoisting moves it before.
struct LoopNet {
  Module M;
  Function *F = M.createFunction("f");
  Placeholder *m = M.createPlaceholder("m", Type(ElemKind::Int64, {1}), false);
  Placeholder *x =
      M.createPlaceholder("x", Type(ElemKind::Float32, {4}), false);
  Placeholder *y = M.createPlaceholder("y", Type(ElemKind::Float32, {4}), true);
  Node *begin = nullptr, *inv = nullptr, *end = nullptr;

  LoopNet() {
    Tensor t(Type(ElemKind::Bool, {1}));
    t.getHandle<bool>().raw(0) = true;
    Constant *c = M.createConstant("c", std::move(t));
    NodeValue cond = F->createLoopCarry("cond", c);
    NodeValue state = F->createLoopCarry("state", x);
    begin = F->createLoopBegin("begin", m, cond, {state});
    NodeValue counter = begin->getNthResult(0);
    inv = F->createSigmoid("inv", x);
    NodeValue p = F->createLoopParam("p", counter, state);
    // The invariant first: reuse-in-place would overwrite it if it saw it
    // die here.
    NodeValue q = F->createAdd("q", inv->getNthResult(0), p);
    NodeValue cp = F->createLoopParam("cp", counter, cond);
    end = F->createLoopEnd("end", counter, {cond, cp, state, q}, 1, -1);
    NodeValue fin = F->createLoopFinal("fin", end->getNthResult(0), state);
    F->createSave("save", fin, y);
  }
};

TEST(Loop, SchedulerHoistsInvariantNodesAndKeepsTheBodyContiguous) {
  LoopNet net;
  std::vector<Node *> order = scheduleFunction(*net.F);
  auto pos = [&](llvm::StringRef name) {
    return std::find_if(order.begin(), order.end(),
                        [&](Node *n) { return n->getName() == name; }) -
           order.begin();
  };
  EXPECT_LT(pos("inv"), pos("begin"));
  for (const char *body : {"p", "q", "cp"}) {
    EXPECT_GT(pos(body), pos("begin")) << body;
    EXPECT_LT(pos(body), pos("end")) << body;
  }
  EXPECT_GT(pos("fin"), pos("end"));
}

TEST(Loop, InterpreterRunsTheBodyMTimes) {
  registerAllBackends();
  for (int64_t trips : {0, 1, 5}) {
    LoopNet net;
    auto compiled =
        compileFunction(*net.F, *cantFail(getBackend("Interpreter")), {});
    ASSERT_TRUE(bool(compiled)) << llvm::toString(compiled.takeError());
    Bindings b;
    Tensor m(Type(ElemKind::Int64, {1}));
    m.getHandle<int64_t>().raw(0) = trips;
    Tensor x(Type(ElemKind::Float32, {4}));
    for (unsigned i = 0; i < 4; ++i)
      x.getHandle<float>().raw(i) = 0.5f * float(i) - 1.f;
    Tensor xs = x.clone();
    b.insert(net.m, std::move(m));
    b.insert(net.x, std::move(x));
    b.allocateOutputs(net.M);
    ASSERT_FALSE(bool(compiled->function->run(b)));
    for (unsigned i = 0; i < 4; ++i) {
      float xi = xs.getHandle<float>().raw(i), want = xi;
      for (int64_t t = 0; t < trips; ++t) // the body's float order
        want = want + 1.f / (1.f + std::exp(-xi));
      // The Interpreter evaluates sigmoid in double and rounds once.
      EXPECT_NEAR(b.get(net.y)->getHandle<float>().raw(i), want, 1e-5f)
          << "M = " << trips << ", element " << i;
    }
  }
}

} // namespace
