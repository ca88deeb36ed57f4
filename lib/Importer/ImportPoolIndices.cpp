//===- ImportPoolIndices.cpp - MaxPool's Indices output -------------------===//
//
// MaxPool's second output, the flat index of each window's maximum in the
// input (over N, C and the spatial dims; with storage_order 1 the spatial
// dims count column-major), composed of existing nodes: the input padded
// with -inf, one strided Slice per window tap stacked on a new last axis,
// ArgMax over it (the first maximum, as the operator's reference keeps the
// first of equal values while it scans the window in order), and int64
// constants for the tap's offset, the window's origin and the channel's
// base. Padding never wins: every window holds an input element.
//
//===----------------------------------------------------------------------===//
#include "ImportHelpers.h"

#include <limits>

using namespace ember;
using namespace ember::onnximport;

#define TRY EMBER_ASSIGN_OR_RETURN

namespace {
/// Window taps past which the Indices output is not composed: one Slice
/// per tap.
constexpr int64_t kMaxIndexTaps = 1024;

/// Element strides of spatial dims \p sp: row-major, or column-major for
/// \p colMajor.
Ints spatialStrides(const Ints &sp, bool colMajor) {
  size_t n = sp.size();
  Ints s(n, 1);
  if (colMajor)
    for (size_t i = 1; i < n; ++i)
      s[i] = s[i - 1] * sp[i - 1];
  else
    for (size_t i = n - 1; i-- > 0;)
      s[i] = s[i + 1] * sp[i + 1];
  return s;
}

/// Every index of \p dims in row-major order.
std::vector<Ints> allIndices(const Ints &dims) {
  int64_t total = 1;
  for (int64_t d : dims)
    total *= d;
  std::vector<Ints> all;
  Ints idx(dims.size(), 0);
  for (int64_t e = 0; e < total; ++e) {
    all.push_back(idx);
    for (size_t i = dims.size(); i-- > 0;) {
      if (++idx[i] < dims[i])
        break;
      idx[i] = 0;
    }
  }
  return all;
}

/// The window taps of \p x padded with -inf, stacked on a last axis:
/// [N, C, out..., taps]; \p offsets gets each tap's offset in the input.
llvm::Expected<NodeValue> stackTaps(ImportContext &ctx,
                                    const onnx::NodeProto &node, NodeValue x,
                                    const PoolWindow &w, const Ints &yd,
                                    const Ints &strides,
                                    std::vector<int64_t> &offsets) {
  size_t n = w.kernel.size();
  Ints pads(2 * (n + 2), 0);
  for (size_t i = 0; i < n; ++i) {
    pads[2 + i] = w.pads[i];
    pads[n + 4 + i] = w.pads[n + i];
  }
  TRY(NodeValue xp,
      make(ctx, node, OpKind::Pad, {x},
           {Attr::makeInts(pads), Attr::makeInt(0),
            Attr::makeFloat(-std::numeric_limits<float>::infinity())}));
  Ints one = yd;
  one.push_back(1);
  std::vector<NodeValue> taps;
  for (const Ints &k : allIndices(w.kernel)) {
    Ints starts(n + 2, 0), steps(n + 2, 1);
    int64_t off = 0;
    for (size_t i = 0; i < n; ++i) {
      starts[2 + i] = k[i] * w.dilations[i];
      steps[2 + i] = w.strides[i];
      off += k[i] * w.dilations[i] * strides[i];
    }
    TRY(NodeValue t, make(ctx, node, OpKind::Slice, {xp},
                          {Attr::makeInts(starts), Attr::makeInts(steps),
                           Attr::makeInts(yd)}));
    TRY(t, reshapeTo(ctx, node, t, one));
    taps.push_back(t);
    offsets.push_back(off);
  }
  return make(ctx, node, OpKind::Concat, taps, {Attr::makeInt(n + 2)});
}
} // namespace

llvm::Expected<NodeValue>
onnximport::maxPoolIndices(ImportContext &ctx, const onnx::NodeProto &node,
                           NodeValue x, const PoolWindow &w, NodeValue y) {
  AttrReader attrs(node);
  TRY(int64_t order, attrs.getInt("storage_order", 0));
  if (order != 0 && order != 1)
    return fail(node,
                "storage_order must be 0 or 1, got " + llvm::Twine(order));
  if (!isFloatKind(x.getElemKind()))
    return fail(node, "the Indices output needs a float input, got " +
                          x.getType()->toString());
  size_t n = w.kernel.size();
  Ints xd = dimsOf(x), yd = dimsOf(y);
  Ints sp(xd.begin() + 2, xd.end()), out(yd.begin() + 2, yd.end());
  int64_t taps = 1, cells = 1, spatial = 1;
  for (size_t i = 0; i < n; ++i) {
    taps *= w.kernel[i];
    cells *= out[i];
    spatial *= sp[i];
  }
  if (taps > kMaxIndexTaps || cells > kMaxFoldElements ||
      xd[0] * xd[1] > kMaxFoldElements)
    return fail(node, "the Indices output of a " + llvm::Twine(taps) +
                          "-tap window over " + llvm::Twine(cells) +
                          " outputs is over the limits (" +
                          llvm::Twine(kMaxIndexTaps) + " taps, " +
                          llvm::Twine(kMaxFoldElements) + " outputs)");
  Ints strides = spatialStrides(sp, order == 1);
  std::vector<int64_t> offsets;
  TRY(NodeValue stacked, stackTaps(ctx, node, x, w, yd, strides, offsets));
  TRY(NodeValue tap,
      make(ctx, node, OpKind::ArgMax, {stacked},
           {Attr::makeInt(n + 2), Attr::makeInt(0), Attr::makeInt(0)}));
  NodeValue table = int64Constant(ctx, node, ".tap_offset", {taps}, offsets);
  TRY(NodeValue idx,
      make(ctx, node, OpKind::Gather, {table, tap}, {Attr::makeInt(0)}));
  // The window origins, [1, 1, out...], and the channel bases, [N, C, 1...].
  std::vector<int64_t> origin;
  for (const Ints &o : allIndices(out)) {
    int64_t v = 0;
    for (size_t i = 0; i < n; ++i)
      v += (o[i] * w.strides[i] - w.pads[i]) * strides[i];
    origin.push_back(v);
  }
  Ints od(2, 1);
  od.insert(od.end(), out.begin(), out.end());
  TRY(idx, binary(ctx, node, OpKind::Add, idx,
                  int64Constant(ctx, node, ".origin", od, origin)));
  std::vector<int64_t> base;
  for (int64_t c = 0; c < xd[0] * xd[1]; ++c)
    base.push_back(c * spatial);
  Ints bd(n + 2, 1);
  bd[0] = xd[0];
  bd[1] = xd[1];
  return binary(ctx, node, OpKind::Add, idx,
                int64Constant(ctx, node, ".channel_base", bd, base));
}
