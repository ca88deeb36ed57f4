//===- ConvPaths.cpp - Every CPU convolution path against the Interpreter -===//
//
// The CPU backend has several convolution paths (im2col + 12-channel GEMM
// blocks, partial blocks, small groups, passes over long K, pointwise
// convolutions read in place, depthwise direct, wide rows) with a fused
// epilogue. Each case runs random data through both backends; the
// Interpreter's direct loops are the oracle. Tolerance: max|d| <= 1e-5 *
// max(1, max|ref|) * sqrt(K) where K is the reduction length -- both sides
// sum K float32 products in different orders (FMA on the CPU).
//
//===----------------------------------------------------------------------===//
#include "../unit/TestUtils.h"

#include <cmath>
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
    {"k_passes_relu_res",   2, 64, 10,  10, 20, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1,
     FusedActivation::Relu, 0, 0,  true},
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
};

class ConvPathTest : public ::testing::TestWithParam<ConvCase> {};

/// Builds the case in a fresh module and runs it on \p backend.
Tensor runCase(const ConvCase &c, llvm::StringRef backend) {
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
  auto outs = compileAndRun(M, *F, backend, std::move(inputs));
  return outs.empty() ? Tensor() : std::move(outs[0]);
}
} // namespace

TEST_P(ConvPathTest, CPUMatchesInterpreter) {
  const ConvCase &c = GetParam();
  Tensor ref = runCase(c, "Interpreter");
  Tensor got = runCase(c, "CPU");
  ASSERT_GT(ref.size(), 0);
  double maxRef = 1;
  for (dim_t i = 0; i < ref.size(); ++i)
    maxRef = std::max(maxRef, std::fabs(ref.elementAsDouble(i)));
  double K = double(c.C / c.group * c.KH * c.KW);
  expectNear(got, ref, float(1e-5 * maxRef * std::sqrt(K)));
}

INSTANTIATE_TEST_SUITE_P(Cases, ConvPathTest, ::testing::ValuesIn(kCases),
                         [](const auto &info) {
                           return std::string(info.param.name);
                         });
