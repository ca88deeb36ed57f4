//===- ImportNMS.cpp - NonMaxSuppression ----------------------------------===//
//
// NonMaxSuppression's result size depends on the data. With constant
// operands it is computed here (the ONNX rules, below) and becomes a
// Constant. With operands fed at run time the graph sorts each class's
// boxes by score (TopK, ties by the lower index as onnxruntime orders
// them), takes their corners in that order, and one NMSKeep instruction
// makes the greedy selection (O(boxes x kept) box tests; no limit on the
// boxes but memory). The selected boxes, in (batch, class, score) order,
// are gathered as in Compress: K rows when the model declares the output
// [K, 3] (before each run the node is imported again with the actual
// operands, and the call fails unless that selects K boxes), else the
// most that can be selected, with the count as the output's extent
// (docs/RuntimeInputs.md).
//
//===----------------------------------------------------------------------===//
#include "ImportRuntimeOps.h"

#include <algorithm>
#include <array>

using namespace ember;
using namespace ember::onnximport;

#define TRY EMBER_ASSIGN_OR_RETURN

namespace {

using Box = std::array<double, 4>; // x min, y min, x max, y max

/// A box of the input as corners (\p center: x, y, w, h; else the corners
/// y1, x1, y2, x2 in any order).
Box corners(const double *b, bool center) {
  if (center)
    return {b[0] - b[2] / 2, b[1] - b[3] / 2, b[0] + b[2] / 2, b[1] + b[3] / 2};
  return {std::min(b[1], b[3]), std::min(b[0], b[2]), std::max(b[1], b[3]),
          std::max(b[0], b[2])};
}

/// ONNX's test: true when the boxes overlap and IoU > \p thr.
bool suppresses(const Box &a, const Box &b, double thr) {
  double iw = std::min(a[2], b[2]) - std::max(a[0], b[0]);
  double ih = std::min(a[3], b[3]) - std::max(a[1], b[1]);
  if (iw <= 0 || ih <= 0)
    return false;
  double inter = iw * ih, areaA = (a[2] - a[0]) * (a[3] - a[1]),
         areaB = (b[2] - b[0]) * (b[3] - b[1]), uni = areaA + areaB - inter;
  if (areaA <= 0 || areaB <= 0 || uni <= 0)
    return false;
  return inter / uni > thr;
}

/// Scalar operand \p i (absent: \p dflt).
llvm::Expected<double> scalarOr(ImportContext &ctx, const onnx::NodeProto &node,
                                int i, double dflt) {
  if (!ctx.hasInput(node, i))
    return dflt;
  TRY(const Tensor *t, ctx.constantInput(node, i));
  return t->size() ? t->elementAsDouble(0) : dflt;
}

/// NonMaxSuppression of constant operands, computed at import.
llvm::Error importConstantNMS(ImportContext &ctx, const onnx::NodeProto &node,
                              bool center) {
  TRY(const Tensor *boxes, ctx.constantInput(node, 0));
  TRY(const Tensor *scores, ctx.constantInput(node, 1));
  TRY(double maxOut, scalarOr(ctx, node, 2, 0));
  TRY(double iouThr, scalarOr(ctx, node, 3, 0));
  bool hasScoreThr = ctx.hasInput(node, 4);
  TRY(double scoreThr, scalarOr(ctx, node, 4, 0));
  int64_t n = boxes->dims()[0], nb = boxes->dims()[1], nc = scores->dims()[1];
  std::vector<int64_t> out;
  for (int64_t b = 0; b < n; ++b)
    for (int64_t c = 0; c < nc; ++c) {
      std::vector<std::pair<double, int64_t>> order;
      for (int64_t i = 0; i < nb; ++i) {
        double s = scores->elementAsDouble((b * nc + c) * nb + i);
        if (!hasScoreThr || s > scoreThr)
          order.push_back({-s, i}); // score down, then index up
      }
      std::sort(order.begin(), order.end());
      std::vector<Box> kept;
      for (auto &[negScore, i] : order) {
        if (double(kept.size()) >= maxOut)
          break;
        double raw[4];
        for (int k = 0; k < 4; ++k)
          raw[k] = boxes->elementAsDouble((b * nb + i) * 4 + k);
        Box box = corners(raw, center);
        if (std::none_of(kept.begin(), kept.end(), [&](const Box &k) {
              return suppresses(box, k, iouThr);
            })) {
          kept.push_back(box);
          out.insert(out.end(), {b, c, i});
        }
      }
    }
  Tensor t(ElemKind::Int64, {dim_t(out.size() / 3), 3});
  std::copy(out.begin(), out.end(), t.getHandle<int64_t>().begin());
  return ctx.setOutput(node,
                       ctx.module().createConstant(nameOf(node), std::move(t)));
}

/// Graph building for the run-time form.
struct NMSGraph {
  ImportContext &ctx;
  const onnx::NodeProto &node;

  llvm::Expected<NodeValue> op(OpKind k, NodeValue a, NodeValue b) {
    return binary(ctx, node, k, a, b);
  }
  llvm::Expected<NodeValue> op(OpKind k, NodeValue a, double b) {
    return binary(ctx, node, k, a,
                  constantOf(ctx, node, a.getElemKind(), {}, b));
  }
  llvm::Expected<NodeValue> toFloat(NodeValue v) {
    return castTo(ctx, node, v, ElemKind::Float32);
  }
  /// Component \p k of the last axis.
  llvm::Expected<NodeValue> part(NodeValue v, int64_t k) {
    NodeValue idx = constantOf(ctx, node, ElemKind::Int64, {}, double(k));
    int64_t last = v.dims().size() - 1;
    return make(ctx, node, OpKind::Gather, {v, idx}, {Attr::makeInt(last)});
  }
  /// A run-time scalar operand \p i as float [1, 1, 1] (absent: \p dflt).
  llvm::Expected<NodeValue> scalar(int i, double dflt) {
    if (!ctx.hasInput(node, i))
      return constantOf(ctx, node, ElemKind::Float32, {1, 1, 1}, dflt);
    TRY(NodeValue v, ctx.input(node, i));
    if (v.getType()->size() != 1)
      return fail(node, "input " + llvm::Twine(i) + " must hold one value");
    TRY(v, toFloat(v));
    return reshapeTo(ctx, node, v, {1, 1, 1});
  }
  llvm::Expected<std::array<NodeValue, 4>>
  sortedCorners(NodeValue boxes, NodeValue order, bool center);
};

/// The corners [N, C, B] of the boxes in each class's score order.
llvm::Expected<std::array<NodeValue, 4>>
NMSGraph::sortedCorners(NodeValue boxes, NodeValue order, bool center) {
  int64_t n = order.dims()[0], nc = order.dims()[1], nb = order.dims()[2];
  TRY(NodeValue b, reshapeTo(ctx, node, boxes, {n, 1, nb, 4}));
  TRY(b, ctx.broadcastTo(node, b, {n, nc, nb, 4}));
  TRY(NodeValue o, reshapeTo(ctx, node, order, {n, nc, nb, 1}));
  TRY(o, ctx.broadcastTo(node, o, {n, nc, nb, 4}));
  TRY(b, make(ctx, node, OpKind::GatherElements, {b, o}, {Attr::makeInt(2)}));
  std::array<NodeValue, 4> raw, c;
  for (int k = 0; k < 4; ++k) {
    TRY(raw[k], part(b, k));
  }
  if (center) {
    for (int k = 0; k < 2; ++k) {
      TRY(NodeValue half, op(OpKind::Mul, raw[k + 2], 0.5));
      TRY(c[k], op(OpKind::Sub, raw[k], half));
      TRY(c[k + 2], op(OpKind::Add, raw[k], half));
    }
    return c;
  }
  // Corners y1, x1, y2, x2 in either order.
  TRY(c[0], op(OpKind::Min, raw[1], raw[3]));
  TRY(c[1], op(OpKind::Min, raw[0], raw[2]));
  TRY(c[2], op(OpKind::Max, raw[1], raw[3]));
  TRY(c[3], op(OpKind::Max, raw[0], raw[2]));
  return c;
}

/// The rows of the output: the declared K, or when the model declares none
/// the most that can be selected, \p classes (batches x classes) times
/// max_output_boxes_per_class when constant, at most \p boxes each.
llvm::Expected<int64_t> selectedBound(ImportContext &ctx,
                                      const onnx::NodeProto &node,
                                      int64_t classes, int64_t boxes,
                                      const std::vector<int64_t> *d) {
  if (d)
    return (*d)[0];
  int64_t per = boxes;
  if (ctx.hasInput(node, 2)) {
    TRY(NodeValue m, ctx.input(node, 2));
    if (auto *c = llvm::dyn_cast<Constant>(m.getNode()))
      if (c->getPayload().size() == 1)
        per = std::clamp<int64_t>(
            int64_t(std::min(c->getPayload().elementAsDouble(0), 1e18)), 1,
            boxes);
  }
  return classes * per;
}

/// \p cand without the boxes past a data-dependent extent of the boxes
/// (axis 1) or scores (axis 2), as `boxes[keep]` after a score filter
/// gives them: their sorted slots hold an \p order at or past the count.
/// Not being candidates, they neither are kept nor suppress others.
llvm::Expected<NodeValue> candidatesInExtent(ImportContext &ctx,
                                             const onnx::NodeProto &node,
                                             NMSGraph &g, NodeValue order,
                                             NodeValue cand) {
  const ImportContext::Extent *eb = ctx.extentOf(node.input(0));
  const ImportContext::Extent *es = ctx.extentOf(node.input(1));
  if (!eb && !es)
    return cand;
  if ((eb && eb->axis != 1) || (es && es->axis != 2) ||
      (eb && es && !sameCount(eb->count, es->count)))
    return fail(node, "a data-dependent extent is supported on the boxes' "
                      "axis 1 and the scores' axis 2, the same for both "
                      "(docs/RuntimeInputs.md)");
  NodeValue count = (eb ? eb : es)->count;
  TRY(count, castTo(ctx, node, count, order.getElemKind()));
  TRY(NodeValue in, binary(ctx, node, OpKind::Less, order, count));
  TRY(NodeValue inF, g.toFloat(in));
  return g.op(OpKind::Mul, cand, inF);
}

llvm::Error importRuntimeNMS(ImportContext &ctx, const onnx::NodeProto &node,
                             bool center) {
  const std::vector<int64_t> *d =
      node.output_size() ? ctx.declaredDims(node.output(0)) : nullptr;
  if (d && (d->size() != 2 || (*d)[1] != 3 || (*d)[0] < 1))
    return fail(node, "with operands fed at run time the output needs a "
                      "declared static shape [K, 3] (K >= 1) or none");
  for (int i = 0; d && i < std::min(node.input_size(), 5); ++i)
    if (ctx.hasInput(node, i))
      EMBER_RETURN_IF_ERR(checkGraphInput(ctx, node, i));
  NMSGraph g{ctx, node};
  TRY(NodeValue boxes, ctx.input(node, 0));
  TRY(NodeValue scores, ctx.input(node, 1));
  llvm::ArrayRef<dim_t> bd = boxes.dims(), sd = scores.dims();
  if (bd.size() != 3 || sd.size() != 3 || bd[2] != 4 || bd[0] != sd[0] ||
      bd[1] != sd[2] || boxes.getType()->size() == 0 ||
      scores.getType()->size() == 0)
    return fail(node, "needs boxes [N, B, 4] and scores [N, C, B] with "
                      "elements, got " +
                          boxes.getType()->toString() + " and " +
                          scores.getType()->toString());
  TRY(boxes, g.toFloat(boxes));
  TRY(scores, g.toFloat(scores));
  int64_t n = scores.dims()[0], nc = scores.dims()[1], nb = scores.dims()[2];
  AttrList topk = {Attr::makeInt(nb), Attr::makeInt(2), Attr::makeInt(1)};
  TRY(NodeValue sorted, make(ctx, node, OpKind::TopK, {scores}, topk, 0));
  NodeValue order(sorted.getNode(), 1);
  TRY(auto c, g.sortedCorners(boxes, order, center));
  NodeValue cand = constantOf(ctx, node, ElemKind::Float32, {n, nc, nb}, 1);
  if (ctx.hasInput(node, 4)) {
    TRY(NodeValue thr, g.scalar(4, 0));
    TRY(NodeValue above, g.op(OpKind::Greater, sorted, thr));
    TRY(cand, g.toFloat(above));
  }
  TRY(cand, candidatesInExtent(ctx, node, g, order, cand));
  TRY(cand, reshapeTo(ctx, node, cand, {n * nc, nb}));
  std::vector<NodeValue> parts;
  for (NodeValue v : c) {
    TRY(v, reshapeTo(ctx, node, v, {n * nc, nb, 1}));
    parts.push_back(v);
  }
  TRY(NodeValue corners,
      make(ctx, node, OpKind::Concat, parts, {Attr::makeInt(2)}));
  TRY(NodeValue iouThr, g.scalar(3, 0));
  TRY(iouThr, reshapeTo(ctx, node, iouThr, {1}));
  TRY(NodeValue maxOut, g.scalar(2, 0));
  TRY(maxOut, reshapeTo(ctx, node, maxOut, {1}));
  TRY(NodeValue sel,
      make(ctx, node, OpKind::NMSKeep, {cand, corners, iouThr, maxOut}, {}, 0));
  TRY(sel, reshapeTo(ctx, node, sel, {n * nc * nb}));
  TRY(int64_t k, selectedBound(ctx, node, n * nc, nb, d));
  TRY(NodeValue pos, firstTruePositions(ctx, node, sel, k));
  // Position p = (batch * C + class) * B + sorted slot.
  TRY(NodeValue pi, castTo(ctx, node, pos, ElemKind::Int64));
  TRY(NodeValue flatOrder, reshapeTo(ctx, node, order, {n * nc * nb}));
  TRY(NodeValue box,
      make(ctx, node, OpKind::Gather, {flatOrder, pi}, {Attr::makeInt(0)}));
  TRY(NodeValue bc, g.op(OpKind::Div, pos, double(nb)));
  TRY(bc, unary(ctx, node, OpKind::Floor, bc));
  TRY(NodeValue batch, g.op(OpKind::Div, bc, double(nc)));
  TRY(batch, unary(ctx, node, OpKind::Floor, batch));
  TRY(NodeValue cls, g.op(OpKind::Mul, batch, double(nc)));
  TRY(cls, g.op(OpKind::Sub, bc, cls));
  std::vector<NodeValue> cols;
  for (NodeValue v : {batch, cls, box}) {
    TRY(v, castTo(ctx, node, v, ElemKind::Int64));
    TRY(v, reshapeTo(ctx, node, v, {k, 1}));
    cols.push_back(v);
  }
  TRY(NodeValue y, make(ctx, node, OpKind::Concat, cols, {Attr::makeInt(1)}));
  if (!d) {
    TRY(NodeValue count, reduce(ctx, node, OpKind::ReduceSum, sel, {0}, true));
    TRY(count, castTo(ctx, node, count, ElemKind::Int64));
    ctx.setExtent(node.output(0), {0, count});
  }
  return ctx.setOutput(node, y);
}

llvm::Error importNMS(ImportContext &ctx, const onnx::NodeProto &node) {
  TRY(int64_t center, AttrReader(node).getInt("center_point_box", 0));
  TRY(NodeValue boxes, ctx.input(node, 0));
  TRY(NodeValue scores, ctx.input(node, 1));
  if (boxes.dims().size() != 3 || boxes.dims()[2] != 4 ||
      scores.dims().size() != 3 || scores.dims()[0] != boxes.dims()[0] ||
      scores.dims()[2] != boxes.dims()[1])
    return fail(node, "expects boxes [N, B, 4] and scores [N, C, B]");
  bool allConstant = true;
  for (int i = 0; i < std::min(node.input_size(), 5); ++i)
    if (ctx.hasInput(node, i)) {
      TRY(NodeValue v, ctx.input(node, i));
      allConstant &= llvm::isa<Constant>(v.getNode());
    }
  if (allConstant)
    return importConstantNMS(ctx, node, center != 0);
  return importRuntimeNMS(ctx, node, center != 0);
}

const ImportRule kNMSRules[] = {
    {"NonMaxSuppression", 10, 22, importNMS},
};

} // namespace

RuleList onnximport::getNMSImportRules() { return kNMSRules; }
