//===- Reduce.cpp - ReduceSum and ReduceMax kernels -----------------------===//
#include "Kernels.h"

#include <limits>

using namespace ember;
using namespace ember::interp;

/// For every input element, the index of the output element it reduces
/// into: the input's coordinates with the reduced axes dropped (or 0).
template <typename Fn>
static void forEachReduced(const Type &in, llvm::ArrayRef<int64_t> axes,
                           Fn fn) {
  unsigned r = in.rank();
  llvm::SmallVector<dim_t, kMaxRank> outStride(r, 0);
  dim_t stride = 1;
  for (int d = int(r) - 1; d >= 0; --d) {
    if (llvm::is_contained(axes, int64_t(d)))
      continue;
    outStride[d] = stride;
    stride *= in.dims()[d];
  }
  llvm::SmallVector<dim_t, kMaxRank> coord(r, 0);
  dim_t outIdx = 0;
  for (dim_t i = 0, e = in.size(); i < e; ++i) {
    fn(i, outIdx);
    for (int d = int(r) - 1; d >= 0; --d) {
      outIdx += outStride[d];
      if (++coord[d] < in.dims()[d])
        break;
      outIdx -= coord[d] * outStride[d];
      coord[d] = 0;
    }
  }
}

template <typename InstT>
static void reduce(const InstT &I, const ExecContext &ctx, float init,
                   float (*combine)(float, float)) {
  const float *x = ctx.ptr<float>(I.getInput());
  float *y = ctx.ptr<float>(I.getDest());
  dim_t n = I.getDest()->getType()->size();
  std::fill(y, y + n, init);
  forEachReduced(*I.getInput()->getType(), I.getAxes(),
                 [&](dim_t i, dim_t o) { y[o] = combine(y[o], x[i]); });
}

bool interp::executeReduce(const Instruction &I, const ExecContext &ctx) {
  if (auto *s = llvm::dyn_cast<ReduceSumInst>(&I)) {
    reduce(*s, ctx, 0.f, [](float a, float b) { return a + b; });
    return true;
  }
  if (auto *m = llvm::dyn_cast<ReduceMaxInst>(&I)) {
    reduce(*m, ctx, -std::numeric_limits<float>::infinity(),
           [](float a, float b) { return b > a || b != b ? b : a; });
    return true;
  }
  return false;
}
