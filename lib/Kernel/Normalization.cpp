//===- Normalization.cpp - LayerNorm as one kernel ------------------------===//
//
// A LayerNorm row is read twice: once for its statistics, once for the
// result. The statistics come from one pass of float32 sums of t = x - x0
// and t * t, shifted by the row's first element x0: shifting keeps
// E[t^2] - E[t]^2 free of the cancellation that sums of x and x^2 suffer
// when the mean is large against the spread (the shift lies inside the
// data's range). Both sums are accumulators that the renderers may
// reassociate, so the CPU vectorizes the pass; rows are the parallel loop.
//
//===----------------------------------------------------------------------===//
#include "KernelRules.h"

using namespace ember;
using namespace ember::kir;

static Kernel layerNormKernel(const LayerNormInst &I, const MemoryPlan &plan) {
  TypeRef t = I.getInput()->getType();
  dim_t n = t->dims().back(), rows = n ? t->size() / n : 0;
  Kernel k(I.getName());
  unsigned y = k.addBuffer(bufferFor(I.getDest(), plan));
  unsigned x = k.addBuffer(bufferFor(I.getInput(), plan));
  unsigned scale = k.addBuffer(bufferFor(I.getScale(), plan));
  unsigned bias = k.addBuffer(bufferFor(I.getBias(), plan));
  unsigned s1 = k.addLocal(ElemKind::Float32);
  unsigned s2 = k.addLocal(ElemKind::Float32);
  unsigned mean = k.addLocal(ElemKind::Float32);
  unsigned rstd = k.addLocal(ElemKind::Float32);
  unsigned r = k.newVar(), i = k.newVar(), j = k.newVar();
  ExprRef base = k.mul(k.var(r), n);
  ExprRef x0 = k.load(x, base);
  ExprRef ti = k.binary(BinOp::Sub, k.load(x, k.add(base, k.var(i))), x0);
  ExprRef inv = k.constFloat(1.0 / double(n));
  ExprRef m1 = k.binary(BinOp::Mul, k.local(s1), inv);
  ExprRef var = k.binary(BinOp::Sub, k.binary(BinOp::Mul, k.local(s2), inv),
                         k.binary(BinOp::Mul, m1, m1));
  // Rounding can leave a constant row's variance a hair below zero.
  var = k.binary(BinOp::Max, var, k.constFloat(0));
  ExprRef den = k.unary(
      UnOp::Sqrt, k.binary(BinOp::Add, var, k.constFloat(I.getEpsilon())));
  ExprRef xj = k.load(x, k.add(base, k.var(j)));
  ExprRef yj = k.binary(
      BinOp::Add,
      k.binary(BinOp::Mul,
               k.binary(BinOp::Mul, k.binary(BinOp::Sub, xj, k.local(mean)),
                        k.local(rstd)),
               k.load(scale, k.var(j))),
      k.load(bias, k.var(j)));
  std::vector<Stmt> row = {
      Kernel::assign(s1, k.constFloat(0)),
      Kernel::assign(s2, k.constFloat(0)),
      Kernel::loop(
          i, n, false,
          {Kernel::assign(s1, k.binary(BinOp::Add, k.local(s1), ti)),
           Kernel::assign(s2, k.binary(BinOp::Add, k.local(s2),
                                       k.binary(BinOp::Mul, ti, ti)))}),
      Kernel::assign(rstd, k.binary(BinOp::Div, k.constFloat(1), den)),
      Kernel::assign(mean, k.binary(BinOp::Add, x0, m1)),
      Kernel::loop(j, n, false, {Kernel::store(y, k.add(base, k.var(j)), yj)}),
  };
  k.body() = {Kernel::loop(r, rows, /*parallel=*/true, std::move(row))};
  return k;
}

bool kir::lowerLayerNorm(const LayerNormInst &I, const MemoryPlan &plan,
                         std::vector<Kernel> &out) {
  return appendKernel(out, layerNormKernel(I, plan));
}
