//===- LoopTest.cpp - Loops kept as loops through the pipeline ------------===//
//
// A loop built by hand in the graph (docs/ControlFlow.md "Loops kept as
// loops"): the scheduler hoists a loop-invariant node out of the body, the
// planner keeps it alive through every iteration, and the Interpreter runs
// the loop M times; the same for a loop nested in a loop.
//
//===----------------------------------------------------------------------===//
#include "ember/Backend/Pipeline.h"
#include "ember/Graph/Verifier.h"
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

/// A loop in a loop: for i < m { s2 = x; for j < i { s2 = s2 + (s + s) +
/// sigmoid(x) }; s = s2 }, y = s. The Sigmoid reads only x (invariant in
/// both loops), od = s + s reads the outer loop's value only, and the inner
/// loop's carries start from x and a constant: all are created after the
/// inner LoopBegin or would run once if hoisted out of the outer loop.
struct NestedNet {
  Module M;
  Function *F = M.createFunction("f");
  Placeholder *m = M.createPlaceholder("m", Type(ElemKind::Int64, {1}), false);
  Placeholder *x =
      M.createPlaceholder("x", Type(ElemKind::Float32, {4}), false);
  Placeholder *y = M.createPlaceholder("y", Type(ElemKind::Float32, {4}), true);

  NestedNet() {
    Tensor t(Type(ElemKind::Bool, {1}));
    t.getHandle<bool>().raw(0) = true;
    Constant *c = M.createConstant("c", std::move(t));
    NodeValue cond = F->createLoopCarry("cond", c);
    NodeValue state = F->createLoopCarry("state", x);
    NodeValue counter =
        F->createLoopBegin("begin", m, cond, {state})->getNthResult(0);
    NodeValue p = F->createLoopParam("p", counter, state);
    NodeValue cond2 = F->createLoopCarry("cond2", c);
    NodeValue state2 = F->createLoopCarry("state2", x);
    NodeValue counter2 =
        F->createLoopBegin("begin2", counter, cond2, {state2})->getNthResult(0);
    NodeValue inv = F->createSigmoid("inv", x);
    NodeValue od = F->createAdd("od", p, p);
    NodeValue q = F->createLoopParam("q", counter2, state2);
    NodeValue r = F->createAdd("r", q, od);
    NodeValue r2 = F->createAdd("r2", r, inv);
    NodeValue cp2 = F->createLoopParam("cp2", counter2, cond2);
    Node *end2 =
        F->createLoopEnd("end2", counter2, {cond2, cp2, state2, r2}, 1, -1);
    NodeValue fin2 = F->createLoopFinal("fin2", end2->getNthResult(0), state2);
    NodeValue cp = F->createLoopParam("cp", counter, cond);
    Node *end =
        F->createLoopEnd("end", counter, {cond, cp, state, fin2}, 1, -1);
    NodeValue fin = F->createLoopFinal("fin", end->getNthResult(0), state);
    F->createSave("save", fin, y);
  }
};

TEST(Loop, SchedulerHoistsOutOfTheInnerLoopOnlyAsFarAsItsDependences) {
  NestedNet net;
  std::vector<Node *> order = scheduleFunction(*net.F);
  auto pos = [&](llvm::StringRef name) {
    return std::find_if(order.begin(), order.end(),
                        [&](Node *n) { return n->getName() == name; }) -
           order.begin();
  };
  EXPECT_LT(pos("inv"), pos("begin"));
  // Out of the inner loop, in the outer one: od, and the inner loop's
  // carries, which restart it at every outer iteration.
  for (const char *outer : {"p", "od", "cond2", "state2", "fin2", "cp"}) {
    EXPECT_GT(pos(outer), pos("begin")) << outer;
    EXPECT_LT(pos(outer), pos("end")) << outer;
  }
  for (const char *pre : {"od", "cond2", "state2"})
    EXPECT_LT(pos(pre), pos("begin2")) << pre;
  EXPECT_GT(pos("fin2"), pos("end2"));
  // The inner body is the contiguous run between begin2 and end2.
  EXPECT_EQ(pos("end2") - pos("begin2"), 5);
  for (const char *inner : {"q", "r", "r2", "cp2"}) {
    EXPECT_GT(pos(inner), pos("begin2")) << inner;
    EXPECT_LT(pos(inner), pos("end2")) << inner;
  }
  EXPECT_GT(pos("fin"), pos("end"));
}

TEST(Loop, InterpreterRunsNestedLoops) {
  registerAllBackends();
  for (int64_t trips : {0, 1, 3}) {
    NestedNet net;
    auto compiled =
        compileFunction(*net.F, *cantFail(getBackend("Interpreter")), {});
    ASSERT_TRUE(bool(compiled)) << llvm::toString(compiled.takeError());
    Bindings b;
    Tensor m(Type(ElemKind::Int64, {1}));
    m.getHandle<int64_t>().raw(0) = trips;
    Tensor x(Type(ElemKind::Float32, {4}));
    for (unsigned i = 0; i < 4; ++i)
      x.getHandle<float>().raw(i) = 0.25f * float(i) - 0.5f;
    Tensor xs = x.clone();
    b.insert(net.m, std::move(m));
    b.insert(net.x, std::move(x));
    b.allocateOutputs(net.M);
    ASSERT_FALSE(bool(compiled->function->run(b)));
    for (unsigned e = 0; e < 4; ++e) {
      float xi = xs.getHandle<float>().raw(e), s = xi;
      float sig = float(1. / (1. + std::exp(-double(xi))));
      for (int64_t i = 0; i < trips; ++i) { // the body's float order
        float s2 = xi, od = s + s;
        for (int64_t j = 0; j < i; ++j)
          s2 = (s2 + od) + sig;
        s = s2;
      }
      EXPECT_NEAR(b.get(net.y)->getHandle<float>().raw(e), s, 1e-5f)
          << "M = " << trips << ", element " << e;
    }
  }
}

TEST(Loop, VerifierRefusesLoopsThatDoNotNest) {
  // Two loops whose ends both read a node of both bodies: each loop would
  // have to run inside the other, so no schedule can nest them. (Had only
  // endA read it, loop a would run inside loop b.)
  Module M;
  Function *F = M.createFunction("f");
  Placeholder *m = M.createPlaceholder("m", Type(ElemKind::Int64, {1}), false);
  Placeholder *x =
      M.createPlaceholder("x", Type(ElemKind::Float32, {4}), false);
  Tensor t(Type(ElemKind::Bool, {1}));
  t.getHandle<bool>().raw(0) = true;
  Constant *c = M.createConstant("c", std::move(t));
  NodeValue condA = F->createLoopCarry("condA", c);
  NodeValue sA = F->createLoopCarry("sA", x);
  NodeValue cntA = F->createLoopBegin("a", m, condA, {sA})->getNthResult(0);
  NodeValue condB = F->createLoopCarry("condB", c);
  NodeValue sB = F->createLoopCarry("sB", x);
  NodeValue cntB = F->createLoopBegin("b", m, condB, {sB})->getNthResult(0);
  NodeValue pA = F->createLoopParam("pA", cntA, sA);
  NodeValue pB = F->createLoopParam("pB", cntB, sB);
  NodeValue both = F->createAdd("both", pA, pB);
  F->createLoopEnd("endA", cntA, {condA, condA, sA, both}, 1, -1);
  llvm::Error err = verifyFunction(*F);
  ASSERT_TRUE(bool(err));
  EXPECT_NE(llvm::toString(std::move(err)).find("LoopBegin b has no LoopEnd"),
            std::string::npos);
  F->createLoopEnd("endB", cntB, {condB, condB, sB, both}, 1, -1);
  err = verifyFunction(*F);
  ASSERT_TRUE(bool(err));
  std::string msg = llvm::toString(std::move(err));
  EXPECT_NE(msg.find("is inside loops that do not nest"), std::string::npos)
      << msg;
}

} // namespace
