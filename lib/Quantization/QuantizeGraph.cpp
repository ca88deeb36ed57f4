//===- QuantizeGraph.cpp - Quantize a float graph's products --------------===//
//
// Each Conv (with a following inference BatchNorm folded in), Gemm and
// MatMul with constant float weights becomes
//   Dequantize(Quantize(y)) of [Relu](product(Dequantize(Quantize(x)),
//   Dequantize(w8), Dequantize(b32)))
// with x's and y's scales from the profile of their ONNX values, Int8
// weights symmetric per tensor or per output channel, and the bias at scale
// x_scale * w_scale. That is the form onnxruntime's quantizer writes, which
// fold-qdq turns into IntConv/IntMatMul plus requantize.
//
//===----------------------------------------------------------------------===//
#include "QuantizeUtils.h"

#include "ember/Base/Error.h"

#include <algorithm>
#include <cmath>

using namespace ember;
using namespace ember::quant;

namespace {

/// The float weights and bias of one product, as [channels][perChannel]
/// (Conv filter, transposed Gemm B) or [perChannel][channels] (MatMul RHS,
/// Gemm B without transB).
struct FloatLayer {
  std::vector<float> w, b;
  std::vector<dim_t> dims; ///< of the weights
  dim_t channels = 0;
  bool channelMajor = true;
};

class Quantizer {
public:
  Quantizer(Function &F, ValueNames &names, const QuantProfile &profile,
            const QuantizationOptions &opts, llvm::StringRef path)
      : F_(F), names_(names), profile_(profile), opts_(opts), path_(path) {
    for (const auto &[name, v] : names)
      if (profile.values.count(name))
        onnxName_.emplace(v, name);
  }

  llvm::Error run();
  std::vector<QuantizedLayer> layers;

private:
  llvm::Expected<const ValueProfile *> rangeOf(NodeValue v, const Node &op,
                                               const char *role);
  NodeValue quantizedInput(NodeValue x, const ValueProfile &r, QuantParams &p);
  llvm::Error quantizeConv(ConvNode *conv);
  llvm::Error quantizeGemm(GemmNode *g);
  llvm::Error quantizeMatMul(MatMulNode *mm);
  /// Builds the quantized product with \p build and replaces \p tail.
  llvm::Error finish(
      Node *op, NodeValue x, const FloatLayer &L, int64_t axis, NodeValue tail,
      const std::function<NodeValue(NodeValue, NodeValue, NodeValue)> &build);

  Function &F_;
  ValueNames &names_;
  const QuantProfile &profile_;
  const QuantizationOptions &opts_;
  std::string path_;
  std::map<NodeValue, std::string> onnxName_;
  std::map<NodeValue, std::pair<NodeValue, QuantParams>> inputs_;
};

} // namespace

llvm::Expected<const ValueProfile *>
Quantizer::rangeOf(NodeValue v, const Node &op, const char *role) {
  auto it = onnxName_.find(v);
  if (llvm::isa<Constant>(v.getNode()))
    return nullptr; // a product of constants is folded, not quantized
  if (it == onnxName_.end()) {
    for (const auto &[name, nv] : names_)
      if (nv == v)
        return makeErrorF("profile '{0}' has no value '{1}' ({2} of {3} "
                          "'{4}'): record the profile with this model",
                          path_, name, role, op.getKindName(), op.getName());
    return nullptr; // a value without an ONNX name: the layer stays float
  }
  return &profile_.values.at(it->second);
}

NodeValue Quantizer::quantizedInput(NodeValue x, const ValueProfile &r,
                                    QuantParams &p) {
  auto it = inputs_.find(x);
  if (it != inputs_.end()) {
    p = it->second.second;
    return it->second.first;
  }
  p = activationParams(r, opts_);
  std::string name = x.getNode()->getName().str() + ".qx";
  NodeValue d = quantDequant(F_, name, x, p);
  inputs_[x] = {d, p};
  return d;
}

llvm::Error Quantizer::finish(
    Node *op, NodeValue x, const FloatLayer &L, int64_t axis, NodeValue tail,
    const std::function<NodeValue(NodeValue, NodeValue, NodeValue)> &build) {
  bool relu = false;
  if (tail.getNode()->getNumUsesOf(tail.getResNo()) == 1) {
    Node *u = tail.getNode()->getUsers()[0].user;
    if (llvm::isa<ReluNode>(u)) {
      tail = u->getNthResult(0);
      relu = true;
    }
  }
  EMBER_ASSIGN_OR_RETURN(const ValueProfile *rx, rangeOf(x, *op, "input"));
  EMBER_ASSIGN_OR_RETURN(const ValueProfile *ry, rangeOf(tail, *op, "output"));
  if (!rx || !ry)
    return llvm::Error::success();
  std::string name = op->getName().str();
  QuantParams px;
  // A value this quantizer already dequantized is read as it is.
  NodeValue xd = isByteDequantize(x) ? x : quantizedInput(x, *rx, px);
  if (isByteDequantize(x))
    px.scale = scalarOf(llvm::cast<DequantizeNode>(x.getNode())->getScale());
  WeightsQ wq = quantizeWeights(F_, name, L.w, L.dims, L.channels,
                                L.channelMajor, axis, opts_);
  NodeValue bd = quantizeBias(F_, name, L.b, px.scale, wq.scales);
  NodeValue y = build(xd, wq.value, bd);
  if (relu)
    y = F_.createRelu(name + ".relu", y);
  QuantParams py = activationParams(*ry, opts_);
  NodeValue yd = quantDequant(F_, name + ".qy", y, py);
  tail.replaceAllUsesWith(yd);
  std::string out = onnxName_.at(tail);
  onnxName_[yd] = out;
  names_[out] = yd;
  layers.push_back({op->getKindName().str(), out, yd});
  return llvm::Error::success();
}

llvm::Error Quantizer::quantizeConv(ConvNode *conv) {
  FloatLayer L;
  if (!conv->getResidual().empty() || conv->getFusedActivation() != 0 ||
      !floatValues(conv->getFilter(), L.w) ||
      !floatValues(conv->getBias(), L.b))
    return llvm::Error::success();
  L.channels = conv->getFilter().dims()[0];
  L.dims.assign(conv->getFilter().dims().begin(),
                conv->getFilter().dims().end());
  NodeValue tail = conv->getResult();
  if (conv->getNumUsesOf(0) == 1)
    if (auto *bn = llvm::dyn_cast<BatchNormNode>(conv->getUsers()[0].user))
      if (foldBatchNorm(bn, L.w, L.b))
        tail = bn->getResult();
  return finish(conv, conv->getInput(), L, 0, tail,
                [&](NodeValue x, NodeValue w, NodeValue b) {
                  return F_.createConv(conv->getName().str() + ".quant", x, w,
                                       b, {}, conv->getStrides(),
                                       conv->getPads(), conv->getDilations(),
                                       conv->getGroup(), 0, 0.f, 0.f);
                });
}

llvm::Error Quantizer::quantizeGemm(GemmNode *g) {
  FloatLayer L;
  L.channels = g->getResult().dims()[1];
  L.channelMajor = g->getTransB();
  L.dims.assign(g->getB().dims().begin(), g->getB().dims().end());
  if (g->getAlpha() != 1.f || g->getTransA() || !floatValues(g->getB(), L.w) ||
      !gemmBias(g->getC(), g->getBeta(), L.channels, L.b))
    return llvm::Error::success();
  auto rows = int64_t(g->getResult().dims()[0]);
  return finish(
      g, g->getA(), L, g->getTransB() ? 0 : 1, g->getResult(),
      [&](NodeValue x, NodeValue w, NodeValue b) {
        std::string name = g->getName().str();
        NodeValue c =
            F_.createReshape(name + ".c", b, {1, int64_t(L.channels)});
        if (rows != 1)
          c = F_.createBroadcast(name + ".cb", c, {rows, int64_t(L.channels)});
        return F_.createGemm(name + ".quant", x, w, c, 1.f, 1.f, 0,
                             g->getTransB());
      });
}

llvm::Error Quantizer::quantizeMatMul(MatMulNode *mm) {
  FloatLayer L;
  if (mm->getTransB() || !mm->getEpilogue().empty() ||
      mm->getFusedActivation() != 0 || mm->getRHS().dims().size() != 2 ||
      !floatValues(mm->getRHS(), L.w))
    return llvm::Error::success();
  L.channels = mm->getRHS().dims()[1];
  L.dims.assign(mm->getRHS().dims().begin(), mm->getRHS().dims().end());
  L.channelMajor = false;
  L.b.assign(L.channels, 0.f);
  return finish(mm, mm->getLHS(), L, 1, mm->getResult(),
                [&](NodeValue x, NodeValue w, NodeValue) {
                  return F_.createMatMul(mm->getName().str() + ".quant", x, w,
                                         {}, 0, 0, 0.f, 0.f);
                });
}

llvm::Error Quantizer::run() {
  for (const auto &[name, v] : profile_.values)
    if (!names_.count(name))
      return makeErrorF("profile '{0}' records value '{1}', which this model "
                        "does not have: a profile of another model?",
                        path_, name);
  std::vector<Node *> nodes;
  for (const auto &n : F_.getNodes())
    nodes.push_back(&*n);
  for (Node *n : nodes) {
    if (auto *conv = llvm::dyn_cast<ConvNode>(n);
        conv && !keeps(opts_, "Conv")) {
      EMBER_RETURN_IF_ERR(quantizeConv(conv));
    } else if (auto *g = llvm::dyn_cast<GemmNode>(n);
               g && !keeps(opts_, "MatMul")) {
      EMBER_RETURN_IF_ERR(quantizeGemm(g));
    } else if (auto *mm = llvm::dyn_cast<MatMulNode>(n);
               mm && !keeps(opts_, "MatMul")) {
      EMBER_RETURN_IF_ERR(quantizeMatMul(mm));
    }
  }
  return llvm::Error::success();
}

llvm::Expected<std::vector<QuantizedLayer>>
ember::quantizeFunction(Function &F, ValueNames &names,
                        const QuantProfile &profile,
                        const QuantizationOptions &opts, llvm::StringRef path) {
  Quantizer q(F, names, profile, opts, path);
  EMBER_RETURN_IF_ERR(q.run());
  return std::move(q.layers);
}
