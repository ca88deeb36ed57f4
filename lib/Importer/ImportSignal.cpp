//===- ImportSignal.cpp - Window functions and DFT ------------------------===//
//
// HannWindow, HammingWindow and BlackmanWindow become constants (their
// size is a constant input). DFT is a product with a constant matrix of
// cosines and sines (O(n^2) per row: the signals of models are short);
// STFT gathers the frames and takes the same product per frame.
//
//===----------------------------------------------------------------------===//
#include "ImportHelpers.h"
#include "ProtoTensor.h"

#include "ember/Base/ElemAccess.h"

#include <cmath>

using namespace ember;
using namespace ember::onnximport;

#define TRY EMBER_ASSIGN_OR_RETURN

namespace {

/// a0 - a1 cos(2 pi n / N) + a2 cos(4 pi n / N).
template <int Kind>
llvm::Error importWindow(ImportContext &ctx, const onnx::NodeProto &node) {
  TRY(int64_t size, constantScalarInt(ctx, node, 0));
  AttrReader attrs(node);
  TRY(int64_t periodic, attrs.getInt("periodic", 1));
  TRY(int64_t dtype, attrs.getInt("output_datatype", 1));
  TRY(ElemKind kind,
      elemKindFromONNX(int32_t(dtype), ImportContext::describe(node)));
  // The window is computed at import, one cosine per point.
  if (size < 1 || size > kMaxFoldElements)
    return fail(node,
                "size must be in [1, " + llvm::Twine(kMaxFoldElements) + "]");
  static const double kCoeffs[3][3] = {
      {0.5, 0.5, 0.0}, {25.0 / 46, 21.0 / 46, 0.0}, {0.42, 0.5, 0.08}};
  const double *a = kCoeffs[Kind];
  double n1 = periodic ? double(size) : double(size - 1);
  Tensor t(kind, {size});
  for (int64_t i = 0; i < size; ++i) {
    double x = 2 * M_PI * double(i) / n1;
    storeElement(t.data(), kind, i,
                 a[0] - a[1] * std::cos(x) + a[2] * std::cos(2 * x));
  }
  return ctx.setOutput(node,
                       ctx.module().createConstant(nameOf(node), std::move(t)));
}

/// The matrix of DFT \p inverse mapping \p n samples of \p comps
/// components (real, or real and imaginary) to \p bins bins of (real,
/// imaginary) at length \p len: row n * comps + c, column k * 2 + o.
/// Samples at or beyond \p len are dropped; missing ones are zeros.
Tensor dftMatrix(int64_t n, int64_t comps, int64_t bins, int64_t len,
                 bool inverse) {
  Tensor w(ElemKind::Float32, {n * comps, bins * 2});
  float *p = reinterpret_cast<float *>(w.data());
  std::fill(p, p + w.size(), 0.f);
  double sign = inverse ? 1 : -1, scale = inverse ? 1.0 / double(len) : 1;
  for (int64_t i = 0; i < std::min(n, len); ++i)
    for (int64_t k = 0; k < bins; ++k) {
      // Reduced modulo len so that the angle stays small and exact.
      double a = 2 * M_PI * double((i * k) % len) / double(len);
      double c = std::cos(a) * scale, sn = sign * std::sin(a) * scale;
      float *re = p + (i * comps) * bins * 2 + k * 2;
      re[0] = float(c), re[1] = float(sn);
      if (comps == 2) {
        float *im = re + bins * 2;
        im[0] = float(-sn), im[1] = float(c);
      }
    }
  return w;
}

/// DFT of opset 17-19 (axis an attribute) and 20 (axis an input): the
/// signal's axis is moved next to the component dim, and each row of
/// (sample, component) pairs multiplies a constant DFT matrix.
llvm::Error importDFT(ImportContext &ctx, const onnx::NodeProto &node) {
  AttrReader attrs(node);
  TRY(int64_t inverse, attrs.getInt("inverse", 0));
  TRY(int64_t onesided, attrs.getInt("onesided", 0));
  TRY(NodeValue x, ctx.input(node, 0));
  int64_t rank = x.dims().size(), comps = rank ? x.dims().back() : 0;
  if (rank < 3 || (comps != 1 && comps != 2) ||
      x.getElemKind() != ElemKind::Float32)
    return fail(node, "the signal must be float [batch, ..., n, 1 or 2]");
  int64_t axis = 1;
  if (ctx.opset() >= 20) {
    TRY(Ints a, optionalInts(ctx, node, 2, Ints{-2}));
    axis = a.empty() ? -2 : a[0];
  } else {
    TRY(axis, attrs.getInt("axis", 1));
  }
  TRY(axis, normAxis(node, axis, rank));
  if (axis == 0 || axis == rank - 1)
    return fail(node, "the axis must be a signal axis, not the batch or the "
                      "component axis");
  int64_t n = x.dims()[axis], len = n;
  if (ctx.hasInput(node, 1)) {
    TRY(len, constantScalarInt(ctx, node, 1));
  }
  if (len < 1)
    return fail(node, "dft_length must be positive");
  if (onesided && (inverse || comps == 2))
    return fail(node, "onesided applies to the forward DFT of a real signal");
  int64_t bins = onesided ? len / 2 + 1 : len;
  // The DFT matrix is computed at import, one sine and cosine per entry.
  if (bins > kMaxFoldElements / (std::max<int64_t>(n, 1) * comps * 2))
    return fail(node, "the DFT matrix of " + llvm::Twine(n) + " samples and " +
                          llvm::Twine(bins) + " bins has more than " +
                          llvm::Twine(kMaxFoldElements) + " entries");
  // [others..., n, comps], flattened to rows of n * comps.
  Ints perm, back(rank), mid;
  for (int64_t d = 0; d < rank - 1; ++d)
    if (d != axis)
      perm.push_back(d);
  perm.push_back(axis);
  perm.push_back(rank - 1);
  for (int64_t d = 0; d < rank; ++d)
    back[perm[d]] = d;
  auto t = ctx.fn().tryCreateTranspose(nameOf(node), x, perm);
  if (!t)
    return fail(node, errorToString(t.takeError()));
  int64_t rows = 1;
  for (int64_t d = 0; d < rank - 2; ++d) {
    mid.push_back(x.dims()[perm[d]]);
    rows *= mid.back();
  }
  TRY(NodeValue flat, reshapeTo(ctx, node, NodeValue(*t), {rows, n * comps}));
  NodeValue w = ctx.module().createConstant(
      nameOf(node) + ".dft", dftMatrix(n, comps, bins, len, inverse));
  TRY(NodeValue y, plainMatMul(ctx, node, flat, w));
  mid.push_back(bins);
  mid.push_back(2);
  TRY(y, reshapeTo(ctx, node, y, mid));
  auto u = ctx.fn().tryCreateTranspose(nameOf(node), y, back);
  if (!u)
    return fail(node, errorToString(u.takeError()));
  return ctx.setOutput(node, NodeValue(*u));
}

/// STFT: the frames of the signal gathered by a constant index matrix
/// [frames, frame length], times the window, each row times the DFT matrix
/// of the frame length (onesided: the first length / 2 + 1 bins). The
/// frame step and length are constants: they set the result's shape.
llvm::Error importSTFT(ImportContext &ctx, const onnx::NodeProto &node) {
  TRY(int64_t onesided, AttrReader(node).getInt("onesided", 1));
  TRY(NodeValue x, ctx.input(node, 0));
  int64_t comps = x.dims().size() == 3 ? x.dims()[2] : 0;
  if (comps != 1 && comps != 2)
    return fail(node, "the signal must be [batch, length, 1 or 2], got " +
                          x.getType()->toString());
  if (x.getElemKind() != ElemKind::Float32)
    return fail(node, "the signal must be float32");
  TRY(int64_t step, constantScalarInt(ctx, node, 1));
  NodeValue window;
  int64_t len = -1;
  if (ImportContext::hasInput(node, 2)) {
    TRY(window, ctx.input(node, 2));
    if (window.dims().size() != 1 || window.getElemKind() != ElemKind::Float32)
      return fail(node, "the window must be a float32 vector");
    len = window.dims()[0];
  }
  if (ImportContext::hasInput(node, 3)) {
    TRY(int64_t fl, constantScalarInt(ctx, node, 3));
    if (len >= 0 && fl != len)
      return fail(node, "frame_length " + llvm::Twine(fl) +
                            " differs from the window's " + llvm::Twine(len));
    len = fl;
  }
  int64_t b = x.dims()[0], n = x.dims()[1];
  if (len < 1 || step < 1 || len > n)
    return fail(node, "needs a frame step >= 1 and a window or frame_length "
                      "in [1, " +
                          llvm::Twine(n) + "]");
  if (onesided && comps == 2)
    return fail(node, "onesided applies to a real signal");
  int64_t frames = (n - len) / step + 1, bins = onesided ? len / 2 + 1 : len;
  if (frames * len > kMaxFoldElements ||
      bins > kMaxFoldElements / (len * comps * 2))
    return fail(node, "the frame index or DFT matrix is over the limit of " +
                          llvm::Twine(kMaxFoldElements) + " elements");
  Tensor idx(ElemKind::Int64, {dim_t(frames), dim_t(len)});
  auto *ip = reinterpret_cast<int64_t *>(idx.data());
  for (int64_t f = 0; f < frames; ++f)
    for (int64_t j = 0; j < len; ++j)
      ip[f * len + j] = f * step + j;
  NodeValue at =
      ctx.module().createConstant(nameOf(node) + ".frames", std::move(idx));
  TRY(NodeValue y,
      make(ctx, node, OpKind::Gather, {x, at}, {Attr::makeInt(1)}));
  if (window) {
    TRY(window, reshapeTo(ctx, node, window, {1, 1, len, 1}));
    TRY(y, binary(ctx, node, OpKind::Mul, y, window));
  }
  TRY(y, reshapeTo(ctx, node, y, {b * frames, len * comps}));
  NodeValue w = ctx.module().createConstant(
      nameOf(node) + ".dft", dftMatrix(len, comps, bins, len, false));
  TRY(y, plainMatMul(ctx, node, y, w));
  TRY(y, reshapeTo(ctx, node, y, {b, frames, bins, 2}));
  return ctx.setOutput(node, y);
}

const ImportRule kSignalRules[] = {
    {"HannWindow", 17, 17, importWindow<0>},
    {"HammingWindow", 17, 17, importWindow<1>},
    {"BlackmanWindow", 17, 17, importWindow<2>},
    {"DFT", 17, 20, importDFT},
    {"STFT", 17, 17, importSTFT},
};

} // namespace

RuleList onnximport::getSignalImportRules() { return kSignalRules; }
