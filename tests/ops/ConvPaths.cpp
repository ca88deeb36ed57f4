//===- ConvPaths.cpp - Every CPU convolution path against the Interpreter -===//
//
// The CPU backend has several convolution paths (im2col + 12-channel GEMM
// blocks, partial blocks, small groups, passes over long K, pointwise
// convolutions read in place, depthwise direct, wide rows; the
// channel-vector GEMM's 32/16-channel blocks, 14-pixel tiles, strided and
// direct reads) with a fused epilogue. Every non-depthwise case runs on
// both GEMMs (EMBER_CPU_CONV=panels, channels) and on the automatic
// choice. Each case runs random data through both backends; the
// Interpreter's direct loops are the oracle. Tolerance: max|d| <= 1e-5 *
// max(1, max|ref|) * sqrt(K) where K is the reduction length -- both sides
// sum K float32 products in different orders (FMA on the CPU).
//
//===----------------------------------------------------------------------===//
#include "../unit/TestUtils.h"

#include "ember/Backend/CPUOptions.h"
#include "ember/Backend/Profile.h"

#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <cstdlib>
#include <random>

using namespace ember;
using namespace ember::test;

namespace {
struct ConvCase {
  const char *name;
  dim_t N, C, H, W, M, KH, KW;
  int64_t sh, sw, pt, pl, pb, pr, dh, dw, group;
  FusedActivation act;
  float alpha, beta;
  bool residual;
  /// The Winograd output tile the CPU picks automatically (0: a GEMM path;
  /// the forced modes still run Winograd on every eligible case).
  int winograd;
};

const ConvCase kCases[] = {
    {"blocks_partial_relu_res",
     2,
     3,
     9,
     9,
     10,
     3,
     3,
     1,
     1,
     1,
     1,
     1,
     1,
     1,
     1,
     1,
     FusedActivation::Relu,
     0,
     0,
     true},
    {"pointwise_tail",      1, 16, 7,    5, 24, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1,
     FusedActivation::None, 0, 0,  false},
    {"grouped_small_blocks_clip",
     1,
     8,
     10,
     11,
     12,
     3,
     2,
     2,
     2,
     1,
     0,
     0,
     1,
     1,
     1,
     4,
     FusedActivation::Clip,
     -0.2f,
     0.3f,
     false},
    {"depthwise_strided_dilated_hswish_res",
     1,
     6,
     13,
     13,
     6,
     3,
     3,
     2,
     2,
     1,
     1,
     1,
     1,
     2,
     2,
     6,
     FusedActivation::HardSwish,
     1.f / 6,
     0.5f,
     true},
    {"depthwise_wide_rows_leaky",
     1,
     2,
     3,
     300,
     2,
     5,
     5,
     1,
     1,
     2,
     2,
     2,
     2,
     1,
     1,
     2,
     FusedActivation::LeakyRelu,
     0.1f,
     0,
     false},
    {"stem_7x7_stride2_sigmoid",
     1,
     3,
     40,
     40,
     16,
     7,
     7,
     2,
     2,
     3,
     3,
     3,
     3,
     1,
     1,
     1,
     FusedActivation::Sigmoid,
     0,
     0,
     false},
    {"dilated_multi_block", 1, 5, 12,   12, 17, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2, 1,
     FusedActivation::None, 0, 0, false},
    // K = 576 > 512: two passes over K, the residual added in the first and
    // the activation applied in the last; 20 channels = a full block and an
    // 8-row one; 100 pixels = three panels and a 4-column tail.
    {"k_passes_relu_res",
     2,
     64,
     10,
     10,
     20,
     3,
     3,
     1,
     1,
     1,
     1,
     1,
     1,
     1,
     1,
     1,
     FusedActivation::Relu,
     0,
     0,
     true,
     0},
    // Pointwise, read in place: K = 600 (two passes), 13 channels (a 1-row
    // last block), 49 pixels (a 17-column tail panel copied per image).
    {"pointwise_k_passes_res",
     2,
     600,
     7,
     7,
     13,
     1,
     1,
     1,
     1,
     0,
     0,
     0,
     0,
     1,
     1,
     1,
     FusedActivation::LeakyRelu,
     0.1f,
     0,
     true},
    // Pointwise with groups and 64 pixels (exactly two panels, no tail).
    {"pointwise_grouped",   1, 12, 8,    8, 9, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 3,
     FusedActivation::None, 0, 0,  false},
    // Channel-vector GEMM (ConvGemmCV.inc) shapes, run on both GEMMs below:
    // 40 channels = a 32-channel block and an 8-channel (one-vector) tail;
    // 50 = a block and an 18-channel (two-vector) tail; 15 pixels = a
    // 14-pixel tile and a 1-pixel one; odd K; batch 2 with residual.
    {"cv_tails_odd_k_res",  2, 7, 5,   3, 40, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1,
     FusedActivation::Relu, 0, 0, true},
    {"cv_two_vector_tail_leaky",
     1,
     9,
     6,
     6,
     50,
     3,
     1,
     1,
     1,
     1,
     0,
     1,
     0,
     1,
     1,
     1,
     FusedActivation::LeakyRelu,
     0.1f,
     0,
     false},
    // A 1x1 plane (one 1-pixel tile) with groups of 24 channels.
    {"cv_single_pixel_grouped",
     1,
     16,
     1,
     1,
     48,
     1,
     1,
     1,
     1,
     0,
     0,
     0,
     0,
     1,
     1,
     2,
     FusedActivation::None,
     0,
     0,
     false},
    // Stride-2 pointwise (a ResNet downsample) over im2col; 7x7 pointwise
    // read in place (3 full tiles and a 7-pixel one), K = 520.
    {"pointwise_stride2_res",
     2,
     24,
     14,
     13,
     64,
     1,
     1,
     2,
     2,
     0,
     0,
     0,
     0,
     1,
     1,
     1,
     FusedActivation::Relu,
     0,
     0,
     true},
    {"pointwise_7x7_long_k_hswish",
     1,
     520,
     7,
     7,
     36,
     1,
     1,
     1,
     1,
     0,
     0,
     0,
     0,
     1,
     1,
     1,
     FusedActivation::HardSwish,
     1.f / 6,
     0.5f,
     false},
    // Direct convolutions of the channel-vector GEMM: unpadded (read in
    // place through the offset table; stride 2 leaves the last input row
    // unread), and padded with stride 2 (its zero-padded copy is shorter
    // than the padded input).
    {"direct_unpadded_stride2_res",
     2,
     5,
     10,
     11,
     33,
     3,
     3,
     2,
     2,
     0,
     0,
     0,
     0,
     1,
     1,
     1,
     FusedActivation::Relu,
     0,
     0,
     true},
    {"direct_padded_stride2",
     1,
     6,
     8,
     9,
     20,
     3,
     3,
     2,
     2,
     1,
     1,
     1,
     1,
     1,
     1,
     1,
     FusedActivation::None,
     0,
     0,
     false},
    // Depthwise: rows with padded edges, stride 2 on odd planes, 5x5,
    // tiny planes with asymmetric pads, stride 3.
    {"depthwise_s1_blocks_relu_res",
     2,
     3,
     9,
     40,
     3,
     3,
     3,
     1,
     1,
     1,
     1,
     1,
     1,
     1,
     1,
     3,
     FusedActivation::Relu,
     0,
     0,
     true},
    {"depthwise_s2_odd_clip",
     1,
     4,
     57,
     57,
     4,
     3,
     3,
     2,
     2,
     1,
     1,
     1,
     1,
     1,
     1,
     4,
     FusedActivation::Clip,
     0.f,
     6.f,
     false},
    {"depthwise_5x5_s2_sigmoid",
     1,
     3,
     29,
     35,
     3,
     5,
     5,
     2,
     2,
     2,
     2,
     2,
     2,
     1,
     1,
     3,
     FusedActivation::Sigmoid,
     0,
     0,
     false},
    {"depthwise_tiny_plane_asym_pads",
     1,
     5,
     7,
     7,
     5,
     3,
     3,
     1,
     1,
     0,
     1,
     2,
     0,
     1,
     1,
     5,
     FusedActivation::None,
     0,
     0,
     true},
    // SiLU epilogues (EfficientNet's Mul(x, Sigmoid(x))): GEMM and
    // depthwise.
    {"gemm_silu_res",       1, 8, 10,  10, 20, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1,
     FusedActivation::SiLU, 0, 0, true},
    {"depthwise_silu",      1, 4, 30,   30, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 4,
     FusedActivation::SiLU, 0, 0, false},
    // Wide stride-1 planes take bands over padded rows: dilated with
    // asymmetric pads over two bands; a valid 5x5; a row too long for a
    // band (the interior-rows path). Wide stride 2: dilated, asymmetric.
    {"depthwise_bands_dilated_asym_res",
     1,
     3,
     70,
     60,
     3,
     3,
     3,
     1,
     1,
     2,
     1,
     0,
     2,
     2,
     2,
     3,
     FusedActivation::Clip,
     0.f,
     6.f,
     true},
    {"depthwise_5x5_valid_wide",
     2,
     2,
     9,
     40,
     2,
     5,
     5,
     1,
     1,
     0,
     0,
     0,
     0,
     1,
     1,
     2,
     FusedActivation::None,
     0,
     0,
     false},
    {"depthwise_row_longer_than_band",
     1,
     2,
     3,
     5000,
     2,
     3,
     3,
     1,
     1,
     1,
     1,
     1,
     1,
     1,
     1,
     2,
     FusedActivation::Relu,
     0,
     0,
     true},
    {"depthwise_s2_wide_dilated_asym_res",
     1,
     2,
     33,
     70,
     2,
     3,
     3,
     2,
     2,
     0,
     1,
     1,
     0,
     2,
     2,
     2,
     FusedActivation::HardSwish,
     1.f / 6,
     0.5f,
     true},
    {"depthwise_stride3_fallback",
     1,
     2,
     20,
     23,
     2,
     3,
     3,
     3,
     3,
     1,
     1,
     1,
     1,
     1,
     1,
     2,
     FusedActivation::None,
     0,
     0,
     false},
    // Winograd-eligible shapes (3x3, stride 1, >= 16 channels each way),
    // each also run with F(2x2) and F(4x4) forced; the last number is the
    // tile the auto rule picks. A partial 32-column panel, relu and a
    // residual; odd planes in a batch of two with partial tiles at the right
    // and bottom; no padding; 7x7; C = 520 > 512 (two passes over K in the
    // GEMM, 25 channels: a 1-row last filter block); asymmetric pads; a row
    // of 38 F(4x4) tiles (two transform chunks); 56x56, where auto picks
    // F(4x4).
    {"wino_relu_res",
     1,
     32,
     20,
     20,
     24,
     3,
     3,
     1,
     1,
     1,
     1,
     1,
     1,
     1,
     1,
     1,
     FusedActivation::Relu,
     0,
     0,
     true,
     0},
    {"wino_odd_batch_clip",
     2,
     17,
     13,
     11,
     30,
     3,
     3,
     1,
     1,
     1,
     1,
     1,
     1,
     1,
     1,
     1,
     FusedActivation::Clip,
     -0.5f,
     0.5f,
     false,
     0},
    {"wino_unpadded_leaky",
     1,
     20,
     18,
     18,
     16,
     3,
     3,
     1,
     1,
     0,
     0,
     0,
     0,
     1,
     1,
     1,
     FusedActivation::LeakyRelu,
     0.1f,
     0,
     false,
     0},
    {"wino_7x7_relu_res",   1, 64, 7,    7, 40, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1,
     FusedActivation::Relu, 0, 0,  true, 0},
    {"wino_k_passes",
     1,
     520,
     12,
     12,
     25,
     3,
     3,
     1,
     1,
     1,
     1,
     1,
     1,
     1,
     1,
     1,
     FusedActivation::None,
     0,
     0,
     true,
     0},
    {"wino_asym_pads",
     1,
     16,
     9,
     14,
     16,
     3,
     3,
     1,
     1,
     0,
     1,
     2,
     0,
     1,
     1,
     1,
     FusedActivation::None,
     0,
     0,
     false,
     0},
    {"wino_wide_row_sigmoid",
     1,
     16,
     6,
     150,
     16,
     3,
     3,
     1,
     1,
     1,
     1,
     1,
     1,
     1,
     1,
     1,
     FusedActivation::Sigmoid,
     0,
     0,
     true,
     0},
    {"wino_auto_f4_56x56",
     1,
     32,
     56,
     56,
     32,
     3,
     3,
     1,
     1,
     1,
     1,
     1,
     1,
     1,
     1,
     1,
     FusedActivation::Relu,
     0,
     0,
     true,
     4},
    // 7x7 planes walk flat across rows (channel-vector GEMM); K = 360
    // is walked in slices over all tiles of a call.
    {"cv_flat_7x7_sliced_silu_res",
     1,
     40,
     7,
     7,
     40,
     3,
     3,
     1,
     1,
     1,
     1,
     1,
     1,
     1,
     1,
     1,
     FusedActivation::SiLU,
     0,
     0,
     true},
    // Flat walk with dilation and asymmetric pads (rows 4 pixels wide).
    {"cv_flat_dilated_asym_relu",
     2,
     20,
     9,
     6,
     33,
     3,
     3,
     1,
     1,
     2,
     1,
     2,
     1,
     2,
     2,
     1,
     FusedActivation::Relu,
     0,
     0,
     false},
    // Pointwise with K = 1024 on 14x14: sliced K, 14 tiles per call.
    {"pointwise_14x14_k1024_clip_res",
     1,
     1024,
     14,
     14,
     40,
     1,
     1,
     1,
     1,
     0,
     0,
     0,
     0,
     1,
     1,
     1,
     FusedActivation::Clip,
     0,
     6,
     true},
};

class ConvPathTest : public ::testing::TestWithParam<ConvCase> {};

/// Builds the case in a fresh module and runs it on \p backend; \p kernels,
/// if given, receives the names of the kernels that ran.
Tensor runCase(const ConvCase &c, llvm::StringRef backend,
               std::vector<std::string> *kernels = nullptr) {
  Module M;
  Function *F = M.createFunction("conv");
  std::mt19937 gen(7);
  auto *x = M.createPlaceholder(
      "x", Type(ElemKind::Float32, {c.N, c.C, c.H, c.W}), false);
  Tensor w(ElemKind::Float32, {c.M, c.C / c.group, c.KH, c.KW});
  w.randomize(-1.f, 1.f, gen);
  Tensor b(ElemKind::Float32, {c.M});
  b.randomize(-1.f, 1.f, gen);
  auto *wc = M.createConstant("w", std::move(w));
  auto *bc = M.createConstant("b", std::move(b));
  dim_t OH = (c.H + c.pt + c.pb - c.dh * (c.KH - 1) - 1) / c.sh + 1;
  dim_t OW = (c.W + c.pl + c.pr - c.dw * (c.KW - 1) - 1) / c.sw + 1;
  llvm::SmallVector<NodeValue, 1> res;
  std::vector<Tensor> inputs;
  Tensor xt(ElemKind::Float32, {c.N, c.C, c.H, c.W});
  xt.randomize(-1.f, 1.f, gen);
  inputs.push_back(std::move(xt));
  if (c.residual) {
    res.push_back(M.createPlaceholder(
        "r", Type(ElemKind::Float32, {c.N, c.M, OH, OW}), false));
    Tensor rt(ElemKind::Float32, {c.N, c.M, OH, OW});
    rt.randomize(-1.f, 1.f, gen);
    inputs.push_back(std::move(rt));
  }
  NodeValue y = F->createConv("conv", x, wc, bc, res, {c.sh, c.sw},
                              {c.pt, c.pl, c.pb, c.pr}, {c.dh, c.dw}, c.group,
                              int64_t(c.act), c.alpha, c.beta);
  auto *out = M.createPlaceholder("y", *y.getType(), true);
  F->createSave("save", y, out);
  if (!kernels) {
    auto outs = compileAndRun(M, *F, backend, std::move(inputs));
    return outs.empty() ? Tensor() : std::move(outs[0]);
  }
  registerAllBackends();
  auto B = getBackend(backend);
  EXPECT_TRUE(bool(B));
  if (!B)
    return Tensor();
  auto net = compileFunction(*F, **B, CompileOptions());
  EXPECT_TRUE(bool(net)) << llvm::toString(net.takeError());
  if (!net)
    return Tensor();
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
    kernels->push_back(k.name);
  return std::move(*bind.get(out));
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
  cpu::setWinogradMode(mode);
  std::vector<std::string> kernels;
  Tensor got = runCase(c, "CPU", &kernels);
  cpu::setWinogradMode(cpu::WinogradMode::Auto);
  bool eligible = c.KH == 3 && c.KW == 3 && c.sh == 1 && c.sw == 1 &&
                  c.dh == 1 && c.dw == 1 && c.group == 1 && c.C >= 16 &&
                  c.M >= 16;
  int wino = mode == cpu::WinogradMode::Off    ? 0
             : mode == cpu::WinogradMode::Auto ? c.winograd
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

/// Sets EMBER_CPU_CONV for one scope (which GEMM the CPU lowers non-depthwise
/// convolutions to), restoring "auto" after.
struct ConvPathChoice {
  explicit ConvPathChoice(const char *v) { setenv("EMBER_CPU_CONV", v, 1); }
  ~ConvPathChoice() { setenv("EMBER_CPU_CONV", "auto", 1); }
};

TEST_P(ConvPathTest, CPUMatchesInterpreter) {
  const ConvCase &c = GetParam();
  Tensor ref = runCase(c, "Interpreter");
  ASSERT_GT(ref.size(), 0);
  checkCPU(c, ref, cpu::WinogradMode::Auto);
  // Both GEMMs forced, Winograd off (eligible 3x3 cases would take it).
  for (const char *path : {"panels", "channels"}) {
    SCOPED_TRACE(path);
    ConvPathChoice choice(path);
    checkCPU(c, ref, cpu::WinogradMode::Off);
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

TEST(ConvPathChoiceTest, BadValueIsAnError) {
  ConvPathChoice choice("sideways");
  const ConvCase &c = kCases[0];
  Module M;
  Function *F = M.createFunction("conv");
  auto *x =
      M.createPlaceholder("x", Type(ElemKind::Float32, {1, 3, 5, 5}), false);
  auto *w =
      M.createConstant("w", Tensor(ElemKind::Float32, {4, 3, c.KH, c.KW}));
  auto *b = M.createConstant("b", Tensor(ElemKind::Float32, {4}));
  NodeValue y = F->createConv("conv", x, w, b, {}, {1, 1}, {1, 1, 1, 1}, {1, 1},
                              1, 0, 0.f, 0.f);
  F->createSave("save", y, M.createPlaceholder("y", *y.getType(), true));
  registerAllBackends();
  auto B = getBackend("CPU");
  ASSERT_TRUE(bool(B)) << llvm::toString(B.takeError());
  auto net = compileFunction(*F, **B, CompileOptions());
  ASSERT_FALSE(bool(net));
  EXPECT_NE(llvm::toString(net.takeError()).find("EMBER_CPU_CONV 'sideways'"),
            std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Cases, ConvPathTest, ::testing::ValuesIn(kCases),
                         [](const auto &info) {
                           return std::string(info.param.name);
                         });
