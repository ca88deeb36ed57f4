//===- PoolPaths.cpp - CPU pooling kernels against the Interpreter --------===//
//
// Under auto, float32 2-D pools take the CPU's separable per-plane kernel
// (libjit/Pool.inc: each output row's input rows reduced column by column,
// then along the row) wherever a padded row fits its band; forced paths take
// the shared pooling kernel (panels: each filter tap a run of an input row
// with compile-time bounds) or the channel-vector ones (channels: max pools
// in 16-channel lanes, average pools as channel-vector depthwise
// convolutions with taps 1 / (KH * KW) where the divisor is the window).
// Each case runs random data through the CPU backend and the Interpreter.
// A max is the same whatever the order of its taps, so max pools must be
// bit-identical; the separable kernel sums an average's rows before its
// columns and the depthwise forms multiply each tap by 1 / (KH * KW), which
// rounds differently from the Interpreter's sum divided once, by at most
// about (KH * KW + 1) float epsilons of max|x| = 1 (2e-6 allowed).
//
//===----------------------------------------------------------------------===//
#include "../unit/TestUtils.h"
#include "PathOptions.h"

#include <random>

using namespace ember;
using namespace ember::test;

namespace {
struct PoolCase {
  const char *name;
  bool isMax;
  dim_t N, C, H, W;
  int64_t KH, KW, sh, sw, pt, pl, pb, pr;
  bool countPad;
};

// clang-format off
const PoolCase kCases[] = {
    {"max_3x3_s2_squeezenet", true, 1, 3, 15, 15, 3, 3, 2, 2, 0, 0, 0, 0, false},
    {"max_3x3_s2_pad1_resnet", true, 2, 2, 16, 17, 3, 3, 2, 2, 1, 1, 1, 1, false},
    {"max_2x2_s2_ceil_pad", true, 1, 3, 7, 9, 2, 2, 2, 2, 0, 0, 1, 1, false},
    {"max_window_wider_than_input", true, 1, 2, 3, 4, 5, 5, 1, 1, 2, 2, 2, 2, false},
    {"avg_3x3_s1_pad1_exclude", false, 1, 4, 9, 40, 3, 3, 1, 1, 1, 1, 1, 1, false},
    {"avg_3x3_s1_pad1_include", false, 1, 4, 9, 40, 3, 3, 1, 1, 1, 1, 1, 1, true},
    {"avg_asym_pads_include", false, 2, 3, 8, 11, 3, 2, 2, 3, 1, 0, 2, 1, true},
    {"avg_asym_pads_exclude", false, 2, 3, 8, 11, 3, 2, 2, 3, 1, 0, 2, 1, false},
    {"avg_2x2_s2", false, 1, 5, 14, 14, 2, 2, 2, 2, 0, 0, 0, 0, false},
    // Narrow output rows take the channel-vector max pool (16 channels in
    // lanes, partial last block): GoogLeNet's branch pools, a ceil-mode
    // 28 -> 14, SqueezeNet's 13 -> 6, 7x7 in two-row chunks, and a plane
    // smaller than one chunk.
    {"max_cv_3x3_s1_pad1_14x14", true, 1, 40, 14, 14, 3, 3, 1, 1, 1, 1, 1, 1, false},
    {"max_cv_3x3_s2_ceil_28", true, 2, 20, 28, 28, 3, 3, 2, 2, 0, 0, 1, 1, false},
    {"max_cv_3x3_s2_13", true, 1, 17, 13, 13, 3, 3, 2, 2, 0, 0, 0, 0, false},
    {"max_cv_3x3_s1_7x7", true, 1, 33, 7, 7, 3, 3, 1, 1, 1, 1, 1, 1, false},
    {"max_cv_tiny_plane", true, 1, 16, 3, 5, 2, 3, 1, 2, 1, 0, 0, 1, false},
    // Average pools through the channel-vector depthwise kernel (forced
    // for the 17-wide rows): Inception-v3's branch pools (3x3, padding
    // counted), a 5x5 window on 20-wide rows, partial 16-channel blocks.
    {"avg_dw_3x3_s1_pad1_17x17", false, 1, 20, 17, 17, 3, 3, 1, 1, 1, 1, 1, 1, true},
    {"avg_dw_3x3_s1_pad1_8x8", false, 2, 35, 8, 8, 3, 3, 1, 1, 1, 1, 1, 1, true},
    {"avg_dw_5x5_s2_pad2_20", false, 1, 18, 20, 20, 5, 5, 2, 2, 2, 2, 2, 2, true},
    // The separable kernel's own corners: stride 3 (rows reduced one output
    // at a time), a ceil-mode average whose last windows pass the padding,
    // five bands of rows, a 2x2 stride-2 window on rows of 16+ vectors, a
    // 5x5 stride-2 window with asymmetric pads, rows too wide for its band
    // (the shared kernel under auto), an average over rows of 1-7 outputs.
    {"max_s3_window_4", true, 1, 3, 20, 26, 4, 4, 3, 3, 1, 2, 1, 0, false},
    {"avg_ceil_past_padding_include", false, 1, 3, 10, 12, 3, 3, 2, 2, 1, 1, 2, 2, true},
    {"max_s1_many_bands", true, 1, 2, 90, 100, 3, 3, 1, 1, 1, 1, 1, 1, false},
    {"max_2x2_s2_wide", true, 2, 3, 34, 70, 2, 2, 2, 2, 0, 0, 0, 0, false},
    {"avg_5x5_s2_asym_exclude", false, 1, 4, 31, 45, 5, 5, 2, 2, 2, 1, 1, 2, false},
    {"max_row_past_band", true, 1, 2, 4, 2100, 3, 3, 1, 1, 1, 1, 1, 1, false},
    {"avg_narrow_rows_exclude", false, 1, 5, 9, 13, 3, 3, 2, 2, 1, 1, 1, 1, false},
};
// clang-format on

class PoolPathTest : public ::testing::TestWithParam<PoolCase> {};

Tensor runCase(const PoolCase &c, llvm::StringRef backend) {
  Module M;
  Function *F = M.createFunction("pool");
  std::mt19937 gen(11);
  auto *x = M.createPlaceholder(
      "x", Type(ElemKind::Float32, {c.N, c.C, c.H, c.W}), false);
  Tensor xt(ElemKind::Float32, {c.N, c.C, c.H, c.W});
  xt.randomize(-1.f, 1.f, gen);
  std::vector<Tensor> inputs;
  inputs.push_back(std::move(xt));
  NodeValue y;
  if (c.isMax)
    y = F->createMaxPool("pool", x, {c.KH, c.KW}, {c.sh, c.sw},
                         {c.pt, c.pl, c.pb, c.pr});
  else
    y = F->createAvgPool("pool", x, {c.KH, c.KW}, {c.sh, c.sw},
                         {c.pt, c.pl, c.pb, c.pr}, c.countPad);
  auto *out = M.createPlaceholder("y", *y.getType(), true);
  F->createSave("save", y, out);
  auto outs = compileAndRun(M, *F, backend, std::move(inputs), pathOptions());
  return outs.empty() ? Tensor() : std::move(outs[0]);
}
} // namespace

TEST_P(PoolPathTest, CPUMatchesInterpreter) {
  const PoolCase &c = GetParam();
  Tensor ref = runCase(c, "Interpreter");
  Tensor got = runCase(c, "CPU");
  ASSERT_GT(ref.size(), 0);
  float tol = c.isMax ? 0.f : 2e-6f;
  expectNear(got, ref, tol);
  // Also forced through the generic or per-plane kernel and the
  // channel-vector one (-cpu-conv-path selects both conv and pool paths).
  for (cpu::ConvPath path : {cpu::ConvPath::Panels, cpu::ConvPath::Channels}) {
    SCOPED_TRACE(int(path));
    Tensor forced;
    {
      PathChoice choice(path);
      forced = runCase(c, "CPU");
    }
    expectNear(forced, ref, tol);
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, PoolPathTest, ::testing::ValuesIn(kCases),
                         [](const auto &info) {
                           return std::string(info.param.name);
                         });
