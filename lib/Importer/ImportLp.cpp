//===- ImportLp.cpp - Lp norms and pools, MaxUnpool, ReverseSequence ------===//
//
// All composed from existing nodes: LpNormalization divides by a reduced
// norm, GlobalLpPool reduces |x|^p, LpPool is an average pool of |x|^p that
// counts padding, times the window size; MaxUnpool scatters the values to
// MaxPool's flat indices in a zero tensor; ReverseSequence gathers along
// the time axis with indices computed from constant lengths.
//
//===----------------------------------------------------------------------===//
#include "ImportHelpers.h"
#include "ProtoTensor.h"

#include <cmath>

using namespace ember;
using namespace ember::onnximport;

#define TRY EMBER_ASSIGN_OR_RETURN

namespace {

/// |x|^p (p = 1 and 2 without Pow).
llvm::Expected<NodeValue> absPow(ImportContext &ctx,
                                 const onnx::NodeProto &node, NodeValue x,
                                 int64_t p) {
  if (p == 2)
    return make(ctx, node, OpKind::Mul, {x, x});
  TRY(NodeValue a, unary(ctx, node, OpKind::Abs, x));
  if (p == 1)
    return a;
  return make(ctx, node, OpKind::Pow, {a, constantLike(ctx, node, a, p)});
}

/// y^(1/p).
llvm::Expected<NodeValue> root(ImportContext &ctx, const onnx::NodeProto &node,
                               NodeValue y, int64_t p) {
  if (p == 1)
    return y;
  if (p == 2)
    return unary(ctx, node, OpKind::Sqrt, y);
  return make(ctx, node, OpKind::Pow,
              {y, constantLike(ctx, node, y, 1.0 / double(p))});
}

llvm::Error importLpNormalization(ImportContext &ctx,
                                  const onnx::NodeProto &node) {
  TRY(NodeValue x, ctx.input(node, 0));
  AttrReader attrs(node);
  TRY(int64_t axis, attrs.getInt("axis", -1));
  TRY(int64_t p, attrs.getInt("p", 2));
  if (p != 1 && p != 2)
    return fail(node, "p must be 1 or 2");
  TRY(NodeValue s, absPow(ctx, node, x, p));
  TRY(s, reduce(ctx, node, OpKind::ReduceSum, s, {axis}, true));
  TRY(s, root(ctx, node, s, p));
  TRY(NodeValue y, binary(ctx, node, OpKind::Div, x, s));
  return ctx.setOutput(node, y);
}

llvm::Error importGlobalLpPool(ImportContext &ctx,
                               const onnx::NodeProto &node) {
  TRY(NodeValue x, ctx.input(node, 0));
  TRY(int64_t p, AttrReader(node).getInt("p", 2));
  if (p < 1)
    return fail(node, "p must be positive");
  Ints axes;
  for (size_t i = 2; i < x.dims().size(); ++i)
    axes.push_back(i);
  TRY(NodeValue s, absPow(ctx, node, x, p));
  TRY(s, reduce(ctx, node, OpKind::ReduceSum, s, axes, true));
  TRY(s, root(ctx, node, s, p));
  return ctx.setOutput(node, s);
}

llvm::Error importLpPool(ImportContext &ctx, const onnx::NodeProto &node) {
  TRY(NodeValue x, ctx.input(node, 0));
  AttrReader attrs(node);
  TRY(int64_t p, attrs.getInt("p", 2));
  if (!attrs.has("kernel_shape") || p < 1)
    return fail(node, "needs kernel_shape and p >= 1");
  // Opset 18's ceil_mode and dilations as the other pools take them.
  TRY(PoolWindow w, readPoolWindow(node, x, {}));
  TRY(int64_t ceilMode, attrs.getInt("ceil_mode", 0));
  if (ceilMode)
    applyCeil(w, x.dims());
  // Every pad, grown by ceil_mode or not, is a zero of the sum: the average
  // over the whole window times its tap count.
  TRY(NodeValue a, absPow(ctx, node, x, p));
  TRY(NodeValue avg, make(ctx, node, OpKind::PoolND, {a},
                          {Attr::makeInts(w.kernel), Attr::makeInts(w.strides),
                           Attr::makeInts(w.pads), Attr::makeInts(w.dilations),
                           Attr::makeInt(1), Attr::makeInt(1)}));
  double window = 1;
  for (int64_t v : w.kernel)
    window *= double(v);
  TRY(NodeValue sum, make(ctx, node, OpKind::Mul,
                          {avg, constantLike(ctx, node, avg, window)}));
  TRY(NodeValue y, root(ctx, node, sum, p));
  return ctx.setOutput(node, y);
}

llvm::Error importMaxUnpool(ImportContext &ctx, const onnx::NodeProto &node) {
  TRY(NodeValue x, ctx.input(node, 0));
  TRY(NodeValue idx, ctx.input(node, 1));
  AttrReader attrs(node);
  TRY(Ints k, attrs.getInts("kernel_shape", std::nullopt));
  size_t n = k.size();
  TRY(Ints s, attrs.getInts("strides", Ints(n, 1)));
  TRY(Ints pads, attrs.getInts("pads", Ints(2 * n, 0)));
  if (s.size() != n || pads.size() != 2 * n)
    return fail(node, "strides need one value and pads two per spatial dim "
                      "of kernel_shape");
  if (x.dims().size() != n + 2 || !idx.getType()->isSameShape(*x.getType()))
    return fail(node, "X and I must have the same shape with N, C and the "
                      "kernel's spatial dims");
  // Indices address the default unpooled shape; output_shape only pads it.
  // Attribute values are arbitrary: every step is checked for overflow.
  Ints out(x.dims().begin(), x.dims().begin() + 2);
  int64_t total = out[0] * out[1];
  for (size_t i = 0; i < n; ++i) {
    int64_t d = 0;
    bool bad = k[i] < 1 || s[i] < 1 ||
               __builtin_mul_overflow(x.dims()[2 + i] - 1, s[i], &d) ||
               __builtin_add_overflow(d, k[i], &d) ||
               __builtin_sub_overflow(d, pads[i], &d) ||
               __builtin_sub_overflow(d, pads[i + n], &d) || d < 1 ||
               __builtin_mul_overflow(total, d, &total) ||
               total > kMaxTensorElements;
    if (bad)
      return fail(node, "invalid output shape");
    out.push_back(d);
  }
  Ints want = out;
  if (ImportContext::hasInput(node, 2)) {
    TRY(want, ctx.constantInts(node, 2));
  }
  if (want.size() != n + 2)
    return fail(node, "invalid output shape");
  Ints extra(2 * (n + 2), 0);
  for (size_t i = 0; i < n + 2; ++i) {
    if (want[i] < out[i] || (i < 2 && want[i] != out[i]))
      return fail(node, "output_shape " + dimsToString(want) +
                            " is smaller than the unpooled shape " +
                            dimsToString(out));
    extra[n + 2 + i] = want[i] - out[i];
  }
  NodeValue zeros = constantOf(ctx, node, x.getElemKind(), {total}, 0);
  int64_t m = x.getType()->size();
  TRY(NodeValue xf, reshapeTo(ctx, node, x, {m}));
  TRY(NodeValue idf, reshapeTo(ctx, node, idx, {m}));
  TRY(NodeValue y, make(ctx, node, OpKind::ScatterElements, {zeros, idf, xf},
                        {Attr::makeInt(0), Attr::makeInt(0)}));
  TRY(y, reshapeTo(ctx, node, y, out));
  if (want != out) {
    TRY(y,
        make(ctx, node, OpKind::Pad, {y},
             {Attr::makeInts(extra), Attr::makeInt(0), Attr::makeFloat(0.f)}));
  }
  return ctx.setOutput(node, y);
}

/// ReverseSequence with the lengths a run-time value: the output shape is
/// the input's whatever the lengths, so the time index of every element
/// (len - 1 - t below the length clamped into [0, T], t above) is computed
/// in the graph and gathered.
llvm::Expected<NodeValue> runtimeReverseIndex(ImportContext &ctx,
                                              const onnx::NodeProto &node,
                                              NodeValue x, NodeValue lens,
                                              int64_t batchAxis,
                                              int64_t timeAxis) {
  size_t r = x.dims().size();
  int64_t n = x.dims()[timeAxis];
  Ints lensShape(r, 1), timeShape(r, 1);
  lensShape[batchAxis] = x.dims()[batchAxis];
  timeShape[timeAxis] = n;
  TRY(lens, castTo(ctx, node, lens, ElemKind::Int64));
  TRY(lens, reshapeTo(ctx, node, lens, lensShape));
  TRY(lens,
      binary(ctx, node, OpKind::Max, lens, constantLike(ctx, node, lens, 0)));
  TRY(lens, binary(ctx, node, OpKind::Min, lens,
                   constantLike(ctx, node, lens, double(n))));
  TRY(NodeValue t, iotaConstant(ctx, node, n, timeShape));
  TRY(NodeValue rev, binary(ctx, node, OpKind::Sub, lens, t));
  TRY(rev,
      binary(ctx, node, OpKind::Sub, rev, constantLike(ctx, node, rev, 1)));
  TRY(auto lt, ctx.broadcastPair(node, t, lens));
  TRY(NodeValue below, make(ctx, node, OpKind::Less, {lt.first, lt.second}));
  TRY(NodeValue tb, ctx.broadcastTo(node, t, below.dims()));
  TRY(NodeValue idx, make(ctx, node, OpKind::Where, {below, rev, tb}));
  return ctx.broadcastTo(node, idx, x.dims());
}

llvm::Error importReverseSequence(ImportContext &ctx,
                                  const onnx::NodeProto &node) {
  TRY(NodeValue x, ctx.input(node, 0));
  AttrReader attrs(node);
  TRY(int64_t batchAxis, attrs.getInt("batch_axis", 1));
  TRY(int64_t timeAxis, attrs.getInt("time_axis", 0));
  size_t r = x.dims().size();
  TRY(NodeValue lensV, ctx.input(node, 1));
  // The axes are compared one by one: their sum may overflow.
  bool axesOk =
      (batchAxis == 0 && timeAxis == 1) || (batchAxis == 1 && timeAxis == 0);
  if (r < 2 || !axesOk || lensV.dims().size() != 1 ||
      lensV.dims()[0] != x.dims()[batchAxis])
    return fail(node, "needs batch and time axes 0 and 1 and one length per "
                      "batch entry");
  // Run-time lengths, or a [time, batch] table too large to build at
  // import: the index is computed in the graph.
  auto *p = llvm::dyn_cast<Placeholder>(lensV.getNode());
  int64_t d0 = x.dims()[0], d1 = x.dims()[1];
  if ((p && !p->isOutput()) || d0 > kMaxFoldElements / d1) {
    TRY(NodeValue idx,
        runtimeReverseIndex(ctx, node, x, lensV, batchAxis, timeAxis));
    TRY(NodeValue y, make(ctx, node, OpKind::GatherElements, {x, idx},
                          {Attr::makeInt(timeAxis)}));
    return ctx.setOutput(node, y);
  }
  TRY(Ints lens, ctx.constantInts(node, 1));
  // Index along the time axis: reversed below the length. For every
  // element of a small x; above the fold limit one per (time, batch),
  // broadcast over the inner dims in the graph.
  bool full = x.getType()->size() <= kMaxFoldElements;
  Ints shape(x.dims().size(), 1);
  shape[0] = d0, shape[1] = d1;
  if (full)
    shape.assign(x.dims().begin(), x.dims().end());
  Tensor ix(ElemKind::Int64, shape);
  int64_t inner = ix.size() / (d0 * d1);
  for (int64_t i = 0; i < ix.size(); ++i) {
    int64_t a0 = i / (d1 * inner), a1 = (i / inner) % d1;
    int64_t t = timeAxis == 0 ? a0 : a1, b = timeAxis == 0 ? a1 : a0;
    int64_t len = std::clamp<int64_t>(lens[b], 0, x.dims()[timeAxis]);
    ix.getHandle<int64_t>().raw(i) = t < len ? len - 1 - t : t;
  }
  NodeValue idx =
      ctx.module().createConstant(nameOf(node) + ".index", std::move(ix));
  TRY(idx, ctx.broadcastTo(node, idx, x.dims()));
  TRY(NodeValue y, make(ctx, node, OpKind::GatherElements, {x, idx},
                        {Attr::makeInt(timeAxis)}));
  return ctx.setOutput(node, y);
}

const ImportRule kLpRules[] = {
    {"LpNormalization", 1, 17, importLpNormalization},
    {"GlobalLpPool", 2, 17, importGlobalLpPool},
    {"LpPool", 2, 18, importLpPool},
    {"MaxUnpool", 9, 17, importMaxUnpool},
    {"ReverseSequence", 10, 17, importReverseSequence},
};

} // namespace

RuleList onnximport::getLpImportRules() { return kLpRules; }
