//===- ConvPaths.cpp - Every CPU convolution path against the Interpreter -===//
//
// The CPU backend has several convolution paths (im2col + 6-channel GEMM
// blocks, partial blocks, small groups, passes over long K, pointwise
// convolutions read in place, depthwise direct, wide rows; the
// channel-vector GEMM's 32/16-channel blocks, 14-pixel tiles, strided and
// direct reads) with a fused epilogue. Every non-depthwise case runs on
// both GEMMs (-cpu-conv-path=panels, channels) and on the automatic
// choice. Each case runs random data through both backends; the
// Interpreter's direct loops are the oracle. Tolerance: max|d| <= 1e-5 *
// max(1, max|ref|) * sqrt(K) where K is the reduction length -- both sides
// sum K float32 products in different orders (FMA on the CPU).
//
//===----------------------------------------------------------------------===//
#include "../unit/TestUtils.h"
#include "ConvPathCases.h"
#include "PathOptions.h"

#include "ember/Backend/Profile.h"

#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <random>
#include <string>

using namespace ember;
using namespace ember::test;

namespace {

class ConvPathTest : public ::testing::TestWithParam<ConvCase> {};

/// Compiles \p F for \p backend, runs it once on \p inputs (in the order of
/// M's input placeholders) and returns \p out's tensor (empty on a failure,
/// which is reported); \p kernels receives the names of the kernels that
/// ran.
Tensor runWithKernels(Module &M, Function &F, Placeholder *out,
                      llvm::StringRef backend, std::vector<Tensor> inputs,
                      std::vector<std::string> &kernels) {
  registerAllBackends();
  auto B = getBackend(backend);
  EXPECT_TRUE(bool(B));
  if (!B)
    return Tensor();
  CompileOptions opts;
  opts.codegen = pathOptions();
  auto net = compileFunction(F, **B, opts);
  EXPECT_TRUE(bool(net)) << llvm::toString(net.takeError());
  if (!net)
    return Tensor();
  // A residual that dies at its conv is overwritten by the conv's output.
  if (backend == "CPU") {
    for (const auto &I : net->ir->getInstrs()) {
      auto *conv = llvm::dyn_cast<ConvInst>(I.get());
      if (conv && !conv->getResidual().empty()) {
        EXPECT_EQ(conv->getDest(), conv->getResidual()[0]);
      }
    }
  }
  Bindings bind;
  auto phs = M.getInputPlaceholders();
  for (size_t i = 0; i < phs.size() && i < inputs.size(); ++i)
    bind.insert(phs[i], std::move(inputs[i]));
  Profile prof;
  if (llvm::Error err = net->function->runProfiled(bind, prof)) {
    ADD_FAILURE() << llvm::toString(std::move(err));
    return Tensor();
  }
  for (const KernelTime &k : prof.kernels)
    kernels.push_back(k.name);
  return std::move(*bind.get(out));
}

/// Builds the case in a fresh module and runs it on \p backend; \p kernels,
/// if given, receives the names of the kernels that ran. With
/// \p runtimeFilter the filter is an input of the network rather than a
/// constant (so the CPU cannot pack it at compile time).
Tensor runCase(const ConvCase &c, llvm::StringRef backend,
               std::vector<std::string> *kernels = nullptr,
               bool runtimeFilter = false) {
  Module M;
  Function *F = M.createFunction("conv");
  std::mt19937 gen(7);
  auto *x = M.createPlaceholder(
      "x", Type(ElemKind::Float32, {c.N, c.C, c.H, c.W}), false);
  Type wty(ElemKind::Float32, {c.M, c.C / c.group, c.KH, c.KW});
  Tensor w(wty);
  w.randomize(-1.f, 1.f, gen);
  Tensor b(ElemKind::Float32, {c.M});
  b.randomize(-1.f, 1.f, gen);
  std::vector<Tensor> inputs;
  Tensor xt(ElemKind::Float32, {c.N, c.C, c.H, c.W});
  xt.randomize(-1.f, 1.f, gen);
  inputs.push_back(std::move(xt));
  NodeValue wc;
  if (runtimeFilter) {
    wc = M.createPlaceholder("w", wty, false);
    inputs.push_back(std::move(w));
  } else {
    wc = M.createConstant("w", std::move(w));
  }
  auto *bc = M.createConstant("b", std::move(b));
  dim_t OH = (c.H + c.pt + c.pb - c.dh * (c.KH - 1) - 1) / c.sh + 1;
  dim_t OW = (c.W + c.pl + c.pr - c.dw * (c.KW - 1) - 1) / c.sw + 1;
  llvm::SmallVector<NodeValue, 1> res;
  if (c.residual) {
    // An activation that dies at the conv: on the CPU the conv then writes
    // its output over it (reuse-conv-residual), which runWithKernels checks
    // (the placeholder residual of TensorOps' fused-residual test is read
    // from the caller's memory instead).
    res.push_back(F->createRelu(
        "r.relu",
        M.createPlaceholder("r", Type(ElemKind::Float32, {c.N, c.M, OH, OW}),
                            false)));
    Tensor rt(ElemKind::Float32, {c.N, c.M, OH, OW});
    rt.randomize(-1.f, 1.f, gen);
    inputs.push_back(std::move(rt));
  }
  NodeValue y = F->createConv("conv", x, wc, bc, res, {c.sh, c.sw},
                              {c.pt, c.pl, c.pb, c.pr}, {c.dh, c.dw}, c.group,
                              int64_t(c.act), c.alpha, c.beta);
  // With a residual the conv writes an activation (negated into the
  // output, exactly), not the network output itself, so that it can take
  // over its residual's buffer.
  if (c.residual)
    y = F->createNeg("neg", y);
  auto *out = M.createPlaceholder("y", *y.getType(), true);
  F->createSave("save", y, out);
  if (!kernels) {
    auto outs = compileAndRun(M, *F, backend, std::move(inputs), pathOptions());
    return outs.empty() ? Tensor() : std::move(outs[0]);
  }
  return runWithKernels(M, *F, out, backend, std::move(inputs), *kernels);
}

/// Runs the case on the CPU with \p mode and compares it with \p ref.
/// Tolerance: max|d| <= tol * max(1, max|ref|) * sqrt(K), K = C/g * KH * KW,
/// tol = 1e-5 for im2col + GEMM (K float32 products summed in another
/// order). Winograd adds the rounding of its transforms: F(4x4, 3x3) scales
/// input tiles by up to 10 (a row of B^T) per direction and the products by
/// up to 19 (a row of A^T) before they cancel; measured max|d| / (max|ref|
/// sqrt(K)) is up to 1.2e-6 for F(4x4) (3e-8 for F(2x2), 2e-7 for im2col),
/// so tol = 2e-5 for Winograd.
void checkCPU(const ConvCase &c, const Tensor &ref, cpu::WinogradMode mode) {
  std::vector<std::string> kernels;
  Tensor got;
  {
    PathChoice choice(pathOptions().cpu.convPath, mode);
    got = runCase(c, "CPU", &kernels);
  }
  bool eligible = c.KH == 3 && c.KW == 3 && c.sh == 1 && c.sw == 1 &&
                  c.dh == 1 && c.dw == 1 && c.group == 1 && c.C >= 16 &&
                  c.M >= 16;
  // The JIT compiles for the host: its vector width, or the one
  // --cpu-simd-width forces, picks the rule.
  int autoTile =
      narrowKernels() && c.winogradNarrow >= 0 ? c.winogradNarrow : c.winograd;
  int wino = mode == cpu::WinogradMode::Off    ? 0
             : mode == cpu::WinogradMode::Auto ? autoTile
             : !eligible                       ? 0
             : mode == cpu::WinogradMode::F4   ? 4
                                               : 2;
  std::string want = ".wino" + std::to_string(wino) + "_in";
  bool found = false;
  for (const std::string &k : kernels)
    found |= k.find(".wino") != std::string::npos &&
             (wino == 0 || k.find(want) != std::string::npos);
  EXPECT_EQ(found, wino != 0) << "expected Winograd tile " << wino;
  double maxRef = 1, maxDiff = 0;
  for (dim_t i = 0; i < ref.size(); ++i) {
    maxRef = std::max(maxRef, std::fabs(ref.elementAsDouble(i)));
    maxDiff = std::max(
        maxDiff, std::fabs(ref.elementAsDouble(i) - got.elementAsDouble(i)));
  }
  double K = double(c.C / c.group * c.KH * c.KW);
  double tol = wino ? 2e-5 : 1e-5;
  ::testing::Test::RecordProperty(
      "max_rel_diff_over_sqrtK_" + std::to_string(wino),
      llvm::formatv("{0:e}", maxDiff / maxRef / std::sqrt(K)).str());
  expectNear(got, ref, float(tol * maxRef * std::sqrt(K)));
}
} // namespace

TEST_P(ConvPathTest, CPUMatchesInterpreter) {
  const ConvCase &c = GetParam();
  Tensor ref = runCase(c, "Interpreter");
  ASSERT_GT(ref.size(), 0);
  checkCPU(c, ref, cpu::WinogradMode::Auto);
  // Both GEMMs and the row-direct kernel forced, Winograd off (eligible
  // 3x3 cases would take it).
  for (cpu::ConvPath path :
       {cpu::ConvPath::Panels, cpu::ConvPath::Channels, cpu::ConvPath::Rows}) {
    SCOPED_TRACE(int(path));
    PathChoice choice(path);
    checkCPU(c, ref, cpu::WinogradMode::Off);
  }
}

/// Pixel-panel tasks that cover all of a chunk's filter blocks write that
/// chunk's patch panels themselves; otherwise one im2col kernel writes the
/// whole patch matrix first (a downsample with 11 blocks on 7x7 outputs).
TEST(ConvPathPatchesTest, PanelTasksWriteTheirOwnPatches) {
  PathChoice choice(cpu::ConvPath::Panels);
  for (const ConvCase &c : kConvCases) {
    llvm::StringRef name(c.name);
    bool own = name.starts_with("own_patches_");
    if (!own && name != "pointwise_stride2_res")
      continue;
    SCOPED_TRACE(c.name);
    std::vector<std::string> kernels;
    Tensor got = runCase(c, "CPU", &kernels);
    ASSERT_GT(got.size(), 0);
    bool im2col = false;
    for (const std::string &k : kernels)
      im2col |= llvm::StringRef(k).ends_with(".im2col");
    EXPECT_EQ(im2col, !own);
  }
}

/// The other -cpu-winograd modes: off (the automatic GEMM choice), and
/// F(2x2) / F(4x4) forced wherever Winograd is eligible.
TEST_P(ConvPathTest, CPUForcedPathsMatchInterpreter) {
  const ConvCase &c = GetParam();
  Tensor ref = runCase(c, "Interpreter");
  ASSERT_GT(ref.size(), 0);
  for (cpu::WinogradMode mode :
       {cpu::WinogradMode::Off, cpu::WinogradMode::F2, cpu::WinogradMode::F4}) {
    SCOPED_TRACE(int(mode));
    checkCPU(c, ref, mode);
  }
}

/// A filter computed at run time (a graph input) is packed by a kernel
/// before the GEMM instead of at compile time, keeps the per-plane
/// depthwise kernel and never takes Winograd: every path against the
/// Interpreter on a few shapes (panels with a partial block and grouped,
/// a pointwise tail, depthwise on wide and narrow rows, narrow
/// channel-vector tiles, a Winograd-eligible 3x3).
TEST(ConvPathRuntimeFilterTest, CPUMatchesInterpreter) {
  for (const ConvCase &c : kConvCases) {
    llvm::StringRef name(c.name);
    if (name != "blocks_partial_relu_res" &&
        name != "grouped_small_blocks_clip" && name != "pointwise_tail" &&
        name != "depthwise_strided_dilated_hswish_res" &&
        name != "dwcv_partial_block_7x7_silu_res" &&
        name != "cv_width7_7x7_sliced_silu_res" && name != "wino_auto_f4_56x56")
      continue;
    SCOPED_TRACE(c.name);
    Tensor ref = runCase(c, "Interpreter", nullptr, /*runtimeFilter=*/true);
    ASSERT_GT(ref.size(), 0);
    double maxRef = 1;
    for (dim_t i = 0; i < ref.size(); ++i)
      maxRef = std::max(maxRef, std::fabs(ref.elementAsDouble(i)));
    float tol =
        float(1e-5 * maxRef * std::sqrt(double(c.C / c.group * c.KH * c.KW)));
    for (cpu::ConvPath path : {cpu::ConvPath::Auto, cpu::ConvPath::Panels,
                               cpu::ConvPath::Channels, cpu::ConvPath::Rows}) {
      SCOPED_TRACE(int(path));
      PathChoice choice(path);
      std::vector<std::string> kernels;
      Tensor got = runCase(c, "CPU", &kernels, /*runtimeFilter=*/true);
      expectNear(got, ref, tol);
      for (const std::string &k : kernels)
        EXPECT_EQ(k.find(".wino"), std::string::npos) << k;
    }
  }
}

/// A squeeze-and-excitation scale before a pointwise convolution
/// (Conv(x * Broadcast(s))): on the CPU fold-scale-into-conv moves it into
/// a filter computed per call (a ".scaled_filter" kernel, then the GEMM with
/// that filter). Checked against the unfolded sum computed here, with the
/// GEMM tolerance (1e-5 * max|ref| * sqrt(K)), for each GEMM path.
TEST(ConvChannelScaleTest, FoldedIntoFilterOnCPU) {
  constexpr dim_t C = 32, M = 8, H = 28, W = 28;
  std::mt19937 gen(11);
  Tensor xt(ElemKind::Float32, {1, C, H, W}),
      st(ElemKind::Float32, {1, C, 1, 1});
  Tensor wt(ElemKind::Float32, {M, C, 1, 1}), bt(ElemKind::Float32, {M});
  xt.randomize(-1.f, 1.f, gen);
  st.randomize(0.f, 1.f, gen);
  wt.randomize(-1.f, 1.f, gen);
  bt.randomize(-1.f, 1.f, gen);
  auto xh = xt.getHandle<float>(), sh = st.getHandle<float>();
  auto wh = wt.getHandle<float>(), bh = bt.getHandle<float>();
  std::vector<float> ref(M * H * W);
  double maxRef = 1;
  for (dim_t m = 0; m < M; ++m)
    for (dim_t p = 0; p < H * W; ++p) {
      double acc = bh.raw(m);
      for (dim_t c = 0; c < C; ++c)
        acc += double(wh.raw(m * C + c)) * sh.raw(c) * xh.raw(c * H * W + p);
      ref[m * H * W + p] = float(acc);
      maxRef = std::max(maxRef, std::fabs(acc));
    }
  float tol = float(1e-5 * maxRef * std::sqrt(double(C)));
  for (cpu::ConvPath path :
       {cpu::ConvPath::Auto, cpu::ConvPath::Panels, cpu::ConvPath::Channels}) {
    SCOPED_TRACE(int(path));
    PathChoice choice(path);
    Module Mod;
    Function *F = Mod.createFunction("se");
    auto *x = Mod.createPlaceholder("x", xt.getType(), false);
    auto *s = Mod.createPlaceholder("s", st.getType(), false);
    NodeValue scaled =
        F->createMul("mul", x, F->createBroadcast("sb", s, {1, C, H, W}));
    NodeValue y =
        F->createConv("conv", scaled, Mod.createConstant("w", wt.clone()),
                      Mod.createConstant("b", bt.clone()), {}, {1, 1},
                      {0, 0, 0, 0}, {1, 1}, 1, 0, 0.f, 0.f);
    auto *out = Mod.createPlaceholder("y", *y.getType(), true);
    F->createSave("save", y, out);
    std::vector<Tensor> inputs;
    inputs.push_back(xt.clone());
    inputs.push_back(st.clone());
    std::vector<std::string> kernels;
    Tensor result =
        runWithKernels(Mod, *F, out, "CPU", std::move(inputs), kernels);
    bool folded = false;
    for (const std::string &k : kernels)
      folded |= k.find(".scaled_filter") != std::string::npos;
    EXPECT_TRUE(folded);
    auto got = result.getHandle<float>();
    ASSERT_EQ(got.size(), dim_t(ref.size()));
    float maxDiff = 0;
    for (dim_t i = 0; i < got.size(); ++i)
      maxDiff = std::max(maxDiff, std::fabs(got.raw(i) - ref[i]));
    EXPECT_LE(maxDiff, tol);
  }
}

/// A bad -cpu-conv-path value is an error naming the flag and the value.
TEST(ConvPathChoiceTest, BadValueIsAnError) {
  auto path = cpu::parseConvPath("sideways");
  ASSERT_FALSE(bool(path));
  EXPECT_EQ(llvm::toString(path.takeError()),
            "-cpu-conv-path 'sideways' is not auto, panels, channels or rows");
  auto channels = cpu::parseConvPath("channels");
  ASSERT_TRUE(bool(channels));
  EXPECT_EQ(*channels, cpu::ConvPath::Channels);
}

INSTANTIATE_TEST_SUITE_P(Cases, ConvPathTest, ::testing::ValuesIn(kConvCases),
                         [](const auto &info) {
                           return std::string(info.param.name);
                         });
