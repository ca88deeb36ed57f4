//===- TrimConvTaps.cpp - Filter taps that only ever read padding ---------===//
//
// A filter row (or column) whose taps fall into the zero padding for every
// output position adds nothing to any output: a dilated convolution whose
// dilation reaches past a small feature map (DeepLab's atrous pyramid, with
// dilations 12-36 on the 10x10 to 33x33 maps of its backbone) reads mostly
// padding. Such rows and columns at the filter's edges are cut off, the
// pads shrink by the dilation for each, and a filter left with one tap
// along an axis loses its dilation there: the convolution then takes the
// paths of an ordinary (often 1x1) one instead of padding a copy of the
// input by the dilation. Exact: a dead tap multiplies zeros, unless its
// weight is not finite (0 * inf is NaN), in which case the filter stays.
//
//===----------------------------------------------------------------------===//
#include "PassUtils.h"
#include "Passes.h"

#include <cmath>

using namespace ember;

namespace {
/// The live taps [first, last] of one spatial axis, and the axis's new
/// leading and trailing pads.
struct AxisTrim {
  int64_t first = 0, last = -1, padBegin = 0, padEnd = 0;
  bool trims(int64_t taps) const { return first > 0 || last < taps - 1; }
};
} // namespace

/// True when tap \p k reads the input (of \p in elements) for some output
/// position o < \p out: 0 <= o * stride - pad + k * dil < in.
static bool tapIsLive(int64_t k, int64_t in, int64_t out, int64_t stride,
                      int64_t pad, int64_t dil) {
  int64_t need = pad - k * dil; // o * stride must reach at least this
  int64_t o = need <= 0 ? 0 : (need + stride - 1) / stride;
  return o < out && o * stride - pad + k * dil < in;
}

/// The live taps of an axis and the pads that keep its output size, or
/// nullopt when no tap is live or a pad would have to be negative.
static std::optional<AxisTrim> trimAxis(int64_t taps, int64_t in, int64_t out,
                                        int64_t stride, int64_t padBegin,
                                        int64_t dil) {
  AxisTrim t;
  t.first = taps;
  for (int64_t k = 0; k < taps; ++k)
    if (tapIsLive(k, in, out, stride, padBegin, dil)) {
      t.first = std::min(t.first, k);
      t.last = k;
    }
  if (t.last < 0)
    return std::nullopt;
  t.padBegin = padBegin - t.first * dil;
  // The last output's last live tap must still land inside input + pads.
  t.padEnd =
      (out - 1) * stride + (t.last - t.first) * dil + 1 - in - t.padBegin;
  if (t.padBegin < 0 || t.padEnd < 0)
    return std::nullopt;
  return t;
}

/// Filter \p w ([M, C, KH, KW], Float32) cut to rows \p h and columns \p v,
/// or nullopt when a cut-off weight is not finite.
static std::optional<Tensor> cutFilter(const Tensor &w, const AxisTrim &h,
                                       const AxisTrim &v) {
  auto d = w.dims();
  const float *src = reinterpret_cast<const float *>(w.data());
  dim_t kh = h.last - h.first + 1, kw = v.last - v.first + 1;
  Tensor out(ElemKind::Float32, {d[0], d[1], kh, kw});
  float *dst = reinterpret_cast<float *>(out.data());
  for (dim_t mc = 0; mc < d[0] * d[1]; ++mc)
    for (dim_t r = 0; r < d[2]; ++r)
      for (dim_t c = 0; c < d[3]; ++c) {
        float x = src[(mc * d[2] + r) * d[3] + c];
        bool kept = int64_t(r) >= h.first && int64_t(r) <= h.last &&
                    int64_t(c) >= v.first && int64_t(c) <= v.last;
        if (!kept && !std::isfinite(x))
          return std::nullopt;
        if (kept)
          *dst++ = x;
      }
  return out;
}

/// \p conv with its dead filter rows and columns cut off, or null.
static Node *trimmed(Function &F, ConvNode *conv) {
  auto *c = llvm::dyn_cast<Constant>(conv->getFilter().getNode());
  if (!c || c->getType()->getElemKind() != ElemKind::Float32 ||
      conv->getInput().getType()->getElemKind() != ElemKind::Float32)
    return nullptr;
  auto xd = conv->getInput().getType()->dims();
  auto wd = c->getType()->dims();
  auto yd = conv->getResult().getType()->dims();
  auto st = conv->getStrides(), pads = conv->getPads(),
       dil = conv->getDilations();
  auto h = trimAxis(wd[2], xd[2], yd[2], st[0], pads[0], dil[0]);
  auto v = trimAxis(wd[3], xd[3], yd[3], st[1], pads[1], dil[1]);
  if (!h || !v || (!h->trims(wd[2]) && !v->trims(wd[3])))
    return nullptr;
  std::optional<Tensor> w = cutFilter(c->getPayload(), *h, *v);
  if (!w)
    return nullptr;
  std::string name = conv->getName().str();
  Constant *cw =
      F.getParent().createConstant(name + ".live_taps", std::move(*w));
  // One tap left along an axis: its dilation no longer spaces anything.
  int64_t dh = h->first == h->last ? 1 : dil[0];
  int64_t dw = v->first == v->last ? 1 : dil[1];
  AttrList attrs = conv->getAttrs();
  attrs[attrIndex(OpKind::Conv, "Pads")] =
      Attr::makeInts({h->padBegin, v->padBegin, h->padEnd, v->padEnd});
  attrs[attrIndex(OpKind::Conv, "Dilations")] = Attr::makeInts({dh, dw});
  llvm::SmallVector<NodeValue, 4> ops(conv->getInputs().begin(),
                                      conv->getInputs().end());
  ops[1] = cw;
  return cloneNode(F, *conv, ops, std::move(attrs));
}

bool TrimConvTapsPass::run(Function &F, PassContext &ctx) {
  bool changed = false;
  for (Node *n : nodesInOrder(F)) {
    auto *conv = llvm::dyn_cast<ConvNode>(n);
    if (!conv)
      continue;
    Node *cut = trimmed(F, conv);
    if (!cut)
      continue;
    replaceNode(conv, cut);
    F.eraseNode(conv);
    ++ctx.counters["trim-conv-taps.trimmed"];
    changed = true;
  }
  return changed;
}
