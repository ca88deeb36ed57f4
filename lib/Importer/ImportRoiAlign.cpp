//===- ImportRoiAlign.cpp - RoiAlign composed of gathers ------------------===//
//
// RoiAlign of X [N, C, H, W] over rois [R, 4] (x1, y1, x2, y2) of images
// batch_indices [R]: each output bin averages (or, mode max, takes the
// largest of) sampling_ratio^2 bilinear samples on a regular grid inside
// it. The sample points [R, P] come from the run-time rois by arithmetic
// over constant grid offsets; each of the four bilinear taps is one
// GatherElements of X viewed as [C, N * H * W] at the point's flat index,
// weighted (the weights zeroed for points more than one pixel outside the
// image, as the operator's reference skips them). The rules are the
// operator's: a point is clamped into [0, d - 1] and its taps are floor
// and floor + 1 (clamped); max mode takes the largest weighted tap.
// sampling_ratio 0 sizes the grid from the roi's extent, a run-time value,
// and is not supported.
//
//===----------------------------------------------------------------------===//
#include "ImportHelpers.h"
#include "ProtoTensor.h"

#include <cstring>

using namespace ember;
using namespace ember::onnximport;

#define TRY EMBER_ASSIGN_OR_RETURN

namespace {

struct RoiAlignAttrs {
  int64_t oh, ow, ratio;
  float scale;
  bool halfPixel, max;
};

llvm::Expected<RoiAlignAttrs> readRoiAlignAttrs(const onnx::NodeProto &node,
                                                int64_t opset) {
  AttrReader attrs(node);
  RoiAlignAttrs a;
  TRY(a.oh, attrs.getInt("output_height", 1));
  TRY(a.ow, attrs.getInt("output_width", 1));
  TRY(a.ratio, attrs.getInt("sampling_ratio", 0));
  TRY(a.scale, attrs.getFloat("spatial_scale", 1.f));
  TRY(std::string mode, attrs.getString("mode", "avg"));
  TRY(std::string ctm,
      attrs.getString("coordinate_transformation_mode",
                      opset >= 16 ? "half_pixel" : "output_half_pixel"));
  if (mode != "avg" && mode != "max")
    return fail(node, "unknown mode '" + mode + "'");
  if (ctm != "half_pixel" && ctm != "output_half_pixel")
    return fail(node, "unknown coordinate_transformation_mode '" + ctm + "'");
  if (a.oh < 1 || a.ow < 1)
    return fail(node, "output_height and output_width must be positive");
  if (a.ratio <= 0)
    return fail(node, "sampling_ratio " + llvm::Twine(a.ratio) +
                          " is not supported: the adaptive grid (0) depends "
                          "on the run-time rois");
  a.halfPixel = ctm == "half_pixel";
  a.max = mode == "max";
  return a;
}

/// Builds the composition for one node.
class RoiAligner {
public:
  RoiAligner(ImportContext &ctx, const onnx::NodeProto &node,
             const RoiAlignAttrs &a)
      : ctx_(ctx), node_(node), a_(a) {}

  llvm::Expected<NodeValue> run(NodeValue x, NodeValue rois, NodeValue batch);

private:
  llvm::Expected<NodeValue> op(OpKind k, NodeValue l, NodeValue r) {
    return binary(ctx_, node_, k, l, r);
  }
  llvm::Expected<NodeValue> op(OpKind k, NodeValue l, double r) {
    return op(k, l, constantOf(ctx_, node_, l.getElemKind(), {}, r));
  }
  /// Sample coordinates [R, P] along one axis: rois columns \p lo and
  /// \p lo + 2, \p bins bins, within-bin offsets over P (\p vertical:
  /// the P order's first and second of four dims).
  llvm::Expected<NodeValue> points(NodeValue rois, int lo, int64_t bins,
                                   bool vertical);
  /// The validity of the points along one axis of size \p d, and the
  /// point clamped into [0, d - 1].
  llvm::Expected<NodeValue> clampPoint(NodeValue p, int64_t d,
                                       NodeValue &valid);

  ImportContext &ctx_;
  const onnx::NodeProto &node_;
  const RoiAlignAttrs &a_;
  int64_t r_ = 0, p_ = 0;
};

llvm::Expected<NodeValue> RoiAligner::points(NodeValue rois, int lo,
                                             int64_t bins, bool vertical) {
  double off = a_.halfPixel ? 0.5 : 0.0;
  NodeValue c[2];
  for (int k = 0; k < 2; ++k) {
    NodeValue idx = constantOf(ctx_, node_, ElemKind::Int64, {}, lo + 2 * k);
    TRY(c[k],
        make(ctx_, node_, OpKind::Gather, {rois, idx}, {Attr::makeInt(1)}));
    TRY(c[k], op(OpKind::Mul, c[k], double(a_.scale)));
    TRY(c[k], op(OpKind::Sub, c[k], off));
    TRY(c[k], reshapeTo(ctx_, node_, c[k], {r_, 1}));
  }
  TRY(NodeValue extent, op(OpKind::Sub, c[1], c[0]));
  if (!a_.halfPixel) {
    TRY(extent, op(OpKind::Max, extent, 1.0));
  }
  TRY(NodeValue bin, op(OpKind::Div, extent, double(bins)));
  // Offsets in bins of each point, in the order [oh, ratio, ow, ratio]:
  // the vertical ones vary over the first two only, the horizontal over
  // the last two, so each is a constant of oh x ratio (ow x ratio)
  // broadcast over the others rather than P floats built at import.
  int64_t n = a_.ratio, rows = a_.oh * n, cols = a_.ow * n;
  Tensor g(ElemKind::Float32,
           {1, dim_t(vertical ? rows : 1), dim_t(vertical ? 1 : cols)});
  auto *gp = reinterpret_cast<float *>(g.data());
  for (int64_t b = 0; b < bins; ++b)
    for (int64_t k = 0; k < n; ++k)
      gp[b * n + k] = float(b + (k + 0.5) / n);
  NodeValue grid = ctx_.module().createConstant(
      nameOf(node_) + (vertical ? ".grid_y" : ".grid_x"), std::move(g));
  TRY(grid, ctx_.broadcastTo(node_, grid, {1, rows, cols}));
  TRY(grid, reshapeTo(ctx_, node_, grid, {1, p_}));
  TRY(NodeValue p, op(OpKind::Mul, bin, grid));
  return op(OpKind::Add, c[0], p);
}

llvm::Expected<NodeValue> RoiAligner::clampPoint(NodeValue p, int64_t d,
                                                 NodeValue &valid) {
  TRY(NodeValue lo, op(OpKind::GreaterOrEqual, p, -1.0));
  TRY(NodeValue hi, op(OpKind::LessOrEqual, p, double(d)));
  TRY(valid, op(OpKind::And, lo, hi));
  TRY(p, op(OpKind::Max, p, 0.0));
  return op(OpKind::Min, p, double(d - 1));
}

llvm::Expected<NodeValue> RoiAligner::run(NodeValue x, NodeValue rois,
                                          NodeValue batch) {
  int64_t n = x.dims()[0], c = x.dims()[1], h = x.dims()[2], w = x.dims()[3];
  r_ = rois.dims()[0];
  p_ = a_.oh * a_.ow * a_.ratio * a_.ratio;
  TRY(NodeValue py, points(rois, 1, a_.oh, true));
  TRY(NodeValue px, points(rois, 0, a_.ow, false));
  NodeValue vy, vx;
  TRY(py, clampPoint(py, h, vy));
  TRY(px, clampPoint(px, w, vx));
  TRY(NodeValue valid, op(OpKind::And, vy, vx));
  TRY(NodeValue y0, unary(ctx_, node_, OpKind::Floor, py));
  TRY(NodeValue x0, unary(ctx_, node_, OpKind::Floor, px));
  TRY(NodeValue ly, op(OpKind::Sub, py, y0));
  TRY(NodeValue lx, op(OpKind::Sub, px, x0));
  TRY(NodeValue y1, op(OpKind::Add, y0, 1.0));
  TRY(y1, op(OpKind::Min, y1, double(h - 1)));
  TRY(NodeValue x1, op(OpKind::Add, x0, 1.0));
  TRY(x1, op(OpKind::Min, x1, double(w - 1)));
  TRY(NodeValue hy, op(OpKind::Mul, ly, -1.0));
  TRY(hy, op(OpKind::Add, hy, 1.0));
  TRY(NodeValue hx, op(OpKind::Mul, lx, -1.0));
  TRY(hx, op(OpKind::Add, hx, 1.0));
  // The image's flat base per roi, batch index * H * W; the indices are
  // int64 throughout.
  TRY(NodeValue base, castTo(ctx_, node_, batch, ElemKind::Int64));
  TRY(base, op(OpKind::Mul, base, double(h * w)));
  TRY(base, reshapeTo(ctx_, node_, base, {r_, 1}));
  // X as [C, N * H * W]: one gather index per point serves every channel.
  TRY(NodeValue flat, make(ctx_, node_, OpKind::Transpose, {x},
                           {Attr::makeInts({1, 0, 2, 3})}));
  TRY(flat, reshapeTo(ctx_, node_, flat, {c, n * h * w}));
  NodeValue acc;
  NodeValue ys[2] = {y0, y1}, xs[2] = {x0, x1}, wy[2] = {hy, ly},
            wx[2] = {hx, lx};
  for (int k = 0; k < 2; ++k) {
    TRY(ys[k], castTo(ctx_, node_, ys[k], ElemKind::Int64));
    TRY(xs[k], castTo(ctx_, node_, xs[k], ElemKind::Int64));
  }
  for (int j = 0; j < 2; ++j)
    for (int i = 0; i < 2; ++i) {
      TRY(NodeValue idx, op(OpKind::Mul, ys[j], double(w)));
      TRY(idx, op(OpKind::Add, idx, xs[i]));
      TRY(idx, op(OpKind::Add, idx, base));
      TRY(idx, reshapeTo(ctx_, node_, idx, {1, r_ * p_}));
      TRY(idx, ctx_.broadcastTo(node_, idx, {c, r_ * p_}));
      TRY(NodeValue v, make(ctx_, node_, OpKind::GatherElements, {flat, idx},
                            {Attr::makeInt(1)}));
      TRY(NodeValue wt, op(OpKind::Mul, wy[j], wx[i]));
      TRY(wt, make(ctx_, node_, OpKind::Where,
                   {valid, wt, constantLike(ctx_, node_, wt, 0.0)}));
      TRY(wt, reshapeTo(ctx_, node_, wt, {1, r_ * p_}));
      TRY(v, op(OpKind::Mul, v, wt));
      if (!acc) {
        acc = v;
      } else {
        TRY(acc, op(a_.max ? OpKind::Max : OpKind::Add, acc, v));
      }
    }
  TRY(acc,
      reshapeTo(ctx_, node_, acc, {c, r_, a_.oh, a_.ratio, a_.ow, a_.ratio}));
  TRY(acc, reduce(ctx_, node_, a_.max ? OpKind::ReduceMax : OpKind::ReduceMean,
                  acc, {3, 5}, false));
  return make(ctx_, node_, OpKind::Transpose, {acc},
              {Attr::makeInts({1, 0, 2, 3})});
}

llvm::Error importRoiAlign(ImportContext &ctx, const onnx::NodeProto &node) {
  TRY(RoiAlignAttrs a, readRoiAlignAttrs(node, ctx.opset()));
  TRY(NodeValue x, ctx.input(node, 0));
  TRY(NodeValue rois, ctx.input(node, 1));
  TRY(NodeValue batch, ctx.input(node, 2));
  if (x.dims().size() != 4 || x.getElemKind() != ElemKind::Float32)
    return fail(node, "X must be float32 [N, C, H, W], got " +
                          x.getType()->toString());
  if (rois.dims().size() != 2 || rois.dims()[1] != 4 ||
      rois.getElemKind() != ElemKind::Float32 || batch.dims().size() != 1 ||
      batch.dims()[0] != rois.dims()[0])
    return fail(node, "rois must be float32 [R, 4] and batch_indices [R], "
                      "got " +
                          rois.getType()->toString() + " and " +
                          batch.getType()->toString());
  // The sample taps gathered per roi and channel; in double, so that
  // attributes near the int64 limits cannot overflow the check itself.
  double taps = double(rois.dims()[0]) * double(x.dims()[1]) * double(a.oh) *
                double(a.ow) * double(a.ratio) * double(a.ratio);
  if (taps > double(kMaxTensorElements))
    return fail(node, "output_height x output_width x sampling_ratio^2 "
                      "samples per roi and channel exceed " +
                          llvm::Twine(kMaxTensorElements) + " in all");
  RoiAligner r(ctx, node, a);
  TRY(NodeValue y, r.run(x, rois, batch));
  return ctx.setOutput(node, y);
}

const ImportRule kRoiAlignRules[] = {
    {"RoiAlign", 10, 22, importRoiAlign},
};

} // namespace

RuleList onnximport::getRoiAlignImportRules() { return kRoiAlignRules; }
