//===- ImportTensor.cpp - Shape, indexing and data-movement ONNX ops ------===//
//
// Shape and Size are always constants here (shapes are static); the other
// shape-producing ops read their shape inputs as constants. Ops that
// existing nodes express are composed: Unsqueeze/Squeeze are reshapes,
// Expand a broadcast, Split slices, DepthToSpace/SpaceToDepth
// reshape-transpose-reshape, OneHot and Trilu comparisons with a Where.
//
//===----------------------------------------------------------------------===//
#include "ImportHelpers.h"
#include "ImportRuntimeOps.h"
#include "ProtoTensor.h"

#include "ember/Base/ElemAccess.h"

#include <cmath>
#include <limits>

using namespace ember;
using namespace ember::onnximport;

#define TRY EMBER_ASSIGN_OR_RETURN

namespace {

NodeValue intConstant(ImportContext &ctx, const onnx::NodeProto &node,
                      llvm::ArrayRef<int64_t> vals, bool scalar) {
  Tensor t(ElemKind::Int64, scalar ? llvm::ArrayRef<dim_t>()
                                   : llvm::ArrayRef<dim_t>(dim_t(vals.size())));
  for (size_t i = 0; i < vals.size(); ++i)
    t.getHandle<int64_t>().raw(i) = vals[i];
  return ctx.module().createConstant(nameOf(node), std::move(t));
}

llvm::Error importShape(ImportContext &ctx, const onnx::NodeProto &node) {
  TRY(NodeValue x, ctx.input(node, 0));
  Ints d = dimsOf(x);
  int64_t r = d.size();
  AttrReader attrs(node);
  TRY(int64_t start, attrs.getInt("start", 0));
  TRY(int64_t end, attrs.getInt("end", r));
  start = std::clamp<int64_t>(start < 0 ? start + r : start, 0, r);
  end = std::clamp<int64_t>(std::max(end < 0 ? end + r : end, start), 0, r);
  // A scalar's shape (or an empty range) is an empty list: shape arithmetic
  // and ConstantOfShape take it; other consumers refuse empty data
  // (checkEmptyInputs).
  NodeValue dims =
      intConstant(ctx, node, Ints(d.begin() + start, d.begin() + end), false);
  TRY(dims, withExtentDim(ctx, node, dims, start));
  return ctx.setOutput(node, dims);
}

llvm::Error importSize(ImportContext &ctx, const onnx::NodeProto &node) {
  TRY(NodeValue x, ctx.input(node, 0));
  return ctx.setOutput(node,
                       intConstant(ctx, node, {x.getType()->size()}, true));
}

/// Axes from attribute "axes" (before \p inputOpset) or input 1.
llvm::Expected<std::optional<Ints>>
axesOf(ImportContext &ctx, const onnx::NodeProto &node, int64_t inputOpset) {
  if (ctx.opset() < inputOpset) {
    AttrReader attrs(node);
    if (!attrs.has("axes"))
      return std::optional<Ints>();
    TRY(Ints a, attrs.getInts("axes", std::nullopt));
    return std::optional<Ints>(a);
  }
  if (!ImportContext::hasInput(node, 1))
    return std::optional<Ints>();
  TRY(Ints a, ctx.constantInts(node, 1));
  return std::optional<Ints>(a);
}

llvm::Error importUnsqueeze(ImportContext &ctx, const onnx::NodeProto &node) {
  TRY(NodeValue x, ctx.input(node, 0));
  TRY(std::optional<Ints> axes, axesOf(ctx, node, 13));
  if (!axes)
    return fail(node, "missing axes");
  int64_t r = x.dims().size() + axes->size();
  std::vector<bool> inserted(r, false);
  for (int64_t a : *axes) {
    TRY(a, normAxis(node, a, r));
    if (inserted[a])
      return fail(node, "repeated axis");
    inserted[a] = true;
  }
  Ints out;
  size_t k = 0;
  for (int64_t i = 0; i < r; ++i)
    out.push_back(inserted[i] ? 1 : x.dims()[k++]);
  TRY(NodeValue y, reshapeTo(ctx, node, x, out));
  return ctx.setOutput(node, y);
}

llvm::Error importSqueeze(ImportContext &ctx, const onnx::NodeProto &node) {
  TRY(NodeValue x, ctx.input(node, 0));
  TRY(std::optional<Ints> axes, axesOf(ctx, node, 13));
  int64_t r = x.dims().size();
  std::vector<bool> drop(r, false);
  if (!axes) {
    for (int64_t i = 0; i < r; ++i)
      drop[i] = x.dims()[i] == 1;
  } else {
    for (int64_t a : *axes) {
      TRY(a, normAxis(node, a, r));
      if (x.dims()[a] != 1)
        return fail(node, "cannot squeeze dim " + llvm::Twine(a) + " of " +
                              x.getType()->toString());
      drop[a] = true;
    }
  }
  Ints out;
  for (int64_t i = 0; i < r; ++i)
    if (!drop[i])
      out.push_back(x.dims()[i]);
  TRY(NodeValue y, reshapeTo(ctx, node, x, out));
  return ctx.setOutput(node, y);
}

/// ONNX allows an index in [-n, n-1] into a dim of n and leaves the rest
/// undefined. A constant index outside is a mistake in the model, reported
/// when it compiles; computed ones follow the run-time rule of
/// docs/Reliability.md ("Indices out of range").
llvm::Error checkIndex(const onnx::NodeProto &node, int64_t v, dim_t n,
                       const llvm::Twine &dim) {
  if (v >= -n && v < n)
    return llvm::Error::success();
  return fail(node, "constant index " + llvm::Twine(v) +
                        " is out of range for " + dim + " of size " +
                        llvm::Twine(n) + " (valid: " + llvm::Twine(-n) +
                        " to " + llvm::Twine(n - 1) + ")");
}

/// The values of index input 1 when it is an integer constant.
std::optional<Ints> constantIndices(ImportContext &ctx,
                                    const onnx::NodeProto &node,
                                    NodeValue idx) {
  ElemKind k = idx.getElemKind();
  if (!llvm::isa<Constant>(idx.getNode()) ||
      (k != ElemKind::Int64 && k != ElemKind::Int32))
    return std::nullopt; // Computed, or a type the node itself refuses.
  return llvm::cantFail(ctx.constantInts(node, 1));
}

/// Gather, GatherElements, Scatter(Elements): every index addresses \p axis.
llvm::Error checkAxisIndices(ImportContext &ctx, const onnx::NodeProto &node,
                             NodeValue x, NodeValue idx, int64_t axis) {
  std::optional<Ints> c = constantIndices(ctx, node, idx);
  for (size_t i = 0; c && i < c->size(); ++i)
    EMBER_RETURN_IF_ERR(
        checkIndex(node, (*c)[i], x.dims()[axis], "axis " + llvm::Twine(axis)));
  return llvm::Error::success();
}

/// GatherND, ScatterND: element j of each index tuple addresses dim b + j.
llvm::Error checkTupleIndices(ImportContext &ctx, const onnx::NodeProto &node,
                              NodeValue x, NodeValue idx, int64_t b) {
  std::optional<Ints> c = constantIndices(ctx, node, idx);
  if (!c || idx.dims().empty())
    return llvm::Error::success();
  int64_t k = idx.dims().back();
  if (k <= 0 || b < 0 || b + k > int64_t(x.dims().size()))
    return llvm::Error::success(); // The node reports the bad shape.
  for (size_t i = 0; i < c->size(); ++i) {
    int64_t d = b + int64_t(i) % k;
    EMBER_RETURN_IF_ERR(
        checkIndex(node, (*c)[i], x.dims()[d], "dim " + llvm::Twine(d)));
  }
  return llvm::Error::success();
}

llvm::Error importGather(ImportContext &ctx, const onnx::NodeProto &node) {
  TRY(NodeValue x, ctx.input(node, 0));
  TRY(NodeValue idx, ctx.input(node, 1));
  TRY(int64_t axis, AttrReader(node).getInt("axis", 0));
  TRY(axis, normAxis(node, axis, x.dims().size()));
  EMBER_RETURN_IF_ERR(checkAxisIndices(ctx, node, x, idx, axis));
  TRY(idx, indicesFromExtent(ctx, node, idx, axis));
  TRY(NodeValue y,
      make(ctx, node, OpKind::Gather, {x, idx}, {Attr::makeInt(axis)}));
  return ctx.setOutput(node, y);
}

llvm::Error importGatherElements(ImportContext &ctx,
                                 const onnx::NodeProto &node) {
  TRY(NodeValue x, ctx.input(node, 0));
  TRY(NodeValue idx, ctx.input(node, 1));
  TRY(int64_t axis, AttrReader(node).getInt("axis", 0));
  TRY(axis, normAxis(node, axis, x.dims().size()));
  EMBER_RETURN_IF_ERR(checkAxisIndices(ctx, node, x, idx, axis));
  TRY(NodeValue y,
      make(ctx, node, OpKind::GatherElements, {x, idx}, {Attr::makeInt(axis)}));
  return ctx.setOutput(node, y);
}

llvm::Error importGatherND(ImportContext &ctx, const onnx::NodeProto &node) {
  TRY(NodeValue x, ctx.input(node, 0));
  TRY(NodeValue idx, ctx.input(node, 1));
  TRY(int64_t b, AttrReader(node).getInt("batch_dims", 0));
  EMBER_RETURN_IF_ERR(checkTupleIndices(ctx, node, x, idx, b));
  TRY(NodeValue y,
      make(ctx, node, OpKind::GatherND, {x, idx}, {Attr::makeInt(b)}));
  // A full-tuple gather of rank 0 is represented as [1] by the node.
  int64_t last = idx.dims().back();
  if (idx.dims().size() == 1 && int64_t(x.dims().size()) == last + b) {
    TRY(y, reshapeTo(ctx, node, y, {}));
  }
  return ctx.setOutput(node, y);
}

llvm::Expected<int64_t> reductionOf(const onnx::NodeProto &node) {
  TRY(std::string r, AttrReader(node).getString("reduction", "none"));
  static const char *kNames[] = {"none", "add", "mul", "max", "min"};
  for (int64_t i = 0; i < 5; ++i)
    if (r == kNames[i])
      return i;
  return fail(node, "unknown reduction '" + r + "'");
}

llvm::Error importScatterElements(ImportContext &ctx,
                                  const onnx::NodeProto &node) {
  TRY(NodeValue x, ctx.input(node, 0));
  TRY(NodeValue idx, ctx.input(node, 1));
  TRY(NodeValue upd, ctx.input(node, 2));
  TRY(int64_t axis, AttrReader(node).getInt("axis", 0));
  TRY(axis, normAxis(node, axis, x.dims().size()));
  TRY(int64_t red, reductionOf(node));
  EMBER_RETURN_IF_ERR(checkAxisIndices(ctx, node, x, idx, axis));
  // Index entries past a data-dependent extent do not exist: out of range,
  // they scatter nothing (torchvision's per-level RoiAlign results).
  TRY(idx,
      zeroPastExtent(ctx, node, idx, node.input(1), double(x.dims()[axis])));
  TRY(NodeValue y, make(ctx, node, OpKind::ScatterElements, {x, idx, upd},
                        {Attr::makeInt(axis), Attr::makeInt(red)}));
  return ctx.setOutput(node, y);
}

llvm::Error importScatterND(ImportContext &ctx, const onnx::NodeProto &node) {
  TRY(NodeValue x, ctx.input(node, 0));
  TRY(NodeValue idx, ctx.input(node, 1));
  TRY(NodeValue upd, ctx.input(node, 2));
  TRY(int64_t red, reductionOf(node));
  EMBER_RETURN_IF_ERR(checkTupleIndices(ctx, node, x, idx, 0));
  if (upd.dims().empty()) {
    TRY(upd, reshapeTo(ctx, node, upd, {1}));
  }
  TRY(NodeValue y,
      make(ctx, node, OpKind::ScatterND, {x, idx, upd}, {Attr::makeInt(red)}));
  return ctx.setOutput(node, y);
}

llvm::Error importSlice(ImportContext &ctx, const onnx::NodeProto &node) {
  TRY(NodeValue x, ctx.input(node, 0));
  int64_t r = x.dims().size();
  Ints starts, ends, axes, steps;
  AttrReader attrs(node);
  if (ctx.opset() < 10) {
    TRY(starts, attrs.getInts("starts", std::nullopt));
    TRY(ends, attrs.getInts("ends", std::nullopt));
    Ints all(starts.size());
    std::iota(all.begin(), all.end(), 0);
    TRY(axes, attrs.getInts("axes", all));
  } else {
    for (int i = 1; i < 5; ++i) {
      if (!ImportContext::hasInput(node, i))
        continue;
      TRY(NodeValue v, ctx.input(node, i));
      if (llvm::isa<Placeholder>(v.getNode()))
        return importRuntimeSlice(ctx, node, x);
    }
    TRY(std::optional<FixedSlice> fixed, fixedSliceLengths(ctx, node, x));
    if (fixed)
      return importRuntimeSlice(ctx, node, x, &*fixed);
    TRY(starts, ctx.constantInts(node, 1));
    // Ends computed from a data-dependent count (`x[:n]` of a counted x)
    // are taken at their bound; the count then cuts (sliceExtents).
    const ImportContext::ShapeExtent *se = ctx.shapeExtentOf(node.input(2));
    if (se) {
      ends = se->bound;
    } else {
      TRY(ends, ctx.constantInts(node, 2));
    }
    Ints all(starts.size());
    std::iota(all.begin(), all.end(), 0);
    TRY(axes, optionalInts(ctx, node, 3, all));
    TRY(steps, optionalInts(ctx, node, 4, Ints(starts.size(), 1)));
    const ImportContext::Extent *e = ctx.extentOf(node.input(0));
    if (se &&
        (se->at >= axes.size() || !e ||
         int64_t(e->axis) != (axes[se->at] + r) % std::max<int64_t>(r, 1)))
      return fail(node,
                  "an end computed from a data-dependent count must "
                  "cut the axis that count sizes (docs/RuntimeInputs.md)");
  }
  if (steps.empty())
    steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() ||
      steps.size() != starts.size())
    return fail(node, "starts, ends, axes and steps differ in length");
  Ints s(r, 0), st(r, 1), cnt = dimsOf(x);
  for (size_t i = 0; i < axes.size(); ++i) {
    TRY(int64_t a, normAxis(node, axes[i], r));
    int64_t n = x.dims()[a], b = starts[i], e = ends[i], step = steps[i];
    if (step == 0)
      return fail(node, "step 0");
    b = b < 0 ? b + n : b;
    e = e < 0 ? e + n : e;
    if (step > 0) {
      b = std::clamp<int64_t>(b, 0, n);
      e = std::clamp<int64_t>(e, 0, n);
      cnt[a] = e > b ? (e - b + step - 1) / step : 0;
    } else {
      b = std::clamp<int64_t>(b, 0, n - 1);
      e = std::clamp<int64_t>(e, -1, n - 1);
      cnt[a] = b > e ? (b - e - step - 1) / -step : 0;
    }
    s[a] = b;
    st[a] = step;
  }
  TRY(NodeValue y, sliceNode(ctx, node, x, s, st, cnt));
  return ctx.setOutput(node, y);
}

llvm::Error importTile(ImportContext &ctx, const onnx::NodeProto &node) {
  TRY(NodeValue x, ctx.input(node, 0));
  TRY(Ints reps, ctx.constantInts(node, 1));
  if (reps.size() != x.dims().size())
    return fail(node, "repeats must have one entry per dim");
  TRY(NodeValue y, make(ctx, node, OpKind::Tile, {x}, {Attr::makeInts(reps)}));
  return ctx.setOutput(node, y);
}

llvm::Error importExpand(ImportContext &ctx, const onnx::NodeProto &node) {
  TRY(NodeValue x, ctx.input(node, 0));
  TRY(Ints shape, shapeWithExtent(ctx, node, 1, x.dims().size()));
  // Bidirectional: the result is the broadcast of both shapes.
  Ints xd = dimsOf(x);
  size_t r = std::max(xd.size(), shape.size());
  xd.insert(xd.begin(), r - xd.size(), 1);
  shape.insert(shape.begin(), r - shape.size(), 1);
  for (size_t i = 0; i < r; ++i) {
    if (xd[i] != shape[i] && xd[i] != 1 && shape[i] != 1)
      return fail(node, "shape " + dimsToString(shape) +
                            " does not broadcast with " +
                            x.getType()->toString());
    shape[i] = std::max(xd[i], shape[i]);
  }
  TRY(NodeValue y, ctx.broadcastTo(node, x, shape));
  return ctx.setOutput(node, y);
}

llvm::Error importConstantOfShape(ImportContext &ctx,
                                  const onnx::NodeProto &node) {
  TRY(Ints shape, shapeWithExtent(ctx, node, 0, 0));
  ElemKind kind = ElemKind::Float32;
  double v = 0;
  if (const auto *a = AttrReader(node).find("value")) {
    auto t = tensorFromProto(a->t());
    if (!t)
      return fail(node, errorToString(t.takeError()));
    kind = t->getElemKind();
    v = t->elementAsDouble(0);
  }
  TRY(Type ty, makeCheckedType(kind, shape, ImportContext::describe(node)));
  return ctx.setOutput(node, constantOf(ctx, node, kind, ty.dims(), v));
}

/// Range to a limit that is a data-dependent count (the Shape of a counted
/// value: `torch.arange(len(boxes))`) with a constant start and delta > 0:
/// the values up to the bound, counted by ceil((count - start) / delta).
llvm::Error rangeToCount(ImportContext &ctx, const onnx::NodeProto &node,
                         const ImportContext::ShapeExtent &limit) {
  TRY(const Tensor *t0, ctx.constantInput(node, 0));
  TRY(double start, constantScalar(ctx, node, 0));
  TRY(double delta, constantScalar(ctx, node, 2));
  if (!(delta > 0) || limit.bound.size() != 1)
    return fail(node, "a limit from a data-dependent count needs a constant "
                      "start and a positive constant delta "
                      "(docs/RuntimeInputs.md)");
  double bound = std::ceil((double(limit.bound[0]) - start) / delta);
  if (!(bound >= 1 && bound <= double(kMaxFoldElements)))
    return fail(node, "the result's bound is empty or has more than " +
                          llvm::Twine(kMaxFoldElements) + " elements");
  int64_t n = int64_t(bound);
  Tensor t(t0->getElemKind(), {n});
  for (int64_t i = 0; i < n; ++i)
    storeElement(t.data(), t.getElemKind(), i, start + i * delta);
  EMBER_RETURN_IF_ERR(ctx.setOutput(
      node, ctx.module().createConstant(nameOf(node), std::move(t))));
  if (start == 0 && delta == 1) { // the count itself, one with its source's
    ctx.setExtent(node.output(0), {0, limit.count});
    return llvm::Error::success();
  }
  // The count in float (exact below 2^24, as the positions elsewhere).
  TRY(NodeValue c, castTo(ctx, node, limit.count, ElemKind::Float32));
  NodeValue s = constantOf(ctx, node, ElemKind::Float32, {1}, start);
  NodeValue d = constantOf(ctx, node, ElemKind::Float32, {1}, delta);
  TRY(c, binary(ctx, node, OpKind::Sub, c, s));
  TRY(c, binary(ctx, node, OpKind::Div, c, d));
  TRY(c, unary(ctx, node, OpKind::Ceil, c));
  NodeValue zero = constantOf(ctx, node, ElemKind::Float32, {1}, 0);
  TRY(c, binary(ctx, node, OpKind::Max, c, zero));
  TRY(c, castTo(ctx, node, c, ElemKind::Int64));
  ctx.setExtent(node.output(0), {0, c});
  return llvm::Error::success();
}

llvm::Error importRange(ImportContext &ctx, const onnx::NodeProto &node) {
  if (const ImportContext::ShapeExtent *se = ctx.shapeExtentOf(node.input(1)))
    return rangeToCount(ctx, node, *se);
  for (int i = 0; i < 3; ++i) {
    TRY(NodeValue v, ctx.input(node, i));
    if (!llvm::isa<Constant>(v.getNode()))
      return importRuntimeRange(ctx, node);
  }
  TRY(const Tensor *t0, ctx.constantInput(node, 0));
  TRY(double start, constantScalar(ctx, node, 0));
  TRY(double limit, constantScalar(ctx, node, 1));
  TRY(double delta, constantScalar(ctx, node, 2));
  if (delta == 0)
    return fail(node, "delta is 0");
  // Computed at import: the length is bounded by the fold limit before it
  // is converted (it may be huge, infinite or NaN).
  double count = std::ceil((limit - start) / delta);
  if (!(count <= double(kMaxFoldElements)))
    return fail(node, "the result has more than " +
                          llvm::Twine(kMaxFoldElements) +
                          " elements (it is computed at import)");
  int64_t n = int64_t(std::max(count, 0.0));
  if (n == 0)
    return ctx.setOutput(node,
                         emptyConstant(ctx, node, t0->getElemKind(), {0}));
  Tensor t(t0->getElemKind(), {n});
  for (int64_t i = 0; i < n; ++i)
    storeElement(t.data(), t.getElemKind(), i, start + i * delta);
  return ctx.setOutput(node,
                       ctx.module().createConstant(nameOf(node), std::move(t)));
}

llvm::Error importEyeLike(ImportContext &ctx, const onnx::NodeProto &node) {
  TRY(NodeValue x, ctx.input(node, 0));
  AttrReader attrs(node);
  TRY(int64_t k, attrs.getInt("k", 0));
  TRY(ElemKind kind, dtypeOr(node, x.getElemKind()));
  if (x.dims().size() != 2)
    return fail(node, "input must be 2-D");
  int64_t n = x.dims()[0], m = x.dims()[1];
  // A diagonal outside [-n, m] has no ones; clamping keeps i + k in range.
  k = std::clamp<int64_t>(k, -n, m);
  if (n * m > kMaxFoldElements) {
    // Too large to build at import: ones where j - i == k, in the graph.
    if (n > kMaxFoldElements || m > kMaxFoldElements)
      return fail(node,
                  "each dim must be at most " + llvm::Twine(kMaxFoldElements));
    TRY(NodeValue rows, iotaConstant(ctx, node, n, {dim_t(n), 1}));
    TRY(NodeValue cols, iotaConstant(ctx, node, m, {1, dim_t(m)}));
    TRY(NodeValue diag, binary(ctx, node, OpKind::Sub, cols, rows));
    NodeValue kv = constantOf(ctx, node, ElemKind::Int64, {1, 1}, double(k));
    TRY(NodeValue on, binary(ctx, node, OpKind::Equal, diag, kv));
    TRY(NodeValue y, castTo(ctx, node, on, kind));
    return ctx.setOutput(node, y);
  }
  Tensor t(kind, x.dims());
  for (int64_t i = 0; i < n; ++i)
    if (i + k >= 0 && i + k < m)
      storeElement(t.data(), kind, i * m + i + k, 1.0);
  return ctx.setOutput(node,
                       ctx.module().createConstant(nameOf(node), std::move(t)));
}

llvm::Error importOneHot(ImportContext &ctx, const onnx::NodeProto &node) {
  TRY(NodeValue idx, ctx.input(node, 0));
  TRY(int64_t depth, constantScalarInt(ctx, node, 1));
  TRY(NodeValue values, ctx.input(node, 2));
  dim_t idxSize = std::max<dim_t>(idx.getType()->size(), 1);
  if (depth < 1 || depth > kMaxTensorElements / idxSize ||
      values.getType()->size() != 2)
    return fail(node, "depth must be positive and not too large, and values "
                      "must hold 2 entries");
  int64_t r = idx.dims().size() + 1;
  TRY(int64_t axis, AttrReader(node).getInt("axis", -1));
  TRY(axis, normAxis(node, axis, r));
  Ints out = dimsOf(idx), idxShape = dimsOf(idx), iotaShape(r, 1);
  out.insert(out.begin() + axis, depth);
  idxShape.insert(idxShape.begin() + axis, 1);
  iotaShape[axis] = depth;
  TRY(NodeValue i64, castTo(ctx, node, idx, ElemKind::Int64));
  // Negative indices count from the end.
  TRY(i64, wrapNegative(ctx, node, i64, depth));
  TRY(i64, reshapeTo(ctx, node, i64, idxShape));
  TRY(NodeValue iota, iotaConstant(ctx, node, depth, iotaShape));
  TRY(NodeValue eq, binary(ctx, node, OpKind::Equal, i64, iota));
  TRY(NodeValue flat, reshapeTo(ctx, node, values, {2}));
  TRY(NodeValue off, sliceNode(ctx, node, flat, {0}, {1}, {1}));
  TRY(NodeValue on, sliceNode(ctx, node, flat, {1}, {1}, {1}));
  TRY(off, ctx.broadcastTo(node, off, out));
  TRY(on, ctx.broadcastTo(node, on, out));
  TRY(NodeValue y, make(ctx, node, OpKind::Where, {eq, on, off}));
  return ctx.setOutput(node, y);
}

llvm::Error importTrilu(ImportContext &ctx, const onnx::NodeProto &node) {
  TRY(NodeValue x, ctx.input(node, 0));
  TRY(int64_t upper, AttrReader(node).getInt("upper", 1));
  size_t r = x.dims().size();
  if (r < 2)
    return fail(node, "input must have rank >= 2");
  if (x.getType()->size() == 0) // Empty in, empty out.
    return ctx.setOutput(node, x);
  int64_t n = x.dims()[r - 2], m = x.dims()[r - 1];
  // A broadcast zero: a Constant of x's shape would grow with it.
  NodeValue zero = constantOf(ctx, node, x.getElemKind(), Ints(r, 1), 0);
  TRY(zero, ctx.broadcastTo(node, zero, x.dims()));
  bool runtimeK =
      ImportContext::hasInput(node, 1) &&
      !llvm::isa<Constant>(llvm::cantFail(ctx.input(node, 1)).getNode());
  int64_t k = 0;
  if (ImportContext::hasInput(node, 1) && !runtimeK) {
    TRY(k, constantScalarInt(ctx, node, 1));
  }
  NodeValue zeroMask;
  if (!runtimeK && n * m <= kMaxFoldElements) {
    Tensor mask(ElemKind::Bool, {n, m});
    auto *p = reinterpret_cast<uint8_t *>(mask.data());
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < m; ++j)
        p[i * m + j] = upper ? (j - i < k) : (j - i > k);
    zeroMask =
        ctx.module().createConstant(nameOf(node) + ".mask", std::move(mask));
  } else {
    TRY(zeroMask, triluZeroMask(ctx, node, n, m, upper, runtimeK, k));
  }
  TRY(zeroMask, ctx.broadcastTo(node, zeroMask, x.dims()));
  TRY(NodeValue y, make(ctx, node, OpKind::Where, {zeroMask, zero, x}));
  return ctx.setOutput(node, y);
}

llvm::Expected<NodeValue> transposeNode(ImportContext &ctx,
                                        const onnx::NodeProto &node,
                                        NodeValue x, const Ints &perm) {
  auto t = ctx.fn().tryCreateTranspose(nameOf(node), x, perm);
  if (!t)
    return fail(node, errorToString(t.takeError()));
  return NodeValue(*t);
}

template <bool ToSpace>
llvm::Error importDepthSpace(ImportContext &ctx, const onnx::NodeProto &node) {
  TRY(NodeValue x, ctx.input(node, 0));
  AttrReader attrs(node);
  TRY(int64_t b, attrs.getInt("blocksize", std::nullopt));
  TRY(std::string mode, attrs.getString("mode", "DCR"));
  if (x.dims().size() != 4 || b < 1)
    return fail(node, "needs a 4-D input and a positive blocksize");
  int64_t N = x.dims()[0], C = x.dims()[1], H = x.dims()[2], W = x.dims()[3];
  NodeValue y;
  if (ToSpace) {
    // A blocksize whose square exceeds C cannot divide it (nor be squared
    // without overflow).
    if (b > C / b || C % (b * b))
      return fail(node, "channels are not a multiple of blocksize^2");
    bool crd = mode == "CRD";
    Ints shape = crd ? Ints{N, C / (b * b), b, b, H, W}
                     : Ints{N, b, b, C / (b * b), H, W};
    Ints perm = crd ? Ints{0, 1, 4, 2, 5, 3} : Ints{0, 3, 4, 1, 5, 2};
    TRY(y, reshapeTo(ctx, node, x, shape));
    TRY(y, transposeNode(ctx, node, y, perm));
    TRY(y, reshapeTo(ctx, node, y, {N, C / (b * b), H * b, W * b}));
  } else {
    if (H % b || W % b)
      return fail(node, "spatial dims are not multiples of blocksize");
    TRY(y, reshapeTo(ctx, node, x, {N, C, H / b, b, W / b, b}));
    TRY(y, transposeNode(ctx, node, y, {0, 3, 5, 1, 2, 4}));
    TRY(y, reshapeTo(ctx, node, y, {N, C * b * b, H / b, W / b}));
  }
  return ctx.setOutput(node, y);
}

/// TopK whose K is not a constant and whose outputs the model does not
/// declare: sized for the whole axis, the extent is K (docs/RuntimeInputs.md).
bool dynamicK(ImportContext &ctx, const onnx::NodeProto &node) {
  if (!ImportContext::hasInput(node, 1) || !ctx.isBound(node.input(1)))
    return false;
  NodeValue kv = llvm::cantFail(ctx.get(node.input(1)));
  for (const std::string &out : node.output())
    if (!out.empty() && ctx.declaredDims(out))
      return false;
  return !llvm::isa<Constant>(kv.getNode());
}

/// TopK along the data-dependent extent of \p x: the entries past it are
/// ranked last (set to -inf for the largest, +inf for the smallest), and
/// the outputs hold min(K, count) valid entries (\p count, the K extent,
/// becomes that; a constant \p k gives one).
llvm::Expected<NodeValue> rankExtentLast(ImportContext &ctx,
                                         const onnx::NodeProto &node,
                                         NodeValue x, int64_t axis, int64_t k,
                                         bool largest, NodeValue &count) {
  const ImportContext::Extent *e = ctx.extentOf(node.input(0));
  if (!e || int64_t(e->axis) != axis)
    return x;
  if (!isFloatKind(x.getElemKind()))
    return fail(node, "integer values with a data-dependent extent on the "
                      "ranked axis are not supported (docs/RuntimeInputs.md)");
  double inf = std::numeric_limits<double>::infinity();
  TRY(x, zeroPastExtent(ctx, node, x, node.input(0), largest ? -inf : inf));
  NodeValue kc = count ? count : int64Constant(ctx, node, "k", {1}, {k});
  TRY(count, binary(ctx, node, OpKind::Min, kc, e->count));
  return x;
}

llvm::Error importTopK(ImportContext &ctx, const onnx::NodeProto &node) {
  TRY(NodeValue x, ctx.input(node, 0));
  AttrReader attrs(node);
  int64_t k = 0;
  if (ctx.opset() < 10) {
    TRY(k, attrs.getInt("k", std::nullopt));
  } else if (!dynamicK(ctx, node)) {
    TRY(Ints kv, ctx.constantInts(node, 1));
    if (kv.size() != 1)
      return fail(node, "K must hold one value");
    k = kv[0];
  }
  TRY(int64_t axis, attrs.getInt("axis", -1));
  TRY(axis, normAxis(node, axis, x.dims().size()));
  TRY(int64_t largest, attrs.getInt("largest", 1));
  NodeValue count;
  if (ctx.opset() >= 10 && dynamicK(ctx, node)) {
    // All n sorted; the first min(K, n) are the result.
    k = x.dims()[axis];
    TRY(count, ctx.input(node, 1));
    if (count.getType()->size() != 1)
      return fail(node, "K must hold one value");
    TRY(count, castTo(ctx, node, count, ElemKind::Int64));
    TRY(count, reshapeTo(ctx, node, count, {1}));
    TRY(count, binary(ctx, node, OpKind::Min, count,
                      int64Constant(ctx, node, "n", {1}, {k})));
    TRY(count, binary(ctx, node, OpKind::Max, count,
                      int64Constant(ctx, node, "zero", {1}, {0})));
  }
  TRY(x, rankExtentLast(ctx, node, x, axis, k, largest != 0, count));
  AttrList a = {Attr::makeInt(k), Attr::makeInt(axis), Attr::makeInt(largest)};
  TRY(NodeValue v, make(ctx, node, OpKind::TopK, {x}, a, 0));
  bindOutput(ctx, node, 0, v);
  bindOutput(ctx, node, 1, NodeValue(v.getNode(), 1));
  for (int i = 0; count && i < 2 && i < node.output_size(); ++i)
    ctx.setExtent(node.output(i), {unsigned(axis), count});
  return llvm::Error::success();
}

llvm::Error importCumSum(ImportContext &ctx, const onnx::NodeProto &node) {
  TRY(NodeValue x, ctx.input(node, 0));
  AttrReader attrs(node);
  TRY(int64_t excl, attrs.getInt("exclusive", 0));
  TRY(int64_t rev, attrs.getInt("reverse", 0));
  AttrList list = {Attr::makeInt(0), Attr::makeInt(excl), Attr::makeInt(rev)};
  TRY(NodeValue axisV, ctx.input(node, 1));
  auto *p = llvm::dyn_cast<Placeholder>(axisV.getNode());
  if (p && !p->isOutput())
    return importRuntimeAxisCumSum(ctx, node, x, p, list);
  TRY(int64_t axisI, constantScalarInt(ctx, node, 1));
  TRY(int64_t axis, normAxis(node, axisI, x.dims().size()));
  list[0] = Attr::makeInt(axis);
  TRY(NodeValue y, make(ctx, node, OpKind::CumSum, {x}, list));
  return ctx.setOutput(node, y);
}

/// True when input \p i of \p node is a run-time value (a graph input or
/// computed from one), not a constant.
bool isRunTime(ImportContext &ctx, const onnx::NodeProto &node, int i) {
  if (!ImportContext::hasInput(node, i) || !ctx.isBound(node.input(i)))
    return false;
  NodeValue v = llvm::cantFail(ctx.get(node.input(i)));
  return !llvm::isa<Constant>(v.getNode());
}

/// Compress with a constant condition: a Gather of the selected indices.

llvm::Error importCompress(ImportContext &ctx, const onnx::NodeProto &node) {
  TRY(NodeValue x, ctx.input(node, 0));
  AttrReader attrs(node);
  int64_t axis = 0;
  if (attrs.has("axis")) {
    TRY(axis, attrs.getInt("axis", std::nullopt));
    TRY(axis, normAxis(node, axis, x.dims().size()));
  } else {
    TRY(x, reshapeTo(ctx, node, x, {x.getType()->size()}));
  }
  if (isRunTime(ctx, node, 1))
    return onnximport::importRuntimeCompress(ctx, node, x, axis);
  TRY(const Tensor *cond, ctx.constantInput(node, 1));
  Ints sel;
  for (int64_t i = 0; i < cond->size() && i < x.dims()[axis]; ++i)
    if (cond->elementAsDouble(i) != 0)
      sel.push_back(i);
  if (sel.empty()) {
    Ints dims = dimsOf(x);
    dims[axis] = 0;
    return ctx.setOutput(node, emptyConstant(ctx, node, x.getElemKind(), dims));
  }
  NodeValue idx = intConstant(ctx, node, sel, false);
  TRY(NodeValue y,
      make(ctx, node, OpKind::Gather, {x, idx}, {Attr::makeInt(axis)}));
  return ctx.setOutput(node, y);
}

/// NonZero of a constant: its result shape depends on the values.
llvm::Error importNonZero(ImportContext &ctx, const onnx::NodeProto &node) {
  if (isRunTime(ctx, node, 0)) {
    TRY(NodeValue x, ctx.input(node, 0));
    // Entries past a data-dependent extent are not part of the value.
    TRY(x, zeroPastExtent(ctx, node, x, node.input(0)));
    return onnximport::importRuntimeNonZero(ctx, node, x);
  }
  TRY(const Tensor *t, ctx.constantInput(node, 0));
  llvm::ArrayRef<dim_t> d = t->dims();
  Ints flat;
  for (int64_t i = 0; i < t->size(); ++i)
    if (t->elementAsDouble(i) != 0)
      flat.push_back(i);
  int64_t r = std::max<size_t>(d.size(), 1), n = flat.size();
  if (flat.empty())
    return ctx.setOutput(node,
                         emptyConstant(ctx, node, ElemKind::Int64, {r, 0}));
  Tensor out(ElemKind::Int64, {r, n});
  for (int64_t j = 0; j < n; ++j) {
    int64_t f = flat[j];
    for (int64_t i = int64_t(d.size()) - 1; i >= 0; --i) {
      out.getHandle<int64_t>().raw(i * n + j) = f % d[i];
      f /= d[i];
    }
  }
  return ctx.setOutput(
      node, ctx.module().createConstant(nameOf(node), std::move(out)));
}

/// Concat that skips empty inputs (shape arithmetic produces them).
llvm::Error importConcatAny(ImportContext &ctx, const onnx::NodeProto &node) {
  std::vector<NodeValue> ins;
  NodeValue first;
  for (int i = 0; i < node.input_size(); ++i) {
    TRY(NodeValue v, ctx.input(node, i));
    first = first ? first : v;
    if (v.getType()->size() != 0)
      ins.push_back(v);
  }
  if (!first)
    return fail(node, "needs at least one input");
  TRY(int64_t axis, AttrReader(node).getInt("axis", std::nullopt));
  TRY(axis, normAxis(node, axis, first.dims().size()));
  if (ins.empty()) {
    Ints d = dimsOf(first);
    d[axis] = 0;
    return ctx.setOutput(
        node, ctx.module().createConstant(nameOf(node),
                                          Tensor(first.getElemKind(), d)));
  }
  if (ins.size() == 1)
    return ctx.setOutput(node, ins[0]);
  TRY(NodeValue y, make(ctx, node, OpKind::Concat, ins, {Attr::makeInt(axis)}));
  return ctx.setOutput(node, y);
}

const ImportRule kTensorRules[] = {
    {"Concat", 4, 17, importConcatAny},
    {"Shape", 1, 17, importShape},
    {"Size", 1, 17, importSize},
    {"Unsqueeze", 1, 17, importUnsqueeze},
    {"Squeeze", 1, 17, importSqueeze},
    {"Gather", 1, 17, importGather},
    {"GatherElements", 11, 17, importGatherElements},
    {"GatherND", 11, 17, importGatherND},
    {"ScatterElements", 11, 18, importScatterElements},
    {"Scatter", 9, 10, importScatterElements},
    {"ScatterND", 11, 18, importScatterND},
    {"Slice", 1, 17, importSlice},
    {"Tile", 6, 17, importTile},
    {"Expand", 8, 17, importExpand},
    {"ConstantOfShape", 9, 17, importConstantOfShape},
    {"Range", 11, 17, importRange},
    {"EyeLike", 9, 17, importEyeLike},
    {"OneHot", 9, 17, importOneHot},
    {"Trilu", 14, 17, importTrilu},
    {"DepthToSpace", 1, 17, importDepthSpace<true>},
    {"SpaceToDepth", 1, 17, importDepthSpace<false>},
    {"TopK", 1, 17, importTopK},
    {"CumSum", 11, 17, importCumSum},
    {"Compress", 9, 17, importCompress},
    {"NonZero", 9, 17, importNonZero},
};

} // namespace

RuleList onnximport::getTensorImportRules() { return kTensorRules; }
