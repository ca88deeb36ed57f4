//===- BF16StoragePaths.cpp - bf16 activations between bf16 convolutions --===//
//
// Under -precision=bf16 a convolution whose output only BFloat16
// convolutions read, through a kernel that takes BFloat16 input (the
// direct kernels' padded copy), stores that output in BFloat16, rounded to
// nearest even in its epilogue (backends/CPU/BF16Storage.h). The readers
// would round it so themselves, and rounding is idempotent, so:
//  - exact: the CPU's result of a chain x -> conv A -> conv B equals, bit
//    for bit, its result for the same chain with A's output also saved as
//    a network output (a Float32 reader, so A stores Float32 there);
//  - against the Interpreter (A's output Float32, rounded by B): per
//    element of B, within 2 gamma(KB + 2) TB + sum_k |wB_k| d_k, where TB
//    is B's sum of magnitudes over its rounded operands (as in
//    ConvBF16Paths.cpp) and d_k bounds the difference of B's k-th rounded
//    input on the two backends: A's two results differ by at most 2
//    gamma(KA + 2) TA (TA <= |b| + KA max|x| max|w| = 1 + 2 KA, the
//    operands drawn from [-1, 1] and [-2, 2], 1-Lipschitz activations),
//    and rounding two values that close to BFloat16 moves them apart by at
//    most one BFloat16 spacing of the larger, 2^-7 |a| (8 significant
//    bits); so d_k = 2 gamma(KA + 2) (1 + 2 KA) + 2^-7 (|a_k| + 1e-30).
// The rule itself is checked on parsed IR for a target without AMX.
//
//===----------------------------------------------------------------------===//
#include "../../backends/CPU/BF16Storage.h"
#include "../unit/TestUtils.h"
#include "BF16PathBounds.h"

#include "ember/IR/IRParser.h"

#include <cmath>
#include <cstring>
#include <random>

using namespace ember;
using namespace ember::test;

namespace {
/// x [N][C][H][W] -> conv A (KA x KA, stride 1, "same" pads, act) [N][M]
/// -> conv B (KB x KB, stride sB, pads KB / 2) [N][MB]; \p twoReaders adds
/// a 3x3 stride-1 conv on A's output, a second network output.
struct StorageCase {
  const char *name;
  dim_t N, C, H, W, M, KA, MB, KB;
  int64_t sB;
  FusedActivation actA;
  bool twoReaders;
};

// clang-format off
const StorageCase kCases[] = {
    // ResNet-50's pattern: 1x1 with Relu, then 3x3 stride 1; odd plane
    // (row tails of the bf16 copy), 24 channels of A's output.
    {"pointwise_relu_then_3x3", 1, 20, 13, 19, 24, 1, 32, 3, 1,
     FusedActivation::Relu, false},
    // Stride 2 after the stored value (the phase-split copy), two images,
    // odd channels (a half pair), rows of 40 (whole 32-value runs).
    {"pointwise_then_3x3_s2_batch2", 2, 16, 10, 40, 27, 1, 40, 3, 2,
     FusedActivation::Clip, false},
    // A 3x3 producer (the direct kernel's epilogue) read by two 3x3
    // convolutions, no activation (negative values).
    {"3x3_two_readers", 1, 18, 16, 17, 32, 3, 20, 3, 1,
     FusedActivation::None, true},
    // ResNet-50's 3x3 -> 1x1 on 7x7: the 1x1 has output channels in the
    // lanes (ember_conv_bf16_cv_pack reads the stored value), 49 pixels
    // (a lone one in the last group of 16), 37 channels (a half pair).
    {"3x3_then_pointwise_cv", 1, 30, 7, 7, 37, 3, 200, 1, 1,
     FusedActivation::Relu, false},
    // The same with stride 2 (pixels read lane by lane), two images.
    {"3x3_then_pointwise_cv_s2", 2, 24, 14, 14, 64, 3, 128, 1, 2,
     FusedActivation::None, false},
};
// clang-format on

void PrintTo(const StorageCase &c, std::ostream *os) { *os << c.name; }

/// The case's constants and input, seeded.
struct Operands {
  Tensor x, wa, ba, wb, bb, wc, bc;
  explicit Operands(const StorageCase &c) {
    std::mt19937 gen(7);
    x = Tensor(ElemKind::Float32, {c.N, c.C, c.H, c.W});
    wa = Tensor(ElemKind::Float32, {c.M, c.C, c.KA, c.KA});
    ba = Tensor(ElemKind::Float32, {c.M});
    wb = Tensor(ElemKind::Float32, {c.MB, c.M, c.KB, c.KB});
    bb = Tensor(ElemKind::Float32, {c.MB});
    wc = Tensor(ElemKind::Float32, {c.MB, c.M, 3, 3});
    bc = Tensor(ElemKind::Float32, {c.MB});
    x.randomize(-2.f, 2.f, gen);
    for (Tensor *t : {&wa, &ba, &wb, &bb, &wc, &bc})
      t->randomize(-1.f, 1.f, gen);
  }
};

/// The outputs of the case's chain on \p backend: B (and the second B),
/// then, where \p observeA, A's output.
std::vector<Tensor> runChain(const StorageCase &c, llvm::StringRef backend,
                             bool observeA) {
  Module M;
  Function *F = M.createFunction("chain");
  Operands o(c);
  auto *x = M.createPlaceholder("x", o.x.getType(), false);
  int64_t pa = int64_t(c.KA / 2);
  NodeValue a =
      F->createConv("a", x, M.createConstant("wa", o.wa.clone()),
                    M.createConstant("ba", o.ba.clone()), {}, {1, 1},
                    {pa, pa, pa, pa}, {1, 1}, 1, int64_t(c.actA), 0.f, 6.f);
  auto save = [&](const char *name, NodeValue v) {
    F->createSave(name, v, M.createPlaceholder(name, *v.getType(), true));
  };
  int64_t pb = int64_t(c.KB / 2);
  save("yb",
       F->createConv("b", a, M.createConstant("wb", o.wb.clone()),
                     M.createConstant("bb", o.bb.clone()), {}, {c.sB, c.sB},
                     {pb, pb, pb, pb}, {1, 1}, 1, 0, 0.f, 0.f));
  if (c.twoReaders)
    save("yc", F->createConv("c", a, M.createConstant("wc", o.wc.clone()),
                             M.createConstant("bc", o.bc.clone()), {}, {1, 1},
                             {1, 1, 1, 1}, {1, 1}, 1, 0, 0.f, 0.f));
  if (observeA)
    save("ya", a);
  std::vector<Tensor> inputs;
  inputs.push_back(o.x.clone());
  return compileAndRun(M, *F, backend, std::move(inputs), bf16PathOptions());
}

/// \p v rounded to BFloat16 (nearest even).
double roundBF16(double v) {
  float x = float(v);
  uint32_t bits;
  std::memcpy(&bits, &x, 4);
  bits = (bits + 0x7fff + ((bits >> 16) & 1)) & 0xffff0000u;
  float r;
  std::memcpy(&r, &bits, 4);
  return r;
}

/// Per element of a reader of A's output \p a (weights \p w [MB][M][k][k],
/// stride s, pads k / 2): the bound of the file comment.
std::vector<double> chainBound(const StorageCase &c, const Tensor &a,
                               const Tensor &w, const Tensor &bias, int64_t k,
                               int64_t s) {
  dim_t H = c.H, W = c.W, OH = (H - 1) / s + 1, OW = (W - 1) / s + 1;
  double gB = gamma(c.M * k * k + 2), gA = gamma(c.C * c.KA * c.KA + 2);
  double dA = 2 * gA * (1 + 2 * double(c.C * c.KA * c.KA));
  std::vector<double> bound;
  for (dim_t n = 0; n < c.N; ++n)
    for (dim_t m = 0; m < c.MB; ++m)
      for (dim_t oh = 0; oh < OH; ++oh)
        for (dim_t ow = 0; ow < OW; ++ow) {
          double t = std::fabs(bias.elementAsDouble(m)), shift = 0;
          for (dim_t ci = 0; ci < c.M; ++ci)
            for (int64_t kh = 0; kh < k; ++kh)
              for (int64_t kw = 0; kw < k; ++kw) {
                int64_t ih = int64_t(oh) * s - k / 2 + kh;
                int64_t iw = int64_t(ow) * s - k / 2 + kw;
                if (ih < 0 || ih >= int64_t(H) || iw < 0 || iw >= int64_t(W))
                  continue;
                double av = a.elementAsDouble(((n * c.M + ci) * H + ih) * W +
                                              dim_t(iw));
                double wv = roundBF16(
                    w.elementAsDouble(((m * c.M + ci) * k + kh) * k + kw));
                t += std::fabs(roundBF16(av) * wv);
                shift += std::fabs(wv) *
                         (dA + std::ldexp(std::fabs(av) + 1e-30, -7));
              }
          bound.push_back(2 * gB * t + shift);
        }
  return bound;
}

class BF16StoragePathTest : public ::testing::TestWithParam<StorageCase> {};
} // namespace

TEST_P(BF16StoragePathTest, CPUMatchesInterpreter) {
  const StorageCase &c = GetParam();
  std::vector<Tensor> stored = runChain(c, "CPU", false);
  std::vector<Tensor> observed = runChain(c, "CPU", true);
  std::vector<Tensor> ref = runChain(c, "Interpreter", true);
  size_t outs = c.twoReaders ? 2 : 1;
  ASSERT_EQ(stored.size(), outs);
  ASSERT_EQ(observed.size(), outs + 1);
  ASSERT_EQ(ref.size(), outs + 1);
  Operands o(c);
  const Tensor *ws[] = {&o.wb, &o.wc}, *bs[] = {&o.bb, &o.bc};
  for (size_t r = 0; r < outs; ++r) {
    ASSERT_EQ(stored[r].getType(), observed[r].getType());
    ASSERT_EQ(std::memcmp(stored[r].data(), observed[r].data(),
                          stored[r].sizeInBytes()),
              0)
        << "output " << r << ": BFloat16 storage changed the CPU's result";
    std::vector<double> bound = chainBound(c, ref[outs], *ws[r], *bs[r],
                                           r ? 3 : int64_t(c.KB), r ? 1 : c.sB);
    ASSERT_EQ(bound.size(), size_t(stored[r].size()));
    for (size_t i = 0; i < bound.size(); ++i) {
      double v = stored[r].elementAsDouble(i), e = ref[r].elementAsDouble(i);
      ASSERT_LE(std::fabs(v - e), bound[i])
          << "output " << r << ", element " << i << ": " << v << " vs " << e;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, BF16StoragePathTest,
                         ::testing::ValuesIn(kCases), [](const auto &info) {
                           return std::string(info.param.name);
                         });

namespace {
/// Convolutions with BFloat16 filters: %a (1x1) read by a 3x3 only; %b
/// read by a 3x3 and a Relu; %c read by a 1x1 on 56x56 (the pixel-panel
/// patch GEMM, whose pack reads Float32); %d has a residual; %e read by a
/// 1x1 on 7x7 to 256 channels (channel-vector GEMM).
constexpr const char *kRuleIR = R"(function rule
declare {
  %x = weight float<1 x 64 x 28 x 28> mutable input
  %x56 = weight float<1 x 64 x 56 x 56> mutable input
  %x7 = weight float<1 x 64 x 7 x 7> mutable input
  %w256 = weight bfloat16<256 x 64 x 1 x 1> const
  %b256 = weight float<256> const
  %y6 = weight float<1 x 256 x 7 x 7> mutable output
  %w1 = weight bfloat16<64 x 64 x 1 x 1> const
  %w3 = weight bfloat16<64 x 64 x 3 x 3> const
  %bias = weight float<64> const
  %y1 = weight float<1 x 64 x 28 x 28> mutable output
  %y2 = weight float<1 x 64 x 28 x 28> mutable output
  %y3 = weight float<1 x 64 x 28 x 28> mutable output
  %y4 = weight float<1 x 64 x 56 x 56> mutable output
  %y5 = weight float<1 x 64 x 28 x 28> mutable output
}
code {
  %a = allocactivation float<1 x 64 x 28 x 28>
  %a.conv = conv @out %a, @in %x, @in %w1, @in %bias {Strides=[1, 1], Pads=[0, 0, 0, 0], Dilations=[1, 1], Group=1, FusedActivation=1, FusedAlpha=0, FusedBeta=0}
  %a.read = conv @out %y1, @in %a, @in %w3, @in %bias {Strides=[1, 1], Pads=[1, 1, 1, 1], Dilations=[1, 1], Group=1, FusedActivation=0, FusedAlpha=0, FusedBeta=0}
  deallocactivation @out %a
  %b = allocactivation float<1 x 64 x 28 x 28>
  %b.conv = conv @out %b, @in %x, @in %w1, @in %bias {Strides=[1, 1], Pads=[0, 0, 0, 0], Dilations=[1, 1], Group=1, FusedActivation=0, FusedAlpha=0, FusedBeta=0}
  %b.read = conv @out %y2, @in %b, @in %w3, @in %bias {Strides=[1, 1], Pads=[1, 1, 1, 1], Dilations=[1, 1], Group=1, FusedActivation=0, FusedAlpha=0, FusedBeta=0}
  %b.relu = relu @out %y3, @in %b
  deallocactivation @out %b
  %c = allocactivation float<1 x 64 x 56 x 56>
  %c.conv = conv @out %c, @in %x56, @in %w1, @in %bias {Strides=[1, 1], Pads=[0, 0, 0, 0], Dilations=[1, 1], Group=1, FusedActivation=0, FusedAlpha=0, FusedBeta=0}
  %c.read = conv @out %y4, @in %c, @in %w1, @in %bias {Strides=[1, 1], Pads=[0, 0, 0, 0], Dilations=[1, 1], Group=1, FusedActivation=0, FusedAlpha=0, FusedBeta=0}
  deallocactivation @out %c
  %d = allocactivation float<1 x 64 x 28 x 28>
  %d.conv = conv @out %d, @in %x, @in %w1, @in %bias, @in %x {Strides=[1, 1], Pads=[0, 0, 0, 0], Dilations=[1, 1], Group=1, FusedActivation=0, FusedAlpha=0, FusedBeta=0}
  %d.read = conv @out %y5, @in %d, @in %w3, @in %bias {Strides=[1, 1], Pads=[1, 1, 1, 1], Dilations=[1, 1], Group=1, FusedActivation=0, FusedAlpha=0, FusedBeta=0}
  deallocactivation @out %d
  %e = allocactivation float<1 x 64 x 7 x 7>
  %e.conv = conv @out %e, @in %x7, @in %w1, @in %bias {Strides=[1, 1], Pads=[0, 0, 0, 0], Dilations=[1, 1], Group=1, FusedActivation=0, FusedAlpha=0, FusedBeta=0}
  %e.read = conv @out %y6, @in %e, @in %w256, @in %b256 {Strides=[1, 1], Pads=[0, 0, 0, 0], Dilations=[1, 1], Group=1, FusedActivation=0, FusedAlpha=0, FusedBeta=0}
  deallocactivation @out %e
}
)";

/// The value named \p name among \p F's instructions.
const Value *valueNamed(const IRFunction &F, llvm::StringRef name) {
  for (auto &I : F.getInstrs())
    if (I->getName() == name)
      return I.get();
  return nullptr;
}
} // namespace

// Stored in BFloat16: %a and %e. On a target without AVX512-BF16 (the
// widening kernel, no direct kernel to read BFloat16) nothing is.
TEST(BF16Storage, AsksEachReadersKernel) {
  auto parsed = parseIR(kRuleIR, "rule.ir");
  ASSERT_TRUE(bool(parsed)) << llvm::toString(parsed.takeError());
  const IRFunction &F = *parsed->function;
  TargetDesc T;
  T.vectorBits = 512;
  T.vectorRegisters = 32;
  T.l1dBytes = 32 << 10;
  T.l2Bytes = 1 << 20;
  T.extensions |= 1u << unsigned(ISAExt::AVX512BF16);
  cpu::BF16Storage s(F, T, CPUCodegenOptions());
  EXPECT_TRUE(s.stored(valueNamed(F, "a")));
  EXPECT_TRUE(s.stored(valueNamed(F, "e")));
  for (const char *v : {"b", "c", "d"})
    EXPECT_FALSE(s.stored(valueNamed(F, v))) << v;
  EXPECT_EQ(s.size(), 2u);
  T.extensions = 0;
  EXPECT_EQ(cpu::BF16Storage(F, T, CPUCodegenOptions()).size(), 0u);
}
