//===- RendererTest.cpp - CUDA renderer corner cases ----------------------===//
//
// Kernel-IR constructs the operator table does not reach (integer abs,
// negated negative literals, infinities, bool loads and stores, casts,
// kernels without a parallel loop, perfect parallel nests), rendered, compiled
// with NVRTC for sm_90 and run on the host with HostEmulation.h. Expected
// values are computed by hand and exact (no rounding is involved), except
// the BFloat16 casts', whose oracle is the Interpreter's element access.
//
//===----------------------------------------------------------------------===//
#include "HostEmulationBackend.h"

#include "../../backends/CUDA/CUDA.h"
#include "ember/Base/ElemAccess.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstring>
#include <dlfcn.h>
#include <limits>

using namespace ember;
using namespace ember::cuda;
using namespace ember::kir;

namespace {
using KernelFn = void (*)(uint8_t *, uint8_t *, uint8_t *);
using LaunchFn = void (*)(KernelFn, long long, long long, uint8_t *, uint8_t *,
                          uint8_t *);

/// Renders \p prog, checks NVRTC, runs it on the host over \p mut.
void runOnHost(const CUDAProgram &prog, std::vector<uint8_t> &mut) {
  CUDASource src = renderCUDA(prog, "t");
  auto bin = compileWithNVRTC(src.text, kDefaultArch, "t");
  ASSERT_TRUE(bool(bin)) << llvm::toString(bin.takeError()) << src.text;
  EXPECT_FALSE(bin->cubin.empty());
  auto dl = test::buildCUDAForHost(src.text);
  ASSERT_TRUE(bool(dl)) << llvm::toString(dl.takeError());
  auto plain = reinterpret_cast<LaunchFn>(dlsym(*dl, "ember_emu_launch"));
  auto cooperative =
      reinterpret_cast<LaunchFn>(dlsym(*dl, "ember_emu_launch_cooperative"));
  std::vector<uint8_t> consts = prog.constants, act(64);
  for (const LaunchInfo &li : src.launches)
    (li.usesSharedMemory ? cooperative : plain)(
        reinterpret_cast<KernelFn>(dlsym(*dl, li.symbol.c_str())), li.blocks,
        li.threads, consts.data(), mut.data(), act.data());
  dlclose(*dl);
}
} // namespace

TEST(CUDARenderer, CornerCasesMatchHandComputedValues) {
  CUDAProgram prog;
  float x[4] = {-2.f, 0.5f, 3.f, -0.f};
  prog.constants.assign(64, 0);
  std::memcpy(prog.constants.data(), x, sizeof x);
  Kernel k("corner");
  unsigned in = k.addBuffer({Region::Constant, 0, 16, ElemKind::Float32, "x"});
  unsigned f = k.addBuffer({Region::Mutable, 0, 32, ElemKind::Float32, "f"});
  unsigned i = k.addBuffer({Region::Mutable, 64, 32, ElemKind::Int64, "i"});
  unsigned b = k.addBuffer({Region::Mutable, 128, 4, ElemKind::Bool, "b"});
  unsigned v = k.newVar();
  ExprRef xv = k.load(in, k.var(v));
  double inf = std::numeric_limits<double>::infinity();
  std::vector<Stmt> body = {
      // f[v] = -(-1.5) * x
      Kernel::store(
          f, k.var(v),
          k.binary(BinOp::Mul, k.unary(UnOp::Neg, k.constFloat(-1.5)), xv)),
      // f[4 + v] = min(max(x, -inf), +inf) == x
      Kernel::store(f, k.add(k.var(v), k.constInt(4)),
                    k.binary(BinOp::Min,
                             k.binary(BinOp::Max, xv, k.constFloat(-inf)),
                             k.constFloat(inf))),
      // i[v] = |v - 2| + INT64_MIN + INT64_MAX + 1 == |v - 2|
      Kernel::store(
          i, k.var(v),
          k.binary(BinOp::Add,
                   k.binary(BinOp::Add,
                            k.unary(UnOp::Abs, k.binary(BinOp::Sub, k.var(v),
                                                        k.constInt(2))),
                            k.constInt(std::numeric_limits<int64_t>::min())),
                   k.constInt(std::numeric_limits<int64_t>::max()))),
      // b[v] = x < 0
      Kernel::store(b, k.var(v), k.binary(BinOp::Lt, xv, k.constFloat(0))),
  };
  k.body() = {Kernel::loop(v, 4, /*parallel=*/true, std::move(body))};
  prog.kernels.push_back(std::move(k));
  // A sequential kernel reading the bools back: f[0] = float(b[0]) + b[2].
  Kernel s("sequential");
  unsigned sf = s.addBuffer({Region::Mutable, 0, 32, ElemKind::Float32, "f"});
  unsigned sb = s.addBuffer({Region::Mutable, 128, 4, ElemKind::Bool, "b"});
  s.body() = {Kernel::store(
      sf, s.constInt(0),
      s.binary(BinOp::Add, s.cast(s.load(sb, s.constInt(0)), ElemKind::Float32),
               s.cast(s.load(sb, s.constInt(2)), ElemKind::Float32)))};
  prog.kernels.push_back(std::move(s));
  std::vector<uint8_t> mut(192, 0xA5);
  runOnHost(prog, mut);
  float fo[8];
  int64_t io[4];
  std::memcpy(fo, mut.data(), sizeof fo);
  std::memcpy(io, mut.data() + 64, sizeof io);
  EXPECT_EQ(fo[0], 1.f); // b[0] + b[2] = 1 + 0
  EXPECT_EQ(fo[1], 0.75f);
  EXPECT_EQ(fo[2], 4.5f);
  EXPECT_EQ(fo[3], -0.f);
  for (int n = 0; n < 4; ++n) {
    EXPECT_EQ(fo[4 + n], x[n]);
    EXPECT_EQ(io[n], std::abs(n - 2) - 1) << n; // MIN + MAX == -1
  }
  EXPECT_EQ(mut[128], 1);
  EXPECT_EQ(mut[129], 0);
  EXPECT_EQ(mut[130], 0);
  EXPECT_EQ(mut[131], 0); // -0 < 0 is false
}

TEST(CUDARenderer, PerfectParallelNestBecomesOneIndexSpace) {
  // out[a][c] = a * 10 + c over a 3 x 700 nest: 2100 threads, 9 blocks.
  CUDAProgram prog;
  Kernel k("nest");
  unsigned o =
      k.addBuffer({Region::Mutable, 0, 2100 * 4, ElemKind::Int32, "out"});
  unsigned a = k.newVar(), c = k.newVar();
  ExprRef val = k.cast(k.add(k.mul(k.var(a), 10), k.var(c)), ElemKind::Int32);
  k.body() = {Kernel::loop(
      a, 3, true,
      {Kernel::loop(
          c, 700, true,
          {Kernel::store(o, k.add(k.mul(k.var(a), 700), k.var(c)), val)})})};
  prog.kernels.push_back(std::move(k));
  CUDASource src = renderCUDA(prog, "t");
  ASSERT_EQ(src.launches.size(), 1u);
  EXPECT_EQ(src.launches[0].threads, kBlockSize);
  EXPECT_EQ(src.launches[0].blocks, (2100 + kBlockSize - 1) / kBlockSize);
  std::vector<uint8_t> mut(2100 * 4, 0xA5);
  runOnHost(prog, mut);
  std::vector<int32_t> out(2100);
  std::memcpy(out.data(), mut.data(), mut.size());
  for (int n = 0; n < 2100; ++n)
    ASSERT_EQ(out[n], (n / 700) * 10 + n % 700) << n;
}

TEST(CUDARenderer, BFloat16CastsRoundAsTheInterpreter) {
  // Float32 -> BFloat16 -> Float32 through a BFloat16 buffer, and a
  // BFloat16 constant: the oracle is storeElement / loadElement (what the
  // Interpreter uses). Ties to even both ways, a carry into the exponent,
  // NaN, infinities, a value whose bits read as an integer are 16117.
  float x[8] = {1.00390625f,
                1.01171875f,
                0.4785f,
                -3.99999f,
                std::numeric_limits<float>::quiet_NaN(),
                -std::numeric_limits<float>::infinity(),
                3.0e38f,
                -0.f};
  CUDAProgram prog;
  prog.constants.assign(64, 0);
  std::memcpy(prog.constants.data(), x, sizeof x);
  Kernel k("narrow");
  unsigned in = k.addBuffer({Region::Constant, 0, 32, ElemKind::Float32, "x"});
  unsigned h = k.addBuffer({Region::Mutable, 64, 18, ElemKind::BFloat16, "h"});
  unsigned v = k.newVar();
  k.body() = {Kernel::loop(v, 8, true,
                           {Kernel::store(h, k.var(v),
                                          k.cast(k.load(in, k.var(v)),
                                                 ElemKind::BFloat16))}),
              Kernel::store(h, k.constInt(8),
                            k.constFloat(0.4785, ScalarKind::BFloat16))};
  prog.kernels.push_back(std::move(k));
  Kernel w("widen");
  unsigned wh = w.addBuffer({Region::Mutable, 64, 18, ElemKind::BFloat16, "h"});
  unsigned f = w.addBuffer({Region::Mutable, 0, 36, ElemKind::Float32, "f"});
  unsigned u = w.newVar();
  w.body() = {Kernel::loop(
      u, 9, true,
      {Kernel::store(f, w.var(u),
                     w.cast(w.load(wh, w.var(u)), ElemKind::Float32))})};
  prog.kernels.push_back(std::move(w));
  std::vector<uint8_t> mut(128, 0xA5);
  runOnHost(prog, mut);
  for (int n = 0; n < 9; ++n) {
    uint16_t want = 0, got;
    storeElement(&want, ElemKind::BFloat16, 0, n < 8 ? x[n] : 0.4785);
    std::memcpy(&got, mut.data() + 64 + 2 * n, 2);
    EXPECT_EQ(got, want) << n;
    float wide;
    std::memcpy(&wide, mut.data() + 4 * n, 4);
    double back = loadElement(&want, ElemKind::BFloat16, 0);
    if (std::isnan(back))
      EXPECT_TRUE(std::isnan(wide)) << n;
    else
      EXPECT_EQ(wide, float(back)) << n;
  }
}
