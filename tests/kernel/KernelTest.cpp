//===- KernelTest.cpp - The kernel IR and the shared lowering -------------===//
//
// Structural tests: what lowerToKernels makes of small planned functions
// (fusion, stores skipped, overlap blocking fusion, data movement loops).
// The numbers these kernels compute are checked by the operator table on
// the CPU backend against hand-computed values.
//
//===----------------------------------------------------------------------===//
#include "ember/Backend/Pipeline.h"
#include "ember/Kernel/LowerToKernel.h"

#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

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
    auto ir = optimizeAndGenerateIR(*F, **B, {});
    EXPECT_TRUE(bool(ir)) << llvm::toString(ir.takeError());
    ir_ = std::move(*ir);
    plan_ = planMemory(*ir_);
    auto ks = lowerToKernels(*ir_, plan_,
                             [](const Instruction &, std::vector<Kernel> &) {
                               return llvm::Expected<bool>(false);
                             });
    EXPECT_TRUE(bool(ks));
    return std::move(*ks);
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
  EXPECT_NE(print(ks[0]).find("b2[i0] = (relu((b0[i0] + b1[i0])) * b1[i0])"),
            std::string::npos)
      << print(ks[0]);
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
