//===- MatMulBF16Paths.cpp - BFloat16 MatMul: CPU against the Interpreter -===//
//
// Under -precision=bf16 every Float32 MatMul reads BFloat16 operands
// (convert-precision) and accumulates in Float32. Each case compiles the
// same Float32 graph with -precision=bf16 for the Interpreter and the CPU
// and checks, per element, with S = sum_k |a_k b_k| over the BFloat16
// values and gamma(K) = K u / (1 - K u), u = 2^-24:
//  - the Interpreter against the exact sum (in double) of the products of
//    the BFloat16-rounded operands: within gamma(K) S (the products are
//    exact in Float32, the K - 1 sums each round once);
//  - the CPU against the Interpreter: within 2 gamma(K) S (two summation
//    orders, each within gamma(K) S of the exact sum).
// The CPU runs the AMX kernel where the host has AMX-BF16 (the default run
// there; ops.bf16-amx-paths requires it, ops.bf16-amx-refused runs it with
// the tile state refused, i.e. its vdpbf16ps fallback), the vdpbf16ps
// kernel where the host has AVX512-BF16 and the 16-lane kernels
// (ops.bf16-dot-paths requires it and turns AMX off), the widening kernel
// otherwise (ops.narrow-simd-paths runs it on any host). The shapes cover odd K
// (a half pair), partial panels, every remainder row count, several K blocks, B
// packed at compile time and at run time, batches, broadcast batch dims and the
// transformer forms: an N-D activation times a 2-D weight, batched products and
// TransB.
//
// MatMulBF16EpiloguePathTest: y = act(MatMul(a, b) + bias + res) as exporters
// write it (Adds and an activation node), which fuse-matmul-epilogue folds
// into the BFloat16 MatMul and the kernels apply in Float32 as they store the
// sums. With T = S + |bias| + |res| the pre-activation value is a sum of K + 2
// exact terms, so the bounds become gamma(K + 2) T and 2 gamma(K + 2) T; the
// activations have slopes below 1.13 (both GELU forms; Relu, Clip and Sigmoid
// at most 1), and their float evaluations (the Interpreter's libm calls, the
// kernels' polynomials) add at most 1e-6 (1 + |z|) each, z the pre-activation
// value (a few ulp of the result, and of z where GELU's 1 + erf cancels).
//
//===----------------------------------------------------------------------===//
#include "../../backends/CPU/MatMulBF16.h"
#include "BF16PathBounds.h"
#include "EpilogueCases.h"

#include <cmath>
#include <cstring>
#include <random>

using namespace ember;
using namespace ember::test;

namespace {
struct BF16Case {
  const char *name;
  std::vector<dim_t> aBatch, bBatch; ///< Same length; 1 broadcasts.
  dim_t m, k, n;
  bool constantRHS;
  bool transB = false;
};

const BF16Case kBF16Cases[] = {
    {"gemv_const", {}, {}, 1, 300, 130, true},
    {"odd_k_const", {}, {}, 3, 129, 65, true},
    {"odd_k_runtime", {}, {}, 3, 129, 65, false},
    {"k1", {}, {}, 5, 1, 17, true},
    {"partial_tiles", {}, {}, 29, 19, 47, true},
    {"rows7_blocks", {}, {}, 7, 600, 64, true},
    {"rows8_partial", {}, {}, 8, 97, 70, false},
    {"rows10_n1", {}, {}, 10, 33, 1, true},
    {"rows11_blocks_runtime", {}, {}, 11, 801, 130, false},
    {"batched_const", {3}, {3}, 10, 17, 40, true},
    {"batched_runtime", {4}, {4}, 6, 33, 20, false},
    {"bcast_lhs", {1}, {4}, 5, 17, 33, false},
    {"bcast_both", {3, 1}, {1, 2}, 4, 13, 29, false},
    // Transformer forms: activations [B, T, C] times weights [C, N] (one
    // flattened product), attention Q K^T (TransB, run time) and P V.
    {"rank3_x_2d_qkv", {2}, {1}, 20, 64, 192, true},
    {"rank3_x_2d_transb", {2}, {1}, 9, 48, 80, true, true},
    {"attention_qk", {2, 3}, {2, 3}, 10, 16, 10, false, true},
    {"attention_pv", {2, 3}, {2, 3}, 10, 10, 16, false},
    {"row_split", {}, {}, 700, 40, 24, true},
    // AMX blocks (2 x 2 tiles of 16 x 16, K in chunks of 32): whole
    // blocks, then one row past a block, an odd K past two chunks and a
    // lone third panel, then partial tiles everywhere with K < 32.
    {"amx_blocks", {}, {}, 64, 64, 64, true},
    {"amx_edges", {}, {}, 33, 65, 48, true},
    {"amx_partial_runtime", {}, {}, 47, 31, 31, false},
    {"amx_many_chunks", {2}, {1}, 50, 200, 100, true},
    // Long K (25 and 32 chunks) with partial row and column tiles, a lone
    // panel, and B packed at run time.
    {"amx_long_k", {}, {}, 70, 801, 40, true},
    {"amx_long_k_runtime", {2}, {2}, 33, 1000, 20, false, true},
};

void PrintTo(const BF16Case &c, std::ostream *os) { *os << c.name; }

std::vector<dim_t> withMatrix(std::vector<dim_t> batch, dim_t rows,
                              dim_t cols) {
  batch.push_back(rows);
  batch.push_back(cols);
  return batch;
}

/// A and B as stored (B [..., n, k] when transB), random in [-2, 2].
std::pair<Tensor, Tensor> makeOperands(const BF16Case &c) {
  std::mt19937 gen(5);
  Tensor a(ElemKind::Float32, withMatrix(c.aBatch, c.m, c.k));
  Tensor b(ElemKind::Float32, c.transB ? withMatrix(c.bBatch, c.n, c.k)
                                       : withMatrix(c.bBatch, c.k, c.n));
  a.randomize(-2.f, 2.f, gen);
  b.randomize(-2.f, 2.f, gen);
  return {std::move(a), std::move(b)};
}

/// \p x rounded to BFloat16 (nearest even), as a double.
double roundBF16(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, 4);
  bits = (bits + 0x7fff + ((bits >> 16) & 1)) & 0xffff0000u;
  float r;
  std::memcpy(&r, &bits, 4);
  return r;
}

/// The product of the rounded operands in double (each product exact, the
/// sum within K 2^-53 S: far inside the bounds checked), and S per element.
void exactProduct(const BF16Case &c, std::vector<double> &y,
                  std::vector<double> &s) {
  auto [a, b] = makeOperands(c);
  size_t rank = c.aBatch.size();
  dim_t batch = 1;
  for (size_t d = 0; d < rank; ++d)
    batch *= std::max(c.aBatch[d], c.bBatch[d]);
  for (dim_t bi = 0; bi < batch; ++bi) {
    dim_t ai = 0, bj = 0, rest = bi, aMul = 1, bMul = 1;
    for (size_t d = rank; d-- > 0;) {
      dim_t out = std::max(c.aBatch[d], c.bBatch[d]), coord = rest % out;
      rest /= out;
      ai += (c.aBatch[d] == 1 ? 0 : coord) * aMul;
      bj += (c.bBatch[d] == 1 ? 0 : coord) * bMul;
      aMul *= c.aBatch[d], bMul *= c.bBatch[d];
    }
    for (dim_t i = 0; i < c.m; ++i)
      for (dim_t j = 0; j < c.n; ++j) {
        double acc = 0, abs = 0;
        for (dim_t p = 0; p < c.k; ++p) {
          double x =
              roundBF16(float(a.elementAsDouble((ai * c.m + i) * c.k + p)));
          double w = roundBF16(float(b.elementAsDouble(
              bj * c.k * c.n + (c.transB ? j * c.k + p : p * c.n + j))));
          acc += x * w;
          abs += std::fabs(x * w);
        }
        y.push_back(acc);
        s.push_back(abs);
      }
  }
}

Tensor runCase(const BF16Case &c, llvm::StringRef backend) {
  Module M;
  Function *F = M.createFunction("mm");
  auto [at, bt] = makeOperands(c);
  std::vector<Tensor> inputs;
  auto *a = M.createPlaceholder("a", at.getType(), false);
  inputs.push_back(std::move(at));
  NodeValue b = constantOrInput(M, "b", std::move(bt), c.constantRHS, inputs);
  NodeValue y = F->createMatMul("mm", a, b, c.transB);
  auto *out = M.createPlaceholder("y", *y.getType(), true);
  F->createSave("save", y, out);
  auto outs =
      compileAndRun(M, *F, backend, std::move(inputs), bf16PathOptions());
  return outs.empty() ? Tensor() : std::move(outs[0]);
}

class MatMulBF16PathTest : public ::testing::TestWithParam<BF16Case> {};

using BF16EpilogueCase = EpilogueCase;

// Row counts from 16 up take the AMX kernel on AMX hosts, fewer vdpbf16ps;
// a constant B's product is flattened to batch * m rows (matmul-form).
const BF16EpilogueCase kEpilogueCases[] = {
    {"bias_amx_partial", 1, 29, 19, 70, true, false, FusedActivation::None},
    {"residual_dp_rows", 1, 13, 40, 64, false, true, FusedActivation::None},
    // Several K blocks of vdpbf16ps (96 pairs) and of AMX chunks: the
    // epilogue applies once, after the last.
    {"bias_residual_k_blocks", 1, 7, 301, 130, true, true,
     FusedActivation::None},
    {"bias_residual_amx_long_k", 1, 37, 301, 50, true, true,
     FusedActivation::None},
    {"bias_gelu_amx", 1, 33, 65, 47, true, false, FusedActivation::Gelu},
    {"bias_gelu_tanh_dp", 1, 11, 33, 47, true, false,
     FusedActivation::GeluTanh},
    {"bias_relu_whole_blocks", 1, 64, 64, 64, true, false,
     FusedActivation::Relu},
    {"bias_residual_clip", 1, 9, 97, 70, true, true, FusedActivation::Clip},
    {"sigmoid_only", 1, 20, 41, 65, false, false, FusedActivation::Sigmoid},
    {"k1_bias_relu", 1, 16, 1, 17, true, false, FusedActivation::Relu},
    {"batched_bias_residual", 3, 10, 17, 40, true, true, FusedActivation::None},
    {"rank3_bias_gelu", 4, 8, 64, 48, true, false, FusedActivation::Gelu},
    // A run-time B stays a batched product (the residual at each batch's
    // offset): AMX with 17 rows, vdpbf16ps with 9.
    {"runtime_rhs_bias_residual_gelu", 2, 17, 33, 70, true, true,
     FusedActivation::Gelu, false},
    {"runtime_rhs_short_bias_residual", 2, 9, 45, 33, true, true,
     FusedActivation::None, false},
};

/// Random operands in [-2, 2].
std::vector<Tensor> makeEpilogueOperands(const BF16EpilogueCase &c) {
  return test::makeEpilogueOperands(c, 11, 2.f);
}

/// The pre-activation values z (bias + the exact products of the rounded
/// operands + res, in double) and T per element.
void exactEpilogue(const BF16EpilogueCase &c, std::vector<double> &z,
                   std::vector<double> &t) {
  std::vector<Tensor> op = makeEpilogueOperands(c);
  for (dim_t bi = 0; bi < c.batch; ++bi)
    for (dim_t i = 0; i < c.m; ++i)
      for (dim_t j = 0; j < c.n; ++j) {
        dim_t bo = c.constantRHS ? 0 : bi * c.k * c.n;
        double acc = 0, abs = 0;
        for (dim_t p = 0; p < c.k; ++p) {
          double x =
              roundBF16(float(op[0].elementAsDouble((bi * c.m + i) * c.k + p)));
          double w = roundBF16(float(op[1].elementAsDouble(bo + p * c.n + j)));
          acc += x * w;
          abs += std::fabs(x * w);
        }
        if (c.bias) {
          double v = op[2].elementAsDouble(j);
          acc += v, abs += std::fabs(v);
        }
        if (c.residual) {
          double v = op[3].elementAsDouble((bi * c.m + i) * c.n + j);
          acc += v, abs += std::fabs(v);
        }
        z.push_back(acc);
        t.push_back(abs);
      }
}
} // namespace

TEST_P(MatMulBF16PathTest, CPUMatchesInterpreter) {
  const BF16Case &c = GetParam();
  Tensor ref = runCase(c, "Interpreter");
  Tensor got = runCase(c, "CPU");
  ASSERT_EQ(ref.getType().getElemKind(), ElemKind::Float32);
  ASSERT_EQ(got.getType(), ref.getType());
  std::vector<double> exact, s;
  exactProduct(c, exact, s);
  ASSERT_EQ(size_t(ref.size()), exact.size());
  double g = gamma(c.k);
  for (size_t i = 0; i < exact.size(); ++i) {
    double r = ref.elementAsDouble(i), v = got.elementAsDouble(i);
    ASSERT_LE(std::fabs(r - exact[i]), g * s[i])
        << "Interpreter, element " << i;
    ASSERT_LE(std::fabs(v - r), 2 * g * s[i]) << "CPU, element " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, MatMulBF16PathTest,
                         ::testing::ValuesIn(kBF16Cases), [](const auto &info) {
                           return std::string(info.param.name);
                         });

namespace {
Tensor runEpilogueCase(const BF16EpilogueCase &c, llvm::StringRef backend) {
  return runEpilogueGraph(c, makeEpilogueOperands(c), backend,
                          bf16PathOptions());
}

class MatMulBF16EpiloguePathTest
    : public ::testing::TestWithParam<BF16EpilogueCase> {};
} // namespace

TEST_P(MatMulBF16EpiloguePathTest, CPUMatchesInterpreter) {
  const BF16EpilogueCase &c = GetParam();
  Tensor ref = runEpilogueCase(c, "Interpreter");
  Tensor got = runEpilogueCase(c, "CPU");
  ASSERT_EQ(got.getType(), ref.getType());
  std::vector<double> z, t;
  exactEpilogue(c, z, t);
  ASSERT_EQ(size_t(ref.size()), z.size());
  const double slope = 1.13, g = gamma(c.k + 2);
  for (size_t i = 0; i < z.size(); ++i) {
    double r = ref.elementAsDouble(i), v = got.elementAsDouble(i);
    double act = 1e-6 * (1 + std::fabs(z[i]));
    ASSERT_LE(std::fabs(r - activateExact(c.act, z[i])), slope * g * t[i] + act)
        << "Interpreter, element " << i;
    ASSERT_LE(std::fabs(v - r), slope * 2 * g * t[i] + 2 * act)
        << "CPU, element " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, MatMulBF16EpiloguePathTest,
                         ::testing::ValuesIn(kEpilogueCases),
                         [](const auto &info) {
                           return std::string(info.param.name);
                         });

// The rule: AMX with AMX-TILE and AMX-BF16 on top of what vdpbf16ps needs
// (its fallback) for products of at least a tile's 16 rows; vdpbf16ps only with
// AVX512-BF16 and the 16-lane kernels, with the Float32 rule's tiles either
// way.
TEST(MatMulBF16Plan, KernelFollowsTheTarget) {
  TargetDesc T;
  T.vectorBits = 512;
  T.vectorRegisters = 32;
  T.l1dBytes = 32 << 10;
  T.l2Bytes = 1 << 20;
  EXPECT_EQ(cpu::chooseBF16MatMul(T, 16).kernel, cpu::BF16MatMulKernel::Widen);
  T.extensions |= 1u << unsigned(ISAExt::AVX512BF16);
  cpu::BF16MatMulPlan p = cpu::chooseBF16MatMul(T, 16);
  EXPECT_EQ(p.kernel, cpu::BF16MatMulKernel::DotProduct);
  EXPECT_EQ(p.tiling.rows, 6);
  EXPECT_EQ(p.tiling.panelCols, 64);
  EXPECT_EQ(p.tiling.kBlock, 96); // pairs: 96 x 64 words, 3/4 of 32 KiB
  T.extensions |= 1u << unsigned(ISAExt::AMXTile);
  EXPECT_EQ(cpu::chooseBF16MatMul(T, 16).kernel,
            cpu::BF16MatMulKernel::DotProduct);
  T.extensions |= 1u << unsigned(ISAExt::AMXBF16);
  p = cpu::chooseBF16MatMul(T, 16);
  EXPECT_EQ(p.kernel, cpu::BF16MatMulKernel::AMX);
  EXPECT_STREQ(p.entry().name, "ember_matmul_bf16_amx");
  EXPECT_EQ(p.tiling.rows, 32);
  EXPECT_EQ(p.tiling.panelCols, 16);
  EXPECT_EQ(p.tiling.kBlock, 16);
  // Fewer rows than a tile: vdpbf16ps.
  EXPECT_EQ(cpu::chooseBF16MatMul(T, 15).kernel,
            cpu::BF16MatMulKernel::DotProduct);
  T.vectorBits = 256;
  T.vectorRegisters = 16;
  EXPECT_EQ(cpu::chooseBF16MatMul(T, 16).kernel, cpu::BF16MatMulKernel::Widen);
}
