//===- ImportQuant.cpp - Quantize, dequantize and the integer products ----===//
//
// QuantizeLinear, DequantizeLinear and DynamicQuantizeLinear are composed
// from Cast, Round, Clip and float arithmetic. MatMulInteger, ConvInteger,
// QLinearMatMul and QLinearConv compute their products exactly in integers
// (IntMatMul, IntConv: 8-bit operands, Int32 sums); the QLinear ops then
// requantize in float as the ONNX spec and onnxruntime define it, a 2-D
// QLinearConv and a QLinearMatMul with per-tensor scales as one RequantConv
// or RequantMatMul (the product and that requantize).
//
//===----------------------------------------------------------------------===//
#include "ImportHelpers.h"

#include <cmath>
#include <numeric>

using namespace ember;
using namespace ember::onnximport;

#define TRY EMBER_ASSIGN_OR_RETURN

namespace {

/// \p p as float, shaped to broadcast against a tensor of rank \p rank
/// whose dim \p axis (in [-rank, rank)) is \p extent. A parameter of one
/// element (shape [] or [1]) is per tensor and the axis is not used, as the
/// ONNX spec says for a scalar scale and for a 1-D input; a 1-D parameter of
/// more elements is per axis and must match that axis.
llvm::Expected<NodeValue> alongAxis(ImportContext &ctx,
                                    const onnx::NodeProto &node, NodeValue p,
                                    int64_t axis, size_t rank,
                                    llvm::ArrayRef<dim_t> dims) {
  TRY(p, castTo(ctx, node, p, ElemKind::Float32));
  if (p.getType()->size() == 1)
    return p.dims().empty() ? p : reshapeTo(ctx, node, p, {});
  if (p.dims().size() != 1)
    return fail(node, "a scale or zero point must be a scalar or 1-D; "
                      "blocked quantization is not supported");
  if (axis < -int64_t(rank) || axis >= int64_t(rank))
    return fail(node, "axis " + llvm::Twine(axis) +
                          " is out of range for rank " + llvm::Twine(rank));
  if (axis < 0)
    axis += int64_t(rank);
  if (!dims.empty() && dims[axis] != p.dims()[0])
    return fail(node, "per-axis parameter of " + llvm::Twine(p.dims()[0]) +
                          " elements does not match axis " + llvm::Twine(axis) +
                          " of extent " + llvm::Twine(dims[axis]));
  Ints shape(rank, 1);
  shape[axis] = p.dims()[0];
  return reshapeTo(ctx, node, p, shape);
}

/// The representable range of an integer kind.
std::pair<double, double> rangeOf(ElemKind k) {
  switch (k) {
  case ElemKind::Int8:
    return {-128, 127};
  case ElemKind::UInt8:
    return {0, 255};
  case ElemKind::Int32:
    return {-2147483648.0, 2147483647.0};
  default:
    return {0, 65535};
  }
}

/// saturate(round(x / scale) + zp) as \p kind; x, scale, zp are float
/// (a null scale: 1, a null zp: 0).
llvm::Expected<NodeValue> quantize(ImportContext &ctx,
                                   const onnx::NodeProto &node, NodeValue x,
                                   NodeValue scale, NodeValue zp,
                                   ElemKind kind) {
  if (!x)
    return fail(node, "needs input x");
  NodeValue q = x;
  if (scale) {
    TRY(q, binary(ctx, node, OpKind::Div, x, scale));
  }
  TRY(q, unary(ctx, node, OpKind::Round, q));
  if (zp) {
    TRY(q, binary(ctx, node, OpKind::Add, q, zp));
  }
  auto [lo, hi] = rangeOf(kind);
  TRY(q, make(ctx, node, OpKind::Clip, {q},
              {Attr::makeFloat(float(lo)), Attr::makeFloat(float(hi))}));
  return castTo(ctx, node, q, kind);
}

/// Scale and zero point of a QuantizeLinear/DequantizeLinear node on \p x:
/// [1] (per tensor) or [n] vectors, Float32 and Int32, and the axis they
/// run along (0 per tensor); absent zero points are zeros.
struct QuantParams {
  NodeValue scale, zero;
  int64_t axis = 0;
};

llvm::Expected<QuantParams>
quantParams(ImportContext &ctx, const onnx::NodeProto &node, NodeValue x) {
  TRY(int64_t axis, AttrReader(node).getInt("axis", 1));
  TRY(NodeValue s, ctx.input(node, 1));
  size_t r = x.dims().size();
  TRY(NodeValue scale, alongAxis(ctx, node, s, axis, r, x.dims()));
  QuantParams p;
  if (scale.getType()->size() == 1) {
    TRY(p.scale, reshapeTo(ctx, node, scale, {1}));
  } else {
    p.axis = axis < 0 ? axis + int64_t(r) : axis;
    TRY(p.scale, reshapeTo(ctx, node, scale, {scale.dims()[p.axis]}));
  }
  dim_t n = p.scale.dims()[0];
  if (!ImportContext::hasInput(node, 2)) {
    p.zero = constantOf(ctx, node, ElemKind::Int32, {n}, 0);
    return p;
  }
  TRY(NodeValue z, ctx.input(node, 2));
  if (z.getType()->size() != n)
    return fail(node, "zero point " + z.getType()->toString() + " and scale " +
                          s.getType()->toString() + " differ in size");
  TRY(z, castTo(ctx, node, z, ElemKind::Int32));
  TRY(p.zero, reshapeTo(ctx, node, z, {n}));
  return p;
}

/// Opset 21's attributes: block quantization (block_size > 0) is refused;
/// returns the element type `output_dtype` names (0: none given).
llvm::Expected<int64_t> outputDtype(const onnx::NodeProto &node) {
  AttrReader attrs(node);
  TRY(int64_t block, attrs.getInt("block_size", 0));
  if (block != 0)
    return fail(node, "block quantization (block_size " + llvm::Twine(block) +
                          ") is not supported");
  return attrs.getInt("output_dtype", 0);
}

llvm::Error importQuantizeLinear(ImportContext &ctx,
                                 const onnx::NodeProto &node) {
  TRY(NodeValue x, ctx.input(node, 0));
  TRY(int64_t dtype, outputDtype(node));
  ElemKind kind = ElemKind::UInt8;
  if (dtype == onnx::TensorProto::INT8)
    kind = ElemKind::Int8;
  else if (dtype != 0 && dtype != onnx::TensorProto::UINT8)
    return fail(node, "only int8 and uint8 results are supported");
  if (ImportContext::hasInput(node, 2)) {
    TRY(NodeValue z, ctx.input(node, 2));
    if (dtype && z.getElemKind() != kind)
      return fail(node, "output_dtype differs from the zero point's type");
    kind = z.getElemKind();
  }
  if (kind != ElemKind::UInt8 && kind != ElemKind::Int8)
    return fail(node, "only int8 and uint8 results are supported");
  TRY(x, castTo(ctx, node, x, ElemKind::Float32));
  TRY(QuantParams p, quantParams(ctx, node, x));
  TRY(NodeValue y, make(ctx, node, OpKind::Quantize, {x, p.scale, p.zero},
                        {Attr::makeInt(p.axis), Attr::makeElemKind(kind)}));
  return ctx.setOutput(node, y);
}

llvm::Error importDequantizeLinear(ImportContext &ctx,
                                   const onnx::NodeProto &node) {
  TRY(NodeValue x, ctx.input(node, 0));
  TRY(int64_t dtype, outputDtype(node));
  if (dtype != 0 && dtype != onnx::TensorProto::FLOAT)
    return fail(node, "only float32 results are supported");
  TRY(QuantParams p, quantParams(ctx, node, x));
  TRY(NodeValue y, make(ctx, node, OpKind::Dequantize, {x, p.scale, p.zero},
                        {Attr::makeInt(p.axis)}));
  return ctx.setOutput(node, y);
}

llvm::Error importDynamicQuantizeLinear(ImportContext &ctx,
                                        const onnx::NodeProto &node) {
  TRY(NodeValue x, ctx.input(node, 0));
  Ints all(x.dims().size());
  std::iota(all.begin(), all.end(), 0);
  NodeValue zero = constantOf(ctx, node, ElemKind::Float32, {}, 0.0);
  TRY(NodeValue lo, reduce(ctx, node, OpKind::ReduceMin, x, all, false));
  TRY(NodeValue hi, reduce(ctx, node, OpKind::ReduceMax, x, all, false));
  TRY(lo, make(ctx, node, OpKind::Min, {lo, zero}));
  TRY(hi, make(ctx, node, OpKind::Max, {hi, zero}));
  TRY(NodeValue scale, make(ctx, node, OpKind::Sub, {hi, lo}));
  TRY(scale, make(ctx, node, OpKind::Div,
                  {scale, constantOf(ctx, node, ElemKind::Float32, {}, 255)}));
  TRY(NodeValue negLo, unary(ctx, node, OpKind::Neg, lo));
  TRY(NodeValue zpF,
      quantize(ctx, node, negLo, scale, NodeValue(), ElemKind::UInt8));
  TRY(NodeValue zpBack, castTo(ctx, node, zpF, ElemKind::Float32));
  TRY(NodeValue y, quantize(ctx, node, x, scale, zpBack, ElemKind::UInt8));
  bindOutput(ctx, node, 0, y);
  bindOutput(ctx, node, 1, scale);
  bindOutput(ctx, node, 2, zpF);
  return llvm::Error::success();
}

/// Zero point input \p i as an Int32 vector of \p n elements: zeros when
/// absent, one element repeated, or exactly \p n elements.
llvm::Expected<NodeValue>
zeroVector(ImportContext &ctx, const onnx::NodeProto &node, int i, dim_t n) {
  if (!ImportContext::hasInput(node, i))
    return constantOf(ctx, node, ElemKind::Int32, {n}, 0);
  TRY(NodeValue z, ctx.input(node, i));
  TRY(z, castTo(ctx, node, z, ElemKind::Int32));
  if (z.getType()->size() == 1) {
    TRY(z, reshapeTo(ctx, node, z, {1}));
    if (n == 1)
      return z;
    return make(ctx, node, OpKind::Broadcast, {z}, {Attr::makeInts({n})});
  }
  if (z.dims().size() != 1 || z.dims()[0] != n)
    return fail(node, "zero point " + z.getType()->toString() +
                          " must have 1 or " + llvm::Twine(n) + " elements");
  return z;
}

/// \p a and \p b (rank >= 2) at one rank, leading 1s added to the lower.
llvm::Error alignRanks(ImportContext &ctx, const onnx::NodeProto &node,
                       NodeValue &a, NodeValue &b) {
  if (a.dims().size() < 2 || b.dims().size() < 2)
    return fail(node, "1-D operands are not supported");
  for (NodeValue *v : {&a, &b}) {
    size_t r = std::max(a.dims().size(), b.dims().size());
    Ints d(r - v->dims().size(), 1);
    d.insert(d.end(), v->dims().begin(), v->dims().end());
    TRY(*v, reshapeTo(ctx, node, *v, d));
  }
  return llvm::Error::success();
}

/// The exact Int32 product of 8-bit \p a and \p b with zero point inputs
/// \p za (per row of a) and \p zb (per column of b).
llvm::Expected<NodeValue> intMatMul(ImportContext &ctx,
                                    const onnx::NodeProto &node, NodeValue a,
                                    NodeValue b, int za, int zb) {
  EMBER_RETURN_IF_ERR(alignRanks(ctx, node, a, b));
  size_t r = a.dims().size();
  TRY(NodeValue zA, zeroVector(ctx, node, za, a.dims()[r - 2]));
  TRY(NodeValue zB, zeroVector(ctx, node, zb, b.dims()[r - 1]));
  return make(ctx, node, OpKind::IntMatMul, {a, b, zA, zB});
}

llvm::Error importMatMulInteger(ImportContext &ctx,
                                const onnx::NodeProto &node) {
  TRY(NodeValue a, ctx.input(node, 0));
  TRY(NodeValue b, ctx.input(node, 1));
  TRY(NodeValue y, intMatMul(ctx, node, a, b, 2, 3));
  return ctx.setOutput(node, y);
}

/// The exact Int32 convolution of 8-bit input 0 by filter input \p wi with
/// zero point inputs \p zx (per tensor) and \p zw (per output channel).
llvm::Expected<NodeValue> intConv(ImportContext &ctx,
                                  const onnx::NodeProto &node, int wi, int zx,
                                  int zw) {
  TRY(NodeValue x, ctx.input(node, 0));
  TRY(NodeValue w, ctx.input(node, wi));
  if (w.dims().empty())
    return fail(node, "the filter must have rank 3 or 4");
  TRY(NodeValue zX, zeroVector(ctx, node, zx, 1));
  TRY(NodeValue zW, zeroVector(ctx, node, zw, w.dims()[0]));
  return convolution(ctx, node, x, w, NodeValue(), zX, zW);
}

llvm::Error importConvInteger(ImportContext &ctx, const onnx::NodeProto &node) {
  TRY(NodeValue y, intConv(ctx, node, 1, 2, 3));
  return ctx.setOutput(node, y);
}

/// Scale input \p i as float along \p axis of \p like (see alongAxis).
llvm::Expected<NodeValue> scaleAlong(ImportContext &ctx,
                                     const onnx::NodeProto &node, int i,
                                     int64_t axis, NodeValue like) {
  TRY(NodeValue s, ctx.input(node, i));
  return alongAxis(ctx, node, s, axis, like.dims().size(), like.dims());
}

/// Requantizes the Int32 accumulator \p acc as ONNX and onnxruntime do:
/// saturate(round_half_even(float(acc) * (s1 * s2 / y_scale)) + y_zp), the
/// multiplier computed in float in that order; the output scale and zero
/// point are inputs \p i and \p i + 1.
llvm::Error requantizeOutput(ImportContext &ctx, const onnx::NodeProto &node,
                             NodeValue acc, NodeValue s1, NodeValue s2, int i) {
  TRY(NodeValue mult, binary(ctx, node, OpKind::Mul, s1, s2));
  TRY(NodeValue ysRaw, ctx.input(node, i));
  TRY(NodeValue ys, alongAxis(ctx, node, ysRaw, 0, 0, {}));
  TRY(mult, binary(ctx, node, OpKind::Div, mult, ys));
  TRY(NodeValue y, castTo(ctx, node, acc, ElemKind::Float32));
  TRY(y, binary(ctx, node, OpKind::Mul, y, mult));
  TRY(NodeValue zRaw, ctx.input(node, i + 1));
  TRY(NodeValue zp, alongAxis(ctx, node, zRaw, 0, 0, {}));
  TRY(y, quantize(ctx, node, y, NodeValue(), zp, zRaw.getElemKind()));
  return ctx.setOutput(node, y);
}

/// Input \p i (one element or a vector) as a [1] or [n] vector of \p kind.
llvm::Expected<NodeValue> asVector(ImportContext &ctx,
                                   const onnx::NodeProto &node, int i,
                                   ElemKind kind) {
  TRY(NodeValue v, ctx.input(node, i));
  if (v.dims().size() > 1)
    return fail(node, "input " + llvm::Twine(i) +
                          " must be a scalar or 1-D, got " +
                          v.getType()->toString());
  TRY(v, castTo(ctx, node, v, kind));
  return reshapeTo(ctx, node, v, {int64_t(v.getType()->size())});
}

/// The requantization of a QLinear product as RequantConv and
/// RequantMatMul take it: the multiplier (x_scale * w_scale) / y_scale
/// formed as requantizeOutput forms it, [1] or per output channel (column),
/// the output zero point Int32 [1] and the output kind.
struct Requant {
  NodeValue mult, zero;
  ElemKind kind;
};

/// The Requant of \p node (scales at inputs 1, \p wi and 6, the output zero
/// point at 7) with \p n output channels, or none where a scale or zero
/// point is not of that form (the node is then composed as before).
llvm::Expected<std::optional<Requant>>
requantOf(ImportContext &ctx, const onnx::NodeProto &node, int wi, dim_t n) {
  TRY(NodeValue sx, asVector(ctx, node, 1, ElemKind::Float32));
  TRY(NodeValue sw, asVector(ctx, node, wi, ElemKind::Float32));
  TRY(NodeValue sy, asVector(ctx, node, 6, ElemKind::Float32));
  TRY(NodeValue zRaw, ctx.input(node, 7));
  ElemKind kind = zRaw.getElemKind();
  if (sx.dims()[0] != 1 || sy.dims()[0] != 1 || zRaw.getType()->size() != 1 ||
      (sw.dims()[0] != 1 && sw.dims()[0] != n) ||
      (kind != ElemKind::UInt8 && kind != ElemKind::Int8))
    return std::nullopt;
  TRY(NodeValue zy, asVector(ctx, node, 7, ElemKind::Int32));
  TRY(NodeValue mult, binary(ctx, node, OpKind::Mul, sx, sw));
  TRY(mult, binary(ctx, node, OpKind::Div, mult, sy));
  return Requant{mult, zy, kind};
}

/// QLinearMatMul with per-tensor a_scale as one RequantMatMul: the same
/// exact sum and requantize (its lowering is that chain), which the CPU
/// runs in its fused integer kernel, as for fold-qdq's products.
llvm::Error importQLinearMatMul(ImportContext &ctx,
                                const onnx::NodeProto &node) {
  TRY(NodeValue a, ctx.input(node, 0));
  TRY(NodeValue b, ctx.input(node, 3));
  TRY(NodeValue acc, intMatMul(ctx, node, a, b, 2, 5));
  int64_t r = acc.dims().size();
  auto *mm = llvm::dyn_cast<IntMatMulNode>(acc.getNode());
  TRY(std::optional<Requant> rq, requantOf(ctx, node, 4, acc.dims()[r - 1]));
  if (mm && rq) {
    NodeValue bias = constantOf(ctx, node, ElemKind::Int32, {1}, 0);
    TRY(NodeValue y, make(ctx, node, OpKind::RequantMatMul,
                          {mm->getLHS(), mm->getRHS(), mm->getLHSZero(),
                           mm->getRHSZero(), bias, rq->mult, rq->zero},
                          {Attr::makeElemKind(rq->kind), Attr::makeInt(0)}));
    return ctx.setOutput(node, y);
  }
  TRY(NodeValue sa, scaleAlong(ctx, node, 1, r - 2, acc)); // per row
  TRY(NodeValue sb, scaleAlong(ctx, node, 4, r - 1, acc)); // per column
  return requantizeOutput(ctx, node, acc, sa, sb, 6);
}

/// QLinearConv \p conv (a 2-D IntConv) with its bias and requantization
/// \p rq as one RequantConv: the same exact sum and requantize (its
/// lowering is that chain), which the CPU runs in its fused integer
/// kernels, as for the products fold-qdq makes of QDQ files.
llvm::Expected<NodeValue> requantConv(ImportContext &ctx,
                                      const onnx::NodeProto &node,
                                      IntConvNode *conv, const Requant &rq) {
  dim_t m = conv->getFilter().dims()[0];
  NodeValue bias = constantOf(ctx, node, ElemKind::Int32, {1}, 0);
  if (ImportContext::hasInput(node, 8)) {
    TRY(bias, asVector(ctx, node, 8, ElemKind::Int32));
    if (bias.dims()[0] != m)
      return fail(node, "bias must have " + llvm::Twine(m) + " elements");
  }
  return make(
      ctx, node, OpKind::RequantConv,
      {conv->getInput(), conv->getFilter(), conv->getInputZero(),
       conv->getFilterZero(), bias, rq.mult, rq.zero},
      {Attr::makeInts(conv->getStrides()), Attr::makeInts(conv->getPads()),
       Attr::makeInts(conv->getDilations()), Attr::makeInt(conv->getGroup()),
       Attr::makeElemKind(rq.kind), Attr::makeInt(0)});
}

llvm::Error importQLinearConv(ImportContext &ctx, const onnx::NodeProto &node) {
  TRY(NodeValue acc, intConv(ctx, node, 3, 2, 5));
  if (auto *conv = llvm::dyn_cast<IntConvNode>(acc.getNode())) {
    TRY(std::optional<Requant> rq,
        requantOf(ctx, node, 4, conv->getFilter().dims()[0]));
    if (rq) {
      TRY(NodeValue y, requantConv(ctx, node, conv, *rq));
      return ctx.setOutput(node, y);
    }
  }
  if (ImportContext::hasInput(node, 8)) { // Int32 [M], scale x_scale*w_scale
    TRY(NodeValue b, ctx.input(node, 8));
    TRY(b, castTo(ctx, node, b, ElemKind::Int32));
    Ints shape(acc.dims().size(), 1);
    shape[1] = b.getType()->size();
    TRY(b, reshapeTo(ctx, node, b, shape));
    TRY(acc, binary(ctx, node, OpKind::Add, acc, b));
  }
  TRY(NodeValue sx, scaleAlong(ctx, node, 1, 1, acc));
  TRY(NodeValue sw, scaleAlong(ctx, node, 4, 1, acc)); // per output channel
  return requantizeOutput(ctx, node, acc, sx, sw, 6);
}

const ImportRule kQuantRules[] = {
    {"QuantizeLinear", 10, 23, importQuantizeLinear},
    {"DequantizeLinear", 10, 23, importDequantizeLinear},
    {"DynamicQuantizeLinear", 11, 17, importDynamicQuantizeLinear},
    {"MatMulInteger", 10, 17, importMatMulInteger},
    {"ConvInteger", 10, 17, importConvInteger},
    {"QLinearMatMul", 10, 17, importQLinearMatMul},
    {"QLinearConv", 10, 17, importQLinearConv},
};

} // namespace

RuleList onnximport::getQuantImportRules() { return kQuantRules; }
