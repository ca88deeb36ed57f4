//===- IROptTest.cpp - Scheduler and IR optimizer on whole graphs ---------===//
//
// The oracle for every rewrite is the same network compiled without the IR
// optimizer: both run the same kernels on the same values in the same
// order, so their outputs must be bitwise equal (tolerance 0).
//
//===----------------------------------------------------------------------===//
#include "ember/Graph/Verifier.h"
#include "ember/IR/IRGen.h"
#include "ember/IR/IROptimizer.h"
#include "ember/IR/IRPrinter.h"

#include "TestUtils.h"

#include <functional>
#include <random>

using namespace ember;
using namespace ember::test;

namespace {
using Builder = std::function<void(Module &, Function &)>;

/// A float constant of \p dims with values in [-0.5, 0.5) from \p seed.
Constant *randomConstant(Module &M, llvm::StringRef name,
                         llvm::ArrayRef<dim_t> dims, unsigned seed) {
  Tensor t(ElemKind::Float32, dims);
  std::mt19937 gen(seed);
  t.randomize(-0.5f, 0.5f, gen);
  return M.createConstant(name, std::move(t));
}

/// A 1x1 or 3x3 convolution with fused relu from \p in to \p out channels.
NodeValue conv(Module &M, Function &F, llvm::StringRef name, NodeValue in,
               dim_t out, dim_t k, unsigned seed) {
  dim_t c = in.getType()->dims()[1];
  int64_t pad = int64_t(k / 2);
  return F.createConv(
      name, in, randomConstant(M, name.str() + ".w", {out, c, k, k}, seed),
      randomConstant(M, name.str() + ".b", {out}, seed + 1), {}, {1, 1},
      {pad, pad, pad, pad}, {1, 1}, 1, 1, 0.f, 0.f);
}

/// GoogLeNet's inception block: four branches concatenated on channels.
void inception(Module &M, Function &F) {
  auto *x =
      M.createPlaceholder("x", Type(ElemKind::Float32, {1, 4, 8, 8}), false);
  NodeValue b1 = conv(M, F, "b1", x, 4, 1, 1);
  NodeValue b2 = conv(M, F, "b2b", conv(M, F, "b2a", x, 3, 1, 3), 6, 3, 5);
  NodeValue b3 = conv(M, F, "b3b", conv(M, F, "b3a", x, 2, 1, 7), 2, 3, 9);
  NodeValue p = F.createMaxPool("pool", x, {3, 3}, {1, 1}, {1, 1, 1, 1});
  NodeValue b4 = conv(M, F, "b4", p, 2, 1, 11);
  NodeValue cat = F.createConcat("cat", {b1, b2, b3, b4}, 1);
  NodeValue next = conv(M, F, "next", cat, 4, 3, 13);
  auto *y = M.createPlaceholder("y", *next.getType(), true);
  F.createSave("save", next, y);
}

/// DenseNet's block: every layer reads the concat of all earlier outputs.
void denseBlock(Module &M, Function &F) {
  auto *x =
      M.createPlaceholder("x", Type(ElemKind::Float32, {1, 3, 6, 6}), false);
  std::vector<NodeValue> feats{F.createRelu("x0", x)};
  for (unsigned i = 0; i < 4; ++i) {
    NodeValue in =
        feats.size() == 1
            ? feats[0]
            : NodeValue(F.createConcat("cat" + std::to_string(i), feats, 1));
    NodeValue h = F.createSigmoid("h" + std::to_string(i), in);
    feats.push_back(conv(M, F, "l" + std::to_string(i), h, 2, 3, 20 + i));
  }
  NodeValue all = F.createConcat("all", feats, 1);
  auto *y = M.createPlaceholder("y", *all.getType(), true);
  F.createSave("save", F.createTanh("t", all), y);
}

/// Compiles the network \p build makes and runs it on a fixed input.
struct Compiled {
  Module M;
  CompiledNetwork net;
  std::vector<Tensor> outs;

  Compiled(const Builder &build, bool optimize) {
    Function *F = M.createFunction("f");
    build(M, *F);
    registerAllBackends();
    CompileOptions opts;
    opts.optimizeIR = optimize;
    auto n = compileFunction(*F, *cantFail(getBackend("Interpreter")), opts);
    if (!n) {
      ADD_FAILURE() << llvm::toString(n.takeError());
      return;
    }
    net = std::move(*n);
    Bindings b;
    std::mt19937 gen(42);
    for (Placeholder *p : M.getInputPlaceholders()) {
      Tensor t(*p->getType());
      t.randomize(-1.f, 1.f, gen);
      b.insert(p, std::move(t));
    }
    if (llvm::Error err = net.function->run(b)) {
      ADD_FAILURE() << llvm::toString(std::move(err));
      return;
    }
    for (Placeholder *p : M.getOutputPlaceholders())
      outs.push_back(b.get(p)->clone());
  }

  unsigned count(ValueKind kind) const {
    unsigned n = 0;
    for (auto &I : net.ir->getInstrs())
      n += I->getKind() == kind;
    return n;
  }
};

/// Compiles \p build with and without the IR optimizer, checks that the
/// outputs are bitwise equal and that the optimized arena is no larger.
void expectSameResults(const Builder &build) {
  Compiled plain(build, false), opt(build, true);
  ASSERT_EQ(plain.outs.size(), opt.outs.size());
  for (size_t i = 0; i < plain.outs.size(); ++i)
    expectNear(opt.outs[i], plain.outs[i], 0.f);
  EXPECT_LE(opt.net.plan.activationSize, plain.net.plan.activationSize);
}
} // namespace

TEST(IROpt, InceptionConcatCostsNoCopy) {
  expectSameResults(inception);
  Compiled plain(inception, false), opt(inception, true);
  EXPECT_EQ(plain.count(ValueKind::ConcatInst), 1u);
  EXPECT_EQ(plain.count(ValueKind::CopyInst), 1u);
  EXPECT_EQ(opt.count(ValueKind::ConcatInst), 0u);
  EXPECT_EQ(opt.count(ValueKind::CopyInst), 0u) << irToString(*opt.net.ir);
  // The four branch outputs are views of the concat's buffer.
  EXPECT_EQ(opt.count(ValueKind::TensorViewInst), 4u);
  EXPECT_LE(opt.net.plan.activationSize,
            opt.net.plan.activationLowerBound * 11 / 10);
}

TEST(IROpt, DenseBlockConcatsCostNoCopy) {
  expectSameResults(denseBlock);
  Compiled plain(denseBlock, false), opt(denseBlock, true);
  EXPECT_EQ(plain.count(ValueKind::ConcatInst), 4u);
  EXPECT_EQ(opt.count(ValueKind::ConcatInst), 0u) << irToString(*opt.net.ir);
  EXPECT_EQ(opt.count(ValueKind::CopyInst), 0u);
  EXPECT_LT(opt.net.plan.activationSize, plain.net.plan.activationSize);
}

TEST(IROpt, ElementwiseChainRunsInPlace) {
  auto chain = [](Module &M, Function &F) {
    auto *x = M.createPlaceholder("x", Type(ElemKind::Float32, {64}), false);
    NodeValue v = F.createNeg("a", x);
    v = F.createSigmoid("b", v);
    v = F.createAdd("c", v, F.createTanh("d", v));
    v = F.createRelu("e", v);
    auto *y = M.createPlaceholder("y", *v.getType(), true);
    F.createSave("save", v, y);
  };
  expectSameResults(chain);
  Compiled plain(chain, false), opt(chain, true);
  // Five 256-byte results; without reuse b, d and c are alive together at
  // the add. In place, b and c overwrite a, only d needs a second buffer,
  // and e writes into y.
  EXPECT_EQ(plain.net.plan.activationLowerBound, 3u * 256);
  EXPECT_EQ(opt.net.plan.activationLowerBound, 2u * 256);
  EXPECT_EQ(opt.count(ValueKind::AllocActivationInst), 2u)
      << irToString(*opt.net.ir);
  EXPECT_EQ(opt.count(ValueKind::CopyInst), 0u);
}

/// concat(B, A) where branch A needs a 4 KiB intermediate and leaves 256
/// bytes, and branch B needs 512 bytes and leaves 256.
static void unbalanced(Module &M, Function &F) {
  auto *x =
      M.createPlaceholder("x", Type(ElemKind::Float32, {1, 1, 32, 32}), false);
  NodeValue b = F.createRelu(
      "b2", F.createMaxPool("b1", x, {4, 4}, {4, 4}, {0, 0, 0, 0}));
  NodeValue a = F.createMaxPool("a2", F.createRelu("a1", x), {4, 4}, {4, 4},
                                {0, 0, 0, 0});
  NodeValue cat = F.createConcat("cat", {b, a}, 1);
  auto *y = M.createPlaceholder("y", *cat.getType(), true);
  F.createSave("save", cat, y);
}

TEST(Scheduler, BigBranchFirstLowersThePeak) {
  Module M;
  Function *F = M.createFunction("f");
  unbalanced(M, *F);
  // Operand order: b1, b2 (256 + 256), then a1 (4096) with b2 alive, a2.
  EXPECT_EQ(schedulePeakBytes(*F, topologicalOrder(*F)), 256u + 4096 + 256);
  // Branch A first: a1 + a2, then B's 512 bytes next to a2's 256.
  std::vector<Node *> order = scheduleFunction(*F);
  EXPECT_EQ(schedulePeakBytes(*F, order), 4096u + 256);
  EXPECT_EQ(order.front()->getName(), "a1");
  // IRGen's allocations have exactly the predicted peak.
  auto ir = generateIR(*F, order);
  ASSERT_TRUE(bool(ir));
  EXPECT_EQ(planMemory(**ir).activationLowerBound, 4096u + 256);
  expectSameResults(unbalanced);
}
