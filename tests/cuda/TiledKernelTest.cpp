//===- TiledKernelTest.cpp - The shared-memory tiled GEMM and conv --------===//
//
// The generated MatMul and implicit-GEMM convolution (TiledKernels.h) on
// the host emulation, whose cooperative launches run each block's threads
// as fibers meeting at the barriers: shapes that leave partial tiles and
// partial reduction chunks on every side, batches, broadcast and
// transposed operands, groups, strides, dilation, padding, residual and
// activation, against the Interpreter. Tolerance 1e-4: both sum the
// reduction in the same order, but the host compiler may contract a
// multiply and add into one FMA (one rounding fewer per step) on sums of
// up to a few hundred products of values in [-1, 1).
//
//===----------------------------------------------------------------------===//
#include "CUDATestUtils.h"

#include "llvm/ADT/StringExtras.h"

using namespace ember;
using namespace ember::test;

namespace {
/// Generated kernels only (CUDAHostEmuGen's choice).
CUDACodegenOptions generated() {
  CUDACodegenOptions o;
  o.gemm = o.conv = cuda::LibChoice::Generated;
  return o;
}

void saveAs(Module &M, Function &F, NodeValue v, const std::string &name) {
  F.createSave(name, v, M.createPlaceholder(name + "_y", *v.getType(), true));
}
} // namespace

TEST(CUDATiledKernels, GemmOfEveryEdge) {
  struct Shape {
    std::vector<dim_t> a, b;
    bool transB;
  };
  // Partial tiles in M and N, a partial chunk in K, one row, one column, a
  // batch with B read by all, and a transposed B.
  std::vector<Shape> shapes = {
      {{70, 37}, {37, 130}, false},      {{64, 16}, {16, 64}, false},
      {{1, 300}, {300, 200}, false},     {{129, 65}, {65, 1}, false},
      {{3, 33, 20}, {1, 20, 70}, false}, {{2, 65, 17}, {2, 17, 66}, false},
      {{2, 40, 19}, {2, 81, 19}, true}};
  for (const Shape &s : shapes) {
    Builder mm = [&](Module &M, Function &F) {
      auto *a = M.createPlaceholder("a", Type(ElemKind::Float32, s.a), false);
      auto *b = M.createPlaceholder("b", Type(ElemKind::Float32, s.b), false);
      saveAs(M, F, F.createMatMul("mm", a, b, s.transB), "o");
    };
    SCOPED_TRACE(std::to_string(s.a[0]) + "x" + std::to_string(s.a[1]));
    EXPECT_TRUE(anyContains(choicesFor(mm, generated()),
                            "MatMul -> generated kernel (64x64 shared-memory "
                            "tiles"));
    expectAllAgree(mm, 1e-4f);
  }
}

TEST(CUDATiledKernels, ConvAsImplicitGemm) {
  // x 2 x 20 x 9 x 11: 3x3 stride 2 with asymmetric padding and dilation
  // 2 (reduction 180: eleven full chunks and a partial one; 40 output
  // channels: a partial tile), two groups of 32 channels with a residual
  // and ReLU, and a 1x1 over 33 channels with SiLU.
  Builder convs = [](Module &M, Function &F) {
    auto *x = M.createPlaceholder("x", Type(ElemKind::Float32, {2, 20, 9, 11}),
                                  false);
    auto *r = M.createPlaceholder("r", Type(ElemKind::Float32, {2, 64, 9, 11}),
                                  false);
    auto *x33 = M.createPlaceholder(
        "x33", Type(ElemKind::Float32, {1, 33, 5, 7}), false);
    auto conv = [&](const char *name, NodeValue in, std::vector<dim_t> w,
                    std::vector<NodeValue> res, std::vector<int64_t> strides,
                    std::vector<int64_t> pads, std::vector<int64_t> dil,
                    int64_t group, FusedActivation act) {
      auto *wc = M.createConstant(std::string(name) + "_w",
                                  pseudoRandom(w, unsigned(w[0])));
      auto *bc = M.createConstant(std::string(name) + "_b",
                                  pseudoRandom({w[0]}, unsigned(w[1])));
      saveAs(M, F,
             F.createConv(name, in, wc, bc, res, strides, pads, dil, group,
                          int64_t(act), 0.f, 0.f),
             name);
    };
    conv("strided", x, {40, 20, 3, 3}, {}, {2, 2}, {1, 2, 0, 1}, {2, 2}, 1,
         FusedActivation::None);
    conv("grouped", x, {64, 10, 3, 3}, {NodeValue(r)}, {1, 1}, {1, 1, 1, 1},
         {1, 1}, 2, FusedActivation::Relu);
    conv("pointwise", x33, {17, 33, 1, 1}, {}, {1, 1}, {0, 0, 0, 0}, {1, 1}, 1,
         FusedActivation::SiLU);
  };
  auto choices = choicesFor(convs, generated());
  EXPECT_TRUE(anyContains(choices, "strided: Conv -> generated (tiled"));
  EXPECT_TRUE(anyContains(choices, "grouped: Conv -> generated (tiled"));
  EXPECT_TRUE(anyContains(choices, "pointwise: Conv -> generated (tiled"));
  expectAllAgree(convs, 1e-4f);
}

TEST(CUDATiledKernels, NarrowGroupsStayDirect) {
  // Depthwise: one output channel per group would fill 1 of a tile's 64
  // rows.
  Builder dw = [](Module &M, Function &F) {
    auto *x =
        M.createPlaceholder("x", Type(ElemKind::Float32, {1, 8, 6, 6}), false);
    auto *w = M.createConstant("w", pseudoRandom({8, 1, 3, 3}, 1));
    auto *b = M.createConstant("b", pseudoRandom({8}, 2));
    saveAs(M, F,
           F.createConv("dw", x, w, b, {}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 8, 0,
                        0.f, 0.f),
           "o");
  };
  EXPECT_TRUE(anyContains(choicesFor(dw, generated()),
                          "dw: Conv -> generated (direct"));
  expectAllAgree(dw, 1e-5f);
}

namespace {
/// Values k / 64 in [-1, 1]: at most 7 significant bits, exact in TF32.
Tensor tf32Exact(llvm::ArrayRef<dim_t> dims, unsigned seed) {
  Tensor t = pseudoRandom(dims, seed);
  for (float &v : t.getHandle<float>())
    v = std::round(v * 64.f) / 64.f;
  return t;
}

CodegenOptions tf32Options() {
  CodegenOptions o;
  o.cuda.math = cuda::MathMode::TF32;
  return o;
}

/// \p build with -cuda-math=tf32 on generated kernels and on the
/// libraries' stand-ins, and on the Interpreter, on inputs exact in TF32.
void expectTF32Agrees(const Builder &build, float tol) {
  std::vector<Tensor> outs[3];
  const char *backends[3] = {"Interpreter", "CUDAHostEmuGen", "CUDAHostEmu"};
  for (int b = 0; b < 3; ++b)
    outs[b] = runOn(build, backends[b], b ? tf32Options() : CodegenOptions(),
                    tf32Exact);
  for (int b = 1; b < 3; ++b) {
    ASSERT_EQ(outs[0].size(), outs[b].size()) << backends[b];
    for (size_t i = 0; i < outs[0].size(); ++i) {
      SCOPED_TRACE(std::string(backends[b]) + " output " + std::to_string(i));
      expectNear(outs[b][i], outs[0][i], tol);
    }
  }
}
} // namespace

// Operands exact in TF32, so the tensor-core products equal fp32 ones up
// to the order of the sums (eight products per step): tolerance 1e-4.
TEST(CUDATiledKernels, TF32TensorCoresOnExactOperands) {
  Builder net = [](Module &M, Function &F) {
    auto *a =
        M.createPlaceholder("a", Type(ElemKind::Float32, {2, 70, 37}), false);
    auto *b =
        M.createPlaceholder("b", Type(ElemKind::Float32, {2, 130, 37}), false);
    saveAs(M, F, F.createMatMul("mm", a, b, 1), "mm");
    auto *x = M.createPlaceholder("x", Type(ElemKind::Float32, {2, 20, 9, 11}),
                                  false);
    auto *w = M.createConstant("w", tf32Exact({40, 20, 3, 3}, 9));
    auto *bias = M.createConstant("bias", tf32Exact({40}, 10));
    saveAs(M, F,
           F.createConv("conv", x, w, bias, {}, {2, 2}, {1, 2, 0, 1}, {2, 2}, 1,
                        int64_t(FusedActivation::Relu), 0.f, 0.f),
           "conv");
    saveAs(M, F,
           F.createConv("conv2", x, w, bias, {}, {1, 1}, {1, 1, 1, 1}, {1, 1},
                        1, int64_t(FusedActivation::None), 0.f, 0.f),
           "conv2");
  };
  CodegenOptions o = tf32Options();
  o.cuda.gemm = o.cuda.conv = cuda::LibChoice::Generated;
  auto choices = choicesFor(net, o.cuda);
  EXPECT_TRUE(anyContains(choices, "MatMul -> generated kernel (64x64 "
                                   "shared-memory tiles, TF32 tensor cores"))
      << llvm::join(choices, "\n");
  EXPECT_TRUE(anyContains(choices, "TF32 tensor cores; -cuda-conv"));
  o.cuda.gemm = o.cuda.conv = cuda::LibChoice::Library;
  choices = choicesFor(net, o.cuda);
  EXPECT_TRUE(anyContains(choices, "MatMul -> cuBLASLt (TF32 tensor "
                                   "cores"))
      << llvm::join(choices, "\n");
  EXPECT_TRUE(anyContains(choices, "conv2: Conv -> cuDNN (fp32, TF32 tensor "
                                   "cores allowed)"));
  expectTF32Agrees(net, 1e-4f);
}

// Operands are rounded to TF32 to nearest, ties away from zero:
// 1 + 2^-12 becomes 1, 1 + 2^-11 (a tie) becomes 1 + 2^-10.
TEST(CUDATiledKernels, TF32RoundsOperandsToNearestTiesAway) {
  for (float a : {1.f + 0x1p-12f, 1.f + 0x1p-11f}) {
    Module M;
    Function *F = M.createFunction("net");
    auto *pa = M.createPlaceholder("a", Type(ElemKind::Float32, {1, 8}), false);
    auto *pb = M.createPlaceholder("b", Type(ElemKind::Float32, {8, 1}), false);
    saveAs(M, *F, F->createMatMul("mm", pa, pb, 0), "o");
    Tensor ta(ElemKind::Float32, {1, 8}), tb(ElemKind::Float32, {8, 1});
    for (float &v : ta.getHandle<float>())
      v = a;
    for (float &v : tb.getHandle<float>())
      v = 1.f;
    float rounded = a == 1.f + 0x1p-12f ? 1.f : 1.f + 0x1p-10f;
    for (const char *backend : {"CUDAHostEmuGen", "CUDAHostEmu"}) {
      std::vector<Tensor> ins = tensors(ta.clone(), tb.clone());
      auto out = compileAndRun(M, *F, backend, std::move(ins), tf32Options());
      ASSERT_EQ(out.size(), 1u);
      EXPECT_EQ(out[0].getHandle<float>().raw(0), 8 * rounded)
          << a << " " << backend;
    }
  }
}

TEST(CUDATiledKernels, TF32NeedsAnAmpereTarget) {
  Builder mm = [](Module &M, Function &F) {
    auto *a = M.createPlaceholder("a", Type(ElemKind::Float32, {4, 4}), false);
    saveAs(M, F, F.createMatMul("mm", a, a, 0), "o");
  };
  Module M;
  Function *F = M.createFunction("net");
  mm(M, *F);
  registerAllBackends();
  auto B = getBackend("CUDA");
  ASSERT_TRUE(bool(B));
  auto ir = optimizeAndGenerateIR(*F, **B, CompileOptions());
  ASSERT_TRUE(bool(ir)) << llvm::toString(ir.takeError());
  MemoryPlan plan = planMemory(**ir);
  CUDACodegenOptions o;
  o.math = cuda::MathMode::TF32;
  o.arch = "sm_75";
  auto prog = cuda::lowerForCUDA(**ir, plan, o);
  ASSERT_FALSE(bool(prog));
  EXPECT_EQ(llvm::toString(prog.takeError()),
            "-cuda-math=tf32 needs TF32 tensor cores (sm_80 or newer); the "
            "target is sm_75");
  o.arch = "sm_80";
  EXPECT_TRUE(bool(cuda::lowerForCUDA(**ir, plan, o)));
}
