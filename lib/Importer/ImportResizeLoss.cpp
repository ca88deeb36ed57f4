//===- ImportResizeLoss.cpp - Resize, Upsample and the loss functions -----===//
//
// Resize maps to the Resize node with sizes and scales resolved here.
// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss are composed:
// GatherElements picks each target's score, Gather its weight, Where masks
// ignore_index, and reductions give sum or weighted mean.
//
//===----------------------------------------------------------------------===//
#include "ImportHelpers.h"
#include "ImportRuntimeOps.h"
#include "ProtoTensor.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>
#include <tuple>

using namespace ember;
using namespace ember::onnximport;

#define TRY EMBER_ASSIGN_OR_RETURN

namespace {

/// Builds a Resize node for \p x to \p dims with \p scales.
llvm::Expected<NodeValue>
resizeNode(ImportContext &ctx, const onnx::NodeProto &node, NodeValue x,
           const Ints &dims, const std::vector<float> &scales, int64_t mode,
           int64_t coord, int64_t nearest) {
  AttrReader attrs(node);
  TRY(float cubic, attrs.getFloat("cubic_coeff_a", -0.75f));
  TRY(int64_t exclude, attrs.getInt("exclude_outside", 0));
  TRY(float extrap, attrs.getFloat("extrapolation_value", 0.f));
  return make(ctx, node, OpKind::Resize, {x},
              {Attr::makeInts(dims), Attr::makeFloats(scales),
               Attr::makeInt(mode), Attr::makeInt(coord),
               Attr::makeInt(nearest), Attr::makeFloat(cubic),
               Attr::makeInt(exclude), Attr::makeFloat(extrap)});
}

llvm::Expected<int64_t> modeIndex(const onnx::NodeProto &node,
                                  const std::string &v,
                                  llvm::ArrayRef<const char *> names) {
  for (size_t i = 0; i < names.size(); ++i)
    if (v == names[i])
      return int64_t(i);
  return fail(node, "unsupported mode '" + v + "'");
}

/// tf_half_pixel_for_nn as half_pixel and a nearest mode: its coordinate is
/// half_pixel's plus 0.5, so floor of it is round_prefer_ceil of
/// half_pixel's and round_prefer_floor of it is ceil of half_pixel's.
llvm::Expected<std::pair<int64_t, int64_t>>
tfHalfPixelForNN(const onnx::NodeProto &node, int64_t mode, int64_t nearest) {
  if (mode != 0 || (nearest != 0 && nearest != 2))
    return fail(node, "coordinate_transformation_mode tf_half_pixel_for_nn "
                      "is supported with mode nearest and nearest_mode "
                      "round_prefer_floor or floor");
  return std::make_pair(int64_t(0), nearest == 0 ? int64_t(3) : int64_t(1));
}

/// Output dims from scales (floor(in * scale)); each scale must be
/// positive and finite and each dim at most the tensor element limit.
llvm::Expected<Ints> dimsFromScales(const onnx::NodeProto &node, NodeValue x,
                                    const std::vector<float> &scales) {
  Ints d;
  for (size_t i = 0; i < scales.size(); ++i) {
    double dim = std::floor(double(x.dims()[i]) * scales[i]);
    if (!(scales[i] > 0) || !(dim <= double(kMaxTensorElements)))
      return fail(node, llvm::formatv("scale {0} of dim {1} must be positive "
                                      "and give at most {2} entries",
                                      scales[i], i, kMaxTensorElements)
                            .str());
    d.push_back(int64_t(dim));
  }
  return d;
}

/// A constant float input as a vector (empty when absent or empty).
llvm::Expected<std::vector<float>>
floatsInput(ImportContext &ctx, const onnx::NodeProto &node, int i) {
  std::vector<float> v;
  if (!ImportContext::hasInput(node, i))
    return v;
  TRY(const Tensor *t, ctx.constantInput(node, i));
  for (int64_t k = 0; k < t->size(); ++k)
    v.push_back(float(t->elementAsDouble(k)));
  return v;
}

/// True when input \p i of \p node is a graph input (a run-time value).
bool isRuntimeInput(ImportContext &ctx, const onnx::NodeProto &node, int i) {
  if (!ImportContext::hasInput(node, i))
    return false;
  auto v = ctx.input(node, i);
  if (!v) {
    llvm::consumeError(v.takeError());
    return false;
  }
  auto *p = llvm::dyn_cast<Placeholder>(v->getNode());
  return p && !p->isOutput();
}

/// Opset 18's attributes: scales or sizes for the dims of `axes` only
/// (the others kept), sizes fitted by `keep_aspect_ratio_policy`, and
/// `antialias` (refused where it would filter: linear or cubic
/// downsampling).
llvm::Expected<std::pair<std::vector<float>, Ints>>
resizeOverAxes(const onnx::NodeProto &node, NodeValue x, int64_t mode,
               std::vector<float> scales, Ints dims) {
  AttrReader attrs(node);
  int64_t r = x.dims().size();
  TRY(Ints axes, attrs.getInts("axes", Ints()));
  TRY(std::string policy,
      attrs.getString("keep_aspect_ratio_policy", "stretch"));
  TRY(int64_t antialias, attrs.getInt("antialias", 0));
  if (policy != "stretch" && policy != "not_larger" && policy != "not_smaller")
    return fail(node, "unknown keep_aspect_ratio_policy '" + policy + "'");
  if (axes.empty())
    for (int64_t i = 0; i < r; ++i)
      axes.push_back(i);
  std::vector<int64_t> at;
  for (int64_t a : axes) {
    TRY(int64_t n, normAxis(node, a, r));
    if (std::find(at.begin(), at.end(), n) != at.end())
      return fail(node, "axis " + llvm::Twine(a) + " is repeated");
    at.push_back(n);
  }
  size_t given = dims.empty() ? scales.size() : dims.size();
  if (given != at.size())
    return fail(node, "needs one scale or size per axis (" +
                          llvm::Twine(at.size()) + ")");
  if (!dims.empty() && policy != "stretch") {
    // One scale for all the axes: the largest that fits (not_larger) or
    // the smallest that covers (not_smaller), then sizes rounded.
    double s = policy == "not_larger" ? 1e300 : 0;
    for (size_t i = 0; i < at.size(); ++i) {
      double f = double(dims[i]) / double(x.dims()[at[i]]);
      s = policy == "not_larger" ? std::min(s, f) : std::max(s, f);
    }
    for (size_t i = 0; i < at.size(); ++i)
      dims[i] = int64_t(std::floor(s * double(x.dims()[at[i]]) + 0.5));
  }
  std::vector<float> fullScales(r, 1.f);
  Ints fullDims(x.dims().begin(), x.dims().end());
  for (size_t i = 0; i < at.size(); ++i) {
    if (dims.empty())
      fullScales[at[i]] = scales[i];
    else
      fullDims[at[i]] = dims[i];
  }
  if (antialias && mode != 0)
    for (size_t i = 0; i < at.size(); ++i)
      if (dims.empty() ? scales[i] < 1.f : dims[i] < int64_t(x.dims()[at[i]]))
        return fail(node, "antialiased downsampling is not supported");
  if (dims.empty())
    return std::make_pair(fullScales, Ints());
  return std::make_pair(std::vector<float>(), fullDims);
}

} // namespace

llvm::Error onnximport::importResize(ImportContext &ctx,
                                     const onnx::NodeProto &node) {
  TRY(NodeValue x, ctx.input(node, 0));
  AttrReader attrs(node);
  TRY(std::string modeS, attrs.getString("mode", "nearest"));
  TRY(int64_t mode, modeIndex(node, modeS, {"nearest", "linear", "cubic"}));
  size_t r = x.dims().size();
  std::vector<float> scales;
  Ints dims;
  int64_t coord = 1, nearest = 2; // opset 10: asymmetric, floor
  if (ctx.opset() < 11) {
    if (isRuntimeInput(ctx, node, 1))
      return importRuntimeResize(ctx, node, x, 1, mode, coord, nearest);
    TRY(scales, floatsInput(ctx, node, 1));
  } else {
    TRY(std::string c,
        attrs.getString("coordinate_transformation_mode", "half_pixel"));
    // Resize-13 dropped tf_half_pixel_for_nn.
    bool tfNN = c == "tf_half_pixel_for_nn" && ctx.opset() < 13;
    if (!tfNN) {
      TRY(coord, modeIndex(node, c,
                           {"half_pixel", "asymmetric", "pytorch_half_pixel",
                            "align_corners"}));
    }
    TRY(std::string nm, attrs.getString("nearest_mode", "round_prefer_floor"));
    TRY(nearest, modeIndex(node, nm,
                           {"round_prefer_floor", "round_prefer_ceil", "floor",
                            "ceil"}));
    if (tfNN) {
      TRY(std::tie(coord, nearest), tfHalfPixelForNN(node, mode, nearest));
    }
    if (isRuntimeInput(ctx, node, 2) && !ImportContext::hasInput(node, 3))
      return importRuntimeResize(ctx, node, x, 2, mode, coord, nearest);
    TRY(scales, floatsInput(ctx, node, 2));
    if (ImportContext::hasInput(node, 3)) {
      TRY(dims, ctx.constantInts(node, 3));
    }
  }
  if (ctx.opset() >= 18) {
    TRY(std::tie(scales, dims),
        resizeOverAxes(node, x, mode, std::move(scales), std::move(dims)));
  }
  if (!dims.empty()) {
    if (dims.size() != r)
      return fail(node, "sizes must have one entry per dim");
    scales.clear();
    for (size_t i = 0; i < r; ++i)
      scales.push_back(float(double(dims[i]) / double(x.dims()[i])));
  } else {
    if (scales.size() != r)
      return fail(node, "needs scales or sizes with one entry per dim");
    TRY(dims, dimsFromScales(node, x, scales));
  }
  TRY(NodeValue y,
      resizeNode(ctx, node, x, dims, scales, mode, coord, nearest));
  return ctx.setOutput(node, y);
}

llvm::Error onnximport::importUpsample(ImportContext &ctx,
                                       const onnx::NodeProto &node) {
  TRY(NodeValue x, ctx.input(node, 0));
  AttrReader attrs(node);
  TRY(std::string modeS, attrs.getString("mode", "nearest"));
  TRY(int64_t mode, modeIndex(node, modeS, {"nearest", "linear"}));
  std::vector<float> scales;
  if (ctx.opset() < 9) {
    const auto *a = attrs.find("scales");
    if (!a)
      return fail(node, "missing attribute 'scales'");
    scales.assign(a->floats().begin(), a->floats().end());
  } else {
    if (isRuntimeInput(ctx, node, 1))
      return importRuntimeResize(ctx, node, x, 1, mode, 1, 2);
    TRY(scales, floatsInput(ctx, node, 1));
  }
  if (scales.size() != x.dims().size())
    return fail(node, "scales must have one entry per dim");
  TRY(Ints dims, dimsFromScales(node, x, scales));
  TRY(NodeValue y, resizeNode(ctx, node, x, dims, scales, mode, 1, 2));
  return ctx.setOutput(node, y);
}

namespace {

/// The NLL loss of \p logp [N, C, d...] against \p target [N, d...].
llvm::Expected<NodeValue> nllLoss(ImportContext &ctx,
                                  const onnx::NodeProto &node, NodeValue logp,
                                  NodeValue target, NodeValue weight) {
  AttrReader attrs(node);
  TRY(std::string red, attrs.getString("reduction", "mean"));
  if (red != "mean" && red != "sum" && red != "none")
    return fail(node, "unknown reduction '" + red + "'");
  const auto *ii = attrs.find("ignore_index");
  TRY(NodeValue t, castTo(ctx, node, target, ElemKind::Int64));
  NodeValue valid;
  if (ii) {
    TRY(valid, make(ctx, node, OpKind::Equal,
                    {t, constantLike(ctx, node, t, double(ii->i()))}));
    TRY(valid, unary(ctx, node, OpKind::Not, valid));
    TRY(t, make(ctx, node, OpKind::Where,
                {valid, t, constantLike(ctx, node, t, 0)}));
  }
  if (t.dims().empty() || logp.dims().size() != t.dims().size() + 1)
    return fail(node, "target " + t.getType()->toString() +
                          " must have one dim less than the input " +
                          logp.getType()->toString() + " and at least one");
  Ints tdims(t.dims().begin(), t.dims().end()), t1 = tdims;
  t1.insert(t1.begin() + 1, 1);
  TRY(NodeValue t1v, reshapeTo(ctx, node, t, t1));
  TRY(NodeValue picked,
      make(ctx, node, OpKind::GatherElements, {logp, t1v}, {Attr::makeInt(1)}));
  TRY(picked, reshapeTo(ctx, node, picked, tdims));
  TRY(NodeValue loss, unary(ctx, node, OpKind::Neg, picked));
  NodeValue w;
  if (weight) {
    TRY(w, make(ctx, node, OpKind::Gather, {weight, t}, {Attr::makeInt(0)}));
  } else {
    w = constantLike(ctx, node, loss, 1.0);
  }
  if (valid) {
    TRY(w, make(ctx, node, OpKind::Where,
                {valid, w, constantLike(ctx, node, w, 0.0)}));
  }
  if (weight || valid) {
    TRY(loss, make(ctx, node, OpKind::Mul, {loss, w}));
  }
  if (red == "none")
    return loss;
  Ints all(tdims.size());
  std::iota(all.begin(), all.end(), 0);
  TRY(NodeValue sum, reduce(ctx, node, OpKind::ReduceSum, loss, all, false));
  if (red == "sum")
    return sum;
  TRY(NodeValue wsum, reduce(ctx, node, OpKind::ReduceSum, w, all, false));
  return make(ctx, node, OpKind::Div, {sum, wsum});
}

} // namespace

llvm::Error onnximport::importNLLLoss(ImportContext &ctx,
                                      const onnx::NodeProto &node) {
  TRY(NodeValue x, ctx.input(node, 0));
  TRY(NodeValue t, ctx.input(node, 1));
  NodeValue w;
  if (ImportContext::hasInput(node, 2)) {
    TRY(w, ctx.input(node, 2));
  }
  TRY(NodeValue y, nllLoss(ctx, node, x, t, w));
  return ctx.setOutput(node, y);
}

llvm::Error onnximport::importSCELoss(ImportContext &ctx,
                                      const onnx::NodeProto &node) {
  TRY(NodeValue x, ctx.input(node, 0));
  TRY(NodeValue t, ctx.input(node, 1));
  NodeValue w;
  if (ImportContext::hasInput(node, 2)) {
    TRY(w, ctx.input(node, 2));
  }
  // log_softmax over axis 1.
  TRY(NodeValue m, reduce(ctx, node, OpKind::ReduceMax, x, {1}, true));
  TRY(NodeValue d, binary(ctx, node, OpKind::Sub, x, m));
  TRY(NodeValue e, unary(ctx, node, OpKind::Exp, d));
  TRY(NodeValue s, reduce(ctx, node, OpKind::ReduceSum, e, {1}, true));
  TRY(s, unary(ctx, node, OpKind::Log, s));
  TRY(NodeValue logp, binary(ctx, node, OpKind::Sub, d, s));
  TRY(NodeValue y, nllLoss(ctx, node, logp, t, w));
  bindOutput(ctx, node, 0, y);
  bindOutput(ctx, node, 1, logp);
  return llvm::Error::success();
}
