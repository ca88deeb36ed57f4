//===- Reduce.cpp - Reductions, ArgMax/ArgMin, TopK and NMSKeep ----------===//
#include "Generic.h"

#include <algorithm>
#include <array>
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

/// ONNX NonMaxSuppression's overlap test in Float32, as onnxruntime makes
/// it: a positive intersection, positive areas and IoU > \p thr.
static bool overlaps(const float *a, const float *b, float thr) {
  float iw = std::min(a[2], b[2]) - std::max(a[0], b[0]);
  float ih = std::min(a[3], b[3]) - std::max(a[1], b[1]);
  if (iw <= 0 || ih <= 0)
    return false;
  float inter = iw * ih, areaA = (a[2] - a[0]) * (a[3] - a[1]),
        areaB = (b[2] - b[0]) * (b[3] - b[1]), uni = areaA + areaB - inter;
  if (inter <= 0 || areaA <= 0 || areaB <= 0 || uni <= 0)
    return false;
  return inter / uni > thr;
}

/// Greedy selection per row: each candidate in order is kept unless a
/// kept box overlaps it, until MaxOut are kept.
static void nmsKeep(const NMSKeepInst &I, const ExecContext &ctx) {
  Buf keep(ctx, I.getDestKeep()), slots(ctx, I.getDestSlots()),
      cand(ctx, I.getCandidates()), corners(ctx, I.getCorners());
  float thr = float(Buf(ctx, I.getIoUThreshold()).ld(0));
  double maxOut = Buf(ctx, I.getMaxOut()).ld(0);
  dim_t rows = cand.dims()[0], n = cand.dims()[1];
  std::vector<std::array<float, 4>> box(n);
  for (dim_t r = 0; r < rows; ++r) {
    std::vector<dim_t> kept;
    for (dim_t i = 0; i < n; ++i) {
      for (int c = 0; c < 4; ++c)
        box[i][c] = float(corners.ld((r * n + i) * 4 + c));
      bool ok = cand.ld(r * n + i) != 0 && double(kept.size()) < maxOut &&
                std::none_of(kept.begin(), kept.end(), [&](dim_t j) {
                  return overlaps(box[i].data(), box[j].data(), thr);
                });
      keep.st(r * n + i, ok ? 1.0 : 0.0);
      slots.st(r * n + i, 0);
      if (ok)
        kept.push_back(i);
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
  case OpKind::NMSKeep:
    nmsKeep(llvm::cast<NMSKeepInst>(I), ctx);
    return true;
  case OpKind::LayerNorm:
    layerNorm(llvm::cast<LayerNormInst>(I), ctx);
    return true;
  default:
    return false;
  }
}
