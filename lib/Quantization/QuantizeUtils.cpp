//===- QuantizeUtils.cpp - Pieces of the profile-guided quantizer ---------===//
#include "QuantizeUtils.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace ember;
using namespace ember::quant;

bool quant::keeps(const QuantizationOptions &opts, llvm::StringRef kind) {
  return llvm::is_contained(opts.keepKinds, kind);
}

/// A Constant of \p kind holding \p values (as doubles) with \p dims.
static Constant *constantOf(Function &F, const std::string &name, ElemKind kind,
                            llvm::ArrayRef<dim_t> dims,
                            llvm::ArrayRef<double> values) {
  Tensor t(kind, dims);
  for (size_t i = 0; i < values.size(); ++i) {
    switch (kind) {
    case ElemKind::Float32:
      reinterpret_cast<float *>(t.data())[i] = float(values[i]);
      break;
    case ElemKind::Int32:
      reinterpret_cast<int32_t *>(t.data())[i] = int32_t(values[i]);
      break;
    default:
      reinterpret_cast<int8_t *>(t.data())[i] = int8_t(values[i]);
      break;
    }
  }
  return F.getParent().createConstant(name, std::move(t));
}

NodeValue quant::quantDequant(Function &F, const std::string &name, NodeValue x,
                              const QuantParams &p) {
  Constant *s =
      constantOf(F, name + ".scale", ElemKind::Float32, {1}, {double(p.scale)});
  Constant *z =
      constantOf(F, name + ".zero", ElemKind::Int32, {1}, {double(p.zero)});
  NodeValue q = F.createQuantize(name, x, s, z, 0, p.kind);
  return F.createDequantize(name + ".d", q, s, z, 0);
}

bool quant::isByteDequantize(NodeValue v) {
  auto *d = llvm::dyn_cast<DequantizeNode>(v.getNode());
  return d && d->getScale().dims()[0] == 1 &&
         llvm::isa<Constant>(d->getScale().getNode()) &&
         (d->getInput().getElemKind() == ElemKind::Int8 ||
          d->getInput().getElemKind() == ElemKind::UInt8);
}

float quant::scalarOf(NodeValue v) {
  return reinterpret_cast<const float *>(
      llvm::cast<Constant>(v.getNode())->getPayload().data())[0];
}

bool quant::floatValues(NodeValue v, std::vector<float> &out) {
  auto *c = llvm::dyn_cast<Constant>(v.getNode());
  if (!c || v.getElemKind() != ElemKind::Float32)
    return false;
  const auto *p = reinterpret_cast<const float *>(c->getPayload().data());
  out.assign(p, p + c->getPayload().size());
  return true;
}

bool quant::gemmBias(NodeValue c, float beta, dim_t n,
                     std::vector<float> &out) {
  while (llvm::isa<ReshapeNode>(c.getNode()) ||
         llvm::isa<BroadcastNode>(c.getNode()))
    c = c.getNode()->getNthInput(0);
  if (auto *s = llvm::dyn_cast<SplatNode>(c.getNode())) {
    out.assign(n, beta * s->getValue());
    return true;
  }
  std::vector<float> v;
  if (!floatValues(c, v) || (v.size() != size_t(n) && v.size() != 1))
    return false;
  out.resize(n);
  for (dim_t i = 0; i < n; ++i)
    out[i] = beta * v[v.size() == 1 ? 0 : i];
  return true;
}

bool quant::foldBatchNorm(BatchNormNode *bn, std::vector<float> &w,
                          std::vector<float> &b) {
  std::vector<float> scale, bias, mean, var;
  if (!floatValues(bn->getScale(), scale) ||
      !floatValues(bn->getBias(), bias) || !floatValues(bn->getMean(), mean) ||
      !floatValues(bn->getVar(), var) || scale.size() != b.size())
    return false;
  size_t per = w.size() / b.size();
  for (size_t c = 0; c < b.size(); ++c) {
    float s = scale[c] / std::sqrt(var[c] + bn->getEpsilon());
    for (size_t i = 0; i < per; ++i)
      w[c * per + i] *= s;
    b[c] = b[c] * s + (bias[c] - mean[c] * s);
  }
  return true;
}

WeightsQ quant::quantizeWeights(Function &F, const std::string &name,
                                const std::vector<float> &w,
                                llvm::ArrayRef<dim_t> dims, dim_t channels,
                                bool channelMajor, int64_t axis,
                                const QuantizationOptions &opts) {
  size_t per = w.size() / channels;
  auto channelOf = [&](size_t i) {
    return opts.channelwise ? (channelMajor ? i / per : i % channels) : 0;
  };
  std::vector<float> absMax(opts.channelwise ? channels : 1, 0.f);
  for (size_t i = 0; i < w.size(); ++i)
    absMax[channelOf(i)] = std::max(absMax[channelOf(i)], std::abs(w[i]));
  WeightsQ r;
  for (float m : absMax)
    r.scales.push_back(weightScale(m, opts.schema));
  std::vector<double> q(w.size());
  for (size_t i = 0; i < w.size(); ++i)
    q[i] = std::clamp(std::nearbyint(double(w[i]) / r.scales[channelOf(i)]),
                      -127.0, 127.0);
  Constant *wq = constantOf(F, name + ".w8", ElemKind::Int8, dims, q);
  dim_t n = r.scales.size();
  std::vector<double> s(r.scales.begin(), r.scales.end()), z(n, 0.0);
  Constant *sc = constantOf(F, name + ".wscale", ElemKind::Float32, {n}, s);
  Constant *zc = constantOf(F, name + ".wzero", ElemKind::Int32, {n}, z);
  r.value = F.createDequantize(name + ".w", wq, sc, zc, axis);
  return r;
}

NodeValue quant::quantizeBias(Function &F, const std::string &name,
                              const std::vector<float> &b, float xScale,
                              const std::vector<float> &wScales) {
  dim_t n = wScales.size();
  std::vector<double> s(n), z(n, 0.0), q(b.size());
  for (dim_t c = 0; c < n; ++c)
    s[c] = double(xScale * wScales[c]); // as fold-qdq compares it
  const double lim = double(std::numeric_limits<int32_t>::max());
  for (size_t c = 0; c < b.size(); ++c) {
    double sc = s[n == 1 ? 0 : c];
    q[c] =
        sc > 0 ? std::clamp(std::nearbyint(double(b[c]) / sc), -lim, lim) : 0.0;
  }
  Constant *bq =
      constantOf(F, name + ".b32", ElemKind::Int32, {dim_t(b.size())}, q);
  Constant *sc = constantOf(F, name + ".bscale", ElemKind::Float32, {n}, s);
  Constant *zc = constantOf(F, name + ".bzero", ElemKind::Int32, {n}, z);
  return F.createDequantize(name + ".b", bq, sc, zc, 0);
}
