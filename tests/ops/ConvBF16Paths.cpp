//===- ConvBF16Paths.cpp - BFloat16 Conv: CPU against the Interpreter -----===//
//
// Under -precision=bf16 every non-depthwise Conv with a constant filter
// reads a BFloat16 filter and its Float32 input rounded to BFloat16
// (convert-precision); the sums stay Float32. Each case compiles the same
// Float32 graph with -precision=bf16 for the Interpreter and the CPU. Per
// output element, with T = |bias| + sum_k |x_k w_k| + |res| over the
// BFloat16-rounded x and w and gamma(n) = n u / (1 - n u), u = 2^-24:
//  - the Interpreter against the exact value (in double) of bias + the
//    products of the rounded operands + residual: within gamma(K + 2) T
//    (products exact in Float32, K + 1 rounded additions);
//  - the CPU against the Interpreter: within 2 gamma(K + 2) T (two orders
//    of the same sum, each within gamma(K + 2) T of the exact value).
// The activations are 1-Lipschitz (Relu, Clip, LeakyRelu with alpha < 1),
// so the bounds hold after them. A CPU or Interpreter that did not round
// the input (or rounded it otherwise) misses the bound by a factor of
// about 2^15 (one BFloat16 rounding is 2^-9 relative).
// Which kernel runs follows the host and the test's flags exactly as for
// MatMulBF16Paths.cpp (AMX, its refused-permission fallback, vdpbf16ps,
// the widening kernel with 16 or 8 lanes; see tests/CMakeLists.txt); the
// 3x3 stride-1 ungrouped cases take the direct kernels (B read from a
// padded copy of the input): on AMX those with enough channels (AMX tiles;
// the refused-permission fallback is widened Float32 FMAs on the same
// copy), on AVX512-BF16 without AMX all of them (vdpbf16ps).
//
//===----------------------------------------------------------------------===//
#include "../../backends/CPU/ConvBF16.h"
#include "../../backends/CPU/ConvBF16CV.h"
#include "../../backends/CPU/ConvBF16Direct.h"
#include "../unit/TestUtils.h"
#include "BF16PathBounds.h"

#include "ember/IR/IRParser.h"

#include <cmath>
#include <cstring>
#include <random>

using namespace ember;
using namespace ember::test;

namespace {
struct BF16ConvCase {
  const char *name;
  dim_t N, C, H, W, M, KH, KW;
  int64_t sh, sw, pt, pl, pb, pr, dh, dw, group;
  FusedActivation act;
  float alpha, beta;
  bool residual;
};

// clang-format off
const BF16ConvCase kCases[] = {
    // Pointwise, odd K (a half pair), 63 pixels (partial panels), 40
    // channels (a 32-row AMX block and an 8-row one).
    {"pointwise_odd_k", 1, 17, 7, 9, 40, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1,
     FusedActivation::None, 0, 0, false},
    {"3x3_padded_relu_res", 2, 13, 10, 11, 48, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1,
     FusedActivation::Relu, 0, 0, true},
    // A 7x7 stride-2 stem: K = 147 (past four 32-wide chunks), 20
    // channels (a 16-row tile and a 4-row one).
    {"stem_7x7_s2_clip", 1, 3, 31, 29, 20, 7, 7, 2, 2, 3, 3, 3, 3, 1, 1, 1,
     FusedActivation::Clip, 0.f, 6.f, false},
    {"grouped_s2_asym_leaky_res", 1, 32, 9, 9, 64, 3, 3, 2, 2, 1, 0, 1, 1, 1,
     1, 2, FusedActivation::LeakyRelu, 0.1f, 0, true},
    // Fewer channels than an AMX tile's rows: vdpbf16ps on AMX hosts too.
    {"few_channels", 1, 8, 6, 6, 10, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1,
     FusedActivation::None, 0, 0, false},
    // K = 864 (several K blocks of the vector kernels), 400 pixels.
    {"long_k_many_pixels_relu", 1, 96, 20, 20, 70, 3, 3, 1, 1, 1, 1, 1, 1, 1,
     1, 1, FusedActivation::Relu, 0, 0, false},
    {"dilated", 1, 5, 12, 12, 33, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2, 1,
     FusedActivation::None, 0, 0, false},
    {"pointwise_s2_res", 2, 24, 14, 13, 64, 1, 1, 2, 2, 0, 0, 0, 0, 1, 1, 1,
     FusedActivation::Relu, 0, 0, true},
    // The filter outweighs the patches (panels packed once, shared by row
    // tasks): grouped, 49 pixels, 128 channels per group, residual.
    {"filter_heavy_grouped_res", 1, 64, 7, 7, 256, 3, 3, 1, 1, 1, 1, 1, 1, 1,
     1, 2, FusedActivation::Relu, 0, 0, true},
    // Pointwise, stride 1, unpadded, 600 pixels: whole runs of 256 read
    // straight from the input planes, the last one (88 pixels) copied.
    {"pointwise_plane_runs_res", 2, 20, 20, 30, 48, 1, 1, 1, 1, 0, 0, 0, 0, 1,
     1, 1, FusedActivation::Relu, 0, 0, true},
    // Pointwise on 1600 pixels (past the channel-vector GEMM's): 25
    // panels of 64 in 8 chunks of 3 and one of 1, each packed once; odd
    // K, 30 channels, residual and Relu.
    {"pointwise_chunks_rounded_down_res", 1, 41, 40, 40, 30, 1, 1, 1, 1, 0,
     0, 0, 0, 1, 1, 1, FusedActivation::Relu, 0, 0, true},
    // Many row tasks: 3 pixels, 200 channels.
    {"few_pixels_many_channels", 1, 40, 3, 1, 200, 1, 1, 1, 1, 0, 0, 0, 0, 1,
     1, 1, FusedActivation::None, 0, 0, false},
    // 3x3 stride 1 on AMX hosts: B tiles from the padded copy
    // (ember_conv_bf16_direct). Odd plane (13 x 17: virtual pixels past
    // each row and past the last block), 27 channels (a half pair, padded
    // to 32), 40 output channels (a block of 32 rows and one of 8), bias,
    // residual and Relu, two images.
    {"direct_odd_plane_res_relu", 2, 27, 13, 17, 40, 3, 3, 1, 1, 1, 1, 1, 1,
     1, 1, 1, FusedActivation::Relu, 0, 0, true},
    // Asymmetric pads (none on top, two below), a lone 16-row tile.
    {"direct_asym_pads_leaky", 1, 64, 9, 23, 16, 3, 3, 1, 1, 0, 1, 2, 1, 1, 1,
     1, FusedActivation::LeakyRelu, 0.1f, 0, false},
    // Unpadded, 100 channels (padded to 128), 33 output channels.
    {"direct_unpadded", 1, 100, 8, 30, 33, 3, 3, 1, 1, 0, 0, 0, 0, 1, 1, 1,
     FusedActivation::None, 0, 0, false},
    // The filter outweighs the copy (7x7 planes, 128 channels): tasks
    // split output channels; residual and Clip, two images.
    {"direct_filter_heavy_res_clip", 2, 128, 7, 7, 96, 3, 3, 1, 1, 1, 1, 1, 1,
     1, 1, 1, FusedActivation::Clip, 0.f, 6.f, true},
    // vdpbf16ps direct: 62-wide padded rows, so a K block holds about 21
    // (32 KiB L1) or 32 (48 KiB) of the 35 channel pairs: two K blocks,
    // the sums waiting on the stack between them; 50 output channels (a
    // block of 48 rows and one of 2).
    {"direct_k_blocks_wide_rows", 1, 70, 9, 60, 50, 3, 3, 1, 1, 1, 1, 1, 1, 1,
     1, 1, FusedActivation::None, 0, 0, false},
    // vdpbf16ps direct (AMX hosts: the patch GEMM, 9 of 32 channels): odd
    // channels (9: a pair with a zero half), odd width, 7 output channels
    // (a 6-row tile and a 1-row one), three images, residual, LeakyRelu.
    {"direct_odd_channels_batch3_res", 3, 9, 6, 9, 7, 3, 3, 1, 1, 1, 1, 1, 1,
     1, 1, 1, FusedActivation::LeakyRelu, 0.2f, 0, true},
    // vdpbf16ps direct, stride 2 (the copy in four phases): odd plane and
    // channels (19, padded to 20), 13 output channels, two images,
    // residual, Relu.
    {"direct_s2_odd_res_relu", 2, 19, 15, 17, 13, 3, 3, 2, 2, 1, 1, 1, 1, 1,
     1, 1, FusedActivation::Relu, 0, 0, true},
    // Stride 2 on rows of 70 (whole 32-value vectors split into phases),
    // asymmetric pads (none on top and on the right).
    {"direct_s2_wide_rows_asym", 1, 8, 10, 70, 20, 3, 3, 2, 2, 0, 1, 1, 0, 1,
     1, 1, FusedActivation::None, 0, 0, false},
    // A 7x7 filter with stride 2 (the most taps), 8 channels.
    {"direct_7x7_s2", 1, 8, 23, 21, 10, 7, 7, 2, 2, 3, 3, 3, 3, 1, 1, 1,
     FusedActivation::None, 0, 0, false},
    // A 5x5 filter, stride 1 (25 taps).
    {"direct_5x5", 1, 12, 11, 13, 9, 5, 5, 1, 1, 2, 2, 2, 2, 1, 1, 1,
     FusedActivation::None, 0, 0, false},
    // The direct kernel with output channels in the lanes
    // (ember_conv_bf16_direct_cv, vdpbf16ps hosts without AMX): 3x3 on an
    // odd 13 x 17 plane (221 real pixels: four blocks of 48 and one of 29,
    // a 5-pixel rest tile), 27 channels (a padded one), 60 output channels
    // (a partial panel), residual and Relu, two images.
    {"direct_cv_odd_res_relu", 2, 27, 13, 17, 60, 3, 3, 1, 1, 1, 1, 1, 1, 1,
     1, 1, FusedActivation::Relu, 0, 0, true},
    // Stride 2 (the copy's phases), 150 channels (75 pairs: several K
    // blocks of a 9-tap slice), two panels, LeakyRelu.
    {"direct_cv_s2_k_blocks", 1, 150, 15, 15, 128, 3, 3, 2, 2, 1, 1, 1, 1, 1,
     1, 1, FusedActivation::LeakyRelu, 0.1f, 0, false},
    // A 7 x 7 plane, 190 output channels (panels of 64, 64 and 62),
    // residual and Clip.
    {"direct_cv_7x7_panels_res_clip", 1, 64, 7, 7, 190, 3, 3, 1, 1, 1, 1, 1,
     1, 1, 1, 1, FusedActivation::Clip, 0.f, 6.f, true},
    // A 5x5 filter (25 taps).
    {"direct_cv_5x5", 1, 12, 11, 13, 64, 5, 5, 1, 1, 2, 2, 2, 2, 1, 1, 1,
     FusedActivation::None, 0, 0, false},
    // A 3-channel 7x7 stride-2 stem with 64 output channels: the channel
    // lanes take its padded channel (3 of 4); odd plane, residual, Relu.
    {"direct_cv_stem_3ch_res", 1, 3, 33, 31, 64, 7, 7, 2, 2, 3, 3, 3, 3, 1, 1,
     1, FusedActivation::Relu, 0, 0, true},
    // One channel (half of its pair padded), 5x5, 120 output channels.
    {"direct_cv_1ch_5x5", 2, 1, 12, 15, 120, 5, 5, 1, 1, 2, 2, 2, 2, 1, 1, 1,
     FusedActivation::None, 0, 0, false},
    // Channel-vector kernel on vdpbf16ps hosts without AMX (output
    // channels fill its 64-lane panels better than the pixels fill 64-pixel
    // ones). Pointwise, 49 pixels (a lone pixel in the last group of 16),
    // 37 channels (19 pairs: a transposed block of 16 and 3 pairs past
    // it; a half pair), 120 output channels (a panel and 56 of the next),
    // residual and Relu, two images.
    {"cv_pointwise_odd_k_res", 2, 37, 7, 7, 120, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1,
     1, FusedActivation::Relu, 0, 0, true},
    // Stride 2 over 40-wide rows: groups of 16 inside one output row read
    // every other value; those across rows lane by lane; 60 output
    // channels (a partial panel), LeakyRelu.
    {"cv_pointwise_s2_rows", 1, 50, 9, 40, 60, 1, 1, 2, 2, 0, 0, 0, 0, 1, 1,
     1, FusedActivation::LeakyRelu, 0.1f, 0, false},
    // 14 x 14 pixels (blocks of 48 and a tail of 4), 600 channels (300
    // pairs: several K blocks), 190 output channels (panels of 64, 64,
    // 62), Clip, residual.
    {"cv_pointwise_k_blocks", 1, 600, 14, 14, 190, 1, 1, 1, 1, 0, 0, 0, 0, 1,
     1, 1, FusedActivation::Clip, 0.f, 6.f, true},
    // 48-channel panels (where 64-channel ones leave more lanes idle):
    // 90 output channels (a panel and 42 of the next), 14 x 14 pixels (8-
    // pixel tiles in blocks of 48 and a tail of 4), 29 channels (a half
    // pair), residual and Relu, two images; 96 channels (two whole panels)
    // over 600 input channels (several K blocks), 7 x 7 pixels, Clip.
    {"cv48_pointwise_res_relu", 2, 29, 14, 14, 90, 1, 1, 1, 1, 0, 0, 0, 0, 1,
     1, 1, FusedActivation::Relu, 0, 0, true},
    {"cv48_pointwise_k_blocks_clip", 1, 600, 7, 7, 96, 1, 1, 1, 1, 0, 0, 0, 0,
     1, 1, 1, FusedActivation::Clip, 0.f, 6.f, false},
    // Not pointwise: dilated, padded 3x3 (patch rows read through
    // patchLanesBF16), 132 pixels, 64 output channels.
    {"cv_dilated_3x3", 1, 10, 11, 12, 64, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2, 1,
     FusedActivation::None, 0, 0, false},
};
// clang-format on

void PrintTo(const BF16ConvCase &c, std::ostream *os) { *os << c.name; }

dim_t outDim(dim_t in, dim_t k, int64_t s, int64_t p0, int64_t p1, int64_t d) {
  return (in + p0 + p1 - d * (k - 1) - 1) / s + 1;
}

/// The case's tensors: x, w, bias and (with a residual) r, seeded.
struct Operands {
  Tensor x, w, b, r;
  explicit Operands(const BF16ConvCase &c) {
    std::mt19937 gen(11);
    dim_t OH = outDim(c.H, c.KH, c.sh, c.pt, c.pb, c.dh);
    dim_t OW = outDim(c.W, c.KW, c.sw, c.pl, c.pr, c.dw);
    x = Tensor(ElemKind::Float32, {c.N, c.C, c.H, c.W});
    w = Tensor(ElemKind::Float32, {c.M, c.C / c.group, c.KH, c.KW});
    b = Tensor(ElemKind::Float32, {c.M});
    r = Tensor(ElemKind::Float32, {c.N, c.M, OH, OW});
    x.randomize(-2.f, 2.f, gen);
    w.randomize(-1.f, 1.f, gen);
    b.randomize(-1.f, 1.f, gen);
    r.randomize(-1.f, 1.f, gen);
  }
};

Tensor runCase(const BF16ConvCase &c, llvm::StringRef backend) {
  Module M;
  Function *F = M.createFunction("conv");
  Operands o(c);
  std::vector<Tensor> inputs;
  auto *x = M.createPlaceholder("x", o.x.getType(), false);
  inputs.push_back(o.x.clone());
  llvm::SmallVector<NodeValue, 1> res;
  if (c.residual) {
    // A Relu of a placeholder: an activation the conv may write over.
    res.push_back(F->createRelu(
        "r.relu", M.createPlaceholder("r", o.r.getType(), false)));
    inputs.push_back(o.r.clone());
  }
  NodeValue y =
      F->createConv("conv", x, M.createConstant("w", o.w.clone()),
                    M.createConstant("b", o.b.clone()), res, {c.sh, c.sw},
                    {c.pt, c.pl, c.pb, c.pr}, {c.dh, c.dw}, c.group,
                    int64_t(c.act), c.alpha, c.beta);
  if (c.residual)
    y = F->createNeg("neg", y);
  auto *out = M.createPlaceholder("y", *y.getType(), true);
  F->createSave("save", y, out);
  auto outs =
      compileAndRun(M, *F, backend, std::move(inputs), bf16PathOptions());
  return outs.empty() ? Tensor() : std::move(outs[0]);
}

/// \p x rounded to BFloat16 (nearest even).
double roundBF16(double v) {
  float x = float(v);
  uint32_t bits;
  std::memcpy(&bits, &x, 4);
  bits = (bits + 0x7fff + ((bits >> 16) & 1)) & 0xffff0000u;
  float r;
  std::memcpy(&r, &bits, 4);
  return r;
}

double activate(const BF16ConvCase &c, double v) {
  switch (c.act) {
  case FusedActivation::Relu:
    return std::max(v, 0.0);
  case FusedActivation::Clip:
    return std::min(std::max(v, double(c.alpha)), double(c.beta));
  case FusedActivation::LeakyRelu:
    return v >= 0 ? v : c.alpha * v;
  default:
    return v;
  }
}

/// The exact result (residual cases negated, as the graph) and T per
/// element, in the output's order.
void exactConv(const BF16ConvCase &c, std::vector<double> &y,
               std::vector<double> &t) {
  Operands o(c);
  dim_t OH = outDim(c.H, c.KH, c.sh, c.pt, c.pb, c.dh);
  dim_t OW = outDim(c.W, c.KW, c.sw, c.pl, c.pr, c.dw);
  dim_t cPerG = c.C / c.group, mPerG = c.M / c.group;
  for (dim_t n = 0; n < c.N; ++n)
    for (dim_t m = 0; m < c.M; ++m)
      for (dim_t oh = 0; oh < OH; ++oh)
        for (dim_t ow = 0; ow < OW; ++ow) {
          double bias = o.b.elementAsDouble(m), acc = bias,
                 abs = std::fabs(bias);
          for (dim_t ci = 0; ci < cPerG; ++ci)
            for (dim_t kh = 0; kh < c.KH; ++kh)
              for (dim_t kw = 0; kw < c.KW; ++kw) {
                int64_t ih = oh * c.sh - c.pt + kh * c.dh;
                int64_t iw = ow * c.sw - c.pl + kw * c.dw;
                if (ih < 0 || ih >= int64_t(c.H) || iw < 0 ||
                    iw >= int64_t(c.W))
                  continue;
                dim_t cin = m / mPerG * cPerG + ci;
                double xv = roundBF16(o.x.elementAsDouble(
                    ((n * c.C + cin) * c.H + ih) * c.W + iw));
                double wv = roundBF16(o.w.elementAsDouble(
                    ((m * cPerG + ci) * c.KH + kh) * c.KW + kw));
                acc += xv * wv;
                abs += std::fabs(xv * wv);
              }
          if (c.residual) {
            double r = std::max(
                o.r.elementAsDouble(((n * c.M + m) * OH + oh) * OW + ow), 0.0);
            acc += r;
            abs += r;
          }
          double v = activate(c, acc);
          y.push_back(c.residual ? -v : v);
          t.push_back(abs);
        }
}

class ConvBF16PathTest : public ::testing::TestWithParam<BF16ConvCase> {};
} // namespace

TEST_P(ConvBF16PathTest, CPUMatchesInterpreter) {
  const BF16ConvCase &c = GetParam();
  Tensor ref = runCase(c, "Interpreter");
  Tensor got = runCase(c, "CPU");
  ASSERT_EQ(got.getType(), ref.getType());
  std::vector<double> exact, t;
  exactConv(c, exact, t);
  ASSERT_EQ(size_t(ref.size()), exact.size());
  double g = gamma(c.C / c.group * c.KH * c.KW + 2);
  for (size_t i = 0; i < exact.size(); ++i) {
    double r = ref.elementAsDouble(i), v = got.elementAsDouble(i);
    ASSERT_LE(std::fabs(r - exact[i]), g * t[i])
        << "Interpreter, element " << i;
    ASSERT_LE(std::fabs(v - r), 2 * g * t[i])
        << "CPU, element " << i << ": " << v << " vs " << r;
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, ConvBF16PathTest, ::testing::ValuesIn(kCases),
                         [](const auto &info) {
                           return std::string(info.param.name);
                         });

namespace {
/// A filter-heavy convolution (ResNet-50's 7x7 3x3: 49 pixels, K = 4608)
/// and a pixel-heavy one (56x56 3x3, 64 channels), with BFloat16 filters.
constexpr const char *kPlanIR = R"(function plans
declare {
  %x = weight float<1 x 512 x 7 x 7> mutable input
  %x2 = weight float<1 x 64 x 56 x 56> mutable input
  %y = weight float<1 x 512 x 7 x 7> mutable output
  %y2 = weight float<1 x 64 x 56 x 56> mutable output
  %w = weight bfloat16<512 x 512 x 3 x 3> const
  %w2 = weight bfloat16<64 x 64 x 3 x 3> const
  %b = weight float<512> const
  %b2 = weight float<64> const
}
code {
  %heavy = conv @out %y, @in %x, @in %w, @in %b {Strides=[1, 1], Pads=[1, 1, 1, 1], Dilations=[1, 1], Group=1, FusedActivation=0, FusedAlpha=0, FusedBeta=0}
  %wide = conv @out %y2, @in %x2, @in %w2, @in %b2 {Strides=[1, 1], Pads=[1, 1, 1, 1], Dilations=[1, 1], Group=1, FusedActivation=0, FusedAlpha=0, FusedBeta=0}
}
)";

/// The convolutions of a parsed function, in order.
std::vector<const ConvInst *> convsOf(const ParsedIR &parsed) {
  std::vector<const ConvInst *> convs;
  for (auto &I : parsed.function->getInstrs())
    if (auto *c = llvm::dyn_cast<ConvInst>(I.get()))
      convs.push_back(c);
  return convs;
}

/// An AVX-512 target (32 registers) with these caches and extensions.
TargetDesc avx512Target(uint64_t l1dBytes, uint64_t l2Bytes,
                        std::initializer_list<ISAExt> exts) {
  TargetDesc T;
  T.vectorBits = 512;
  T.vectorRegisters = 32;
  T.l1dBytes = l1dBytes;
  T.l2Bytes = l2Bytes;
  for (ISAExt e : exts)
    T.extensions |= 1u << unsigned(e);
  return T;
}
} // namespace

// The tiling rule on an AVX-512 target with 2 MiB of L2: AMX with AMX-BF16
// (panels of 16 columns, pairs padded to whole tiles), vdpbf16ps without
// (64 columns, the MatMul K block), the widening kernel on 8 lanes; the
// filter-heavy conv shares its panels and splits rows, the pixel-heavy one
// splits pixels into chunks of at most half of L2.
TEST(ConvBF16Plan, TilingFollowsTheTargetAndTheShape) {
  auto parsed = parseIR(kPlanIR, "plans.ir");
  ASSERT_TRUE(bool(parsed)) << llvm::toString(parsed.takeError());
  std::vector<const ConvInst *> convs = convsOf(*parsed);
  ASSERT_EQ(convs.size(), 2u);
  TargetDesc T =
      avx512Target(48 << 10, 2 << 20,
                   {ISAExt::AVX512BF16, ISAExt::AMXTile, ISAExt::AMXBF16});
  cpu::ConvBF16Tiling heavy = cpu::chooseConvBF16(*convs[0], T);
  EXPECT_STREQ(heavy.entry().name, "ember_conv_bf16_amx");
  EXPECT_EQ(heavy.nr, 16);
  EXPECT_EQ(heavy.kp, 2304);
  EXPECT_EQ(heavy.lda, 4608);
  EXPECT_EQ(heavy.panels, 4);
  EXPECT_TRUE(heavy.shared);
  EXPECT_EQ(heavy.rowTasks, 8);
  EXPECT_EQ(heavy.rowsPerTask, 64);
  cpu::ConvBF16Tiling wide = cpu::chooseConvBF16(*convs[1], T);
  EXPECT_FALSE(wide.shared);
  EXPECT_EQ(wide.kp, 288);
  EXPECT_EQ(wide.panels, 196);
  EXPECT_EQ(wide.panelsPerTask, 26); // 8 tasks of whole panel pairs
  EXPECT_EQ(wide.chunks, 8);
  EXPECT_EQ(wide.rowTasks, 1);
  EXPECT_LE(wide.slotBytes(), int64_t(T.l2Bytes / 2));
  cpu::ConvPlan p = cpu::planConv(*convs[1], T, CPUCodegenOptions());
  EXPECT_EQ(p.path, cpu::ConvPathKind::BF16Gemm);
  // (The direct kernel takes this one; chooseConvBF16's tiling is what
  // a 3x3 stride-1 convolution has where the direct one does not apply.)
  EXPECT_NE(cpu::describeConvPlan(p).find("ember_conv_bf16_direct"),
            std::string::npos);
  T.extensions &= ~(1u << unsigned(ISAExt::AMXBF16));
  wide = cpu::chooseConvBF16(*convs[1], T);
  EXPECT_STREQ(wide.entry().name, "ember_conv_bf16_dp");
  EXPECT_EQ(wide.nr, 64);
  EXPECT_EQ(wide.lda, 576);
  EXPECT_EQ(wide.kc, 144); // pair rows of 64 words in 3/4 of 48 KiB
  T.vectorBits = 256;
  T.vectorRegisters = 16;
  wide = cpu::chooseConvBF16(*convs[1], T);
  EXPECT_STREQ(wide.entry().name, "ember_conv_bf16_widen");
  EXPECT_EQ(wide.nr, 16);
}

// ResNet-50's 56x56 pointwise layers on a vdpbf16ps target (Zen 4's
// caches): 49 panels in 9 chunks of at most 6, so that the row tasks do
// not split and pack the panels twice (7 chunks of 7, 2 row tasks each,
// before).
TEST(ConvBF16Plan, PixelChunksRoundDownBeforeRowsSplit) {
  auto parsed = parseIR(R"(function chunks
declare {
  %x = weight float<1 x 256 x 56 x 56> mutable input
  %y = weight float<1 x 64 x 56 x 56> mutable output
  %w = weight bfloat16<64 x 256 x 1 x 1> const
  %b = weight float<64> const
}
code {
  %c = conv @out %y, @in %x, @in %w, @in %b {Strides=[1, 1], Pads=[0, 0, 0, 0], Dilations=[1, 1], Group=1, FusedActivation=0, FusedAlpha=0, FusedBeta=0}
}
)",
                        "chunks.ir");
  ASSERT_TRUE(bool(parsed)) << llvm::toString(parsed.takeError());
  std::vector<const ConvInst *> convs = convsOf(*parsed);
  ASSERT_EQ(convs.size(), 1u);
  const ConvInst *conv = convs[0];
  TargetDesc T = avx512Target(32 << 10, 1 << 20, {ISAExt::AVX512BF16});
  cpu::ConvBF16Tiling t = cpu::chooseConvBF16(*conv, T);
  EXPECT_STREQ(t.entry().name, "ember_conv_bf16_dp");
  EXPECT_EQ(t.panels, 49);
  EXPECT_EQ(t.panelsPerTask, 6);
  EXPECT_EQ(t.chunks, 9);
  EXPECT_EQ(t.rowTasks, 1);
  EXPECT_FALSE(t.shared);
}

namespace {
/// Convolutions with BFloat16 filters for the direct rule: 3x3 stride 1
/// on 56x56 x 64 (pixel-heavy) and on 7x7 x 512 (filter-heavy), then five
/// AMX refuses: stride 2, 13 channels (19 of 32 padding), 1x1, a 7x7
/// stride-2 stem of 3 channels to 64 and a 3x3 one to 32 (vdpbf16ps takes
/// the first two and the 7x7 stem).
constexpr const char *kDirectIR = R"(function direct
declare {
  %x = weight float<1 x 64 x 56 x 56> mutable input
  %x2 = weight float<1 x 512 x 7 x 7> mutable input
  %x3 = weight float<1 x 13 x 20 x 20> mutable input
  %y = weight float<1 x 64 x 56 x 56> mutable output
  %y2 = weight float<1 x 512 x 7 x 7> mutable output
  %y3 = weight float<1 x 64 x 28 x 28> mutable output
  %y4 = weight float<1 x 32 x 20 x 20> mutable output
  %y5 = weight float<1 x 32 x 56 x 56> mutable output
  %w = weight bfloat16<64 x 64 x 3 x 3> const
  %w2 = weight bfloat16<512 x 512 x 3 x 3> const
  %w4 = weight bfloat16<32 x 13 x 3 x 3> const
  %w5 = weight bfloat16<32 x 64 x 1 x 1> const
  %x6 = weight float<1 x 3 x 224 x 224> mutable input
  %y6 = weight float<1 x 64 x 112 x 112> mutable output
  %w6 = weight bfloat16<64 x 3 x 7 x 7> const
  %y7 = weight float<1 x 32 x 112 x 112> mutable output
  %w7 = weight bfloat16<32 x 3 x 3 x 3> const
  %b = weight float<64> const
  %b2 = weight float<512> const
  %b4 = weight float<32> const
}
code {
  %wide = conv @out %y, @in %x, @in %w, @in %b {Strides=[1, 1], Pads=[1, 1, 1, 1], Dilations=[1, 1], Group=1, FusedActivation=0, FusedAlpha=0, FusedBeta=0}
  %heavy = conv @out %y2, @in %x2, @in %w2, @in %b2 {Strides=[1, 1], Pads=[1, 1, 1, 1], Dilations=[1, 1], Group=1, FusedActivation=0, FusedAlpha=0, FusedBeta=0}
  %s2 = conv @out %y3, @in %x, @in %w, @in %b {Strides=[2, 2], Pads=[1, 1, 1, 1], Dilations=[1, 1], Group=1, FusedActivation=0, FusedAlpha=0, FusedBeta=0}
  %few = conv @out %y4, @in %x3, @in %w4, @in %b4 {Strides=[1, 1], Pads=[1, 1, 1, 1], Dilations=[1, 1], Group=1, FusedActivation=0, FusedAlpha=0, FusedBeta=0}
  %pw = conv @out %y5, @in %x, @in %w5, @in %b4 {Strides=[1, 1], Pads=[0, 0, 0, 0], Dilations=[1, 1], Group=1, FusedActivation=0, FusedAlpha=0, FusedBeta=0}
  %stem = conv @out %y6, @in %x6, @in %w6, @in %b {Strides=[2, 2], Pads=[3, 3, 3, 3], Dilations=[1, 1], Group=1, FusedActivation=0, FusedAlpha=0, FusedBeta=0}
  %stem32 = conv @out %y7, @in %x6, @in %w7, @in %b4 {Strides=[2, 2], Pads=[1, 1, 1, 1], Dilations=[1, 1], Group=1, FusedActivation=0, FusedAlpha=0, FusedBeta=0}
}
)";
} // namespace

/// The vdpbf16ps direct layouts of kDirectIR's convolutions on \p T
/// (AVX512-BF16, no AMX-BF16, 48 KiB L1, 2 MiB L2).
static void expectDotDirect(const std::vector<const ConvInst *> &convs,
                            const TargetDesc &T) {
  // 64 output channels fill a 64-lane panel; 56 x 56 pixels fill 3136 of
  // the 3264 virtual ones: channels in the lanes.
  auto wide = cpu::chooseConvBF16Direct(*convs[0], T);
  ASSERT_TRUE(wide.has_value());
  EXPECT_EQ(wide->kernel, cpu::BF16MatMulKernel::DotProduct);
  EXPECT_TRUE(wide->channelVector);
  EXPECT_EQ(wide->Cp, 64);
  EXPECT_EQ(wide->pixelBlock, 48);
  EXPECT_EQ(wide->rowUnit, 64);
  EXPECT_EQ(wide->Mp, 64);
  EXPECT_EQ(wide->lda, 32 * 9 * 64 * 2); // one panel
  EXPECT_EQ(wide->virtualPixels, 3136);  // the real ones
  EXPECT_GE(wide->S, 58 * 58 + 2);
  // A 9-tap slice of a panel is 2304 bytes: 10 pairs in half of 48 KiB.
  EXPECT_EQ(wide->kc, 10);
  EXPECT_EQ(wide->pixelsPerTask, 432); // 66 blocks of 48 in 8 tasks
  EXPECT_EQ(wide->pixelTasks, 8);
  EXPECT_EQ(wide->rowTasks, 1);
  cpu::ConvPlan p = cpu::planConv(*convs[0], T, CPUCodegenOptions());
  EXPECT_NE(cpu::describeConvPlan(p).find("ember_conv_bf16_direct_cv"),
            std::string::npos);
  // Filter-heavy: 8 panels, one per task.
  auto heavy = cpu::chooseConvBF16Direct(*convs[1], T);
  ASSERT_TRUE(heavy.has_value());
  EXPECT_TRUE(heavy->channelVector);
  EXPECT_EQ(heavy->pixelTasks, 1);
  EXPECT_EQ(heavy->rowTasks, 8);
  EXPECT_EQ(heavy->rowsPerTask, 64);
  // Stride 2: four phases of 29 x 29 words (the 58 x 58 padded plane),
  // 28 rows of 28 real pixels.
  auto s2 = cpu::chooseConvBF16Direct(*convs[2], T);
  ASSERT_TRUE(s2.has_value());
  EXPECT_EQ(s2->s, 2);
  EXPECT_EQ(s2->Ws, 29);
  EXPECT_EQ(s2->virtualPixels, 784);
  EXPECT_GE(s2->S, 4 * 29 * 29 + 1);
  // 13 channels are 7 pairs (one padded channel of 14); 32 output
  // channels fill half a panel, 400 pixels 400 of 448 virtual ones: pixels
  // in the lanes (6-row tiles of filter rows, 64-pixel blocks).
  auto few = cpu::chooseConvBF16Direct(*convs[3], T);
  ASSERT_TRUE(few.has_value());
  EXPECT_FALSE(few->channelVector);
  EXPECT_EQ(few->Cp, 14);
  EXPECT_EQ(few->pixelBlock, 64);
  EXPECT_EQ(few->rowUnit, 6);
  EXPECT_EQ(few->virtualPixels, 448); // 20 x 22 rounded up to 64
  // 20 x 22 + 2 + 64 words: a block's taps read past the plane.
  EXPECT_GE(few->S, 20 * 22 + 2 + 64);
  // 7 pairs reach 64 + 2 x 22 + 2 words each, within half of L1.
  EXPECT_EQ(few->kc, 7);
  p = cpu::planConv(*convs[3], T, CPUCodegenOptions());
  EXPECT_NE(cpu::describeConvPlan(p).find("ember_conv_bf16_direct_dp"),
            std::string::npos);
  EXPECT_FALSE(cpu::chooseConvBF16Direct(*convs[4], T).has_value()); // 1x1
  // A 3-channel stem to 64 channels: its output channels fill a panel,
  // and the channel lanes take one padded channel of 4.
  auto stem = cpu::chooseConvBF16Direct(*convs[5], T);
  ASSERT_TRUE(stem.has_value());
  EXPECT_TRUE(stem->channelVector);
  EXPECT_EQ(stem->Cp, 4);
  EXPECT_EQ(stem->virtualPixels, 112 * 112);
  // To 32 channels the pixels are in the lanes, where one padded channel
  // of 4 is more than an eighth: the patch GEMM.
  auto stem32 = cpu::chooseConvBF16Direct(*convs[6], T);
  EXPECT_FALSE(stem32.has_value());
}

// The direct rule: the AMX or vdpbf16ps MatMul kernel (AVX512-BF16 with
// the 16-lane kernels; AMX with AMX-BF16 too), group 1, 3x3, stride and
// dilation 1, at most a quarter of padding; tasks split pixels where the
// copy is larger (each task's share within half of L2), output channels
// where the filter is; vdpbf16ps's K blocks reach at most half of L1.
TEST(ConvBF16Plan, DirectFollowsTheTargetAndTheShape) {
  auto parsed = parseIR(kDirectIR, "direct.ir");
  ASSERT_TRUE(bool(parsed)) << llvm::toString(parsed.takeError());
  std::vector<const ConvInst *> convs = convsOf(*parsed);
  ASSERT_EQ(convs.size(), 7u);
  TargetDesc T =
      avx512Target(48 << 10, 2 << 20, {ISAExt::AVX512BF16, ISAExt::AMXTile});
  expectDotDirect(convs, T); // no AMX-BF16
  T.extensions |= 1u << unsigned(ISAExt::AMXBF16);
  auto wide = cpu::chooseConvBF16Direct(*convs[0], T);
  ASSERT_TRUE(wide.has_value());
  EXPECT_EQ(wide->Cp, 64);
  EXPECT_EQ(wide->Wp, 58);
  EXPECT_EQ(wide->lda, 576);
  EXPECT_EQ(wide->virtualPixels, 3264); // 56 x 58 rounded up to 32
  EXPECT_GE(wide->S, 58 * 58 + 2 + 32);
  EXPECT_EQ(wide->pixelTasks, 8);
  EXPECT_EQ(wide->pixelsPerTask, 416);
  EXPECT_EQ(wide->rowTasks, 1);
  cpu::ConvPlan p = cpu::planConv(*convs[0], T, CPUCodegenOptions());
  EXPECT_NE(cpu::describeConvPlan(p).find("ember_conv_bf16_direct"),
            std::string::npos);
  auto heavy = cpu::chooseConvBF16Direct(*convs[1], T);
  ASSERT_TRUE(heavy.has_value());
  EXPECT_EQ(heavy->pixelTasks, 1);
  EXPECT_EQ(heavy->rowTasks, 8);
  EXPECT_EQ(heavy->rowsPerTask, 64);
  EXPECT_FALSE(cpu::chooseConvBF16Direct(*convs[2], T).has_value()); // stride 2
  EXPECT_FALSE(
      cpu::chooseConvBF16Direct(*convs[3], T).has_value()); // 13 channels
  EXPECT_FALSE(cpu::chooseConvBF16Direct(*convs[4], T).has_value()); // 1x1
  // A small L2: more pixel tasks, each share of the copy within half.
  T.l2Bytes = 64 << 10;
  wide = cpu::chooseConvBF16Direct(*convs[0], T);
  ASSERT_TRUE(wide.has_value());
  EXPECT_EQ(wide->pixelsPerTask, 128);
  EXPECT_EQ(wide->pixelTasks, 26);
  EXPECT_LE((wide->pixelsPerTask + 2 * wide->Wp + 3) * wide->Cp / 2 * 4,
            int64_t(T.l2Bytes / 2));
  // 8 lanes: the widening kernel, so no direct one.
  T.vectorBits = 256;
  T.vectorRegisters = 16;
  EXPECT_FALSE(cpu::chooseConvBF16Direct(*convs[0], T).has_value());
}

namespace {
/// Convolutions with BFloat16 filters for the channel-vector rule:
/// ResNet-50's 1x1 1024 -> 256 on 14x14 and 512 -> 2048 on 7x7, a 1x1 on
/// 56x56 (whole 64-pixel panels), a stride-2 1x1 whose 60 channels fill
/// their panel better than 100 pixels fill two, and a 3x3 the direct
/// kernel takes.
constexpr const char *kCVIR = R"(function cv
declare {
  %x = weight float<1 x 1024 x 14 x 14> mutable input
  %y = weight float<1 x 256 x 14 x 14> mutable output
  %w = weight bfloat16<256 x 1024 x 1 x 1> const
  %x2 = weight float<1 x 512 x 7 x 7> mutable input
  %y2 = weight float<1 x 2048 x 7 x 7> mutable output
  %w2 = weight bfloat16<2048 x 512 x 1 x 1> const
  %x3 = weight float<1 x 64 x 56 x 56> mutable input
  %y3 = weight float<1 x 256 x 56 x 56> mutable output
  %w3 = weight bfloat16<256 x 64 x 1 x 1> const
  %x4 = weight float<1 x 50 x 9 x 40> mutable input
  %y4 = weight float<1 x 60 x 5 x 20> mutable output
  %w4 = weight bfloat16<60 x 50 x 1 x 1> const
  %y5 = weight float<1 x 256 x 14 x 14> mutable output
  %w5 = weight bfloat16<256 x 1024 x 3 x 3> const
  %b = weight float<256> const
  %b2 = weight float<2048> const
  %b4 = weight float<60> const
  %y6 = weight float<1 x 96 x 14 x 14> mutable output
  %w6 = weight bfloat16<96 x 1024 x 1 x 1> const
  %b6 = weight float<96> const
}
code {
  %c14 = conv @out %y, @in %x, @in %w, @in %b {Strides=[1, 1], Pads=[0, 0, 0, 0], Dilations=[1, 1], Group=1, FusedActivation=0, FusedAlpha=0, FusedBeta=0}
  %c7 = conv @out %y2, @in %x2, @in %w2, @in %b2 {Strides=[1, 1], Pads=[0, 0, 0, 0], Dilations=[1, 1], Group=1, FusedActivation=0, FusedAlpha=0, FusedBeta=0}
  %c56 = conv @out %y3, @in %x3, @in %w3, @in %b {Strides=[1, 1], Pads=[0, 0, 0, 0], Dilations=[1, 1], Group=1, FusedActivation=0, FusedAlpha=0, FusedBeta=0}
  %s2 = conv @out %y4, @in %x4, @in %w4, @in %b4 {Strides=[2, 2], Pads=[0, 0, 0, 0], Dilations=[1, 1], Group=1, FusedActivation=0, FusedAlpha=0, FusedBeta=0}
  %d = conv @out %y5, @in %x, @in %w5, @in %b {Strides=[1, 1], Pads=[1, 1, 1, 1], Dilations=[1, 1], Group=1, FusedActivation=0, FusedAlpha=0, FusedBeta=0}
  %n = conv @out %y6, @in %x, @in %w6, @in %b6 {Strides=[1, 1], Pads=[0, 0, 0, 0], Dilations=[1, 1], Group=1, FusedActivation=0, FusedAlpha=0, FusedBeta=0}
}
)";

/// Whether planConv names the channel-vector kernel for \p I on \p T.
bool plansCV(const ConvInst &I, const TargetDesc &T) {
  cpu::ConvPlan p = cpu::planConv(I, T, CPUCodegenOptions());
  return cpu::describeConvPlan(p).find("ember_conv_bf16_cv_dp") !=
         std::string::npos;
}
} // namespace

// The channel-vector rule: vdpbf16ps only (not AMX, not the widening
// kernel), where output channels fill 64-lane panels (or 48-lane ones,
// where those fill more) better than pixels fill 64-pixel panels, and not
// where the direct kernel applies; channel panels split first, then
// pixels (a task's rows within half of L2).
TEST(ConvBF16Plan, ChannelVectorFollowsTheTargetAndTheShape) {
  auto parsed = parseIR(kCVIR, "cv.ir");
  ASSERT_TRUE(bool(parsed)) << llvm::toString(parsed.takeError());
  std::vector<const ConvInst *> convs = convsOf(*parsed);
  ASSERT_EQ(convs.size(), 6u);
  TargetDesc T = avx512Target(32 << 10, 1 << 20, {ISAExt::AVX512BF16});
  auto c14 = cpu::chooseConvBF16CV(*convs[0], T, 196.0 / 256);
  ASSERT_TRUE(c14.has_value());
  EXPECT_EQ(c14->nr, 64);
  EXPECT_EQ(c14->panels, 4);
  EXPECT_EQ(c14->kp, 512);
  EXPECT_EQ(c14->panelTasks, 4);
  EXPECT_EQ(c14->pixelTasks, 2); // 8 tasks: 13 groups of 16 in two
  EXPECT_EQ(c14->pixelsPerTask, 112);
  EXPECT_EQ(c14->copyBytes(), 208u * 512 * 4);
  EXPECT_LE(c14->pixelsPerTask * c14->kp * 4, int64_t(T.l2Bytes / 2));
  EXPECT_TRUE(plansCV(*convs[0], T));
  auto c7 = cpu::chooseConvBF16CV(*convs[1], T, 49.0 / 64);
  ASSERT_TRUE(c7.has_value());
  EXPECT_EQ(c7->panels, 32);
  EXPECT_EQ(c7->panelsPerTask, 4);
  EXPECT_EQ(c7->pixelTasks, 1);
  EXPECT_TRUE(plansCV(*convs[1], T));
  EXPECT_FALSE(plansCV(*convs[2], T)); // 3136 pixels: whole panels
  EXPECT_TRUE(plansCV(*convs[3], T));  // 60 of 64 lanes against 100 of 128
  EXPECT_FALSE(plansCV(*convs[4], T)); // the direct kernel's
  // 96 channels: two 48-channel panels (all lanes) rather than two of 64
  // (75 %, less than the pixels' 196 of 256).
  auto c96 = cpu::chooseConvBF16CV(*convs[5], T, 196.0 / 256);
  ASSERT_TRUE(c96.has_value());
  EXPECT_EQ(c96->nr, 48);
  EXPECT_EQ(c96->panels, 2);
  EXPECT_TRUE(plansCV(*convs[5], T));
  // A small L2: more pixel tasks, each one's rows within half of it.
  T.l2Bytes = 128 << 10;
  c14 = cpu::chooseConvBF16CV(*convs[0], T, 196.0 / 256);
  ASSERT_TRUE(c14.has_value());
  EXPECT_EQ(c14->pixelsPerTask, 32); // 2 x 16 rows of 2 KiB: 64 KiB
  EXPECT_EQ(c14->pixelTasks, 7);
  EXPECT_LE(c14->pixelsPerTask * c14->kp * 4, int64_t(T.l2Bytes / 2));
  // AMX: its own kernels; 8 lanes: the widening kernel.
  T.extensions |= 1u << unsigned(ISAExt::AMXTile);
  T.extensions |= 1u << unsigned(ISAExt::AMXBF16);
  EXPECT_FALSE(plansCV(*convs[0], T));
  T.extensions &= ~(1u << unsigned(ISAExt::AMXBF16));
  T.vectorBits = 256;
  T.vectorRegisters = 16;
  EXPECT_FALSE(plansCV(*convs[0], T));
}
