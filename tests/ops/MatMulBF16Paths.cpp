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
//===----------------------------------------------------------------------===//
#include "../../backends/CPU/MatMulBF16.h"
#include "../unit/TestUtils.h"
#include "PathOptions.h"

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
  NodeValue b;
  if (c.constantRHS) {
    b = M.createConstant("b", std::move(bt));
  } else {
    b = M.createPlaceholder("b", bt.getType(), false);
    inputs.push_back(std::move(bt));
  }
  NodeValue y = F->createMatMul("mm", a, b, c.transB);
  auto *out = M.createPlaceholder("y", *y.getType(), true);
  F->createSave("save", y, out);
  CodegenOptions opts = pathOptions();
  opts.precision.precision = FloatPrecision::BF16;
  auto outs = compileAndRun(M, *F, backend, std::move(inputs), opts);
  return outs.empty() ? Tensor() : std::move(outs[0]);
}

/// gamma(K) for Float32 (u = 2^-24).
double gamma(dim_t k) {
  double ku = double(k) * std::ldexp(1.0, -24);
  return ku / (1 - ku);
}

class MatMulBF16PathTest : public ::testing::TestWithParam<BF16Case> {};
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
