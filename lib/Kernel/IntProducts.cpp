//===- IntProducts.cpp - IntMatMul and IntConv as portable loop nests -----===//
//
// Exact integer products: 8-bit loads widened to Int32, the zero points
// taken off, Int32 accumulation. Backends with tuned integer kernels claim
// these instructions through their hook; this is everyone's fallback.
//
//===----------------------------------------------------------------------===//
#include "KernelRules.h"

using namespace ember;
using namespace ember::kir;

/// (load(buf, idx) as Int32) - zero.
static ExprRef centered(Kernel &k, unsigned buf, ExprRef idx, ExprRef zero) {
  return k.binary(BinOp::Sub, k.cast(k.load(buf, idx), ScalarKind::Int32),
                  zero);
}

/// acc += a * b in Int32.
static Stmt accumulate(Kernel &k, unsigned acc, ExprRef a, ExprRef b) {
  return Kernel::assign(
      acc, k.binary(BinOp::Add, k.local(acc), k.binary(BinOp::Mul, a, b)));
}

static Kernel intMatMulKernel(const IntMatMulInst &I, const MemoryPlan &plan) {
  TypeRef ta = I.getLHS()->getType(), tb = I.getRHS()->getType();
  TypeRef tc = I.getDest()->getType();
  unsigned r = ta->rank();
  dim_t m = ta->dims()[r - 2], kk = ta->dims()[r - 1];
  dim_t n = tc->dims()[r - 1];
  dim_t batch = tc->size() / std::max<dim_t>(m * n, 1);
  Kernel k(I.getName());
  unsigned c = k.addBuffer(bufferFor(I.getDest(), plan));
  unsigned a = k.addBuffer(bufferFor(I.getLHS(), plan));
  unsigned b = k.addBuffer(bufferFor(I.getRHS(), plan));
  unsigned za = k.addBuffer(bufferFor(I.getLHSZero(), plan));
  unsigned zb = k.addBuffer(bufferFor(I.getRHSZero(), plan));
  unsigned acc = k.addLocal(ScalarKind::Int32);
  auto outBatch = tc->dims().drop_back(2);
  k.body() = loopNest(k, {batch, m, n}, [&](auto v) {
    unsigned p = k.newVar();
    ExprRef a0 =
        matMulBatchOffset(k, v[0], outBatch, ta->dims().drop_back(2), m * kk);
    ExprRef b0 =
        matMulBatchOffset(k, v[0], outBatch, tb->dims().drop_back(2), kk * n);
    ExprRef ai = k.add(a0, k.add(k.mul(v[1], kk), k.var(p)));
    ExprRef bj = k.add(b0, k.add(k.mul(k.var(p), n), v[2]));
    ExprRef ci = k.add(k.mul(v[0], m * n), k.add(k.mul(v[1], n), v[2]));
    ExprRef x = centered(k, a, ai, k.load(za, v[1]));
    ExprRef y = centered(k, b, bj, k.load(zb, v[2]));
    return std::vector<Stmt>{
        Kernel::assign(acc, k.constInt(0, ScalarKind::Int32)),
        Kernel::loop(p, kk, false, {accumulate(k, acc, x, y)}),
        Kernel::store(c, ci, k.local(acc))};
  });
  return k;
}

/// 0 <= i < extent.
static ExprRef inRange(Kernel &k, ExprRef i, dim_t extent) {
  return k.binary(BinOp::And, k.binary(BinOp::Le, k.constInt(0), i),
                  k.binary(BinOp::Lt, i, k.constInt(extent)));
}

static Kernel intConvKernel(const IntConvInst &I, const MemoryPlan &plan) {
  auto xd = I.getInput()->getType()->dims();
  auto wd = I.getFilter()->getType()->dims();
  auto yd = I.getDest()->getType()->dims();
  auto strides = I.getStrides(), pads = I.getPads(), dil = I.getDilations();
  dim_t cg = wd[1], ocPerGroup = wd[0] / I.getGroup();
  Kernel k(I.getName());
  unsigned y = k.addBuffer(bufferFor(I.getDest(), plan));
  unsigned x = k.addBuffer(bufferFor(I.getInput(), plan));
  unsigned w = k.addBuffer(bufferFor(I.getFilter(), plan));
  unsigned zx = k.addBuffer(bufferFor(I.getInputZero(), plan));
  unsigned zw = k.addBuffer(bufferFor(I.getFilterZero(), plan));
  unsigned acc = k.addLocal(ScalarKind::Int32);
  k.body() = loopNest(k, {yd[0], yd[1], yd[2], yd[3]}, [&](auto v) {
    unsigned c = k.newVar(), kh = k.newVar(), kw = k.newVar();
    ExprRef ih = k.add(k.add(k.mul(v[2], strides[0]), k.mul(k.var(kh), dil[0])),
                       k.constInt(-pads[0]));
    ExprRef iw = k.add(k.add(k.mul(v[3], strides[1]), k.mul(k.var(kw), dil[1])),
                       k.constInt(-pads[1]));
    ExprRef ch = k.add(k.mul(k.div(v[1], ocPerGroup), cg), k.var(c));
    ExprRef xi = k.add(
        k.mul(k.add(k.mul(k.add(k.mul(v[0], xd[1]), ch), xd[2]), ih), xd[3]),
        iw);
    ExprRef wi = k.add(
        k.mul(k.add(k.mul(k.add(k.mul(v[1], cg), k.var(c)), wd[2]), k.var(kh)),
              wd[3]),
        k.var(kw));
    ExprRef xv = centered(k, x, xi, k.load(zx, k.constInt(0)));
    ExprRef wv = centered(k, w, wi, k.load(zw, v[1]));
    Stmt cols = Kernel::loop(
        kw, wd[3], false,
        {Kernel::ifThen(inRange(k, iw, xd[3]), {accumulate(k, acc, xv, wv)})});
    Stmt rows = Kernel::loop(kh, wd[2], false,
                             {Kernel::ifThen(inRange(k, ih, xd[2]), {cols})});
    ExprRef yi =
        k.add(k.mul(k.add(k.mul(k.add(k.mul(v[0], yd[1]), v[1]), yd[2]), v[2]),
                    yd[3]),
              v[3]);
    return std::vector<Stmt>{
        Kernel::assign(acc, k.constInt(0, ScalarKind::Int32)),
        Kernel::loop(c, cg, false, {rows}), Kernel::store(y, yi, k.local(acc))};
  });
  return k;
}

bool kir::lowerIntMatMul(const IntMatMulInst &I, const MemoryPlan &plan,
                         std::vector<Kernel> &out) {
  return appendKernel(out, intMatMulKernel(I, plan));
}

bool kir::lowerIntConv(const IntConvInst &I, const MemoryPlan &plan,
                       std::vector<Kernel> &out) {
  return appendKernel(out, intConvKernel(I, plan));
}
