//===- ImportGridSample.cpp - GridSample composed of gathers --------------===//
//
// GridSample of X [N, C, H, W] at the normalized points of grid
// [N, Ho, Wo, 2]: the points are unnormalized, padded (border clamps,
// reflection mirrors) and rounded (nearest) in the graph; each tap of the
// interpolation (1 nearest, 2 x 2 linear, 4 x 4 cubic) is a GatherElements
// of the flattened image at iy * W + ix, weighted, and zeroed outside the
// image under zeros padding. The rules are the ONNX operator's: borders at
// -0.5 and d - 0.5 (0 and d - 1 with align_corners), ties of nearest to
// even, cubic coefficients of Keys with a = -0.75.
//
// AffineGrid (opset 20), the grid that F.affine_grid makes for it: a
// constant base grid of normalized points [x, (y, z,) 1] per output
// location (the size operand must be a constant), times each batch entry's
// theta transposed.
//
//===----------------------------------------------------------------------===//
#include "ImportHelpers.h"

using namespace ember;
using namespace ember::onnximport;

#define TRY EMBER_ASSIGN_OR_RETURN

namespace {

enum class Padding { Zeros, Border, Reflection };

class GridSampler {
public:
  GridSampler(ImportContext &ctx, const onnx::NodeProto &node)
      : ctx_(ctx), node_(node) {}

  llvm::Error init(NodeValue x, bool align, Padding pad);
  /// The unnormalized, padded coordinate of \p g along a dim of size \p d.
  llvm::Expected<NodeValue> coordinate(NodeValue g, int64_t d, bool nearest);
  /// The image at integer-valued tap positions \p ix, \p iy [N, P], padded,
  /// times \p weight [N, P]: [N, C, P].
  llvm::Expected<NodeValue> tap(NodeValue ix, NodeValue iy, NodeValue weight);
  /// The 1-D weights and first tap of interpolation at \p x: \p taps
  /// weights for positions floor(x) - (taps / 2 - 1) + k.
  llvm::Error weights(NodeValue x, int taps, NodeValue &first,
                      std::vector<NodeValue> &w);

  int64_t n_ = 0, c_ = 0, h_ = 0, w_ = 0, p_ = 0;

  llvm::Expected<NodeValue> op(OpKind k, NodeValue a, NodeValue b) {
    return binary(ctx_, node_, k, a, b);
  }
  llvm::Expected<NodeValue> op(OpKind k, NodeValue a, double b) {
    return binary(ctx_, node_, k, a,
                  constantOf(ctx_, node_, a.getElemKind(), {}, b));
  }
  llvm::Expected<NodeValue> un(OpKind k, NodeValue a) {
    return unary(ctx_, node_, k, a);
  }

private:
  llvm::Expected<NodeValue> clip(NodeValue v, double lo, double hi) {
    TRY(v, op(OpKind::Max, v, lo));
    return op(OpKind::Min, v, hi);
  }
  /// \p v mirrored into [lo, hi] as often as it takes.
  llvm::Expected<NodeValue> reflect(NodeValue v, double lo, double hi);
  /// Cubic convolution weight of distance \p u (Keys, a = -0.75).
  llvm::Expected<NodeValue> keys(NodeValue u, bool outer);

  ImportContext &ctx_;
  const onnx::NodeProto &node_;
  NodeValue flat_; // [N, C, H * W]
  bool align_ = false;
  Padding pad_ = Padding::Zeros;
};

llvm::Error GridSampler::init(NodeValue x, bool align, Padding pad) {
  n_ = x.dims()[0], c_ = x.dims()[1], h_ = x.dims()[2], w_ = x.dims()[3];
  align_ = align, pad_ = pad;
  TRY(flat_, reshapeTo(ctx_, node_, x, {n_, c_, h_ * w_}));
  return llvm::Error::success();
}

llvm::Expected<NodeValue> GridSampler::reflect(NodeValue v, double lo,
                                               double hi) {
  double range = hi - lo;
  if (range <= 0)
    return constantLike(ctx_, node_, v, lo);
  // t = (v - lo) mod 2 range; the image of t folds at range.
  TRY(NodeValue u, op(OpKind::Sub, v, lo));
  TRY(NodeValue q, op(OpKind::Div, u, 2 * range));
  TRY(q, un(OpKind::Floor, q));
  TRY(q, op(OpKind::Mul, q, 2 * range));
  TRY(NodeValue t, op(OpKind::Sub, u, q));
  TRY(NodeValue folded, op(OpKind::Mul, t, -1.0));
  TRY(folded, op(OpKind::Add, folded, 2 * range));
  TRY(NodeValue low, op(OpKind::LessOrEqual, t, range));
  TRY(NodeValue r, make(ctx_, node_, OpKind::Where, {low, t, folded}));
  return op(OpKind::Add, r, lo);
}

llvm::Expected<NodeValue> GridSampler::coordinate(NodeValue g, int64_t d,
                                                  bool nearest) {
  // align: (g + 1) / 2 * (d - 1); else ((g + 1) * d - 1) / 2.
  double scale = align_ ? (d - 1) / 2.0 : d / 2.0;
  TRY(NodeValue x, op(OpKind::Mul, g, scale));
  TRY(x, op(OpKind::Add, x, (d - 1) / 2.0));
  if (nearest) {
    TRY(x, un(OpKind::Round, x));
  }
  double lo = align_ ? 0 : -0.5, hi = align_ ? d - 1 : d - 0.5;
  if (pad_ == Padding::Reflection)
    return reflect(x, lo, hi);
  if (pad_ == Padding::Zeros)
    return x;
  // Border: clamped into the image where outside the borders.
  TRY(NodeValue below, op(OpKind::Less, x, lo));
  TRY(NodeValue above, op(OpKind::Greater, x, hi));
  TRY(NodeValue out, op(OpKind::Or, below, above));
  TRY(NodeValue clamped, clip(x, 0, double(d - 1)));
  return make(ctx_, node_, OpKind::Where, {out, clamped, x});
}

llvm::Expected<NodeValue> GridSampler::tap(NodeValue ix, NodeValue iy,
                                           NodeValue weight) {
  NodeValue valid;
  if (pad_ == Padding::Zeros) {
    TRY(NodeValue a, op(OpKind::GreaterOrEqual, ix, 0));
    TRY(NodeValue b, op(OpKind::LessOrEqual, ix, double(w_ - 1)));
    TRY(NodeValue c, op(OpKind::GreaterOrEqual, iy, 0));
    TRY(NodeValue d, op(OpKind::LessOrEqual, iy, double(h_ - 1)));
    TRY(a, op(OpKind::And, a, b));
    TRY(c, op(OpKind::And, c, d));
    TRY(valid, op(OpKind::And, a, c));
  } else if (pad_ == Padding::Reflection) {
    double lo = align_ ? 0 : -0.5;
    TRY(ix, reflect(ix, lo, align_ ? w_ - 1 : w_ - 0.5));
    TRY(iy, reflect(iy, lo, align_ ? h_ - 1 : h_ - 0.5));
  }
  TRY(ix, clip(ix, 0, double(w_ - 1)));
  TRY(iy, clip(iy, 0, double(h_ - 1)));
  TRY(NodeValue flat, op(OpKind::Mul, iy, double(w_)));
  TRY(flat, op(OpKind::Add, flat, ix));
  TRY(flat, un(OpKind::Round, flat)); // integer-valued already; be exact
  TRY(flat, castTo(ctx_, node_, flat, ElemKind::Int64));
  TRY(flat, reshapeTo(ctx_, node_, flat, {n_, 1, p_}));
  TRY(flat, ctx_.broadcastTo(node_, flat, {n_, c_, p_}));
  TRY(NodeValue v, make(ctx_, node_, OpKind::GatherElements, {flat_, flat},
                        {Attr::makeInt(2)}));
  if (valid) {
    NodeValue z = constantLike(ctx_, node_, weight, 0);
    TRY(weight, make(ctx_, node_, OpKind::Where, {valid, weight, z}));
  }
  TRY(weight, reshapeTo(ctx_, node_, weight, {n_, 1, p_}));
  return op(OpKind::Mul, v, weight);
}

llvm::Expected<NodeValue> GridSampler::keys(NodeValue u, bool outer) {
  const double a = -0.75;
  if (outer) { // 1 <= u <= 2: ((a u - 5a) u + 8a) u - 4a
    TRY(NodeValue p, op(OpKind::Mul, u, a));
    TRY(p, op(OpKind::Add, p, -5 * a));
    TRY(p, op(OpKind::Mul, p, u));
    TRY(p, op(OpKind::Add, p, 8 * a));
    TRY(p, op(OpKind::Mul, p, u));
    return op(OpKind::Add, p, -4 * a);
  }
  // u <= 1: ((a + 2) u - (a + 3)) u u + 1
  TRY(NodeValue p, op(OpKind::Mul, u, a + 2));
  TRY(p, op(OpKind::Add, p, -(a + 3)));
  TRY(p, op(OpKind::Mul, p, u));
  TRY(p, op(OpKind::Mul, p, u));
  return op(OpKind::Add, p, 1);
}

llvm::Error GridSampler::weights(NodeValue x, int taps, NodeValue &first,
                                 std::vector<NodeValue> &w) {
  TRY(NodeValue x0, un(OpKind::Floor, x));
  TRY(NodeValue t, op(OpKind::Sub, x, x0));
  w.clear();
  if (taps == 2) {
    first = x0;
    TRY(NodeValue w0, op(OpKind::Mul, t, -1.0));
    TRY(w0, op(OpKind::Add, w0, 1));
    w = {w0, t};
    return llvm::Error::success();
  }
  TRY(first, op(OpKind::Sub, x0, 1));
  TRY(NodeValue u0, op(OpKind::Add, t, 1)); // distances t + 1, t, 1 - t, 2 - t
  TRY(NodeValue u2, op(OpKind::Mul, t, -1.0));
  TRY(u2, op(OpKind::Add, u2, 1));
  TRY(NodeValue u3, op(OpKind::Add, u2, 1));
  TRY(NodeValue k0, keys(u0, true));
  TRY(NodeValue k1, keys(t, false));
  TRY(NodeValue k2, keys(u2, false));
  TRY(NodeValue k3, keys(u3, true));
  w = {k0, k1, k2, k3};
  return llvm::Error::success();
}

/// The mode and padding attributes (names of opset 16 and of opset 20).
llvm::Error readModes(const onnx::NodeProto &node, int &taps, Padding &pad) {
  AttrReader attrs(node);
  TRY(std::string mode, attrs.getString("mode", std::string("bilinear")));
  TRY(std::string padding, attrs.getString("padding_mode", "zeros"));
  if (mode == "bilinear" || mode == "linear")
    taps = 2;
  else if (mode == "bicubic" || mode == "cubic")
    taps = 4;
  else if (mode == "nearest")
    taps = 1;
  else
    return fail(node, "unknown mode '" + mode + "'");
  if (padding == "zeros")
    pad = Padding::Zeros;
  else if (padding == "border")
    pad = Padding::Border;
  else if (padding == "reflection")
    pad = Padding::Reflection;
  else
    return fail(node, "unknown padding_mode '" + padding + "'");
  return llvm::Error::success();
}

llvm::Error importGridSample(ImportContext &ctx, const onnx::NodeProto &node) {
  int taps = 2;
  Padding pad = Padding::Zeros;
  EMBER_RETURN_IF_ERR(readModes(node, taps, pad));
  TRY(int64_t align, AttrReader(node).getInt("align_corners", 0));
  TRY(NodeValue x, ctx.input(node, 0));
  TRY(NodeValue grid, ctx.input(node, 1));
  if (x.dims().size() != 4 || grid.dims().size() != 4 ||
      grid.dims()[0] != x.dims()[0] || grid.dims()[3] != 2)
    return fail(node, "supports X [N, C, H, W] with grid [N, Ho, Wo, 2]");
  if (x.getElemKind() != ElemKind::Float32 ||
      grid.getElemKind() != ElemKind::Float32)
    return fail(node, "supports float X and grid");
  GridSampler s(ctx, node);
  int64_t ho = grid.dims()[1], wo = grid.dims()[2];
  s.p_ = ho * wo;
  EMBER_RETURN_IF_ERR(s.init(x, align != 0, pad));
  TRY(grid, reshapeTo(ctx, node, grid, {s.n_, s.p_, 2}));
  NodeValue g[2];
  for (int k = 0; k < 2; ++k) {
    NodeValue idx = constantOf(ctx, node, ElemKind::Int64, {}, k);
    TRY(g[k], make(ctx, node, OpKind::Gather, {grid, idx}, {Attr::makeInt(2)}));
  }
  TRY(NodeValue px, s.coordinate(g[0], s.w_, taps == 1));
  TRY(NodeValue py, s.coordinate(g[1], s.h_, taps == 1));
  NodeValue y;
  if (taps == 1) {
    TRY(y, s.tap(px, py, constantLike(ctx, node, px, 1)));
  } else {
    NodeValue fx, fy;
    std::vector<NodeValue> wx, wy;
    EMBER_RETURN_IF_ERR(s.weights(px, taps, fx, wx));
    EMBER_RETURN_IF_ERR(s.weights(py, taps, fy, wy));
    for (int j = 0; j < taps; ++j)
      for (int i = 0; i < taps; ++i) {
        TRY(NodeValue ix, s.op(OpKind::Add, fx, double(i)));
        TRY(NodeValue iy, s.op(OpKind::Add, fy, double(j)));
        TRY(NodeValue w, s.op(OpKind::Mul, wx[i], wy[j]));
        TRY(NodeValue v, s.tap(ix, iy, w));
        if (!y) {
          y = v;
        } else {
          TRY(y, s.op(OpKind::Add, y, v));
        }
      }
  }
  TRY(y, reshapeTo(ctx, node, y, {s.n_, s.c_, ho, wo}));
  return ctx.setOutput(node, y);
}

/// Position \p i of \p n normalized into [-1, 1]: the pixel centres, or
/// the corners with \p align (a single position is -1, as torch's
/// linspace gives).
double normalizedPosition(int64_t i, int64_t n, bool align) {
  if (align)
    return n > 1 ? -1.0 + 2.0 * double(i) / double(n - 1) : -1.0;
  return (2.0 * double(i) + 1.0) / double(n) - 1.0;
}

/// AffineGrid's base grid [points, r + 1] over \p spatial (outermost dim
/// first): per point its coordinates innermost dim first, then 1.
llvm::Expected<NodeValue> affineBase(ImportContext &ctx,
                                     const onnx::NodeProto &node,
                                     llvm::ArrayRef<int64_t> spatial,
                                     bool align) {
  int64_t r = spatial.size(), points = 1;
  for (int64_t d : spatial) {
    if (d < 1 || points > kMaxFoldElements / d)
      return fail(node, "the grid size must be positive and at most " +
                            llvm::Twine(kMaxFoldElements) + " points");
    points *= d;
  }
  if (points * (r + 1) > kMaxFoldElements)
    return fail(node, "the base grid is over the limit of " +
                          llvm::Twine(kMaxFoldElements) + " elements");
  Tensor t(ElemKind::Float32, {dim_t(points), dim_t(r + 1)});
  auto h = t.getHandle<float>();
  for (int64_t q = 0; q < points; ++q) {
    int64_t rest = q;
    for (int64_t d = r - 1; d >= 0; --d) { // column r-1-d holds dim d
      double v = normalizedPosition(rest % spatial[d], spatial[d], align);
      h.raw(q * (r + 1) + (r - 1 - d)) = float(v);
      rest /= spatial[d];
    }
    h.raw(q * (r + 1) + r) = 1.0f;
  }
  return NodeValue(
      ctx.module().createConstant(nameOf(node) + ".base", std::move(t)));
}

llvm::Error importAffineGrid(ImportContext &ctx, const onnx::NodeProto &node) {
  TRY(int64_t align, AttrReader(node).getInt("align_corners", 0));
  TRY(NodeValue theta, ctx.input(node, 0));
  TRY(Ints size, ctx.constantInts(node, 1));
  int64_t r = int64_t(size.size()) - 2;
  if ((r != 2 && r != 3) || theta.getElemKind() != ElemKind::Float32 ||
      theta.dims() !=
          llvm::ArrayRef<dim_t>({dim_t(size[0]), dim_t(r), dim_t(r + 1)}))
    return fail(node, "supports float theta [N, 2, 3] with size [N, C, H, "
                      "W], or [N, 3, 4] with [N, C, D, H, W]");
  Ints spatial(size.begin() + 2, size.end());
  TRY(NodeValue base, affineBase(ctx, node, spatial, align != 0));
  int64_t n = size[0], points = base.dims()[0];
  TRY(base, reshapeTo(ctx, node, base, {1, points, r + 1}));
  TRY(base,
      ctx.broadcastTo(node, base, {dim_t(n), dim_t(points), dim_t(r + 1)}));
  auto tt = ctx.fn().tryCreateTranspose(nameOf(node), theta, {0, 2, 1});
  if (!tt)
    return fail(node, errorToString(tt.takeError()));
  TRY(NodeValue y, plainMatMul(ctx, node, base, NodeValue(*tt)));
  Ints out = {n};
  out.insert(out.end(), spatial.begin(), spatial.end());
  out.push_back(r);
  TRY(y, reshapeTo(ctx, node, y, out));
  return ctx.setOutput(node, y);
}

const ImportRule kGridSampleRules[] = {
    {"GridSample", 16, 22, importGridSample},
    {"AffineGrid", 20, 22, importAffineGrid},
};

} // namespace

RuleList onnximport::getGridSampleImportRules() { return kGridSampleRules; }
