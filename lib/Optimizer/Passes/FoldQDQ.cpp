//===- FoldQDQ.cpp - Dequantize/Quantize pairs become integer products ----===//
//
// onnxruntime's QDQ models wrap every quantized product as
//   Quantize([Relu](Conv|MatMul|Gemm(Dequantize(x), Dequantize(w), bias)))
// with x per tensor, w per tensor or per output channel, and bias (if any)
// a Dequantize of Int32 values at scale x_scale * w_scale. That is the
// QLinearConv / QLinearMatMul computation, so it becomes one RequantConv /
// RequantMatMul on the 8-bit operands: the integer product, an Int32 bias
// add and one requantize,
// saturate(round(float(acc) * (x_scale * w_scale / y_scale)) + y_zero),
// with Relu as max(., y_zero) before the saturation (quantization is
// monotonic), and a Clip whose bounds quantize to the saturation (ReLU6
// under an output range of [0, 6]) likewise. A backend with a fused kernel
// keeps that node; the others lower it to IntConv / IntMatMul and float
// arithmetic.
//
// Quantize([Relu](Add(Dequantize(a), Dequantize(b)))), all per tensor (the
// residual Add of quantized networks), becomes one RequantAdd on the bytes;
// its lowering is the same chain, so every backend computes what it did
// before, and one with a fused kernel skips the Float32 tensors between.
// MaxPool, views and means between the products run on the bytes
// (FoldQDQPool.cpp), elementwise functions of one operand as tables
// (FoldQDQTable.cpp). Anything else keeps its Dequantize/Quantize, lowered
// later.
//
//===----------------------------------------------------------------------===//
#include "FoldQDQ.h"
#include "PassUtils.h"
#include "Passes.h"

#include <cmath>

using namespace ember;
using namespace ember::qdq;

std::optional<std::vector<double>> qdq::constantValues(NodeValue v) {
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

bool qdq::isByte(NodeValue v) {
  return v.getElemKind() == ElemKind::Int8 ||
         v.getElemKind() == ElemKind::UInt8;
}

namespace {

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
  /// A Reshape between w and a MatMul that only adds leading 1s (how the
  /// importer aligns a 2-D weight with an N-D activation), or null.
  ReshapeNode *wReshape = nullptr;
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

/// \p v ([1] or [n]) as [n].
NodeValue toLength(Function &F, const std::string &name, NodeValue v, dim_t n) {
  return v.dims()[0] == n ? v : F.createBroadcast(name, v, {int64_t(n)});
}

/// The requantization multiplier (x_scale * w_scale) / y_scale of \p p,
/// [1] or per channel, formed in Float32 in that order as onnxruntime does.
NodeValue multiplier(Function &F, const Product &p, const std::string &name) {
  dim_t c = p.w->getScale().dims()[0];
  NodeValue xs = toLength(F, name + ".xs", p.x->getScale(), c);
  NodeValue ys = toLength(F, name + ".ys", p.quant->getScale(), c);
  return F.createDiv(name + ".mult",
                     F.createMul(name + ".xw", xs, p.w->getScale()), ys);
}

/// The requantized integer product of \p p (RequantConv or RequantMatMul),
/// with a zero bias when \p p has none.
NodeValue requantProduct(Function &F, const Product &p,
                         const std::string &name) {
  NodeValue xq = p.x->getInput(), wq = p.w->getInput();
  if (p.wReshape)
    wq = F.createReshape(name + ".w", wq, p.wReshape->getDims());
  NodeValue zw = toLength(F, name + ".zw", p.w->getZero(), p.channels);
  NodeValue bias =
      p.bias ? toLength(F, name + ".bias", p.bias, p.channels)
             : F.createSplat(name + ".bias", {1}, ElemKind::Int32, 0.);
  NodeValue mult = multiplier(F, p, name);
  ElemKind to = p.quant->getElemTy();
  if (auto *conv = llvm::dyn_cast<ConvNode>(p.op))
    return F.createRequantConv(name, xq, wq, p.x->getZero(), zw, bias, mult,
                               p.quant->getZero(), conv->getStrides(),
                               conv->getPads(), conv->getDilations(),
                               conv->getGroup(), to, p.relu);
  unsigned r = xq.dims().size();
  if (auto *g = llvm::dyn_cast<GemmNode>(p.op); g && g->getTransB())
    wq = F.createTranspose(name + ".wt", wq, {1, 0});
  NodeValue zx = toLength(F, name + ".zx", p.x->getZero(), xq.dims()[r - 2]);
  return F.createRequantMatMul(name, xq, wq, zx, zw, bias, mult,
                               p.quant->getZero(), to, p.relu);
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

/// \p v's single-use Reshape when it only puts 1s in front of its input's
/// dims, else null.
ReshapeNode *leadingOnesReshape(NodeValue v) {
  auto *r = llvm::dyn_cast<ReshapeNode>(v.getNode());
  if (!r || !hasOneUse(r))
    return nullptr;
  auto in = r->getInput().dims(), out = v.dims();
  if (out.size() < in.size() ||
      !std::equal(in.begin(), in.end(), out.end() - in.size()) ||
      std::any_of(out.begin(), out.end() - in.size(),
                  [](dim_t d) { return d != 1; }))
    return nullptr;
  return r;
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
    NodeValue w = mm->getRHS();
    p.wReshape = leadingOnesReshape(w);
    if (p.wReshape)
      w = p.wReshape->getInput();
    p.w = byteDequantize(w, int64_t(w.dims().size()) - 1);
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

/// \p v quantized by \p q as the lowered Quantize computes it (Float32
/// division, round half to even, zero point, saturation), or none when
/// \p q's scale or zero point is not a constant.
std::optional<float> quantizedValue(const QuantizeNode &q, float v) {
  auto s = constantValues(q.getScale()), z = constantValues(q.getZero());
  if (!s || !z || s->size() != 1 || z->size() != 1)
    return std::nullopt;
  bool isSigned = q.getElemTy() == ElemKind::Int8;
  float r = std::nearbyint(v / float((*s)[0])) + float((*z)[0]);
  return std::min(std::max(r, isSigned ? -128.f : 0.f),
                  isSigned ? 127.f : 255.f);
}

/// Whether Clip \p c before \p q is the requantize's own clamp: quantizing
/// is monotonic, so Quantize(Clip(v, lo, hi)) clamps Quantize(v) to
/// [Quantize(lo), Quantize(hi)]. That is saturation where Quantize(hi) is
/// the type's top and Quantize(lo) its bottom, and the Relu bound
/// max(., zero) = Quantize(0) where lo is 0 (sets \p relu). ReLU6 under an
/// output range calibrated to [0, 6] is such a Clip.
bool isRequantClamp(const ClipNode &c, const QuantizeNode &q, bool &relu) {
  auto hi = quantizedValue(q, c.getMax()), lo = quantizedValue(q, c.getMin());
  bool isSigned = q.getElemTy() == ElemKind::Int8;
  if (!hi || *hi < (isSigned ? 127.f : 255.f))
    return false;
  relu = c.getMin() == 0.f;
  return relu || (lo && *lo <= (isSigned ? -128.f : 0.f));
}

/// The foldable product that \p q quantizes, if any.
std::optional<Product> match(QuantizeNode *q) {
  if (q->getScale().dims()[0] != 1)
    return std::nullopt;
  Product p{q, q->getInput().getNode(), false, nullptr, nullptr, NodeValue(), 0,
            0};
  auto *clip = llvm::dyn_cast<ClipNode>(p.op);
  if (llvm::isa<ReluNode>(p.op) && hasOneUse(p.op)) {
    p.relu = true;
    p.op = p.op->getNthInput(0).getNode();
  } else if (clip && hasOneUse(clip) && isRequantClamp(*clip, *q, p.relu)) {
    p.op = clip->getInput().getNode();
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

/// The RequantAdd that replaces \p q when it quantizes a sum of two
/// per-tensor byte Dequantizes, or null.
NodeValue requantAdd(Function &F, QuantizeNode *q) {
  if (q->getScale().dims()[0] != 1)
    return NodeValue();
  Node *op = q->getInput().getNode();
  bool relu = llvm::isa<ReluNode>(op) && hasOneUse(op);
  if (relu)
    op = op->getNthInput(0).getNode();
  auto *add = llvm::dyn_cast<AddNode>(op);
  if (!add || !hasOneUse(add))
    return NodeValue();
  DequantizeNode *a = byteDequantize(add->getLHS(), -1),
                 *b = byteDequantize(add->getRHS(), -1);
  if (!a || !b || a->getInput().dims() != b->getInput().dims())
    return NodeValue();
  return F.createRequantAdd(add->getName().str() + ".int", a->getInput(),
                            b->getInput(), a->getScale(), a->getZero(),
                            b->getScale(), b->getZero(), q->getScale(),
                            q->getZero(), q->getElemTy(), relu);
}

/// One operand of a quantized Mul: the bytes of a per-tensor Dequantize,
/// and whether the Mul reads them broadcast.
struct MulOperand {
  DequantizeNode *d = nullptr;
  ReshapeNode *reshape = nullptr; ///< between the Broadcast and \p d
  bool broadcast = false;
};

/// The per-tensor byte Dequantize behind \p v, also through a Broadcast
/// of it or of a Reshape of it (how the importer broadcasts an operand;
/// the Reshape then moves to the bytes). The bytes so shaped have \p v's
/// rank, each dim \p v's or 1; \p m.d is null otherwise.
MulOperand mulOperand(NodeValue v) {
  MulOperand m;
  NodeValue u = v;
  m.broadcast = llvm::isa<BroadcastNode>(u.getNode());
  if (m.broadcast)
    u = u.getNode()->getNthInput(0);
  m.reshape = m.broadcast ? llvm::dyn_cast<ReshapeNode>(u.getNode()) : nullptr;
  if (m.reshape)
    u = m.reshape->getInput();
  m.d = byteDequantize(u, -1);
  if (!m.d)
    return m;
  llvm::ArrayRef<dim_t> want = v.dims(),
                        have = m.reshape ? m.reshape->getResult().dims()
                                         : m.d->getInput().dims();
  bool fits = want.size() == have.size();
  for (size_t i = 0; fits && i < want.size(); ++i)
    fits = have[i] == want[i] || have[i] == 1;
  if (!fits)
    m.d = nullptr;
  return m;
}

/// The bytes of \p m as the Mul reads them before any broadcast.
NodeValue mulBytes(Function &F, const MulOperand &m) {
  if (!m.reshape)
    return m.d->getInput();
  return F.createReshape(m.reshape->getName().str() + ".int", m.d->getInput(),
                         m.reshape->getDims());
}

/// The RequantMul that replaces \p q when it quantizes a product of two
/// per-tensor byte Dequantizes, one of them possibly broadcast (the gating
/// Mul of squeeze-and-excitation blocks), or null. The broadcast operand
/// becomes RHS: Float32 products commute exactly.
NodeValue requantMul(Function &F, QuantizeNode *q) {
  auto *mul = llvm::dyn_cast<MulNode>(q->getInput().getNode());
  if (q->getScale().dims()[0] != 1 || !mul || !hasOneUse(mul))
    return NodeValue();
  MulOperand a = mulOperand(mul->getLHS()), b = mulOperand(mul->getRHS());
  if (!a.d || !b.d || (a.broadcast && b.broadcast))
    return NodeValue();
  if (a.broadcast)
    std::swap(a, b);
  return F.createRequantMul(mul->getName().str() + ".int", mulBytes(F, a),
                            mulBytes(F, b), a.d->getScale(), a.d->getZero(),
                            b.d->getScale(), b.d->getZero(), q->getScale(),
                            q->getZero(), q->getElemTy());
}

/// Replaces \p q's result with \p v, which computes the same integers:
/// \p v takes q's quantized type, which its inference cannot know (a
/// RequantConv's output scale is folded into its multiplier).
void replaceQuantize(QuantizeNode *q, NodeValue v) {
  const Type &ty = *q->getResult().getType();
  if (ty.isQuantized() && !v.getType()->isQuantized() &&
      v.getType()->isSameStorage(ty))
    q->getParent()->getParent().refineResultType(v.getNode(), v.getResNo(), ty);
  q->getResult().replaceAllUsesWith(v);
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
    if (NodeValue table = foldQuantizedTable(F, q)) {
      replaceQuantize(q, table);
      ++ctx.counters["fold-qdq.table"];
      changed = true;
      continue;
    }
    if (NodeValue sum = requantAdd(F, q)) {
      replaceQuantize(q, sum);
      ++ctx.counters["fold-qdq.add"];
      changed = true;
      continue;
    }
    if (NodeValue product = requantMul(F, q)) {
      replaceQuantize(q, product);
      ++ctx.counters["fold-qdq.mul"];
      changed = true;
      continue;
    }
    if (NodeValue moved = foldQuantizedMovement(F, q)) {
      replaceQuantize(q, moved);
      ++ctx.counters["fold-qdq.movement"];
      changed = true;
      continue;
    }
    std::optional<Product> p = match(q);
    if (!p || (ctx.foldQuantizedProduct && !ctx.foldQuantizedProduct(*p->op)))
      continue;
    std::string name = p->op->getName().str();
    replaceQuantize(q, requantProduct(F, *p, name + ".int"));
    ++ctx.counters["fold-qdq.folded"];
    changed = true;
  }
  return changed;
}
