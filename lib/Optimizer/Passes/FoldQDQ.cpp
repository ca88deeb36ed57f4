//===- FoldQDQ.cpp - Dequantize/Quantize pairs become integer products ----===//
//
// onnxruntime's QDQ models wrap every quantized product as
//   Quantize([Relu](Conv|MatMul|Gemm(Dequantize(x), Dequantize(w), bias)))
// with x per tensor, w per tensor or per output channel, and bias (if any)
// a Dequantize of Int32 values at scale x_scale * w_scale. That is the
// QLinearConv / QLinearMatMul computation, so it becomes one IntConv /
// IntMatMul on the 8-bit operands, an Int32 bias add and one requantize:
// saturate(round(float(acc) * (x_scale * w_scale / y_scale)) + y_zero),
// with Relu as max(., y_zero) before the saturation (quantization is
// monotonic). Anything else keeps its Dequantize/Quantize, lowered later.
//
//===----------------------------------------------------------------------===//
#include "PassUtils.h"
#include "Passes.h"

using namespace ember;

namespace {

/// The constant values behind \p v (a Constant or Splat), looking through
/// Reshape and Cast.
std::optional<std::vector<double>> constantValues(NodeValue v) {
  while (llvm::isa<ReshapeNode>(v.getNode()) ||
         llvm::isa<CastNode>(v.getNode()))
    v = v.getNode()->getNthInput(0);
  if (auto *s = llvm::dyn_cast<SplatNode>(v.getNode()))
    return std::vector<double>(v.getType()->size(), s->getValue());
  auto *c = llvm::dyn_cast<Constant>(v.getNode());
  if (!c)
    return std::nullopt;
  std::vector<double> out;
  for (dim_t i = 0, e = c->getPayload().size(); i < e; ++i)
    out.push_back(c->getPayload().elementAsDouble(i));
  return out;
}

bool isByte(NodeValue v) {
  return v.getElemKind() == ElemKind::Int8 ||
         v.getElemKind() == ElemKind::UInt8;
}

/// A Dequantize of 8-bit values per tensor, or per \p axis when >= 0.
DequantizeNode *byteDequantize(NodeValue v, int64_t axis) {
  auto *d = llvm::dyn_cast<DequantizeNode>(v.getNode());
  if (!d || !isByte(d->getInput()))
    return nullptr;
  bool perTensor = d->getScale().dims()[0] == 1;
  return perTensor || (axis >= 0 && d->getAxis() == axis) ? d : nullptr;
}

/// The pieces of one foldable product.
struct Product {
  QuantizeNode *quant;
  Node *op;  ///< Conv, MatMul or Gemm
  bool relu; ///< a Relu between op and quant
  DequantizeNode *x, *w;
  NodeValue bias;      ///< Int32 [C] or null
  dim_t channels;      ///< C: the result dim the weight scale runs along
  int64_t channelAxis; ///< of the result
};

/// The Int32 values of a bias Dequantize whose scale is x_scale * w_scale
/// (as float products), or null when \p b is no such bias.
NodeValue int32Bias(NodeValue b, const Product &p) {
  auto *d = llvm::dyn_cast<DequantizeNode>(b.getNode());
  if (!d || d->getInput().getElemKind() != ElemKind::Int32)
    return NodeValue();
  auto zero = constantValues(d->getZero());
  if (!zero || llvm::any_of(*zero, [](double z) { return z != 0; }))
    return NodeValue();
  auto bs = constantValues(d->getScale()), xs = constantValues(p.x->getScale()),
       ws = constantValues(p.w->getScale());
  if (!bs || !xs || !ws)
    return NodeValue();
  for (dim_t c = 0; c < p.channels; ++c) {
    float want = float((*xs)[0]) * float((*ws)[ws->size() == 1 ? 0 : c]);
    if (float((*bs)[bs->size() == 1 ? 0 : c]) != want)
      return NodeValue();
  }
  return d->getInput();
}

/// The vector [1] or [n] as \p like's dims for broadcasting along \p axis.
NodeValue spread(Function &F, const std::string &name, NodeValue v,
                 int64_t axis, llvm::ArrayRef<dim_t> like) {
  llvm::SmallVector<int64_t, kMaxRank> shape(like.size(), 1);
  shape[axis] = v.dims()[0];
  NodeValue r = F.createReshape(name + ".r", v, shape);
  return r.dims() == like ? r : F.createBroadcast(name + ".b", r, like);
}

/// \p v ([1] or [n]) as [n].
NodeValue toLength(Function &F, const std::string &name, NodeValue v, dim_t n) {
  return v.dims()[0] == n ? v : F.createBroadcast(name, v, {int64_t(n)});
}

/// The integer product of \p p (IntConv or IntMatMul, Int32).
NodeValue intProduct(Function &F, const Product &p, const std::string &name) {
  NodeValue xq = p.x->getInput(), wq = p.w->getInput();
  NodeValue zw = toLength(F, name + ".zw", p.w->getZero(), p.channels);
  if (auto *conv = llvm::dyn_cast<ConvNode>(p.op))
    return F.createIntConv(name, xq, wq, p.x->getZero(), zw, conv->getStrides(),
                           conv->getPads(), conv->getDilations(),
                           conv->getGroup());
  unsigned r = xq.dims().size();
  if (auto *g = llvm::dyn_cast<GemmNode>(p.op); g && g->getTransB())
    wq = F.createTranspose(name + ".wt", wq, {1, 0});
  NodeValue zx = toLength(F, name + ".zx", p.x->getZero(), xq.dims()[r - 2]);
  return F.createIntMatMul(name, xq, wq, zx, zw);
}

/// Requantizes the Int32 \p acc of \p p to the type of its Quantize.
NodeValue requantize(Function &F, const Product &p, NodeValue acc,
                     const std::string &name) {
  QuantizeNode *q = p.quant;
  dim_t c = p.w->getScale().dims()[0];
  NodeValue xs = toLength(F, name + ".xs", p.x->getScale(), c);
  NodeValue ys = toLength(F, name + ".ys", q->getScale(), c);
  NodeValue mult = F.createDiv(
      name + ".mult", F.createMul(name + ".xw", xs, p.w->getScale()), ys);
  auto dims = acc.dims();
  NodeValue y = F.createMul(name + ".scaled",
                            F.createCast(name + ".f", acc, ElemKind::Float32),
                            spread(F, name + ".m", mult, p.channelAxis, dims));
  y = F.createRound(name + ".round", y);
  NodeValue zf = F.createCast(name + ".zf", q->getZero(), ElemKind::Float32);
  NodeValue z = spread(F, name + ".z", zf, 0, dims);
  y = F.createAdd(name + ".add", y, z);
  if (p.relu)
    y = F.createMax(name + ".relu", y, z);
  bool isSigned = q->getElemTy() == ElemKind::Int8;
  y = F.createClip(name + ".clip", y, isSigned ? -128.f : 0.f,
                   isSigned ? 127.f : 255.f);
  return F.createCast(name + ".q", y, q->getElemTy());
}

} // namespace

namespace {

/// \p v without the Reshape and Broadcast nodes in front of it.
NodeValue throughViews(NodeValue v) {
  while (llvm::isa<ReshapeNode>(v.getNode()) ||
         llvm::isa<BroadcastNode>(v.getNode()))
    v = v.getNode()->getNthInput(0);
  return v;
}

/// Fills x, w, channels and the bias value of \p p for a Conv, MatMul or
/// Gemm without extras; false when \p p.op is none of those.
bool matchOperands(Product &p, NodeValue &bias) {
  if (auto *conv = llvm::dyn_cast<ConvNode>(p.op)) {
    if (!conv->getResidual().empty() || conv->getFusedActivation() != 0)
      return false;
    p.x = byteDequantize(conv->getInput(), -1);
    p.w = byteDequantize(conv->getFilter(), 0);
    p.channels = conv->getFilter().dims()[0];
    p.channelAxis = 1;
    bias = conv->getBias();
    return true;
  }
  if (auto *mm = llvm::dyn_cast<MatMulNode>(p.op)) {
    int64_t r = mm->getRHS().dims().size();
    if (mm->getTransB() || !mm->getEpilogue().empty() ||
        mm->getFusedActivation() != 0)
      return false;
    p.x = byteDequantize(mm->getLHS(), -1);
    p.w = byteDequantize(mm->getRHS(), r - 1);
    p.channels = mm->getRHS().dims()[r - 1];
    p.channelAxis = r - 1;
    return true;
  }
  auto *g = llvm::dyn_cast<GemmNode>(p.op);
  if (!g || g->getAlpha() != 1.f || g->getBeta() != 1.f || g->getTransA())
    return false;
  p.x = byteDequantize(g->getA(), -1);
  p.w = byteDequantize(g->getB(), g->getTransB() ? 0 : 1);
  p.channels = g->getResult().dims()[1];
  p.channelAxis = 1;
  bias = throughViews(g->getC());
  return true;
}

/// The foldable product that \p q quantizes, if any.
std::optional<Product> match(QuantizeNode *q) {
  if (q->getScale().dims()[0] != 1)
    return std::nullopt;
  Product p{q, q->getInput().getNode(), false, nullptr, nullptr, NodeValue(), 0,
            0};
  if (llvm::isa<ReluNode>(p.op) && hasOneUse(p.op)) {
    p.relu = true;
    p.op = p.op->getNthInput(0).getNode();
  }
  NodeValue bias;
  if (!hasOneUse(p.op) || !matchOperands(p, bias) || !p.x || !p.w)
    return std::nullopt;
  if (bias && !isUniform(bias, 0)) {
    p.bias = int32Bias(bias, p);
    if (!p.bias || p.bias.dims().size() != 1)
      return std::nullopt;
  }
  return p;
}

} // namespace

bool FoldQDQPass::run(Function &F, PassContext &ctx) {
  if (!ctx.foldQuantizedProducts)
    return false;
  bool changed = false;
  for (Node *n : nodesInOrder(F)) {
    auto *q = llvm::dyn_cast<QuantizeNode>(n);
    if (!q)
      continue;
    std::optional<Product> p = match(q);
    if (!p || (ctx.foldQuantizedProduct && !ctx.foldQuantizedProduct(*p->op)))
      continue;
    std::string name = p->op->getName().str();
    NodeValue acc = intProduct(F, *p, name + ".int");
    if (p->bias) {
      NodeValue b = toLength(F, name + ".bias", p->bias, p->channels);
      acc =
          F.createAdd(name + ".acc", acc,
                      spread(F, name + ".bias", b, p->channelAxis, acc.dims()));
    }
    q->getResult().replaceAllUsesWith(requantize(F, *p, acc, name));
    ++ctx.counters["fold-qdq.folded"];
    changed = true;
  }
  return changed;
}
