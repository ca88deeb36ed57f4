//===- ImportRuntimeOps.cpp - Ops with genuine run-time operands ----------===//
//
// Operands that are graph inputs but leave the output shape alone are
// computed with in the graph (docs/RuntimeInputs.md, path 2): Trilu's k,
// CumSum's axis and Range's start and delta (its length is the declared
// output length, checked at run time like the implied operands).
//
//===----------------------------------------------------------------------===//
#include "ImportRuntimeOps.h"

#include "ember/Base/ElemAccess.h"

using namespace ember;
using namespace ember::onnximport;

#define TRY EMBER_ASSIGN_OR_RETURN

/// The Trilu mask computed in the graph: for a run-time k (the output
/// shape does not depend on it), or a mask too large to build at import.
/// The diagonal offsets j - i come from two iotas, so nothing here grows
/// with n x m.
llvm::Expected<NodeValue> onnximport::triluZeroMask(ImportContext &ctx,
                                                    const onnx::NodeProto &node,
                                                    int64_t n, int64_t m,
                                                    bool upper, bool runtimeK,
                                                    int64_t k) {
  if (n > kMaxFoldElements || m > kMaxFoldElements)
    return fail(node, "the last two dims (" + llvm::Twine(n) + " x " +
                          llvm::Twine(m) + ") must each be at most " +
                          llvm::Twine(kMaxFoldElements));
  NodeValue kv = constantOf(ctx, node, ElemKind::Int64, {1, 1}, double(k));
  if (runtimeK) {
    TRY(kv, ctx.input(node, 1));
    if (kv.getType()->size() != 1)
      return fail(node, "input 1 (k) must be a scalar");
    TRY(kv, castTo(ctx, node, kv, ElemKind::Int64));
    TRY(kv, reshapeTo(ctx, node, kv, {1, 1}));
  }
  TRY(NodeValue rows, iotaConstant(ctx, node, n, {dim_t(n), 1}));
  TRY(NodeValue cols, iotaConstant(ctx, node, m, {1, dim_t(m)}));
  TRY(NodeValue diag, binary(ctx, node, OpKind::Sub, cols, rows));
  // upper keeps j - i >= k: zero where j - i < k; lower keeps j - i <= k.
  return upper ? binary(ctx, node, OpKind::Less, diag, kv)
               : binary(ctx, node, OpKind::Less, kv, diag);
}

/// CumSum along a run-time axis: the output shape does not depend on it, so
/// the sum along every axis is computed and the axis selects one; the
/// node is re-imported with the axis before each run, which rejects an
/// axis out of range (docs/RuntimeInputs.md).
llvm::Error onnximport::importRuntimeAxisCumSum(ImportContext &ctx,
                                                const onnx::NodeProto &node,
                                                NodeValue x,
                                                Placeholder *axisInput,
                                                AttrList attrs) {
  int64_t r = x.dims().size();
  if (r == 0 || axisInput->getType()->size() != 1)
    return fail(node, "needs an input of rank >= 1 and a scalar axis");
  ctx.checkAtRunTime(1, axisInput);
  TRY(NodeValue a, castTo(ctx, node, NodeValue(axisInput), ElemKind::Int64));
  TRY(a, reshapeTo(ctx, node, a, Ints(r, 1)));
  TRY(a, wrapNegative(ctx, node, a, r));
  NodeValue y;
  for (int64_t axis = r - 1; axis >= 0; --axis) {
    attrs[0] = Attr::makeInt(axis);
    TRY(NodeValue s, make(ctx, node, OpKind::CumSum, {x}, attrs));
    if (axis == r - 1) {
      y = s;
      continue;
    }
    TRY(NodeValue is,
        binary(ctx, node, OpKind::Equal, a, constantLike(ctx, node, a, axis)));
    TRY(is, ctx.broadcastTo(node, is, x.dims()));
    TRY(y, make(ctx, node, OpKind::Where, {is, s, y}));
  }
  return ctx.setOutput(node, y);
}

/// The declared dims of output 0 when they have rank \p r, or an error
/// naming input \p i (the run-time operand the declared shape stands for).
static llvm::Expected<const std::vector<int64_t> *>
declaredOutputOfRank(ImportContext &ctx, const onnx::NodeProto &node, int i,
                     int64_t r) {
  const std::vector<int64_t> *d =
      node.output_size() ? ctx.declaredDims(node.output(0)) : nullptr;
  if (!d || int64_t(d->size()) != r)
    return fail(node, "input '" + node.input(i) +
                          "' must be a constant (an initializer or a "
                          "Constant node) or implied by the declared output "
                          "shapes: the output has no declared static shape");
  return d;
}

/// The graph input behind input \p i of \p node, or null for a constant;
/// an error for a value computed at run time.
static llvm::Expected<Placeholder *>
graphInputOf(ImportContext &ctx, const onnx::NodeProto &node, int i) {
  TRY(NodeValue v, ctx.input(node, i));
  if (llvm::isa<Constant>(v.getNode()))
    return nullptr;
  auto *p = llvm::dyn_cast<Placeholder>(v.getNode());
  if (!p || p->isOutput())
    return fail(node, "input '" + node.input(i) +
                          "' must be a constant (an initializer or a "
                          "Constant node) or a graph input");
  return p;
}

/// Marks Range's operand \p i for the run-time check: a graph input, or
/// one cast once (an expanded window function casts its size to float).
llvm::Error checkRangeOperand(ImportContext &ctx, const onnx::NodeProto &node,
                              int i) {
  TRY(NodeValue v, ctx.input(node, i));
  Node *n = v.getNode();
  if (n->getKindName() == "Cast" && n->getNumInputs() == 1) {
    auto *p = llvm::dyn_cast<Placeholder>(n->getNthInput(0).getNode());
    if (p && !p->isOutput()) {
      ctx.checkAtRunTime(i, p, v.getElemKind());
      return llvm::Error::success();
    }
  }
  TRY(Placeholder * p, graphInputOf(ctx, node, i));
  if (p)
    ctx.checkAtRunTime(i, p);
  return llvm::Error::success();
}

llvm::Error onnximport::importRuntimeRange(ImportContext &ctx,
                                           const onnx::NodeProto &node) {
  // Dims suggested through elementwise ops are as good as declared ones
  // here: the run-time check compares the actual length with them.
  const std::vector<int64_t> *d =
      node.output_size() ? ctx.declaredOrSuggestedDims(node.output(0))
                         : nullptr;
  if (!d || d->size() != 1 || (*d)[0] < 1)
    return fail(node, "input '" + node.input(0) +
                          "' must be a constant (an initializer or a "
                          "Constant node) or implied by the declared output "
                          "shapes: the output has no declared non-empty "
                          "1-D shape");
  for (int i = 0; i < 3; ++i)
    EMBER_RETURN_IF_ERR(checkRangeOperand(ctx, node, i));
  TRY(NodeValue start, ctx.input(node, 0));
  TRY(NodeValue delta, ctx.input(node, 2));
  if (start.getType()->size() != 1 || delta.getType()->size() != 1)
    return fail(node, "start and delta must be scalars");
  int64_t n = (*d)[0];
  ElemKind kind = start.getElemKind();
  TRY(NodeValue iota, iotaConstant(ctx, node, n, {dim_t(n)}, kind));
  TRY(start, reshapeTo(ctx, node, start, {1}));
  TRY(delta, reshapeTo(ctx, node, delta, {1}));
  TRY(NodeValue scaled, binary(ctx, node, OpKind::Mul, iota, delta));
  TRY(NodeValue y, binary(ctx, node, OpKind::Add, scaled, start));
  return ctx.setOutput(node, y);
}

namespace {

/// Element \p j of the int64 vector \p v, as a [1] tensor.
llvm::Expected<NodeValue> elementAt(ImportContext &ctx,
                                    const onnx::NodeProto &node, NodeValue v,
                                    int64_t j) {
  return make(ctx, node, OpKind::Slice, {v},
              {Attr::makeInts({j}), Attr::makeInts({1}), Attr::makeInts({1})});
}

/// Input \p i of a Slice as an int64 vector of \p k entries, or \p dflt
/// when absent.
llvm::Expected<NodeValue> sliceParam(ImportContext &ctx,
                                     const onnx::NodeProto &node, int i,
                                     int64_t k, int64_t dflt, bool iota) {
  if (!ImportContext::hasInput(node, i)) {
    Tensor t(ElemKind::Int64, {k});
    for (int64_t j = 0; j < k; ++j)
      t.getHandle<int64_t>().raw(j) = iota ? j : dflt;
    return NodeValue(ctx.module().createConstant(
        nameOf(node) + ".param" + std::to_string(i), std::move(t)));
  }
  TRY(NodeValue v, ctx.input(node, i));
  if (v.dims().size() != 1 || v.dims()[0] != k)
    return fail(node, "starts, ends, axes and steps differ in length");
  return castTo(ctx, node, v, ElemKind::Int64);
}

/// The per-entry (axis, start, step) of a run-time Slice, as [1] tensors
/// with negative axes normalized for rank \p r.
struct SliceEntry {
  NodeValue axis, start, step;
};

llvm::Expected<std::vector<SliceEntry>>
sliceEntries(ImportContext &ctx, const onnx::NodeProto &node, int64_t r) {
  TRY(NodeValue starts, ctx.input(node, 1));
  if (starts.dims().size() != 1)
    return fail(node, "starts must be 1-D");
  int64_t k = starts.dims()[0];
  // The axes are distinct (ONNX), so at most one entry per data dim; the
  // check also bounds the entries built below.
  if (k > r)
    return fail(node, "starts holds " + llvm::Twine(k) +
                          " entries, more than the data's rank " +
                          llvm::Twine(r));
  TRY(starts, sliceParam(ctx, node, 1, k, 0, false));
  TRY(NodeValue axes, sliceParam(ctx, node, 3, k, 0, true));
  TRY(NodeValue steps, sliceParam(ctx, node, 4, k, 1, false));
  std::vector<SliceEntry> entries;
  for (int64_t j = 0; j < k; ++j) {
    SliceEntry e;
    TRY(e.axis, elementAt(ctx, node, axes, j));
    TRY(e.start, elementAt(ctx, node, starts, j));
    TRY(e.step, elementAt(ctx, node, steps, j));
    TRY(e.axis, wrapNegative(ctx, node, e.axis, r));
    entries.push_back(e);
  }
  return entries;
}

/// The first index along data dim \p d of extent \p n, and the step: the
/// entry naming \p d (start 0, step 1 if none), the start normalized and
/// clamped as ONNX Slice does.
llvm::Expected<std::pair<NodeValue, NodeValue>>
startAndStep(ImportContext &ctx, const onnx::NodeProto &node,
             const std::vector<SliceEntry> &entries, int64_t d, int64_t n) {
  NodeValue one = constantOf(ctx, node, ElemKind::Int64, {1}, 1);
  NodeValue zero = constantOf(ctx, node, ElemKind::Int64, {1}, 0);
  NodeValue b = zero, step = one;
  for (const SliceEntry &e : entries) {
    TRY(NodeValue is,
        make(ctx, node, OpKind::Equal,
             {e.axis, constantOf(ctx, node, ElemKind::Int64, {1}, double(d))}));
    TRY(b, make(ctx, node, OpKind::Where, {is, e.start, b}));
    TRY(step, make(ctx, node, OpKind::Where, {is, e.step, step}));
  }
  auto lit = [&](double v) {
    return constantOf(ctx, node, ElemKind::Int64, {1}, v);
  };
  TRY(b, wrapNegative(ctx, node, b, n));
  TRY(NodeValue neg, make(ctx, node, OpKind::Less, {b, zero}));
  TRY(b, make(ctx, node, OpKind::Where, {neg, zero, b}));
  TRY(NodeValue back, make(ctx, node, OpKind::Less, {step, zero}));
  TRY(NodeValue hi, make(ctx, node, OpKind::Where, {back, lit(n - 1), lit(n)}));
  TRY(NodeValue over, make(ctx, node, OpKind::Less, {hi, b}));
  TRY(b, make(ctx, node, OpKind::Where, {over, hi, b}));
  return std::make_pair(b, step);
}

} // namespace

/// Start \p b of a window of \p len elements \p step apart along a dim of
/// extent \p n, moved so the whole window fits: at most n - 1 - (len - 1)
/// * step going forward, at least (len - 1) * -step going back.
static llvm::Expected<NodeValue> keepWindowInside(ImportContext &ctx,
                                                  const onnx::NodeProto &node,
                                                  NodeValue b, int64_t n,
                                                  int64_t len, int64_t step) {
  int64_t bound = step > 0 ? n - 1 - (len - 1) * step : (len - 1) * -step;
  NodeValue lim = constantOf(ctx, node, ElemKind::Int64, {1}, double(bound));
  return make(ctx, node, step > 0 ? OpKind::Min : OpKind::Max, {b, lim});
}

llvm::Error onnximport::importRuntimeSlice(ImportContext &ctx,
                                           const onnx::NodeProto &node,
                                           NodeValue x,
                                           const FixedSlice *fixed) {
  int64_t r = x.dims().size();
  const std::vector<int64_t> *d = fixed ? &fixed->length : nullptr;
  if (!fixed) {
    TRY(d, declaredOutputOfRank(ctx, node, 1, r));
    for (int i = 1; i < 5; ++i)
      if (ImportContext::hasInput(node, i)) {
        TRY(Placeholder * p, graphInputOf(ctx, node, i));
        if (p)
          ctx.checkAtRunTime(i, p);
      }
  }
  TRY(std::vector<SliceEntry> entries, sliceEntries(ctx, node, r));
  NodeValue y = x;
  for (int64_t a = 0; a < r; ++a) {
    if ((*d)[a] < 1)
      return ctx.setOutput(node, emptyConstant(ctx, node, x.getElemKind(), *d));
    TRY(auto bs, startAndStep(ctx, node, entries, a, x.dims()[a]));
    if (fixed) {
      if (fixed->entry[a] >= 0)
        EMBER_RETURN_IF_ERR(checkFixedWindow(ctx, node, x, *fixed, a, bs.first,
                                             entries[fixed->entry[a]].start));
      TRY(bs.first, keepWindowInside(ctx, node, bs.first, x.dims()[a], (*d)[a],
                                     fixed->step[a]));
    }
    TRY(NodeValue iota, iotaConstant(ctx, node, (*d)[a], {dim_t((*d)[a])}));
    TRY(NodeValue off, binary(ctx, node, OpKind::Mul, iota, bs.second));
    TRY(NodeValue idx, binary(ctx, node, OpKind::Add, off, bs.first));
    TRY(y, make(ctx, node, OpKind::Gather, {y, idx}, {Attr::makeInt(a)}));
  }
  return ctx.setOutput(node, y);
}

namespace {

/// The source index along a padded dim for each of its \p out positions,
/// clamped into [0, n): i - before, mirrored (reflect) or clamped (edge,
/// and the out-of-range positions of constant mode, masked later).
llvm::Expected<NodeValue> padSource(ImportContext &ctx,
                                    const onnx::NodeProto &node,
                                    NodeValue before, int64_t out, int64_t n,
                                    int64_t mode) {
  auto lit = [&](double v) {
    return constantOf(ctx, node, ElemKind::Int64, {1}, v);
  };
  TRY(NodeValue iota, iotaConstant(ctx, node, out, {dim_t(out)}));
  TRY(NodeValue src, binary(ctx, node, OpKind::Sub, iota, before));
  if (mode == 1 && n > 1) { // reflect: -i before 0, 2(n-1) - i past n - 1
    TRY(NodeValue neg, binary(ctx, node, OpKind::Sub, lit(0), src));
    TRY(src, binary(ctx, node, OpKind::Max, src, neg));
    TRY(NodeValue back, binary(ctx, node, OpKind::Sub, lit(2 * (n - 1)), src));
    TRY(src, binary(ctx, node, OpKind::Min, src, back));
  }
  TRY(src, binary(ctx, node, OpKind::Max, src, lit(0)));
  return binary(ctx, node, OpKind::Min, src, lit(n - 1));
}

/// Constant mode: true where the position along dim \p a of a tensor of
/// \p dims reads the input (0 <= i - before < n), shaped to broadcast.
llvm::Expected<NodeValue>
padInside(ImportContext &ctx, const onnx::NodeProto &node, NodeValue before,
          llvm::ArrayRef<dim_t> dims, int64_t a, int64_t n) {
  TRY(NodeValue iota, iotaConstant(ctx, node, dims[a], {dims[a]}));
  TRY(NodeValue src, binary(ctx, node, OpKind::Sub, iota, before));
  TRY(NodeValue below,
      make(ctx, node, OpKind::Less, {src, constantLike(ctx, node, src, 0)}));
  TRY(NodeValue above, make(ctx, node, OpKind::Less,
                            {src, constantLike(ctx, node, src, double(n))}));
  TRY(NodeValue notBelow, make(ctx, node, OpKind::Not, {below}));
  TRY(NodeValue in, make(ctx, node, OpKind::And, {notBelow, above}));
  Ints shape(dims.size(), 1);
  shape[a] = dims[a];
  TRY(in, reshapeTo(ctx, node, in, shape));
  return ctx.broadcastTo(node, in, dims);
}

} // namespace

llvm::Error onnximport::importRuntimePad(ImportContext &ctx,
                                         const onnx::NodeProto &node,
                                         NodeValue x, int64_t mode) {
  int64_t r = x.dims().size();
  TRY(const std::vector<int64_t> *d, declaredOutputOfRank(ctx, node, 1, r));
  TRY(NodeValue pads, ctx.input(node, 1));
  if (pads.dims().size() != 1 || pads.dims()[0] != 2 * r)
    return fail(node, "expected " + llvm::Twine(2 * r) + " pads");
  TRY(pads, castTo(ctx, node, pads, ElemKind::Int64));
  for (int i = 1; i < 3; ++i)
    if (ImportContext::hasInput(node, i)) {
      TRY(Placeholder * p, graphInputOf(ctx, node, i));
      if (p)
        ctx.checkAtRunTime(i, p);
    }
  NodeValue value = constantLike(ctx, node, x, 0);
  if (ImportContext::hasInput(node, 2)) {
    TRY(value, ctx.input(node, 2));
    TRY(value, castTo(ctx, node, value, x.getElemKind()));
    TRY(value, reshapeTo(ctx, node, value, {}));
  }
  NodeValue y = x;
  for (int64_t a = 0; a < r; ++a) {
    int64_t n = x.dims()[a];
    if ((*d)[a] < 1)
      return ctx.setOutput(node, emptyConstant(ctx, node, x.getElemKind(), *d));
    TRY(NodeValue before, elementAt(ctx, node, pads, a));
    TRY(NodeValue idx, padSource(ctx, node, before, (*d)[a], n, mode));
    TRY(y, make(ctx, node, OpKind::Gather, {y, idx}, {Attr::makeInt(a)}));
    if (mode != 0)
      continue;
    TRY(NodeValue in, padInside(ctx, node, before, y.dims(), a, n));
    TRY(NodeValue v, ctx.broadcastTo(node, value, y.dims()));
    TRY(y, make(ctx, node, OpKind::Where, {in, y, v}));
  }
  return ctx.setOutput(node, y);
}

namespace {

/// A float [1] constant.
NodeValue floatLit(ImportContext &ctx, const onnx::NodeProto &node, double v) {
  return constantOf(ctx, node, ElemKind::Float32, {1}, v);
}

/// The source coordinate of each of the \p out positions along a dim of
/// \p in elements, scale \p s a run-time float [1], for the
/// coordinate_transformation_mode \p coord (as the Resize node numbers it).
llvm::Expected<NodeValue> resizeCoord(ImportContext &ctx,
                                      const onnx::NodeProto &node, NodeValue s,
                                      int64_t in, int64_t out, int64_t coord) {
  TRY(NodeValue o,
      iotaConstant(ctx, node, out, {dim_t(out)}, ElemKind::Float32));
  if (coord == 1) // asymmetric
    return binary(ctx, node, OpKind::Div, o, s);
  if (coord == 3) { // align_corners, over the unrounded length in * s
    // A resized length of 1 reads coordinate 0 (as does every position of
    // a dim of one element) instead of dividing by zero.
    NodeValue zeros = constantOf(ctx, node, ElemKind::Float32, {out}, 0);
    if (in == 1)
      return zeros;
    TRY(NodeValue len,
        binary(ctx, node, OpKind::Mul, s, floatLit(ctx, node, double(in))));
    TRY(NodeValue den,
        binary(ctx, node, OpKind::Sub, len, floatLit(ctx, node, 1)));
    TRY(NodeValue one,
        make(ctx, node, OpKind::Equal, {den, floatLit(ctx, node, 0)}));
    TRY(den,
        make(ctx, node, OpKind::Where, {one, floatLit(ctx, node, 1), den}));
    TRY(NodeValue x,
        binary(ctx, node, OpKind::Mul, o, floatLit(ctx, node, double(in - 1))));
    TRY(x, binary(ctx, node, OpKind::Div, x, den));
    TRY(NodeValue oneB, ctx.broadcastTo(node, one, {out}));
    return make(ctx, node, OpKind::Where, {oneB, zeros, x});
  }
  if (coord == 2 && out == 1) // pytorch_half_pixel of one output
    return floatLit(ctx, node, 0);
  TRY(NodeValue x, binary(ctx, node, OpKind::Add, o, floatLit(ctx, node, 0.5)));
  TRY(x, binary(ctx, node, OpKind::Div, x, s));
  return binary(ctx, node, OpKind::Sub, x, floatLit(ctx, node, 0.5));
}

/// \p i (float, integral) clamped into [0, n) as int64 indices.
llvm::Expected<NodeValue> tapIndex(ImportContext &ctx,
                                   const onnx::NodeProto &node, NodeValue i,
                                   int64_t n) {
  TRY(i, binary(ctx, node, OpKind::Max, i, floatLit(ctx, node, 0)));
  TRY(i, binary(ctx, node, OpKind::Min, i, floatLit(ctx, node, double(n - 1))));
  return castTo(ctx, node, i, ElemKind::Int64);
}

/// The interpolation weight of tap \p k (0, 1 linear; -1..2 cubic) at
/// fraction \p r; the same polynomials as the Resize node.
llvm::Expected<NodeValue> tapWeight(ImportContext &ctx,
                                    const onnx::NodeProto &node, NodeValue r,
                                    int64_t k, int64_t mode, double a) {
  auto lit = [&](double v) { return floatLit(ctx, node, v); };
  auto mul = [&](NodeValue p, NodeValue q) {
    return binary(ctx, node, OpKind::Mul, p, q);
  };
  auto add = [&](NodeValue p, double c) {
    return binary(ctx, node, OpKind::Add, p, lit(c));
  };
  // The distance from the tap: 1 + r, r, 1 - r or 2 - r.
  TRY(NodeValue negR, binary(ctx, node, OpKind::Sub, lit(0), r));
  TRY(NodeValue t, k <= 0 ? add(r, double(-k)) : add(negR, double(k)));
  if (mode == 1) // linear: 1 - t
    return binary(ctx, node, OpKind::Sub, lit(1), t);
  if (k == 0 || k == 1) { // ((a + 2) t - (a + 3)) t^2 + 1
    TRY(NodeValue p, mul(t, lit(a + 2)));
    TRY(p, add(p, -(a + 3)));
    TRY(p, mul(p, t));
    TRY(p, mul(p, t));
    return add(p, 1);
  }
  // ((a t - 5a) t + 8a) t - 4a
  TRY(NodeValue p, mul(t, lit(a)));
  TRY(p, add(p, -5 * a));
  TRY(p, mul(p, t));
  TRY(p, add(p, 8 * a));
  TRY(p, mul(p, t));
  return add(p, -4 * a);
}

/// The nearest source index of each coordinate of \p x, by nearest_mode.
llvm::Expected<NodeValue> nearestTap(ImportContext &ctx,
                                     const onnx::NodeProto &node, NodeValue x,
                                     int64_t nearest) {
  if (nearest == 2)
    return unary(ctx, node, OpKind::Floor, x);
  if (nearest == 3)
    return unary(ctx, node, OpKind::Ceil, x);
  TRY(x, binary(ctx, node, OpKind::Add, x,
                floatLit(ctx, node, nearest == 1 ? 0.5 : -0.5)));
  return unary(ctx, node, nearest == 1 ? OpKind::Floor : OpKind::Ceil, x);
}

/// \p w [out] reshaped to broadcast along dim \p a of \p dims.
llvm::Expected<NodeValue> alongDim(ImportContext &ctx,
                                   const onnx::NodeProto &node, NodeValue w,
                                   llvm::ArrayRef<dim_t> dims, int64_t a) {
  Ints shape(dims.size(), 1);
  shape[a] = dims[a];
  TRY(w, reshapeTo(ctx, node, w, shape));
  return ctx.broadcastTo(node, w, dims);
}

/// \p y resized along dim \p a to \p out positions with taps at the
/// coordinates \p x: nearest gathers one tap, linear and cubic sum the
/// weighted taps (exclude_outside zeroes and renormalizes the outside ones).
llvm::Expected<NodeValue> resizeDim(ImportContext &ctx,
                                    const onnx::NodeProto &node, NodeValue y,
                                    NodeValue x, int64_t a, int64_t mode,
                                    int64_t nearest) {
  int64_t n = y.dims()[a];
  auto gather = [&](NodeValue idx) {
    return make(ctx, node, OpKind::Gather, {y, idx}, {Attr::makeInt(a)});
  };
  if (mode == 0) {
    TRY(NodeValue i, nearestTap(ctx, node, x, nearest));
    TRY(NodeValue idx, tapIndex(ctx, node, i, n));
    return gather(idx);
  }
  AttrReader attrs(node);
  TRY(float coeff, attrs.getFloat("cubic_coeff_a", -0.75f));
  TRY(int64_t exclude, attrs.getInt("exclude_outside", 0));
  TRY(NodeValue i0, unary(ctx, node, OpKind::Floor, x));
  TRY(NodeValue r, binary(ctx, node, OpKind::Sub, x, i0));
  std::vector<std::pair<NodeValue, NodeValue>> taps; // (index, weight)
  NodeValue sum;
  for (int64_t k = mode == 1 ? 0 : -1; k <= (mode == 1 ? 1 : 2); ++k) {
    TRY(NodeValue i,
        binary(ctx, node, OpKind::Add, i0, floatLit(ctx, node, double(k))));
    TRY(NodeValue w, tapWeight(ctx, node, r, k, mode, coeff));
    if (exclude) {
      TRY(NodeValue lo,
          make(ctx, node, OpKind::Less, {i, constantLike(ctx, node, i, 0)}));
      TRY(NodeValue hi, make(ctx, node, OpKind::Less,
                             {i, constantLike(ctx, node, i, double(n))}));
      TRY(NodeValue notLo, make(ctx, node, OpKind::Not, {lo}));
      TRY(NodeValue in, make(ctx, node, OpKind::And, {notLo, hi}));
      TRY(w, make(ctx, node, OpKind::Where,
                  {in, w, constantLike(ctx, node, w, 0)}));
      if (sum) {
        TRY(sum, binary(ctx, node, OpKind::Add, sum, w));
      } else {
        sum = w;
      }
    }
    TRY(NodeValue idx, tapIndex(ctx, node, i, n));
    taps.push_back({idx, w});
  }
  NodeValue acc;
  for (auto &[idx, w] : taps) {
    if (exclude) {
      TRY(w, binary(ctx, node, OpKind::Div, w, sum));
    }
    TRY(NodeValue g, gather(idx));
    TRY(NodeValue wb, alongDim(ctx, node, w, g.dims(), a));
    TRY(NodeValue term, binary(ctx, node, OpKind::Mul, g, wb));
    if (acc) {
      TRY(acc, binary(ctx, node, OpKind::Add, acc, term));
    } else {
      acc = term;
    }
  }
  return acc;
}

} // namespace

llvm::Error onnximport::importRuntimeResize(ImportContext &ctx,
                                            const onnx::NodeProto &node,
                                            NodeValue x, int scalesInput,
                                            int64_t mode, int64_t coord,
                                            int64_t nearest) {
  int64_t r = x.dims().size();
  TRY(const std::vector<int64_t> *d,
      declaredOutputOfRank(ctx, node, scalesInput, r));
  if (!isFloatKind(x.getElemKind()))
    return fail(node, "run-time scales need a float input");
  TRY(NodeValue scales, ctx.input(node, scalesInput));
  if (scales.dims().size() != 1 || scales.dims()[0] != r)
    return fail(node, "needs scales with one entry per dim");
  TRY(Placeholder * p, graphInputOf(ctx, node, scalesInput));
  ctx.checkAtRunTime(scalesInput, p);
  TRY(scales, castTo(ctx, node, scales, ElemKind::Float32));
  TRY(NodeValue y, castTo(ctx, node, x, ElemKind::Float32));
  for (int64_t a = 0; a < r; ++a) {
    if ((*d)[a] < 1)
      return ctx.setOutput(node, emptyConstant(ctx, node, x.getElemKind(), *d));
    TRY(NodeValue s, elementAt(ctx, node, scales, a));
    TRY(NodeValue c, resizeCoord(ctx, node, s, x.dims()[a], (*d)[a], coord));
    TRY(y, resizeDim(ctx, node, y, c, a, mode, nearest));
  }
  TRY(y, castTo(ctx, node, y, x.getElemKind()));
  return ctx.setOutput(node, y);
}

namespace {

/// Float32 [K] positions of the first \p k true entries of \p cond [n] (any
/// kind; nonzero is true), in order: entry i is the j-th true one when
/// cond[i] and its inclusive running count is j + 1. Exact below 2^24
/// entries.
llvm::Expected<NodeValue> truePositions(ImportContext &ctx,
                                        const onnx::NodeProto &node,
                                        NodeValue cond, int64_t k) {
  int64_t n = cond.dims()[0];
  if (n >= (int64_t(1) << 24))
    return fail(node, "more than 2^24 entries");
  // At most n entries can be true: a larger declared count is wrong, and
  // would size the constants below.
  if (k > n)
    return fail(node, "the output declares " + llvm::Twine(k) +
                          " entries, more than the " + llvm::Twine(n) +
                          " the condition holds");
  if (cond.getElemKind() != ElemKind::Bool) {
    TRY(NodeValue zero, make(ctx, node, OpKind::Equal,
                             {cond, constantLike(ctx, node, cond, 0)}));
    TRY(cond, make(ctx, node, OpKind::Not, {zero}));
  }
  TRY(NodeValue c, castTo(ctx, node, cond, ElemKind::Float32));
  TRY(NodeValue rank,
      make(ctx, node, OpKind::CumSum, {c},
           {Attr::makeInt(0), Attr::makeInt(0), Attr::makeInt(0)}));
  // Entry i goes to slot rank - 1 when true and within k, else to a spare
  // slot k dropped after: O(n), no [k, n] table.
  NodeValue kf = constantOf(ctx, node, ElemKind::Float32, {1}, double(k));
  TRY(NodeValue within, binary(ctx, node, OpKind::LessOrEqual, rank, kf));
  TRY(NodeValue take, binary(ctx, node, OpKind::And, cond, within));
  NodeValue one = constantOf(ctx, node, ElemKind::Float32, {1}, 1);
  TRY(NodeValue before, binary(ctx, node, OpKind::Sub, rank, one));
  TRY(NodeValue spare, ctx.broadcastTo(node, kf, {dim_t(n)}));
  TRY(NodeValue slot, make(ctx, node, OpKind::Where, {take, before, spare}));
  TRY(slot, castTo(ctx, node, slot, ElemKind::Int64));
  Tensor iota(ElemKind::Float32, {n});
  for (int64_t i = 0; i < n; ++i)
    iota.getHandle<float>().raw(i) = float(i);
  NodeValue at =
      ctx.module().createConstant(nameOf(node) + ".iota", std::move(iota));
  NodeValue zeros = constantOf(ctx, node, ElemKind::Float32, {k + 1}, 0);
  TRY(NodeValue pos, make(ctx, node, OpKind::ScatterElements, {zeros, slot, at},
                          {Attr::makeInt(0), Attr::makeInt(0)}));
  return make(ctx, node, OpKind::Slice, {pos},
              {Attr::makeInts({0}), Attr::makeInts({1}), Attr::makeInts({k})});
}

/// The number of nonzero entries of \p cond [n] as an Int64 [1] (the
/// extent of an output the model does not declare; exact below 2^24).
llvm::Expected<NodeValue>
trueCount(ImportContext &ctx, const onnx::NodeProto &node, NodeValue cond) {
  if (cond.getElemKind() != ElemKind::Bool) {
    TRY(NodeValue zero, make(ctx, node, OpKind::Equal,
                             {cond, constantLike(ctx, node, cond, 0)}));
    TRY(cond, make(ctx, node, OpKind::Not, {zero}));
  }
  TRY(NodeValue c, castTo(ctx, node, cond, ElemKind::Float32));
  TRY(c, reduce(ctx, node, OpKind::ReduceSum, c, {0}, true));
  return castTo(ctx, node, c, ElemKind::Int64);
}

/// The graph input behind input \p i, marked for the run-time check that
/// re-imports the node with its value (the declared shape then must hold).
llvm::Error checkInput(ImportContext &ctx, const onnx::NodeProto &node, int i) {
  TRY(Placeholder * p, graphInputOf(ctx, node, i));
  if (p)
    ctx.checkAtRunTime(i, p);
  return llvm::Error::success();
}

} // namespace

llvm::Error onnximport::importRuntimeCompress(ImportContext &ctx,
                                              const onnx::NodeProto &node,
                                              NodeValue x, int64_t axis) {
  TRY(NodeValue cond, ctx.input(node, 1));
  if (cond.dims().size() != 1 || cond.dims()[0] > x.dims()[axis])
    return fail(node, "condition must be 1-D and no longer than the axis");
  const std::vector<int64_t> *d =
      node.output_size() ? ctx.declaredDims(node.output(0)) : nullptr;
  int64_t k = cond.dims()[0];
  if (d) {
    if (d->size() != x.dims().size() || (*d)[axis] < 1)
      return fail(node, "the declared output shape does not fit the input");
    EMBER_RETURN_IF_ERR(checkInput(ctx, node, 1));
    k = (*d)[axis];
  }
  TRY(NodeValue pos, truePositions(ctx, node, cond, k));
  TRY(NodeValue idx, castTo(ctx, node, pos, ElemKind::Int64));
  TRY(NodeValue y,
      make(ctx, node, OpKind::Gather, {x, idx}, {Attr::makeInt(axis)}));
  if (!d) {
    TRY(NodeValue count, trueCount(ctx, node, cond));
    ctx.setExtent(node.output(0), {unsigned(axis), count});
  }
  return ctx.setOutput(node, y);
}

llvm::Error onnximport::importRuntimeNonZero(ImportContext &ctx,
                                             const onnx::NodeProto &node,
                                             NodeValue x) {
  const std::vector<int64_t> *d =
      node.output_size() ? ctx.declaredDims(node.output(0)) : nullptr;
  int64_t r = std::max<int64_t>(x.dims().size(), 1);
  TRY(NodeValue flat, reshapeTo(ctx, node, x, {x.getType()->size()}));
  int64_t k = flat.dims()[0];
  if (d) {
    if (d->size() != 2 || (*d)[0] != r || (*d)[1] < 1)
      return fail(node, "the declared output shape is not [rank, count]");
    EMBER_RETURN_IF_ERR(checkInput(ctx, node, 0));
    k = (*d)[1];
  } else {
    TRY(NodeValue count, trueCount(ctx, node, flat));
    ctx.setExtent(node.output(0), {1, count});
  }
  TRY(NodeValue pos, truePositions(ctx, node, flat, k));
  // Row i: (pos / stride_i) mod dim_i, with floors in float (exact).
  std::vector<NodeValue> rows;
  int64_t stride = 1;
  Ints dims(x.dims().begin(), x.dims().end());
  if (dims.empty())
    dims.push_back(1);
  std::vector<int64_t> strides(dims.size());
  for (int64_t i = int64_t(dims.size()) - 1; i >= 0; --i) {
    strides[i] = stride;
    stride *= dims[i];
  }
  for (size_t i = 0; i < dims.size(); ++i) {
    auto floorDiv = [&](double by) -> llvm::Expected<NodeValue> {
      TRY(NodeValue q,
          binary(ctx, node, OpKind::Div, pos, floatLit(ctx, node, by)));
      return unary(ctx, node, OpKind::Floor, q);
    };
    TRY(NodeValue q, floorDiv(double(strides[i])));
    TRY(NodeValue h, floorDiv(double(strides[i] * dims[i])));
    TRY(h, binary(ctx, node, OpKind::Mul, h, floatLit(ctx, node, dims[i])));
    TRY(q, binary(ctx, node, OpKind::Sub, q, h));
    TRY(q, reshapeTo(ctx, node, q, {1, k}));
    rows.push_back(q);
  }
  NodeValue y = rows[0];
  if (rows.size() > 1) {
    TRY(y, make(ctx, node, OpKind::Concat, rows, {Attr::makeInt(0)}));
  }
  TRY(y, castTo(ctx, node, y, ElemKind::Int64));
  return ctx.setOutput(node, y);
}

llvm::Expected<NodeValue>
onnximport::firstTruePositions(ImportContext &ctx, const onnx::NodeProto &node,
                               NodeValue cond, int64_t k) {
  return truePositions(ctx, node, cond, k);
}

llvm::Error onnximport::checkGraphInput(ImportContext &ctx,
                                        const onnx::NodeProto &node, int i) {
  return checkInput(ctx, node, i);
}
