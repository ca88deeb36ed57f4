//===- LibraryTest.cpp - MatMul/Conv on cuBLASLt/cuDNN (host stand-ins) ---===//
//
// The CUDA backend's choice between cuBLASLt/cuDNN and generated kernels
// (what -verbose reports), the MatMul bias/ReLU epilogue, and the numbers:
// each network runs on "CUDAHostEmu" (libraries, through LibOps.c and the
// host stand-ins of cuBLASLt and cuDNN), on "CUDAHostEmuGen" (generated
// kernels) and on the Interpreter, and the results must agree.
//
//===----------------------------------------------------------------------===//
#include "CUDATestUtils.h"

#include "gtest/gtest.h"

using namespace ember;
using namespace ember::cuda;

namespace {
using test::anyContains;
using test::Builder;
using test::choicesFor;
using test::expectAllAgree;
using test::libraries;
using test::pseudoRandom;

/// Gemm(x, W^T) + b, then ReLU: the fully connected layer of the zoo.
void fullyConnected(Module &M, Function &F, dim_t batch, bool relu) {
  auto *x =
      M.createPlaceholder("x", Type(ElemKind::Float32, {batch, 48}), false);
  auto *w = M.createConstant("w", pseudoRandom({40, 48}, 7));
  auto *b = M.createConstant("b", pseudoRandom({1, 40}, 8));
  NodeValue y = F.createGemm(
      "fc", x, w, F.createBroadcast("bias", b, {batch, 40}), 1.f, 1.f, 0, 1);
  if (relu)
    y = F.createRelu("relu", y);
  auto *out = M.createPlaceholder("y", *y.getType(), true);
  F.createSave("save", y, out);
}
} // namespace

TEST(CUDALibraries, GemmBiasReluGoesIntoTheCublasLtEpilogue) {
  for (dim_t batch : {1, 6}) {
    Builder fc = [&](Module &M, Function &F) {
      fullyConnected(M, F, batch, true);
    };
    auto choices = choicesFor(fc, libraries());
    EXPECT_TRUE(anyContains(choices, "MatMul -> cuBLASLt (fp32, 1 x "))
        << batch;
    EXPECT_TRUE(anyContains(choices, "+ bias/ReLU epilogue")) << batch;
    expectAllAgree(fc, 1e-5f);
  }
}

TEST(CUDALibraries, GemmWithoutReluUsesTheBiasEpilogue) {
  Builder fc = [](Module &M, Function &F) { fullyConnected(M, F, 3, false); };
  auto choices = choicesFor(fc, libraries());
  ASSERT_FALSE(choices.empty());
  EXPECT_TRUE(anyContains(choices, "+ bias epilogue (")) << choices[0];
  expectAllAgree(fc, 1e-5f);
}

TEST(CUDALibraries, EpilogueTakesOnlyAKernelOfItsOwn) {
  // The Add and the ReLU share one fused loop with a Mul after them: that
  // kernel does more than an epilogue could, so it stays and the GEMM keeps
  // no epilogue (the epilogue is found by the instructions a kernel does,
  // exactly {Add, ReLU} or {Add}).
  Builder fc = [](Module &M, Function &F) {
    auto *x = M.createPlaceholder("x", Type(ElemKind::Float32, {4, 48}), false);
    auto *z = M.createPlaceholder("z", Type(ElemKind::Float32, {4, 40}), false);
    auto *w = M.createConstant("w", pseudoRandom({40, 48}, 7));
    auto *b = M.createConstant("b", pseudoRandom({1, 40}, 8));
    NodeValue y = F.createGemm(
        "fc", x, w, F.createBroadcast("bias", b, {4, 40}), 1.f, 1.f, 0, 1);
    y = F.createMul("scale", F.createRelu("relu", y), z);
    F.createSave("save", y, M.createPlaceholder("y", *y.getType(), true));
  };
  auto choices = choicesFor(fc, libraries());
  ASSERT_FALSE(choices.empty());
  EXPECT_TRUE(anyContains(choices, "MatMul -> cuBLASLt")) << choices[0];
  EXPECT_FALSE(anyContains(choices, "epilogue (")) << choices[0];
  expectAllAgree(fc, 1e-5f);
}

TEST(CUDALibraries, ChoiceRulesAndFlags) {
  Builder tiny = [](Module &M, Function &F) {
    auto *a = M.createPlaceholder("a", Type(ElemKind::Float32, {2, 3}), false);
    auto *b = M.createPlaceholder("b", Type(ElemKind::Float32, {3, 4}), false);
    NodeValue y = F.createMatMul("mm", a, b, 0);
    F.createSave("s", y, M.createPlaceholder("y", *y.getType(), true));
  };
  EXPECT_TRUE(anyContains(choicesFor(tiny, CUDACodegenOptions()),
                          "MatMul -> generated kernel (64x64 shared-memory "
                          "tiles; too small for cuBLASLt)"));
  CUDACodegenOptions lib;
  lib.gemm = LibChoice::Library;
  EXPECT_TRUE(anyContains(choicesFor(tiny, lib), "MatMul -> cuBLASLt"));
  Builder fc = [](Module &M, Function &F) { fullyConnected(M, F, 4, true); };
  CUDACodegenOptions gen;
  gen.gemm = gen.conv = LibChoice::Generated;
  EXPECT_TRUE(anyContains(choicesFor(fc, gen), "-cuda-gemm=generated"));

  EXPECT_EQ(*parseLibChoice("-cuda-gemm", "cublaslt", "cublaslt"),
            LibChoice::Library);
  EXPECT_EQ(*parseLibChoice("-cuda-conv", "", "cudnn"), LibChoice::Auto);
  auto bad = parseLibChoice("-cuda-conv", "cublaslt", "cudnn");
  ASSERT_FALSE(bool(bad));
  EXPECT_EQ(llvm::toString(bad.takeError()),
            "-cuda-conv 'cublaslt' is not auto, cudnn or generated");
}

TEST(CUDALibraries, ConvOnCudnnOrGeneratedAsItsParametersAllow) {
  // Grouped, strided, dilated, residual + ReLU6 (cuDNN's clipped ReLU);
  // asymmetric padding and LeakyReLU (generated).
  Builder convs = [](Module &M, Function &F) {
    auto *x =
        M.createPlaceholder("x", Type(ElemKind::Float32, {2, 4, 9, 9}), false);
    auto *r =
        M.createPlaceholder("r", Type(ElemKind::Float32, {2, 6, 4, 4}), false);
    auto *w = M.createConstant("w", pseudoRandom({6, 2, 3, 3}, 3));
    auto *b = M.createConstant("b", pseudoRandom({6}, 4));
    auto save = [&](NodeValue v, const char *n) {
      F.createSave(
          n, v, M.createPlaceholder(n + std::string("y"), *v.getType(), true));
    };
    save(F.createConv("grouped", x, w, b, {NodeValue(r)}, {2, 2}, {1, 1, 1, 1},
                      {2, 2}, 2, int64_t(FusedActivation::Clip), 0.f, 0.5f),
         "o1");
    save(F.createConv("asym", x, w, b, {}, {2, 2}, {0, 0, 1, 1}, {1, 1}, 2,
                      int64_t(FusedActivation::None), 0.f, 0.f),
         "o2");
    save(F.createConv("leaky", x, w, b, {}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 2,
                      int64_t(FusedActivation::LeakyRelu), 0.1f, 0.f),
         "o3");
    save(F.createConv("sig", x, w, b, {}, {1, 1}, {0, 0, 0, 0}, {1, 1}, 2,
                      int64_t(FusedActivation::Sigmoid), 0.f, 0.f),
         "o4");
  };
  auto choices = choicesFor(convs, CUDACodegenOptions());
  EXPECT_TRUE(anyContains(choices, "grouped: Conv -> cuDNN"));
  EXPECT_TRUE(anyContains(choices, "sig: Conv -> cuDNN"));
  EXPECT_TRUE(anyContains(choices, "asym: Conv -> generated (direct, one "
                                   "thread per output element; asymmetric "
                                   "padding)"));
  EXPECT_TRUE(anyContains(choices, "leaky: Conv -> generated (direct, one "
                                   "thread per output element; epilogue "
                                   "activation without a cuDNN mode)"));
  expectAllAgree(convs, 1e-5f);
}
