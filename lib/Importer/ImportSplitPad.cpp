//===- ImportSplitPad.cpp - Split and Pad ---------------------------------===//
//
// Split is slices along one axis: sizes from the attribute (before opset
// 13), the input, or opset 18's num_outputs (chunks of ceil(n / parts),
// the last one smaller), else equal parts. Pad pads the positive part and
// slices off the negative (cropping) part; opset 18's axes input names the
// padded axes. CenterCropPad (18) is one Slice and one zero Pad.
//
//===----------------------------------------------------------------------===//
#include "ImportHelpers.h"
#include "ImportRuntimeOps.h"
#include "ProtoTensor.h"

using namespace ember;
using namespace ember::onnximport;

#define TRY EMBER_ASSIGN_OR_RETURN

namespace {

llvm::Error importSplit(ImportContext &ctx, const onnx::NodeProto &node) {
  TRY(NodeValue x, ctx.input(node, 0));
  AttrReader attrs(node);
  TRY(int64_t axis, attrs.getInt("axis", 0));
  TRY(axis, normAxis(node, axis, x.dims().size()));
  int64_t n = x.dims()[axis], outs = node.output_size();
  Ints sizes;
  if (ctx.opset() < 13) {
    TRY(sizes, attrs.getInts("split", Ints()));
  } else if (ImportContext::hasInput(node, 1)) {
    TRY(sizes, ctx.constantInts(node, 1));
  }
  TRY(int64_t parts, attrs.getInt("num_outputs", 0));
  if (parts && !sizes.empty())
    return fail(node, "num_outputs and split sizes are given both");
  if (parts) {
    // Opset 18: chunks of ceil(n / parts), the last one smaller.
    if (parts != outs)
      return fail(node, "num_outputs " + llvm::Twine(parts) + " but " +
                            llvm::Twine(outs) + " outputs");
    int64_t chunk = (n + parts - 1) / parts;
    for (int64_t i = 0; i < parts; ++i)
      sizes.push_back(std::max<int64_t>(0, std::min(chunk, n - i * chunk)));
  }
  if (sizes.empty()) {
    if (outs < 1 || n % outs)
      return fail(node, "cannot split " + llvm::Twine(n) + " into " +
                            llvm::Twine(outs) + " equal parts");
    sizes.assign(outs, n / outs);
  }
  if (int64_t(sizes.size()) != outs)
    return fail(node, "split sizes do not match the outputs");
  int64_t off = 0;
  for (int64_t i = 0; i < outs; ++i) {
    Ints s(x.dims().size(), 0), st(x.dims().size(), 1), c = dimsOf(x);
    s[axis] = off;
    c[axis] = sizes[i];
    if (sizes[i] < 0 || sizes[i] > n - off)
      return fail(node, "split sizes exceed the dimension");
    off += sizes[i];
    TRY(NodeValue y, sliceNode(ctx, node, x, s, st, c));
    bindOutput(ctx, node, i, y);
  }
  return llvm::Error::success();
}

/// Pad's mode: 0 constant, 1 reflect, 2 edge.
llvm::Expected<int64_t> padMode(const onnx::NodeProto &node) {
  TRY(std::string mode, AttrReader(node).getString("mode", "constant"));
  if (mode == "constant")
    return 0;
  if (mode == "reflect")
    return 1;
  if (mode == "edge")
    return 2;
  return fail(node, "unknown mode '" + mode + "'");
}

/// Opset 18's pads for the axes of input 3 only, as pads of all \p rank
/// axes (the others unpadded).
llvm::Expected<Ints> padsOverAxes(ImportContext &ctx,
                                  const onnx::NodeProto &node, const Ints &pads,
                                  int64_t rank) {
  TRY(Ints axes, ctx.constantInts(node, 3));
  if (pads.size() != 2 * axes.size())
    return fail(node, "expected " + llvm::Twine(2 * axes.size()) +
                          " pads for " + llvm::Twine(axes.size()) + " axes");
  Ints all(2 * rank, 0), seen(rank, 0);
  for (size_t i = 0; i < axes.size(); ++i) {
    TRY(int64_t a, normAxis(node, axes[i], rank));
    if (seen[a]++)
      return fail(node, "axis " + llvm::Twine(axes[i]) + " is repeated");
    all[a] = pads[i];
    all[a + rank] = pads[i + axes.size()];
  }
  return all;
}

llvm::Error importPad(ImportContext &ctx, const onnx::NodeProto &node) {
  TRY(NodeValue x, ctx.input(node, 0));
  AttrReader attrs(node);
  int64_t r = x.dims().size();
  Ints pads;
  double value = 0;
  if (ctx.opset() < 11) {
    TRY(pads,
        attrs.getInts(ctx.opset() < 2 ? "paddings" : "pads", std::nullopt));
    TRY(float v, attrs.getFloat("value", 0.f));
    value = v;
  } else {
    TRY(NodeValue p, ctx.input(node, 1));
    if (auto *ph = llvm::dyn_cast<Placeholder>(p.getNode());
        ph && !ph->isOutput()) {
      if (ImportContext::hasInput(node, 3))
        return fail(node, "the axes input needs constant pads");
      TRY(int64_t m, padMode(node));
      return onnximport::importRuntimePad(ctx, node, x, m);
    }
    TRY(pads, ctx.constantInts(node, 1));
    if (ImportContext::hasInput(node, 3)) {
      TRY(pads, padsOverAxes(ctx, node, pads, r));
    }
    if (ImportContext::hasInput(node, 2)) {
      TRY(value, constantScalar(ctx, node, 2));
    }
  }
  TRY(int64_t m, padMode(node));
  if (int64_t(pads.size()) != 2 * r)
    return fail(node, "expected " + llvm::Twine(2 * r) + " pads");
  for (int64_t p : pads)
    if (p < -kMaxTensorElements || p > kMaxTensorElements)
      return fail(node, "pad " + llvm::Twine(p) + " is out of range (at most " +
                            llvm::Twine(kMaxTensorElements) + " either way)");
  // Negative pads crop: pad the positive part, then slice.
  Ints pos(pads), s(r, 0), st(r, 1), c(r);
  for (int64_t i = 0; i < 2 * r; ++i)
    pos[i] = std::max<int64_t>(pads[i], 0);
  TRY(NodeValue y, make(ctx, node, OpKind::Pad, {x},
                        {Attr::makeInts(pos), Attr::makeInt(m),
                         Attr::makeFloat(float(value))}));
  for (int64_t i = 0; i < r; ++i) {
    s[i] = std::max<int64_t>(-pads[i], 0);
    c[i] = y.dims()[i] - s[i] - std::max<int64_t>(-pads[i + r], 0);
  }
  TRY(y, sliceNode(ctx, node, y, s, st, c));
  return ctx.setOutput(node, y);
}

/// Each named axis cropped or zero-padded to its target size around the
/// center: a crop starts at floor((dim - size) / 2), a pad puts
/// floor((size - dim) / 2) before and the rest after.
llvm::Error importCenterCropPad(ImportContext &ctx,
                                const onnx::NodeProto &node) {
  TRY(NodeValue x, ctx.input(node, 0));
  TRY(Ints shape, ctx.constantInts(node, 1));
  int64_t r = x.dims().size();
  Ints all(r);
  for (int64_t i = 0; i < r; ++i)
    all[i] = i;
  TRY(Ints axes, AttrReader(node).getInts("axes", all));
  if (shape.size() != axes.size())
    return fail(node, "shape has " + llvm::Twine(shape.size()) +
                          " values for " + llvm::Twine(axes.size()) + " axes");
  Ints start(r, 0), step(r, 1), count = dimsOf(x), pads(2 * r, 0);
  std::vector<bool> seen(r);
  for (size_t i = 0; i < axes.size(); ++i) {
    TRY(int64_t a, normAxis(node, axes[i], r));
    int64_t dim = x.dims()[a], size = shape[i];
    if (seen[a] || size < 1 || size > kMaxTensorElements)
      return fail(node, "axis " + llvm::Twine(axes[i]) +
                            " is repeated or its size " + llvm::Twine(size) +
                            " is out of range");
    seen[a] = true;
    if (size < dim) {
      start[a] = (dim - size) / 2;
      count[a] = size;
    } else {
      pads[a] = (size - dim) / 2;
      pads[a + r] = size - dim - pads[a];
    }
  }
  TRY(NodeValue y, sliceNode(ctx, node, x, start, step, count));
  if (llvm::any_of(pads, [](int64_t p) { return p > 0; })) {
    TRY(y, make(ctx, node, OpKind::Pad, {y},
                {Attr::makeInts(pads), Attr::makeInt(0), Attr::makeFloat(0)}));
  }
  return ctx.setOutput(node, y);
}

const ImportRule kSplitPadRules[] = {
    {"Split", 2, 18, importSplit},
    {"Pad", 2, 19, importPad},
    {"CenterCropPad", 18, 18, importCenterCropPad},
};

} // namespace

RuleList onnximport::getSplitPadImportRules() { return kSplitPadRules; }
