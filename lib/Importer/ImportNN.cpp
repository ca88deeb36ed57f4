//===- ImportNN.cpp - Windows, normalizations, Resize and losses ----------===//
//
// N-d pooling and 1-D/2-D convolution (1-D runs as 2-D with a unit height),
// ConvTranspose, Resize/Upsample, and compositions: Col2Im as a grouped
// ConvTranspose by one-hot filters, Global pools as
// reductions, InstanceNormalization, LayerNormalization,
// MeanVarianceNormalization, LRN, NegativeLogLikelihoodLoss and
// SoftmaxCrossEntropyLoss.
//
//===----------------------------------------------------------------------===//
#include "ImportHelpers.h"
#include "ProtoTensor.h"
#include "ember/Base/ElemAccess.h"

#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <limits>

using namespace ember;
using namespace ember::onnximport;

#define TRY EMBER_ASSIGN_OR_RETURN

llvm::Expected<PoolWindow>
onnximport::readPoolWindow(const onnx::NodeProto &node, NodeValue x,
                           Ints kernel) {
  AttrReader attrs(node);
  int64_t n = int64_t(x.dims().size()) - 2;
  if (n < 1)
    return fail(node,
                "input " + x.getType()->toString() + " has no spatial dims");
  PoolWindow w;
  TRY(w.kernel, attrs.getInts("kernel_shape", kernel));
  TRY(w.strides, attrs.getInts("strides", Ints(n, 1)));
  TRY(w.dilations, attrs.getInts("dilations", Ints(n, 1)));
  TRY(w.pads, attrs.getInts("pads", Ints(2 * n, 0)));
  TRY(std::string autoPad, attrs.getString("auto_pad", "NOTSET"));
  if (int64_t(w.kernel.size()) != n || int64_t(w.strides.size()) != n ||
      int64_t(w.dilations.size()) != n || int64_t(w.pads.size()) != 2 * n)
    return fail(node, "kernel_shape, strides, dilations or pads do not "
                      "match the input rank");
  for (int64_t i = 0; i < n; ++i) {
    if (w.kernel[i] < 1 || w.strides[i] < 1 || w.dilations[i] < 1)
      return fail(node, "kernel_shape, strides and dilations must be "
                        "positive");
    // The dilated window's span, (kernel - 1) * dilation + 1, and the
    // padded extent it is compared with must fit in int64.
    // So must strides and pads, which ceil_mode adds to the extent.
    constexpr int64_t kQuarter = std::numeric_limits<int64_t>::max() / 4;
    int64_t span;
    if (__builtin_mul_overflow(w.kernel[i] - 1, w.dilations[i], &span) ||
        span > kQuarter)
      return fail(node, "kernel_shape and dilations give a window too large");
    if (w.pads[i] < 0 || w.pads[i + n] < 0)
      return fail(node, "pads must not be negative");
    if (w.strides[i] > kQuarter || w.pads[i] > kQuarter ||
        w.pads[i + n] > kQuarter)
      return fail(node, "strides or pads are too large");
  }
  if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
    for (int64_t i = 0; i < n; ++i) {
      int64_t in = x.dims()[2 + i], s = w.strides[i];
      // ceil(in / s) without in + s - 1, which overflows for huge strides.
      int64_t out = in == 0 ? 0 : (in - 1) / s + 1;
      int64_t span = (w.kernel[i] - 1) * w.dilations[i] + 1;
      int64_t total = std::max<int64_t>((out - 1) * s + span - in, 0);
      int64_t small = total / 2, big = total - small;
      w.pads[i] = autoPad == "SAME_UPPER" ? small : big;
      w.pads[i + n] = autoPad == "SAME_UPPER" ? big : small;
    }
  } else if (autoPad == "VALID") {
    w.pads.assign(2 * n, 0);
  } else if (autoPad != "NOTSET") {
    return fail(node, "unknown auto_pad '" + autoPad + "'");
  }
  return w;
}

void onnximport::applyCeil(PoolWindow &w, llvm::ArrayRef<dim_t> dims) {
  size_t n = w.kernel.size();
  for (size_t i = 0; i < n; ++i) {
    int64_t in = dims[2 + i] + w.pads[i] + w.pads[i + n];
    int64_t span = (w.kernel[i] - 1) * w.dilations[i] + 1, s = w.strides[i];
    int64_t out = (in - span + s - 1) / s + 1;
    if ((out - 1) * s >= dims[2 + i] + w.pads[i])
      --out;
    w.pads[i + n] += std::max<int64_t>((out - 1) * s + span - in, 0);
  }
}

namespace {

/// Taps of a window along one axis that output \p o reads at positions in
/// [0, end) (starting at o * stride - padBegin, dilated).
int64_t tapsBelow(int64_t o, int64_t k, int64_t stride, int64_t dil,
                  int64_t padBegin, int64_t end) {
  // Counted, not enumerated: the kernel size is an attribute.
  int64_t base = o * stride - padBegin;
  auto ceilDiv = [](int64_t a, int64_t b) { return (a + b - 1) / b; };
  int64_t lo = base >= 0 ? 0 : ceilDiv(-base, dil);
  int64_t hi = base >= end ? 0 : std::min(k, ceilDiv(end - base, dil));
  return std::max<int64_t>(hi - lo, 0);
}

/// Taps inside over taps counted, or 0 where none count.
double tapRatio(double in, double pad) { return pad > 0 ? in / pad : 0.0; }

/// The rescale of explicitPadRescale as one constant per spatial dim
/// ([1, 1, ..., out_i, ..., 1]) multiplied in the graph.
llvm::Expected<NodeValue>
perDimRescale(ImportContext &ctx, const onnx::NodeProto &node, NodeValue y,
              llvm::ArrayRef<dim_t> dims,
              const std::vector<std::vector<double>> &inside,
              const std::vector<std::vector<double>> &padded) {
  size_t n = dims.size() - 2;
  NodeValue r;
  for (size_t i = 0; i < n; ++i) {
    std::vector<dim_t> di(n + 2, 1);
    di[2 + i] = dims[2 + i];
    Tensor t(y.getElemKind(), di);
    for (dim_t o = 0; o < dims[2 + i]; ++o)
      storeElement(t.data(), t.getElemKind(), o,
                   tapRatio(inside[i][o], padded[i][o]));
    NodeValue c =
        ctx.module().createConstant(nameOf(node) + ".pad_count", std::move(t));
    if (!r) {
      r = c;
    } else {
      TRY(r, binary(ctx, node, OpKind::Mul, r, c));
    }
  }
  return r;
}

/// Per output position of an average pool over \p w (end pads grown for
/// ceil_mode beyond \p explicitPads): the taps inside the input over the
/// taps inside the explicitly padded input (left padding counts in the
/// latter), shaped [1, 1, spatial dims of \p y] in \p y's kind. An average
/// over the input times it is the average count_include_pad asks for: the
/// positions past the explicit padding do not count (onnxruntime's rule).
/// The ratio is a product over the spatial dims: one constant while small,
/// else one per dim, multiplied in the graph.
llvm::Expected<NodeValue> explicitPadRescale(ImportContext &ctx,
                                             const onnx::NodeProto &node,
                                             const PoolWindow &w,
                                             const Ints &explicitPads,
                                             NodeValue x, NodeValue y) {
  size_t n = w.kernel.size();
  std::vector<dim_t> dims = {1, 1};
  // Per dim and output position: taps inside the input, and taps before
  // the input's end plus the explicit end pad (measured from the start of
  // the leading padding, which every tap is past).
  std::vector<std::vector<double>> inside(n), padded(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t out = y.dims()[2 + i], size = x.dims()[2 + i];
    if (out > kMaxFoldElements)
      return fail(node, "an output dim of " + llvm::Twine(out) +
                            " is more than the " +
                            llvm::Twine(kMaxFoldElements) +
                            " the count_include_pad rescale is built for");
    dims.push_back(out);
    for (int64_t o = 0; o < out; ++o) {
      inside[i].push_back(double(tapsBelow(o, w.kernel[i], w.strides[i],
                                           w.dilations[i], w.pads[i], size)));
      padded[i].push_back(
          double(tapsBelow(o, w.kernel[i], w.strides[i], w.dilations[i], 0,
                           size + w.pads[i] + explicitPads[i + n])));
    }
  }
  dim_t spatial = 1;
  for (dim_t d : dims)
    spatial *= d;
  if (spatial > dim_t(kMaxFoldElements))
    return perDimRescale(ctx, node, y, dims, inside, padded);
  Tensor t(y.getElemKind(), dims);
  std::vector<dim_t> o(n, 0);
  for (dim_t e = 0, end = t.size(); e < end; ++e) {
    double in = 1, pad = 1;
    for (size_t i = 0; i < n; ++i) {
      in *= inside[i][o[i]];
      pad *= padded[i][o[i]];
    }
    storeElement(t.data(), t.getElemKind(), e, tapRatio(in, pad));
    for (size_t i = n; i-- > 0;)
      if (++o[i] < dims[2 + i])
        break;
      else
        o[i] = 0;
  }
  return NodeValue(
      ctx.module().createConstant(nameOf(node) + ".pad_count", std::move(t)));
}

template <bool IsMax>
llvm::Error importPoolND(ImportContext &ctx, const onnx::NodeProto &node) {
  TRY(NodeValue x, ctx.input(node, 0));
  AttrReader attrs(node);
  if (!attrs.has("kernel_shape"))
    return fail(node, "missing attribute 'kernel_shape'");
  TRY(PoolWindow w, readPoolWindow(node, x, {}));
  TRY(int64_t ceilMode, attrs.getInt("ceil_mode", 0));
  TRY(int64_t countPad, attrs.getInt("count_include_pad", 0));
  Ints explicitPads = w.pads;
  if (ceilMode)
    applyCeil(w, x.dims());
  // ceil_mode grew the end pads past the explicit ones, which alone count
  // with count_include_pad: average over the input, then rescale.
  bool rescale = !IsMax && countPad && w.pads != explicitPads;
  if (rescale)
    countPad = 0;
  size_t n = w.kernel.size();
  bool plain2D = n == 2 && x.getElemKind() == ElemKind::Float32 &&
                 w.dilations == Ints{1, 1} && w.pads[0] < w.kernel[0] &&
                 w.pads[1] < w.kernel[1] &&
                 (!countPad || w.pads == explicitPads);
  NodeValue y;
  if (plain2D && IsMax) {
    TRY(y, make(ctx, node, OpKind::MaxPool, {x},
                {Attr::makeInts(w.kernel), Attr::makeInts(w.strides),
                 Attr::makeInts(w.pads)}));
  } else if (plain2D) {
    TRY(y, make(ctx, node, OpKind::AvgPool, {x},
                {Attr::makeInts(w.kernel), Attr::makeInts(w.strides),
                 Attr::makeInts(w.pads), Attr::makeInt(countPad)}));
  } else {
    TRY(y, make(ctx, node, OpKind::PoolND, {x},
                {Attr::makeInts(w.kernel), Attr::makeInts(w.strides),
                 Attr::makeInts(w.pads), Attr::makeInts(w.dilations),
                 Attr::makeInt(!IsMax), Attr::makeInt(countPad)}));
  }
  if (rescale) {
    TRY(NodeValue r, explicitPadRescale(ctx, node, w, explicitPads, x, y));
    TRY(y, binary(ctx, node, OpKind::Mul, y, r));
  }
  if (IsMax && node.output_size() > 1 && !node.output(1).empty()) {
    TRY(NodeValue indices, maxPoolIndices(ctx, node, x, w, y));
    bindOutput(ctx, node, 1, indices);
  }
  return ctx.setOutput(node, y);
}

template <OpKind K>
llvm::Error importGlobalPool(ImportContext &ctx, const onnx::NodeProto &node) {
  TRY(NodeValue x, ctx.input(node, 0));
  Ints axes;
  for (size_t i = 2; i < x.dims().size(); ++i)
    axes.push_back(i);
  if (axes.empty())
    return fail(node, "input has no spatial dims");
  TRY(NodeValue y, reduce(ctx, node, K, x, axes, true));
  return ctx.setOutput(node, y);
}

llvm::Error importConvAny(ImportContext &ctx, const onnx::NodeProto &node) {
  TRY(NodeValue x, ctx.input(node, 0));
  TRY(NodeValue w, ctx.input(node, 1));
  NodeValue bias;
  if (ImportContext::hasInput(node, 2)) {
    TRY(bias, ctx.input(node, 2));
  }
  TRY(NodeValue y, convolution(ctx, node, x, w, bias));
  return ctx.setOutput(node, y);
}

llvm::Error importConvTranspose(ImportContext &ctx,
                                const onnx::NodeProto &node) {
  TRY(NodeValue x, ctx.input(node, 0));
  TRY(NodeValue w, ctx.input(node, 1));
  AttrReader attrs(node);
  int64_t n = int64_t(x.dims().size()) - 2;
  if (n < 1 || w.dims().size() != x.dims().size())
    return fail(node, "input and filter ranks do not match");
  Ints kernel(w.dims().begin() + 2, w.dims().end());
  TRY(Ints strides, attrs.getInts("strides", Ints(n, 1)));
  TRY(Ints dil, attrs.getInts("dilations", Ints(n, 1)));
  TRY(Ints pads, attrs.getInts("pads", Ints(2 * n, 0)));
  TRY(Ints outPad, attrs.getInts("output_padding", Ints(n, 0)));
  TRY(Ints outShape, attrs.getInts("output_shape", Ints()));
  TRY(std::string autoPad, attrs.getString("auto_pad", "NOTSET"));
  TRY(int64_t group, attrs.getInt("group", 1));
  if (int64_t(strides.size()) != n || int64_t(dil.size()) != n ||
      int64_t(pads.size()) != 2 * n || int64_t(outPad.size()) != n)
    return fail(node, "attributes do not match the spatial rank");
  if (!outShape.empty() && int64_t(outShape.size()) == n + 2)
    outShape.erase(outShape.begin(), outShape.begin() + 2);
  if (!outShape.empty() && int64_t(outShape.size()) != n)
    return fail(node, "output_shape has " + std::to_string(outShape.size()) +
                          " values for " + std::to_string(n) + " spatial dims");
  // Bounds that keep the size arithmetic below far from overflowing.
  constexpr int64_t kMaxWindowAttr = int64_t(1) << 16;
  for (int64_t i = 0; i < n; ++i) {
    if (strides[i] < 1 || dil[i] < 1 || strides[i] > kMaxWindowAttr ||
        dil[i] > kMaxWindowAttr)
      return fail(node, "strides and dilations must be in [1, 65536]");
    if (pads[i] < 0 || pads[i + n] < 0 || outPad[i] < 0 ||
        pads[i] > kMaxWindowAttr || pads[i + n] > kMaxWindowAttr ||
        outPad[i] > kMaxWindowAttr)
      return fail(node, "pads and output_padding must be in [0, 65536]");
    if (!outShape.empty() &&
        (outShape[i] < 1 || outShape[i] > kMaxWindowAttr * kMaxWindowAttr))
      return fail(node, "output_shape values must be positive");
  }
  if (group < 1 || group > int64_t(x.dims()[1]))
    return fail(node, "group " + std::to_string(group) +
                          " is out of range for " +
                          std::to_string(x.dims()[1]) + " input channels");
  Ints dims = {x.dims()[0], w.dims()[1] * group};
  for (int64_t i = 0; i < n; ++i) {
    int64_t full = strides[i] * (x.dims()[2 + i] - 1) + outPad[i] +
                   (kernel[i] - 1) * dil[i] + 1;
    bool same = autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER";
    if (!outShape.empty() || same) {
      int64_t out =
          !outShape.empty() ? outShape[i] : x.dims()[2 + i] * strides[i];
      int64_t total = full - out;
      // An output_shape past the full result grows it at the end (zeros
      // plus the bias), as the node tests' reference does.
      if (total < 0 && !outShape.empty()) {
        pads[i] = pads[i + n] = 0;
        dims.push_back(out);
        continue;
      }
      if (total < 0)
        return fail(node, "the SAME padding's result is larger than the "
                          "full result");
      bool upper = autoPad == "SAME_UPPER";
      pads[i] = upper ? total / 2 : total - total / 2;
      pads[i + n] = total - pads[i];
    } else if (autoPad == "VALID") {
      pads[i] = pads[i + n] = 0;
    }
    dims.push_back(full - pads[i] - pads[i + n]);
  }
  NodeValue bias;
  if (ImportContext::hasInput(node, 2)) {
    TRY(bias, ctx.input(node, 2));
  } else {
    bias = constantOf(ctx, node, x.getElemKind(), {dims[1]}, 0);
  }
  TRY(NodeValue y,
      make(ctx, node, OpKind::ConvTranspose, {x, w, bias},
           {Attr::makeInts(strides), Attr::makeInts(pads), Attr::makeInts(dil),
            Attr::makeInt(group), Attr::makeInts(dims)}));
  return ctx.setOutput(node, y);
}

/// The Col2Im filter [C * K, 1, block...]: filter c * K + k is 1 at block
/// position k, so a ConvTranspose with C groups adds column k of each
/// channel at its block offset.
llvm::Expected<NodeValue> oneHotFilters(ImportContext &ctx,
                                        const onnx::NodeProto &node,
                                        NodeValue x, int64_t channels,
                                        const Ints &block, int64_t k) {
  if (channels * k > kMaxFoldElements / k)
    return fail(node, "the one-hot filter of " + llvm::Twine(channels * k) +
                          " x " + llvm::Twine(k) + " is over the limit of " +
                          llvm::Twine(kMaxFoldElements) + " elements");
  std::vector<dim_t> dims = {dim_t(channels * k), 1};
  dims.insert(dims.end(), block.begin(), block.end());
  Tensor w(x.getElemKind(), dims);
  for (int64_t c = 0; c < channels * k; ++c)
    storeElement(w.data(), x.getElemKind(), c * k + c % k, 1.0);
  return NodeValue(
      ctx.module().createConstant(nameOf(node) + ".onehot", std::move(w)));
}

/// Col2Im: the columns [N, C * K, L] (K block positions, L = the product
/// of the sliding positions) summed back into [N, C, image...].
llvm::Error importCol2Im(ImportContext &ctx, const onnx::NodeProto &node) {
  TRY(NodeValue x, ctx.input(node, 0));
  TRY(Ints image, ctx.constantInts(node, 1));
  TRY(Ints block, ctx.constantInts(node, 2));
  int64_t n = image.size();
  AttrReader attrs(node);
  TRY(Ints strides, attrs.getInts("strides", Ints(n, 1)));
  TRY(Ints dil, attrs.getInts("dilations", Ints(n, 1)));
  TRY(Ints pads, attrs.getInts("pads", Ints(2 * n, 0)));
  if (x.dims().size() != 3 || !isFloatKind(x.getElemKind()) || n < 1 ||
      int64_t(block.size()) != n || int64_t(strides.size()) != n ||
      int64_t(dil.size()) != n || int64_t(pads.size()) != 2 * n)
    return fail(node, "needs float input [N, C * K, L] and image_shape, "
                      "block_shape, strides, dilations and pads of one "
                      "spatial rank");
  int64_t k = 1, positions = 1;
  Ints cols = {int64_t(x.dims()[0]), int64_t(x.dims()[1])};
  for (int64_t i = 0; i < n; ++i) {
    // Bounds that keep the size arithmetic far from overflowing.
    constexpr int64_t kMaxAttr = int64_t(1) << 16;
    auto within = [](int64_t v, int64_t lo, int64_t hi) {
      return v >= lo && v <= hi;
    };
    if (!within(block[i], 1, kMaxAttr) || !within(strides[i], 1, kMaxAttr) ||
        !within(dil[i], 1, kMaxAttr) || !within(pads[i], 0, kMaxAttr) ||
        !within(pads[i + n], 0, kMaxAttr) ||
        !within(image[i], 1, kMaxTensorElements))
      return fail(node, "block, image, strides, dilations or pads out of "
                        "range on spatial dim " +
                            llvm::Twine(i));
    int64_t span = dil[i] * (block[i] - 1) + 1;
    int64_t out = (image[i] + pads[i] + pads[i + n] - span) / strides[i] + 1;
    k *= block[i];
    positions *= std::max<int64_t>(out, 0);
    if (out < 1 || k > int64_t(x.dims()[1]) || positions > int64_t(x.dims()[2]))
      return fail(node, "input " + x.getType()->toString() +
                            " has too few columns for the block and image "
                            "shapes");
    cols.push_back(out);
  }
  int64_t c = x.dims()[1] / k;
  if (int64_t(x.dims()[1]) % k || int64_t(x.dims()[2]) != positions)
    return fail(node, "input " + x.getType()->toString() + " is not [N, C * " +
                          llvm::Twine(k) + ", " + llvm::Twine(positions) + "]");
  TRY(NodeValue w, oneHotFilters(ctx, node, x, c, block, k));
  TRY(x, reshapeTo(ctx, node, x, cols));
  Ints dims = {int64_t(x.dims()[0]), c};
  dims.insert(dims.end(), image.begin(), image.end());
  NodeValue bias = constantOf(ctx, node, x.getElemKind(), {dim_t(c)}, 0);
  TRY(NodeValue y,
      make(ctx, node, OpKind::ConvTranspose, {x, w, bias},
           {Attr::makeInts(strides), Attr::makeInts(pads), Attr::makeInts(dil),
            Attr::makeInt(c), Attr::makeInts(dims)}));
  return ctx.setOutput(node, y);
}

/// Per-channel [C] parameter reshaped to [1, C, 1, ...] for \p x.
llvm::Expected<NodeValue> channelParam(ImportContext &ctx,
                                       const onnx::NodeProto &node, NodeValue p,
                                       NodeValue x) {
  if (x.dims().size() < 2)
    return fail(node, "input " + x.getType()->toString() +
                          " has no channel dimension");
  Ints shape(x.dims().size(), 1);
  shape[1] = x.dims()[1];
  TRY(p, reshapeTo(ctx, node, p, shape));
  return ctx.broadcastTo(node, p, x.dims());
}

} // namespace

llvm::Expected<NodeValue> onnximport::normalize(ImportContext &ctx,
                                                const onnx::NodeProto &node,
                                                NodeValue x, const Ints &axes,
                                                double eps, NodeValue *meanOut,
                                                NodeValue *invStdOut) {
  TRY(NodeValue mean, reduce(ctx, node, OpKind::ReduceMean, x, axes, true));
  TRY(NodeValue d, binary(ctx, node, OpKind::Sub, x, mean));
  TRY(NodeValue sq, make(ctx, node, OpKind::Mul, {d, d}));
  TRY(NodeValue var, reduce(ctx, node, OpKind::ReduceMean, sq, axes, true));
  TRY(var,
      make(ctx, node, OpKind::Add, {var, constantLike(ctx, node, var, eps)}));
  TRY(NodeValue sd, unary(ctx, node, OpKind::Sqrt, var));
  if (meanOut)
    *meanOut = mean;
  if (invStdOut) {
    TRY(*invStdOut, unary(ctx, node, OpKind::Reciprocal, sd));
  }
  return binary(ctx, node, OpKind::Div, d, sd);
}

namespace {

llvm::Error importInstanceNorm(ImportContext &ctx,
                               const onnx::NodeProto &node) {
  TRY(NodeValue x, ctx.input(node, 0));
  TRY(NodeValue scale, ctx.input(node, 1));
  TRY(NodeValue bias, ctx.input(node, 2));
  TRY(float eps, AttrReader(node).getFloat("epsilon", 1e-5f));
  Ints axes;
  for (size_t i = 2; i < x.dims().size(); ++i)
    axes.push_back(i);
  TRY(NodeValue y, normalize(ctx, node, x, axes, eps));
  TRY(scale, channelParam(ctx, node, scale, x));
  TRY(bias, channelParam(ctx, node, bias, x));
  TRY(y, make(ctx, node, OpKind::Mul, {y, scale}));
  TRY(y, make(ctx, node, OpKind::Add, {y, bias}));
  return ctx.setOutput(node, y);
}

llvm::Error importLayerNorm(ImportContext &ctx, const onnx::NodeProto &node) {
  TRY(NodeValue x, ctx.input(node, 0));
  TRY(NodeValue scale, ctx.input(node, 1));
  AttrReader attrs(node);
  TRY(int64_t axis, attrs.getInt("axis", -1));
  TRY(axis, normAxis(node, axis, x.dims().size()));
  TRY(float eps, attrs.getFloat("epsilon", 1e-5f));
  Ints axes;
  for (size_t i = axis; i < x.dims().size(); ++i)
    axes.push_back(i);
  NodeValue mean, invStd;
  TRY(NodeValue y, normalize(ctx, node, x, axes, eps, &mean, &invStd));
  TRY(scale, ctx.broadcastTo(node, scale, x.dims()));
  TRY(y, make(ctx, node, OpKind::Mul, {y, scale}));
  if (ImportContext::hasInput(node, 2)) {
    TRY(NodeValue bias, ctx.input(node, 2));
    TRY(bias, ctx.broadcastTo(node, bias, x.dims()));
    TRY(y, make(ctx, node, OpKind::Add, {y, bias}));
  }
  bindOutput(ctx, node, 0, y);
  bindOutput(ctx, node, 1, mean);
  bindOutput(ctx, node, 2, invStd);
  return llvm::Error::success();
}

llvm::Error importMVN(ImportContext &ctx, const onnx::NodeProto &node) {
  TRY(NodeValue x, ctx.input(node, 0));
  TRY(Ints axes, AttrReader(node).getInts("axes", Ints{0, 2, 3}));
  TRY(NodeValue mean, reduce(ctx, node, OpKind::ReduceMean, x, axes, true));
  TRY(NodeValue sq, make(ctx, node, OpKind::Mul, {x, x}));
  TRY(NodeValue msq, reduce(ctx, node, OpKind::ReduceMean, sq, axes, true));
  TRY(NodeValue m2, make(ctx, node, OpKind::Mul, {mean, mean}));
  TRY(NodeValue var, make(ctx, node, OpKind::Sub, {msq, m2}));
  TRY(NodeValue sd, unary(ctx, node, OpKind::Sqrt, var));
  TRY(sd,
      make(ctx, node, OpKind::Add, {sd, constantLike(ctx, node, sd, 1e-9)}));
  TRY(NodeValue d, binary(ctx, node, OpKind::Sub, x, mean));
  TRY(NodeValue y, binary(ctx, node, OpKind::Div, d, sd));
  return ctx.setOutput(node, y);
}

/// LRN: x / (bias + alpha / size * sum of squares over a channel window)^beta.
llvm::Error importLRN(ImportContext &ctx, const onnx::NodeProto &node) {
  TRY(NodeValue x, ctx.input(node, 0));
  AttrReader attrs(node);
  TRY(float alpha, attrs.getFloat("alpha", 1e-4f));
  TRY(float beta, attrs.getFloat("beta", 0.75f));
  TRY(float bias, attrs.getFloat("bias", 1.f));
  TRY(int64_t size, attrs.getInt("size", std::nullopt));
  size_t r = x.dims().size();
  if (r < 3 || size < 1)
    return fail(node, "needs N, C, spatial dims and a positive size");
  TRY(NodeValue sq, make(ctx, node, OpKind::Mul, {x, x}));
  // The window reaches at most C - 1 channels to either side: farther ones
  // are padding and add zeros, so a window wider than the channels takes
  // no more slices (a size of 2^31 - 1 would be that many nodes).
  int64_t C = x.dims()[1];
  Ints pads(2 * r, 0);
  pads[1] = std::min((size - 1) / 2, C - 1);
  pads[1 + r] = std::min(size - 1 - (size - 1) / 2, C - 1);
  TRY(NodeValue padded,
      make(ctx, node, OpKind::Pad, {sq},
           {Attr::makeInts(pads), Attr::makeInt(0), Attr::makeFloat(0.f)}));
  if (pads[1] + pads[1 + r] >= kMaxUnrolledSteps)
    return fail(node, "a window of " + llvm::Twine(pads[1] + pads[1 + r] + 1) +
                          " channels; the limit is " +
                          llvm::Twine(kMaxUnrolledSteps) +
                          " (one Slice per position)");
  NodeValue sum;
  for (int64_t k = 0; k <= pads[1] + pads[1 + r]; ++k) {
    Ints s(r, 0), st(r, 1), c(x.dims().begin(), x.dims().end());
    s[1] = k;
    TRY(NodeValue part,
        make(ctx, node, OpKind::Slice, {padded},
             {Attr::makeInts(s), Attr::makeInts(st), Attr::makeInts(c)}));
    if (!sum) {
      sum = part;
    } else {
      TRY(sum, make(ctx, node, OpKind::Add, {sum, part}));
    }
  }
  TRY(sum, make(ctx, node, OpKind::Mul,
                {sum, constantLike(ctx, node, sum, alpha / size)}));
  TRY(sum,
      make(ctx, node, OpKind::Add, {sum, constantLike(ctx, node, sum, bias)}));
  TRY(sum,
      make(ctx, node, OpKind::Pow, {sum, constantLike(ctx, node, sum, beta)}));
  TRY(NodeValue y, make(ctx, node, OpKind::Div, {x, sum}));
  return ctx.setOutput(node, y);
}

} // namespace

namespace {
const ImportRule kNNRules[] = {
    {"MaxPool", 1, 17, importPoolND<true>},
    {"AveragePool", 1, 19, importPoolND<false>},
    {"GlobalMaxPool", 1, 17, importGlobalPool<OpKind::ReduceMax>},
    {"GlobalAveragePool", 1, 17, importGlobalPool<OpKind::ReduceMean>},
    {"Conv", 1, 17, importConvAny},
    {"ConvTranspose", 1, 17, importConvTranspose},
    {"Col2Im", 18, 18, importCol2Im},
    {"InstanceNormalization", 6, 17, importInstanceNorm},
    {"LayerNormalization", 17, 17, importLayerNorm},
    {"MeanVarianceNormalization", 9, 17, importMVN},
    {"LRN", 1, 17, importLRN},
    {"Resize", 10, 19, importResize},
    {"Upsample", 7, 9, importUpsample},
    {"NegativeLogLikelihoodLoss", 12, 17, importNLLLoss},
    {"SoftmaxCrossEntropyLoss", 12, 17, importSCELoss},
};
} // namespace

RuleList onnximport::getNNImportRules() { return kNNRules; }

namespace {

/// A 3-D convolution as one 2-D convolution per kernel depth tap: tap kd
/// reads the depth slices kd * dilation + od * stride (od the output depth,
/// after zero-padding the depth), which are folded into the batch; the
/// 2-D results are summed and the depth moved back behind the channels.
/// The bias enters once, with tap 0.
llvm::Expected<NodeValue> conv3D(ImportContext &ctx,
                                 const onnx::NodeProto &node, NodeValue x,
                                 NodeValue w, NodeValue bias,
                                 const PoolWindow &win, int64_t group) {
  int64_t n = x.dims()[0], c = x.dims()[1], m = w.dims()[0];
  int64_t kd = w.dims()[2], s = win.strides[0], dl = win.dilations[0];
  if (win.pads[0] || win.pads[3]) {
    Ints pads(10, 0);
    pads[2] = win.pads[0];
    pads[7] = win.pads[3];
    TRY(x, make(ctx, node, OpKind::Pad, {x},
                {Attr::makeInts(pads), Attr::makeInt(0), Attr::makeFloat(0)}));
  }
  int64_t depth = x.dims()[2], h = x.dims()[3], wd = x.dims()[4];
  int64_t outD = (depth - (kd - 1) * dl - 1) / s + 1;
  if (outD < 1)
    return fail(node, "the kernel is deeper than the padded input");
  if (kd > kMaxUnrolledSteps)
    return fail(node, "a kernel depth of " + llvm::Twine(kd) +
                          "; the limit is " + llvm::Twine(kMaxUnrolledSteps) +
                          " (one 2-D convolution per tap)");
  NodeValue zero = constantOf(ctx, node, x.getElemKind(), {m}, 0);
  AttrList attrs = {
      Attr::makeInts({win.strides[1], win.strides[2]}),
      Attr::makeInts({win.pads[1], win.pads[2], win.pads[4], win.pads[5]}),
      Attr::makeInts({win.dilations[1], win.dilations[2]}),
      Attr::makeInt(group),
      Attr::makeInt(int64_t(FusedActivation::None)),
      Attr::makeFloat(0.f),
      Attr::makeFloat(0.f)};
  NodeValue sum;
  for (int64_t k = 0; k < kd; ++k) {
    TRY(NodeValue xs, make(ctx, node, OpKind::Slice, {x},
                           {Attr::makeInts({0, 0, k * dl, 0, 0}),
                            Attr::makeInts({1, 1, s, 1, 1}),
                            Attr::makeInts({n, c, outD, h, wd})}));
    TRY(xs, make(ctx, node, OpKind::Transpose, {xs},
                 {Attr::makeInts({0, 2, 1, 3, 4})}));
    TRY(xs, reshapeTo(ctx, node, xs, {n * outD, c, h, wd}));
    Ints wDims(w.dims().begin(), w.dims().end());
    wDims[2] = 1;
    TRY(NodeValue ws,
        make(ctx, node, OpKind::Slice, {w},
             {Attr::makeInts({0, 0, k, 0, 0}), Attr::makeInts({1, 1, 1, 1, 1}),
              Attr::makeInts(wDims)}));
    TRY(ws,
        reshapeTo(ctx, node, ws, {m, w.dims()[1], w.dims()[3], w.dims()[4]}));
    TRY(NodeValue y,
        make(ctx, node, OpKind::Conv, {xs, ws, k ? zero : bias}, attrs));
    if (sum) {
      TRY(sum, binary(ctx, node, OpKind::Add, sum, y));
    } else {
      sum = y;
    }
  }
  TRY(sum,
      reshapeTo(ctx, node, sum, {n, outD, m, sum.dims()[2], sum.dims()[3]}));
  return make(ctx, node, OpKind::Transpose, {sum},
              {Attr::makeInts({0, 2, 1, 3, 4})});
}

} // namespace

llvm::Expected<NodeValue>
onnximport::convolution(ImportContext &ctx, const onnx::NodeProto &node,
                        NodeValue x, NodeValue w, NodeValue bias,
                        NodeValue xZero, NodeValue wZero) {
  size_t r = x.dims().size();
  bool is3D = r == 5 && !xZero;
  if ((r != 3 && r != 4 && !is3D) || w.dims().size() != r)
    return fail(node, "only 1-D, 2-D and (float) 3-D convolutions are "
                      "supported, got " +
                          x.getType()->toString());
  Ints wk(w.dims().begin() + 2, w.dims().end());
  TRY(PoolWindow win, readPoolWindow(node, x, wk));
  if (win.kernel != wk)
    return fail(node, "kernel_shape does not match the filter");
  TRY(int64_t group, AttrReader(node).getInt("group", 1));
  if (!bias && !xZero)
    bias = constantOf(ctx, node, x.getElemKind(), {w.dims()[0]}, 0);
  if (is3D)
    return conv3D(ctx, node, x, w, bias, win, group);
  if (r == 3) { // 1-D: a 2-D convolution over a unit height.
    TRY(x, reshapeTo(ctx, node, x, {x.dims()[0], x.dims()[1], 1, x.dims()[2]}));
    TRY(w, reshapeTo(ctx, node, w, {w.dims()[0], w.dims()[1], 1, w.dims()[2]}));
    win.strides.insert(win.strides.begin(), 1);
    win.dilations.insert(win.dilations.begin(), 1);
    win.pads = {0, win.pads[0], 0, win.pads[1]};
  }
  AttrList attrs = {Attr::makeInts(win.strides), Attr::makeInts(win.pads),
                    Attr::makeInts(win.dilations), Attr::makeInt(group)};
  NodeValue y;
  if (xZero) {
    TRY(y, make(ctx, node, OpKind::IntConv, {x, w, xZero, wZero}, attrs));
  } else {
    attrs.append({Attr::makeInt(int64_t(FusedActivation::None)),
                  Attr::makeFloat(0.f), Attr::makeFloat(0.f)});
    TRY(y, make(ctx, node, OpKind::Conv, {x, w, bias}, attrs));
  }
  if (r == 3)
    return reshapeTo(ctx, node, y, {y.dims()[0], y.dims()[1], y.dims()[3]});
  return y;
}
