//===- KernelTest.cpp - The kernel IR and the shared lowering -------------===//
//
// Structural tests: what lowerToKernels makes of small planned functions
// (fusion, stores skipped, overlap blocking fusion, data movement loops).
// The numbers these kernels compute are checked by the operator table on
// the CPU backend against hand-computed values.
//
//===----------------------------------------------------------------------===//
#include "ember/Backend/Pipeline.h"
#include "ember/Kernel/KernelText.h"
#include "ember/Kernel/LowerToKernel.h"

#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

#include <cmath>

using namespace ember;
using namespace ember::kir;

namespace {
/// Builds, plans and lowers a function; \p build adds nodes to F.
class KernelLowering : public ::testing::Test {
protected:
  Module M;
  Function *F = M.createFunction("k");

  Placeholder *input(llvm::StringRef name, llvm::ArrayRef<dim_t> dims) {
    return M.createPlaceholder(name, Type(ElemKind::Float32, dims), false);
  }
  void save(NodeValue v) {
    auto *p =
        M.createPlaceholder("out" + std::to_string(n_++), *v.getType(), true);
    F->createSave("save", v, p);
  }
  std::vector<Kernel> lower() {
    registerAllBackends();
    auto B = getBackend("Interpreter");
    EXPECT_TRUE(bool(B));
    // These tests pin the lowering of IRGen's output; the IR optimizer
    // (copy removal, in-place reuse) is tested on its own in tests/ir.
    CompileOptions opts;
    opts.optimizeIR = false;
    auto ir = optimizeAndGenerateIR(*F, **B, opts);
    EXPECT_TRUE(bool(ir)) << llvm::toString(ir.takeError());
    ir_ = std::move(*ir);
    plan_ = planMemory(*ir_);
    uint64_t scratchUsed = 0;
    auto ks = lowerToKernels(
        *ir_, plan_,
        [](const Instruction &, std::vector<Kernel> &) {
          return llvm::Expected<bool>(false);
        },
        [&](uint64_t bytes) -> std::optional<Buffer> {
          Buffer b{Region::Activation, plan_.activationSize + scratchUsed,
                   bytes, ElemKind::Float32, "scratch"};
          scratchUsed += (bytes + 63) / 64 * 64;
          return b;
        });
    EXPECT_TRUE(bool(ks));
    for (const Kernel &k : *ks)
      expectRoundTrip(k);
    return std::move(*ks);
  }
  /// The text of \p k parses back into a kernel that prints identically
  /// and verifies.
  static void expectRoundTrip(const Kernel &k) {
    std::string text = print(k);
    auto parsed = parseKernels(text);
    ASSERT_TRUE(bool(parsed)) << llvm::toString(parsed.takeError()) << "\n"
                              << text;
    ASSERT_EQ(parsed->size(), 1u) << text;
    EXPECT_EQ(print((*parsed)[0]), text);
    llvm::Error err = verifyKernel((*parsed)[0]);
    EXPECT_FALSE(bool(err)) << llvm::toString(std::move(err));
  }
  static unsigned countStores(const std::vector<Stmt> &body) {
    unsigned n = 0;
    for (const Stmt &s : body)
      n += s.kind == StmtKind::Store ? 1 : countStores(s.body);
    return n;
  }
  static std::string print(const Kernel &k) {
    std::string s;
    llvm::raw_string_ostream os(s);
    k.print(os);
    return os.str();
  }

  std::unique_ptr<IRFunction> ir_;
  MemoryPlan plan_;
  unsigned n_ = 0;
};
} // namespace

TEST_F(KernelLowering, ElementwiseChainIsOneLoop) {
  auto *a = input("a", {4, 8}), *b = input("b", {4, 8});
  NodeValue x = F->createAdd("add", a, b);
  x = F->createRelu("relu", x);
  x = F->createMul("mul", x, b);
  save(x);
  auto ks = lower();
  // add, relu and mul fuse into one parallel loop with one store (the
  // intermediates are read only inside the group); the Save is a copy.
  ASSERT_EQ(ks.size(), 2u);
  ASSERT_NE(ks[0].getParallelLoop(), nullptr);
  EXPECT_EQ(ks[0].getParallelLoop()->extent, 32);
  EXPECT_EQ(countStores(ks[0].body()), 1u);
  // Intermediates live in locals (computed once, before any store).
  std::string text = print(ks[0]);
  EXPECT_NE(text.find("l0 = (b0[i0] + b1[i0])"), std::string::npos) << text;
  EXPECT_NE(text.find("l1 = relu(l0)"), std::string::npos) << text;
  EXPECT_NE(text.find("b2[i0] = (l1 * b1[i0])"), std::string::npos) << text;
}

TEST_F(KernelLowering, IntermediateReadLaterIsStored) {
  auto *a = input("a", {16});
  NodeValue e = F->createExp("exp", a);
  NodeValue n = F->createNeg("neg", e);
  save(n);
  save(F->createTranspose("t", F->createReshape("r", e, {4, 4}), {1, 0}));
  auto ks = lower();
  // exp is also read by the transpose, so the fused loop stores it too.
  ASSERT_GE(ks.size(), 2u);
  EXPECT_EQ(countStores(ks[0].body()), 2u) << print(ks[0]);
}

TEST_F(KernelLowering, DifferentSizesAreNotFused) {
  auto *a = input("a", {8}), *b = input("b", {2, 8});
  NodeValue r = F->createRelu("relu", a);
  save(r);
  save(F->createSigmoid("sig", b));
  auto ks = lower();
  unsigned loops8 = 0, loops16 = 0;
  for (const Kernel &k : ks)
    if (const Stmt *p = k.getParallelLoop()) {
      loops8 += p->extent == 8;
      loops16 += p->extent == 16;
    }
  EXPECT_GE(loops8, 1u);
  EXPECT_GE(loops16, 1u);
}

TEST_F(KernelLowering, TransposeIsAStridedLoopNest) {
  auto *a = input("a", {2, 3, 4});
  save(F->createTranspose("t", a, {2, 0, 1}));
  auto ks = lower();
  ASSERT_FALSE(ks.empty());
  std::string s = print(ks[0]);
  // Output [4, 2, 3] (strides 6, 3, 1) reads input [2, 3, 4] (strides
  // 12, 4, 1) at i0 * 1 + i1 * 12 + i2 * 4.
  EXPECT_NE(s.find("parallel for i0 < 4"), std::string::npos) << s;
  EXPECT_NE(s.find("b0[(((i0 * 6) + (i1 * 3)) + i2)] = "
                   "b1[((i0 + (i1 * 12)) + (i2 * 4))]"),
            std::string::npos)
      << s;
}

TEST_F(KernelLowering, BroadcastIntoElementwiseIsNotMaterialized) {
  auto *x = input("x", {2, 3, 4}), *s = input("s", {1, 3, 1});
  NodeValue b = F->createBroadcast("bc", s, {2, 3, 4});
  save(F->createMul("mul", x, b));
  auto ks = lower();
  // One fused loop nest over rows of 4 reads s at (row % 3); no kernel
  // writes the broadcast.
  ASSERT_EQ(ks.size(), 2u);
  std::string str = print(ks[0]);
  EXPECT_NE(str.find("parallel for i1 < 6"), std::string::npos) << str;
  EXPECT_NE(str.find("b2[((i1 * 4) + i0)] = (b0[((i1 * 4) + i0)] * "
                     "b1[(i1 % 3)])"),
            std::string::npos)
      << str;
  EXPECT_EQ(countStores(ks[0].body()), 1u);
}

TEST_F(KernelLowering, TrailingBroadcastRowsVectorize) {
  // A bias along the last axis (s [1, 1, 4]) and a per-image row
  // (t [2, 1, 4]): the source advances with the result in rows of 4, so the
  // loop runs over rows of 4, not of 1.
  auto *x = input("x", {2, 3, 4}), *s = input("s", {1, 1, 4}),
       *t = input("t", {2, 1, 4});
  NodeValue y = F->createAdd("add", x, F->createBroadcast("bs", s, {2, 3, 4}));
  save(F->createMul("mul", y, F->createBroadcast("bt", t, {2, 3, 4})));
  auto ks = lower();
  ASSERT_EQ(ks.size(), 2u);
  std::string str = print(ks[0]);
  EXPECT_NE(str.find("parallel for i1 < 6"), std::string::npos) << str;
  EXPECT_NE(str.find("[i0]"), std::string::npos) << str;
  EXPECT_NE(str.find("[(((i1 / 3) * 4) + i0)]"), std::string::npos) << str;
}

TEST_F(KernelLowering, TrailingBlockLongerThanRow) {
  // s [1, 3, 4] follows the last two dims (a block of 12); u [2, 3, 1] is
  // fixed in rows of 4, so rows are 4 long and s is read at
  // (row % 3) * 4 + column.
  auto *x = input("x", {2, 3, 4}), *s = input("s", {1, 3, 4}),
       *u = input("u", {2, 3, 1});
  NodeValue y = F->createAdd("add", x, F->createBroadcast("bs", s, {2, 3, 4}));
  save(F->createMul("mul", y, F->createBroadcast("bu", u, {2, 3, 4})));
  auto ks = lower();
  ASSERT_EQ(ks.size(), 2u);
  std::string str = print(ks[0]);
  EXPECT_NE(str.find("parallel for i1 < 6"), std::string::npos) << str;
  EXPECT_NE(str.find("[(((i1 % 3) * 4) + i0)]"), std::string::npos) << str;
}

TEST_F(KernelLowering, BroadcastReadByDataMovementIsMaterialized) {
  auto *x = input("x", {3, 4}), *s = input("s", {3, 1});
  NodeValue b = F->createBroadcast("bc", s, {3, 4});
  save(F->createAdd("add", x, b));
  save(F->createTranspose("t", b, {1, 0}));
  auto ks = lower();
  bool sawBroadcast = false;
  for (const Kernel &k : ks)
    sawBroadcast |= k.getName() == "bc";
  EXPECT_TRUE(sawBroadcast);
}

TEST(KernelNumbers, VirtualAndMaterializedBroadcastsOnCPU) {
  // y0 = x * bc(s) + bc(s) (virtual), y1 = transpose(bc(s)) (materialized).
  Module M;
  Function *F = M.createFunction("k");
  auto *x = M.createPlaceholder("x", Type(ElemKind::Float32, {2, 3}), false);
  auto *s = M.createPlaceholder("s", Type(ElemKind::Float32, {2, 1}), false);
  NodeValue b = F->createBroadcast("bc", s, {2, 3});
  NodeValue y0 = F->createAdd("add", F->createMul("mul", x, b), b);
  NodeValue y1 = F->createTranspose("t", b, {1, 0});
  F->createSave("s0", y0, M.createPlaceholder("y0", *y0.getType(), true));
  F->createSave("s1", y1, M.createPlaceholder("y1", *y1.getType(), true));
  auto Tensor2 = [](llvm::ArrayRef<dim_t> dims, std::vector<float> v) {
    Tensor t(ElemKind::Float32, dims);
    std::copy(v.begin(), v.end(), t.getHandle<float>().begin());
    return t;
  };
  std::vector<Tensor> in;
  in.push_back(Tensor2({2, 3}, {1, 2, 3, 4, 5, 6}));
  in.push_back(Tensor2({2, 1}, {10, -1}));
  registerAllBackends();
  auto net = compileFunction(*F, *getBackend("CPU").get(), {});
  ASSERT_TRUE(bool(net)) << llvm::toString(net.takeError());
  Bindings bind;
  bind.insert(x, std::move(in[0]));
  bind.insert(s, std::move(in[1]));
  ASSERT_FALSE(bool(net->function->run(bind)));
  auto outs = M.getOutputPlaceholders();
  auto h0 = bind.get(outs[0])->getHandle<float>();
  auto h1 = bind.get(outs[1])->getHandle<float>();
  // Row 0: x * 10 + 10; row 1: x * -1 - 1 (hand-computed).
  std::vector<float> want0 = {20, 30, 40, -5, -6, -7};
  std::vector<float> want1 = {10, -1, 10, -1, 10, -1};
  for (unsigned i = 0; i < 6; ++i) {
    EXPECT_EQ(h0.begin()[i], want0[i]) << i;
    EXPECT_EQ(h1.begin()[i], want1[i]) << i;
  }
}

TEST(KernelNumbers, TrailingBroadcastsOnCPU) {
  // y = (x + bc(s)) * bc(u) + bc(t) with s [1, 3, 4] (a block of 12),
  // u [2, 3, 1] (fixed in rows of 4) and t [2, 1, 4] (a row per image),
  // against the same float arithmetic on explicit indices.
  Module M;
  Function *F = M.createFunction("k");
  auto ph = [&](const char *name, llvm::ArrayRef<dim_t> dims) {
    return M.createPlaceholder(name, Type(ElemKind::Float32, dims), false);
  };
  auto *x = ph("x", {2, 3, 4}), *s = ph("s", {1, 3, 4}),
       *u = ph("u", {2, 3, 1}), *t = ph("t", {2, 1, 4});
  NodeValue y = F->createAdd(
      "add2",
      F->createMul(
          "mul", F->createAdd("add", x, F->createBroadcast("bs", s, {2, 3, 4})),
          F->createBroadcast("bu", u, {2, 3, 4})),
      F->createBroadcast("bt", t, {2, 3, 4}));
  auto *out = M.createPlaceholder("y", *y.getType(), true);
  F->createSave("save", y, out);
  Bindings bind;
  std::vector<float> xv(24), sv(12), uv(6), tv(8);
  for (unsigned i = 0; i < 24; ++i)
    xv[i] = 0.25f * float(i) - 2.f;
  for (unsigned i = 0; i < 12; ++i)
    sv[i] = float(i * i) / 7.f;
  for (unsigned i = 0; i < 6; ++i)
    uv[i] = 1.5f - float(i);
  for (unsigned i = 0; i < 8; ++i)
    tv[i] = float(i) * 3.f - 10.f;
  auto bindTo = [&](Placeholder *p, const std::vector<float> &v) {
    Tensor tt(ElemKind::Float32, p->getType()->dims());
    std::copy(v.begin(), v.end(), tt.getHandle<float>().begin());
    bind.insert(p, std::move(tt));
  };
  bindTo(x, xv);
  bindTo(s, sv);
  bindTo(u, uv);
  bindTo(t, tv);
  registerAllBackends();
  auto net = compileFunction(*F, *getBackend("CPU").get(), {});
  ASSERT_TRUE(bool(net)) << llvm::toString(net.takeError());
  ASSERT_FALSE(bool(net->function->run(bind)));
  auto h = bind.get(out)->getHandle<float>();
  for (unsigned n = 0; n < 2; ++n)
    for (unsigned r = 0; r < 3; ++r)
      for (unsigned c = 0; c < 4; ++c) {
        unsigned i = (n * 3 + r) * 4 + c;
        float want = (xv[i] + sv[r * 4 + c]) * uv[n * 3 + r] + tv[n * 4 + c];
        // One rounding of a product may be fused into the add (FMA).
        EXPECT_NEAR(h.begin()[i], want, 1e-6f * std::fabs(want)) << i;
      }
}

TEST_F(KernelLowering, IndependentWorkOfAnotherSizeDoesNotCutAGroup) {
  // BatchNorm's shape: y = x * bc(s) + bc(s - m), where s - m is [1, 3, 1].
  auto *x = input("x", {2, 3, 4}), *s = input("s", {1, 3, 1}),
       *m = input("m", {1, 3, 1});
  NodeValue scaled =
      F->createMul("mul", x, F->createBroadcast("bs", s, {2, 3, 4}));
  NodeValue shift = F->createSub("sub", s, m);
  save(F->createAdd("add", scaled, F->createBroadcast("bt", shift, {2, 3, 4})));
  auto ks = lower();
  // The [3] subtraction runs first, then mul and add as one loop; then the
  // output copy.
  std::string all;
  for (const Kernel &k : ks)
    all += print(k);
  // The plan reuses the subtraction's buffer for add's result, so its
  // value is first copied to scratch; no broadcast is materialized.
  ASSERT_EQ(ks.size(), 4u) << all;
  EXPECT_EQ(ks[0].getParallelLoop()->extent, 3) << all;
  EXPECT_NE(ks[1].getName().find("snapshot"), std::string::npos) << all;
  EXPECT_EQ(countStores(ks[2].body()), 1u) << all;
  EXPECT_NE(ks[2].getName().find("fused2"), std::string::npos) << all;
}

// Kernels of many op families (casts, integer and Bool arithmetic, index
// math, reductions, data movement, a formula op) print, parse back to the
// same text and verify: the lower() helper checks every kernel.
TEST_F(KernelLowering, KernelsOfManyOpsRoundTripAsText) {
  auto *a = input("a", {2, 3, 4}), *b = input("b", {2, 3, 4});
  save(F->createMish("mish", F->createClip("clip", a, -1.5f, 2.25f)));
  save(F->createTranspose("tr", b, {2, 0, 1}));
  save(F->createReduceMax("rmax", a, {1}, true));
  NodeValue i32 = F->createCast("toint", a, ElemKind::Int32);
  save(F->createDiv("idiv", i32, F->createCast("toint2", b, ElemKind::Int32)));
  NodeValue lt =
      F->createCast("tobool", F->createSub("d", a, b), ElemKind::Bool);
  save(F->createWhere("where", lt, a, b));
  save(F->createConcat("cat", {a, b}, 2));
  save(F->createSlice("slice", a, {0, 1, 1}, {1, 1, 1}, {2, 2, 2}));
  auto ks = lower();
  EXPECT_GE(ks.size(), 6u);
}
