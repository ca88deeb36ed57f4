//===- Indexing.cpp - Gather, scatter, slice, pad and tile kernels --------===//
//
// These move whole elements, so they copy bytes for every element kind.
// Indices out of range after adding the dim for negative ones are clamped
// away: gathers give zeros and scatters skip the update.
//
//===----------------------------------------------------------------------===//
#include "Generic.h"

#include <cstring>

using namespace ember;
using namespace ember::interp;

/// Index \p v normalized for a dim of \p n, or -1 if out of range.
static dim_t normIndex(int64_t v, dim_t n) {
  if (v < 0)
    v += n;
  return v >= 0 && v < n ? v : -1;
}

static void gather(const GatherInst &I, const ExecContext &ctx) {
  Buf d(ctx, I.getDest()), x(ctx, I.getData()), ix(ctx, I.getIndices());
  unsigned axis = I.getAxis();
  dim_t outer, inner, n = x.dims()[axis], m = ix.size();
  splitAt(x.dims(), axis, outer, inner);
  size_t row = inner * elemSize(x.kind());
  for (dim_t o = 0; o < outer; ++o)
    for (dim_t j = 0; j < m; ++j) {
      char *dst = d.p + (o * m + j) * row;
      dim_t k = normIndex(ix.ldInt(j), n);
      if (k < 0)
        std::memset(dst, 0, row);
      else
        std::memcpy(dst, x.p + (o * n + k) * row, row);
    }
}

static void gatherElements(const GatherElementsInst &I,
                           const ExecContext &ctx) {
  Buf d(ctx, I.getDest()), x(ctx, I.getData()), ix(ctx, I.getIndices());
  unsigned axis = I.getAxis();
  size_t es = elemSize(x.kind());
  llvm::SmallVector<dim_t, kMaxRank> c;
  for (dim_t i = 0, e = d.size(); i < e; ++i) {
    unflatten(i, ix.dims(), c);
    c[axis] = normIndex(ix.ldInt(i), x.dims()[axis]);
    if (c[axis] < 0)
      std::memset(d.p + i * es, 0, es);
    else
      std::memcpy(d.p + i * es, x.p + flatten(c, x.dims()) * es, es);
  }
}

/// Calls fn(slot, srcOffsetElems, count) for every index tuple of a
/// GatherND/ScatterND over data \p x with \p b batch dims; srcOffset is -1
/// for an out-of-range tuple.
template <typename Fn>
static void forEachTuple(const Buf &x, const Buf &ix, int64_t b, Fn fn) {
  llvm::ArrayRef<dim_t> xd = x.dims(), id = ix.dims();
  dim_t last = id.back(), tuples = ix.size() / last, batch = 1;
  for (int64_t i = 0; i < b; ++i)
    batch *= xd[i];
  dim_t perBatch = tuples / batch, slice = 1, batchStride = 1;
  for (size_t i = b + last; i < xd.size(); ++i)
    slice *= xd[i];
  for (size_t i = b; i < xd.size(); ++i)
    batchStride *= xd[i];
  for (dim_t t = 0; t < tuples; ++t) {
    dim_t off = (t / perBatch) * batchStride, stride = batchStride;
    for (dim_t j = 0; j < last && off >= 0; ++j) {
      dim_t n = xd[b + j];
      stride /= n;
      dim_t k = normIndex(ix.ldInt(t * last + j), n);
      off = k < 0 ? -1 : off + k * stride;
    }
    fn(t, off, slice);
  }
}

static void gatherND(const GatherNDInst &I, const ExecContext &ctx) {
  Buf d(ctx, I.getDest()), x(ctx, I.getData()), ix(ctx, I.getIndices());
  size_t es = elemSize(x.kind());
  forEachTuple(x, ix, I.getBatchDims(), [&](dim_t t, dim_t off, dim_t n) {
    if (off < 0)
      std::memset(d.p + t * n * es, 0, n * es);
    else
      std::memcpy(d.p + t * n * es, x.p + off * es, n * es);
  });
}

/// Writes \p v into element \p i of \p d under reduction \p r.
static void combine(const Buf &d, dim_t i, double v, int64_t r) {
  double old = r ? d.ld(i) : 0;
  switch (r) {
  case 1:
    v = old + v;
    break;
  case 2:
    v = old * v;
    break;
  case 3:
    v = std::max(old, v);
    break;
  case 4:
    v = std::min(old, v);
    break;
  default:
    break;
  }
  d.st(i, v);
}

static void scatterElements(const ScatterElementsInst &I,
                            const ExecContext &ctx) {
  Buf d(ctx, I.getDest()), x(ctx, I.getData()), ix(ctx, I.getIndices()),
      u(ctx, I.getUpdates());
  if (d.p != x.p)
    std::memmove(d.p, x.p, d.t->sizeInBytes());
  unsigned axis = I.getAxis();
  int64_t r = I.getReduction();
  size_t es = elemSize(d.kind());
  llvm::SmallVector<dim_t, kMaxRank> c;
  for (dim_t i = 0, e = ix.size(); i < e; ++i) {
    unflatten(i, ix.dims(), c);
    c[axis] = normIndex(ix.ldInt(i), d.dims()[axis]);
    if (c[axis] < 0)
      continue;
    dim_t o = flatten(c, d.dims());
    if (r == 0)
      std::memcpy(d.p + o * es, u.p + i * es, es);
    else
      combine(d, o, u.ld(i), r);
  }
}

static void scatterND(const ScatterNDInst &I, const ExecContext &ctx) {
  Buf d(ctx, I.getDest()), x(ctx, I.getData()), ix(ctx, I.getIndices()),
      u(ctx, I.getUpdates());
  if (d.p != x.p)
    std::memmove(d.p, x.p, d.t->sizeInBytes());
  int64_t r = I.getReduction();
  size_t es = elemSize(d.kind());
  forEachTuple(d, ix, 0, [&](dim_t t, dim_t off, dim_t n) {
    if (off < 0)
      return;
    for (dim_t j = 0; j < n; ++j) {
      if (r == 0)
        std::memcpy(d.p + (off + j) * es, u.p + (t * n + j) * es, es);
      else
        combine(d, off + j, u.ld(t * n + j), r);
    }
  });
}

static void slice(const SliceInst &I, const ExecContext &ctx) {
  Buf d(ctx, I.getDest()), x(ctx, I.getInput());
  auto starts = I.getStarts(), steps = I.getSteps();
  size_t es = elemSize(x.kind());
  llvm::SmallVector<dim_t, kMaxRank> c;
  for (dim_t i = 0, e = d.size(); i < e; ++i) {
    unflatten(i, d.dims(), c);
    for (size_t k = 0; k < c.size(); ++k)
      c[k] = starts[k] + c[k] * steps[k];
    std::memcpy(d.p + i * es, x.p + flatten(c, x.dims()) * es, es);
  }
}

/// Source coordinate of padded coordinate \p p for an input dim of \p n,
/// or -1 for the constant value.
static dim_t padSource(dim_t p, dim_t before, dim_t n, int64_t mode) {
  dim_t s = p - before;
  if (s >= 0 && s < n)
    return s;
  if (mode == 0)
    return -1;
  if (mode == 2)
    return s < 0 ? 0 : n - 1;
  if (n == 1)
    return 0;
  dim_t period = 2 * (n - 1);
  s = ((s % period) + period) % period;
  return s < n ? s : period - s;
}

static void pad(const PadInst &I, const ExecContext &ctx) {
  Buf d(ctx, I.getDest()), x(ctx, I.getInput());
  auto pads = I.getPads();
  int64_t mode = I.getMode();
  size_t es = elemSize(x.kind()), r = x.dims().size();
  llvm::SmallVector<dim_t, kMaxRank> c;
  for (dim_t i = 0, e = d.size(); i < e; ++i) {
    unflatten(i, d.dims(), c);
    bool inside = true;
    for (size_t k = 0; k < r && inside; ++k) {
      c[k] = padSource(c[k], pads[k], x.dims()[k], mode);
      inside = c[k] >= 0;
    }
    if (inside)
      std::memcpy(d.p + i * es, x.p + flatten(c, x.dims()) * es, es);
    else
      d.st(i, I.getValue());
  }
}

static void tile(const TileInst &I, const ExecContext &ctx) {
  Buf d(ctx, I.getDest()), x(ctx, I.getInput());
  size_t es = elemSize(x.kind());
  llvm::SmallVector<dim_t, kMaxRank> c;
  for (dim_t i = 0, e = d.size(); i < e; ++i) {
    unflatten(i, d.dims(), c);
    for (size_t k = 0; k < c.size(); ++k)
      c[k] %= x.dims()[k];
    std::memcpy(d.p + i * es, x.p + flatten(c, x.dims()) * es, es);
  }
}

bool interp::executeIndexing(const Instruction &I, const ExecContext &ctx) {
  return runKernelFor(I, ctx, gather, gatherElements, gatherND, scatterElements,
                      scatterND, slice, pad, tile);
}
