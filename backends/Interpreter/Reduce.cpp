//===- Reduce.cpp - Reductions, ArgMax/ArgMin and TopK kernels ------------===//
#include "Generic.h"

#include <algorithm>
#include <cmath>
#include <numeric>

using namespace ember;
using namespace ember::interp;

static void reduce(OpKind op, const Instruction &I, const ExecContext &ctx) {
  Buf d(ctx, I.getOperand(0).value), x(ctx, I.getOperand(1).value);
  llvm::ArrayRef<int64_t> axes = I.attr(0).ints;
  llvm::ArrayRef<dim_t> xd = x.dims();
  // The result seen with kept (size-1) reduced dims has d's elements in
  // the same order whether or not KeepDims is set.
  llvm::SmallVector<dim_t, kMaxRank> keptDims(xd.begin(), xd.end());
  for (int64_t a : axes)
    keptDims[a] = 1;
  dim_t n = d.size();
  double init = op == OpKind::ReduceMax    ? -INFINITY
                : op == OpKind::ReduceMin  ? INFINITY
                : op == OpKind::ReduceProd ? 1.0
                                           : 0.0;
  std::vector<double> acc(n, init);
  llvm::SmallVector<dim_t, kMaxRank> c;
  for (dim_t i = 0, e = x.size(); i < e; ++i) {
    unflatten(i, xd, c);
    for (int64_t a : axes)
      c[a] = 0;
    double &r = acc[flatten(c, keptDims)];
    double v = x.ld(i);
    switch (op) {
    case OpKind::ReduceMax:
      r = std::isnan(v) || std::isnan(r) ? NAN : std::max(r, v);
      break;
    case OpKind::ReduceMin:
      r = std::isnan(v) || std::isnan(r) ? NAN : std::min(r, v);
      break;
    case OpKind::ReduceProd:
      r *= v;
      break;
    default:
      r += v;
    }
  }
  double count = double(x.size()) / double(std::max<dim_t>(n, 1));
  for (dim_t i = 0; i < n; ++i)
    d.st(i, op == OpKind::ReduceMean ? acc[i] / count : acc[i]);
}

static void argReduce(bool isMax, const Instruction &I,
                      const ExecContext &ctx) {
  Buf d(ctx, I.getOperand(0).value), x(ctx, I.getOperand(1).value);
  unsigned axis = I.attr(0).i;
  bool last = I.attr(2).i;
  dim_t outer, inner, n = x.dims()[axis];
  splitAt(x.dims(), axis, outer, inner);
  for (dim_t o = 0; o < outer; ++o)
    for (dim_t in = 0; in < inner; ++in) {
      dim_t best = 0;
      double bv = x.ld(o * n * inner + in);
      for (dim_t k = 1; k < n; ++k) {
        double v = x.ld((o * n + k) * inner + in);
        bool better = isMax ? (v > bv || (last && v == bv))
                            : (v < bv || (last && v == bv));
        if (better) {
          bv = v;
          best = k;
        }
      }
      d.st(o * inner + in, double(best));
    }
}

static void topK(const TopKInst &I, const ExecContext &ctx) {
  Buf vals(ctx, I.getDestValues()), idx(ctx, I.getDestIndices()),
      x(ctx, I.getInput());
  unsigned axis = I.getAxis();
  dim_t k = I.getK(), outer, inner, n = x.dims()[axis];
  bool largest = I.getLargest();
  splitAt(x.dims(), axis, outer, inner);
  std::vector<dim_t> order(n);
  std::vector<double> row(n);
  for (dim_t o = 0; o < outer; ++o)
    for (dim_t in = 0; in < inner; ++in) {
      for (dim_t j = 0; j < n; ++j)
        row[j] = x.ld((o * n + j) * inner + in);
      std::iota(order.begin(), order.end(), 0);
      std::stable_sort(order.begin(), order.end(), [&](dim_t a, dim_t b) {
        return largest ? row[a] > row[b] : row[a] < row[b];
      });
      for (dim_t j = 0; j < k; ++j) {
        vals.st((o * k + j) * inner + in, row[order[j]]);
        idx.st((o * k + j) * inner + in, double(order[j]));
      }
    }
}

/// Every row along the last axis normalized, in double: the reference for
/// the one-pass kernels.
static void layerNorm(const LayerNormInst &I, const ExecContext &ctx) {
  Buf y(ctx, I.getDest()), x(ctx, I.getInput());
  Buf scale(ctx, I.getScale()), bias(ctx, I.getBias());
  dim_t n = x.dims().back(), rows = n ? x.size() / n : 0;
  for (dim_t r = 0; r < rows; ++r) {
    double mean = 0, var = 0;
    for (dim_t i = 0; i < n; ++i)
      mean += x.ld(r * n + i);
    mean /= double(n);
    for (dim_t i = 0; i < n; ++i) {
      double d = x.ld(r * n + i) - mean;
      var += d * d;
    }
    double inv = 1.0 / std::sqrt(var / double(n) + I.getEpsilon());
    for (dim_t i = 0; i < n; ++i)
      y.st(r * n + i,
           (x.ld(r * n + i) - mean) * inv * scale.ld(i) + bias.ld(i));
  }
}

bool interp::executeReduce(const Instruction &I, const ExecContext &ctx) {
  OpKind op = *opKindForInstr(I.getKind());
  switch (op) {
  case OpKind::ReduceSum:
  case OpKind::ReduceMax:
  case OpKind::ReduceMin:
  case OpKind::ReduceProd:
  case OpKind::ReduceMean:
    reduce(op, I, ctx);
    return true;
  case OpKind::ArgMax:
  case OpKind::ArgMin:
    argReduce(op == OpKind::ArgMax, I, ctx);
    return true;
  case OpKind::TopK:
    topK(llvm::cast<TopKInst>(I), ctx);
    return true;
  case OpKind::LayerNorm:
    layerNorm(llvm::cast<LayerNormInst>(I), ctx);
    return true;
  default:
    return false;
  }
}
