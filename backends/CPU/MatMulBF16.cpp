//===- MatMulBF16.cpp - BFloat16 MatMul on the CPU ------------------------===//
#include "MatMulBF16.h"

#include "CPU.h"

#include "ember/Kernel/LowerToKernel.h"

#include "glog/logging.h"

#include <algorithm>
#include <cstring>

using namespace ember;
using namespace ember::cpu;
using kir::CallArg;
using kir::ExprRef;
using kir::Kernel;

LibKernel BF16MatMulPlan::entry() const {
  switch (kernel) {
  case BF16MatMulKernel::AMX:
    return EMBER_LIBJIT_KERNEL(ember_matmul_bf16_amx);
  case BF16MatMulKernel::DotProduct:
    return EMBER_LIBJIT_KERNEL(ember_matmul_bf16_dp);
  case BF16MatMulKernel::Widen:
    break;
  }
  return EMBER_LIBJIT_KERNEL(ember_matmul_bf16_widen);
}

void BF16MatMulPlan::print(llvm::raw_ostream &os) const {
  os << entry().name << " tile " << tiling.rows << "x" << tiling.panelCols
     << " kBlock " << tiling.kBlock << " pairs\n";
}

BF16MatMulPlan cpu::chooseBF16MatMul(const TargetDesc &T, int64_t m) {
  bool dot = useWideKernels(T) && T.has(ISAExt::AVX512BF16);
  if (dot && T.has(ISAExt::AMXTile) && T.has(ISAExt::AMXBF16) &&
      m >= kAMXTileRows) {
    // Palette 1: a tile row of 64 bytes holds 16 Float32 sums or 16 pairs.
    int64_t cols = kAMXTileBytes / 4;
    return {BF16MatMulKernel::AMX,
            MatMulTiling{2 * kAMXTileRows, 1, cols, kAMXTileRows}};
  }
  return {dot ? BF16MatMulKernel::DotProduct : BF16MatMulKernel::Widen,
          chooseMatMulTiling(matMulTarget(T))};
}

namespace {
/// The shape of one BFloat16 MatMul: C [batch][m][n] = A [m][K] * B.
struct Shape {
  int64_t m, K, n, batch;
  int64_t nr, np, kh; ///< panel columns, panels, K pairs
  /// Elements of one packed B matrix.
  int64_t packedElems() const { return np * kh * nr * 2; }
};
} // namespace

/// The packed-B index of element (k, j) of matrix \p bi (libjit's layout).
static int64_t packedAt(const Shape &s, int64_t bi, int64_t k, int64_t j) {
  return bi * s.packedElems() +
         (((j / s.nr) * s.kh + k / 2) * s.nr + j % s.nr) * 2 + k % 2;
}

/// The kernel that packs a B computed at run time into \p packed.
static Kernel packAtRunTime(const MatMulInst &I, const Shape &s,
                            const kir::Buffer &src, const kir::Buffer &packed,
                            int64_t batch) {
  bool transB = I.getTransB();
  int64_t kStride = transB ? 1 : s.n, jStride = transB ? s.K : 1;
  Kernel k((I.getName() + ".pack").str());
  unsigned d = k.addBuffer(packed), b = k.addBuffer(src);
  // e = (((bi * np + panel) * kh + pair) * NR + lane) * 2 + half.
  unsigned e = k.newVar();
  ExprRef half = k.rem(k.var(e), 2);
  ExprRef lane = k.rem(k.div(k.var(e), 2), s.nr);
  ExprRef pair = k.rem(k.div(k.var(e), 2 * s.nr), s.kh);
  ExprRef panel = k.div(k.var(e), 2 * s.nr * s.kh);
  ExprRef kk = k.add(k.mul(pair, 2), half);
  ExprRef j = k.add(k.mul(k.rem(panel, s.np), s.nr), lane);
  auto clamp = [&](ExprRef x, int64_t bound) {
    return k.binary(kir::BinOp::Min, x, k.constInt(bound - 1));
  };
  ExprRef at = k.add(
      k.mul(k.div(panel, s.np), s.K * s.n),
      k.add(k.mul(clamp(kk, s.K), kStride), k.mul(clamp(j, s.n), jStride)));
  ExprRef zero = k.constFloat(0);
  ExprRef v = k.cast(k.load(b, at), ElemKind::Float32);
  v = k.select(k.binary(kir::BinOp::Lt, j, k.constInt(s.n)), v, zero);
  v = k.select(k.binary(kir::BinOp::Lt, kk, k.constInt(s.K)), v, zero);
  k.body() = {Kernel::loop(
      e, batch * s.packedElems(), /*parallel=*/true,
      {Kernel::store(d, k.var(e), k.cast(v, ElemKind::BFloat16))})};
  return k;
}

/// B in libjit's paired panels: a constant packed now into the constant
/// image, anything else by a kernel appended to \p out, into scratch.
static kir::Buffer packRHS(const MatMulInst &I, const Shape &s,
                           const MatMulBF16Context &ctx,
                           std::vector<Kernel> &out) {
  TypeRef tb = I.getRHS()->getType();
  int64_t batch = s.K * s.n != 0 ? tb->size() / (s.K * s.n) : 0;
  uint64_t bytes = uint64_t(batch * s.packedElems()) * 2;
  kir::Buffer src = kir::bufferFor(I.getRHS(), ctx.plan);
  auto *w = llvm::dyn_cast<WeightVar>(getOrigin(I.getRHS()));
  if (!w || !w->isConstant()) {
    kir::Buffer packed{Region::Activation, ctx.scratchOffset, bytes,
                       ElemKind::BFloat16, "matmul.rhs.bf16"};
    ctx.scratchSize = std::max<size_t>(ctx.scratchSize, bytes);
    out.push_back(packAtRunTime(I, s, src, packed, batch));
    return packed;
  }
  bool transB = I.getTransB();
  std::vector<uint16_t> packed(size_t(batch * s.packedElems()) + 1, 0);
  const auto *b =
      reinterpret_cast<const uint16_t *>(ctx.constants.data() + src.offset);
  for (int64_t bi = 0; bi < batch; ++bi)
    for (int64_t k = 0; k < s.K; ++k)
      for (int64_t j = 0; j < s.n; ++j)
        packed[packedAt(s, bi, k, j)] =
            b[bi * s.K * s.n + (transB ? j * s.K + k : k * s.n + j)];
  return appendConstant(ctx.constants, packed.data(), bytes + 2,
                        I.getRHS()->getName().str() + ".bf16.packed",
                        ElemKind::BFloat16);
}

/// The AMX kernel's tasks: pairs of panels (a block of 2 x 2 tiles), rows
/// split in whole blocks until there are kMatMulMinTasks tasks where the
/// rows allow.
static MatMulTasks splitAMX(int64_t m, int64_t panels, const MatMulTiling &t) {
  MatMulTasks r;
  r.panelsPerTask = 2;
  r.colTasks = std::max<int64_t>(1, (panels + 1) / 2);
  int64_t blocks = std::max<int64_t>(1, (m + t.rows - 1) / t.rows);
  int64_t want = (kMatMulMinTasks + r.colTasks - 1) / r.colTasks;
  int64_t rowTasks = std::min(blocks, want);
  r.rowsPerTask = (blocks + rowTasks - 1) / rowTasks * t.rows;
  r.rowTasks = std::max<int64_t>(1, (m + r.rowsPerTask - 1) / r.rowsPerTask);
  return r;
}

void cpu::lowerMatMulBF16(const MatMulInst &I, const MatMulBF16Context &ctx,
                          std::vector<Kernel> &out) {
  TypeRef ta = I.getLHS()->getType(), tc = I.getDest()->getType();
  unsigned r = ta->rank();
  BF16MatMulPlan plan = chooseBF16MatMul(ctx.target, ta->dims()[r - 2]);
  const MatMulTiling &tiling = plan.tiling;
  bool amx = plan.kernel == BF16MatMulKernel::AMX;
  // libjit instantiates the tiles of MatMul.inc's two kernel families and
  // the AMX block.
  CHECK(amx || (tiling.rows == 6 &&
                tiling.panelCols == (useWideKernels(ctx.target) ? 64 : 16)))
      << "no libjit BFloat16 MatMul kernel for this tile";
  Shape s;
  s.m = ta->dims()[r - 2];
  s.K = ta->dims()[r - 1];
  s.n = tc->dims()[r - 1];
  s.batch = s.m * s.n != 0 ? tc->size() / (s.m * s.n) : 0;
  s.nr = tiling.panelCols;
  s.np = (s.n + s.nr - 1) / s.nr;
  s.kh = (s.K + 1) / 2;
  if (amx) // whole B tiles per panel
    s.kh = std::max<int64_t>(1, (s.kh + tiling.kBlock - 1) / tiling.kBlock) *
           tiling.kBlock;
  MatMulTasks tasks =
      amx ? splitAMX(s.m, s.np, tiling)
          : splitMatMul(s.m, s.np, tiling, matMulTarget(ctx.target));
  kir::Buffer bBuf = packRHS(I, s, ctx, out);
  Kernel k(I.getName());
  unsigned c = k.addBuffer(kir::bufferFor(I.getDest(), ctx.plan));
  unsigned a = k.addBuffer(kir::bufferFor(I.getLHS(), ctx.plan));
  unsigned b = k.addBuffer(bBuf);
  unsigned e = k.newVar();
  int64_t rowTasks = tasks.rowTasks, colTasks = tasks.colTasks;
  auto min = [&](ExprRef x, int64_t v) {
    return k.binary(kir::BinOp::Min, x, k.constInt(v));
  };
  // e = (bi * rowTasks + rt) * colTasks + ct.
  ExprRef bi = k.div(k.var(e), rowTasks * colTasks);
  ExprRef i0 =
      k.mul(k.rem(k.div(k.var(e), colTasks), rowTasks), tasks.rowsPerTask);
  ExprRef t0 = k.mul(k.rem(k.var(e), colTasks), tasks.panelsPerTask);
  auto outBatch = tc->dims().drop_back(2);
  auto offset = [&](Value *v, int64_t matrix) {
    return kir::matMulBatchOffset(k, bi, outBatch,
                                  v->getType()->dims().drop_back(2), matrix);
  };
  std::vector<CallArg> args = {bufArg(c, k.mul(bi, s.m * s.n)),
                               bufArg(a, offset(I.getLHS(), s.m * s.K)),
                               bufArg(b, offset(I.getRHS(), s.packedElems()))};
  appendMatMulEpilogue(k, I, ctx.plan, k.mul(bi, s.m * s.n), args);
  // The AMX kernel's K argument is the padded pairs of a panel.
  for (int64_t v : {s.n, s.K, amx ? s.kh : tiling.kBlock})
    args.push_back(valArg(k.constInt(v)));
  appendFusedActivation(k, I, args);
  for (ExprRef v : {i0, min(k.add(i0, k.constInt(tasks.rowsPerTask)), s.m), t0,
                    min(k.add(t0, k.constInt(tasks.panelsPerTask)), s.np)})
    args.push_back(valArg(v));
  k.body() = {Kernel::loop(e, s.batch * rowTasks * colTasks, /*parallel=*/true,
                           {checkedLibCall(k, plan.entry(), args)})};
  out.push_back(std::move(k));
}
