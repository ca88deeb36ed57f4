//===- ImportQuant.cpp - Quantization ops composed in float ---------------===//
//
// QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear, MatMulInteger,
// ConvInteger, QLinearMatMul and QLinearConv, composed from Cast, Round,
// Clip and float MatMul/Conv. Integer products are exact in float32 while
// sums stay below 2^24, which holds for the 8-bit operands these ops take
// unless an inner dimension exceeds 256 (the ONNX tests stay far below).
//
//===----------------------------------------------------------------------===//
#include "ImportHelpers.h"

#include <cmath>
#include <numeric>

using namespace ember;
using namespace ember::onnximport;

#define TRY EMBER_ASSIGN_OR_RETURN

namespace {

/// \p p (a scalar or a 1-D tensor along \p axis) as float, shaped to
/// broadcast against a tensor of rank \p rank.
llvm::Expected<NodeValue> alongAxis(ImportContext &ctx,
                                    const onnx::NodeProto &node, NodeValue p,
                                    int64_t axis, size_t rank) {
  TRY(p, castTo(ctx, node, p, ElemKind::Float32));
  if (p.dims().size() != 1 || rank == 0)
    return p;
  if (axis < 0 || axis >= int64_t(rank))
    return fail(node, "axis " + llvm::Twine(axis) +
                          " is out of range for rank " + llvm::Twine(rank));
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

/// saturate(round(x / scale) + zp) as \p kind; x, scale, zp are float.
llvm::Expected<NodeValue> quantize(ImportContext &ctx,
                                   const onnx::NodeProto &node, NodeValue x,
                                   NodeValue scale, NodeValue zp,
                                   ElemKind kind) {
  if (!x || !scale)
    return fail(node, "needs inputs x and y_scale");
  TRY(NodeValue q, binary(ctx, node, OpKind::Div, x, scale));
  TRY(q, unary(ctx, node, OpKind::Round, q));
  if (zp) {
    TRY(q, binary(ctx, node, OpKind::Add, q, zp));
  }
  auto [lo, hi] = rangeOf(kind);
  TRY(q, make(ctx, node, OpKind::Clip, {q},
              {Attr::makeFloat(float(lo)), Attr::makeFloat(float(hi))}));
  return castTo(ctx, node, q, kind);
}

/// (Cast(x) - zp) * scale in float.
llvm::Expected<NodeValue> dequantize(ImportContext &ctx,
                                     const onnx::NodeProto &node, NodeValue x,
                                     NodeValue scale, NodeValue zp) {
  TRY(NodeValue f, castTo(ctx, node, x, ElemKind::Float32));
  if (zp) {
    TRY(f, binary(ctx, node, OpKind::Sub, f, zp));
  }
  if (scale) {
    TRY(f, binary(ctx, node, OpKind::Mul, f, scale));
  }
  return f;
}

/// Optional input \p i as float along \p axis, or a null value.
llvm::Expected<NodeValue> optionalParam(ImportContext &ctx,
                                        const onnx::NodeProto &node, int i,
                                        int64_t axis, size_t rank) {
  if (!ImportContext::hasInput(node, i))
    return NodeValue();
  TRY(NodeValue p, ctx.input(node, i));
  return alongAxis(ctx, node, p, axis, rank);
}

llvm::Error importQuantizeLinear(ImportContext &ctx,
                                 const onnx::NodeProto &node) {
  TRY(NodeValue x, ctx.input(node, 0));
  size_t r = x.dims().size();
  TRY(int64_t axis, AttrReader(node).getInt("axis", 1));
  if (r) {
    TRY(axis, normAxis(node, axis, r));
  }
  TRY(NodeValue scale, optionalParam(ctx, node, 1, axis, r));
  TRY(NodeValue zp, optionalParam(ctx, node, 2, axis, r));
  ElemKind kind = ElemKind::UInt8;
  if (ImportContext::hasInput(node, 2)) {
    TRY(NodeValue z, ctx.input(node, 2));
    kind = z.getElemKind();
  }
  if (kind != ElemKind::UInt8 && kind != ElemKind::Int8)
    return fail(node, "only int8 and uint8 results are supported");
  TRY(x, castTo(ctx, node, x, ElemKind::Float32));
  TRY(NodeValue y, quantize(ctx, node, x, scale, zp, kind));
  return ctx.setOutput(node, y);
}

llvm::Error importDequantizeLinear(ImportContext &ctx,
                                   const onnx::NodeProto &node) {
  TRY(NodeValue x, ctx.input(node, 0));
  size_t r = x.dims().size();
  TRY(int64_t axis, AttrReader(node).getInt("axis", 1));
  if (r) {
    TRY(axis, normAxis(node, axis, r));
  }
  TRY(NodeValue scale, optionalParam(ctx, node, 1, axis, r));
  TRY(NodeValue zp, optionalParam(ctx, node, 2, axis, r));
  TRY(NodeValue y, dequantize(ctx, node, x, scale, zp));
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

/// MatMul of two float operands via the MatMul importer's broadcasting
/// rules, limited to what the integer tests use: 2-D or equal batch dims.
llvm::Expected<NodeValue> matMulFloat(ImportContext &ctx,
                                      const onnx::NodeProto &node, NodeValue a,
                                      NodeValue b) {
  if (a.dims().size() != b.dims().size() || a.dims().size() < 2)
    return fail(node, "operands must have equal ranks of at least 2");
  return make(ctx, node, OpKind::MatMul, {a, b}, {Attr::makeInt(0)});
}

llvm::Error importMatMulInteger(ImportContext &ctx,
                                const onnx::NodeProto &node) {
  TRY(NodeValue a, ctx.input(node, 0));
  TRY(NodeValue b, ctx.input(node, 1));
  size_t ra = a.dims().size(), rb = b.dims().size();
  NodeValue azp, bzp;
  if (ImportContext::hasInput(node, 2)) { // per row of A, or scalar
    TRY(azp, ctx.input(node, 2));
    TRY(azp, alongAxis(ctx, node, azp, ra - 2, ra));
  }
  if (ImportContext::hasInput(node, 3)) { // per column of B, or scalar
    TRY(bzp, ctx.input(node, 3));
    TRY(bzp, alongAxis(ctx, node, bzp, rb - 1, rb));
  }
  TRY(NodeValue fa, dequantize(ctx, node, a, NodeValue(), azp));
  TRY(NodeValue fb, dequantize(ctx, node, b, NodeValue(), bzp));
  TRY(NodeValue y, matMulFloat(ctx, node, fa, fb));
  TRY(y, castTo(ctx, node, y, ElemKind::Int32));
  return ctx.setOutput(node, y);
}

llvm::Error importConvInteger(ImportContext &ctx, const onnx::NodeProto &node) {
  TRY(NodeValue x, ctx.input(node, 0));
  TRY(NodeValue w, ctx.input(node, 1));
  TRY(NodeValue xzp, optionalParam(ctx, node, 2, 0, 0));
  TRY(NodeValue wzp, optionalParam(ctx, node, 3, 0, w.dims().size()));
  TRY(NodeValue fx, dequantize(ctx, node, x, NodeValue(), xzp));
  TRY(NodeValue fw, dequantize(ctx, node, w, NodeValue(), wzp));
  TRY(NodeValue y, convolution(ctx, node, fx, fw, NodeValue()));
  TRY(y, castTo(ctx, node, y, ElemKind::Int32));
  return ctx.setOutput(node, y);
}

/// Inputs (value, scale, zero point) starting at \p i, dequantized along
/// \p axis.
llvm::Expected<NodeValue> dequantInput(ImportContext &ctx,
                                       const onnx::NodeProto &node, int i,
                                       int64_t axis) {
  TRY(NodeValue v, ctx.input(node, i));
  size_t r = v.dims().size();
  TRY(NodeValue s, optionalParam(ctx, node, i + 1, axis, r));
  TRY(NodeValue z, optionalParam(ctx, node, i + 2, axis, r));
  return dequantize(ctx, node, v, s, z);
}

/// Requantizes float \p y with inputs \p i (scale) and \p i + 1 (zp).
llvm::Error requantizeOutput(ImportContext &ctx, const onnx::NodeProto &node,
                             NodeValue y, int i) {
  TRY(NodeValue s, optionalParam(ctx, node, i, 1, 0));
  TRY(NodeValue zRaw, ctx.input(node, i + 1));
  TRY(NodeValue z, castTo(ctx, node, zRaw, ElemKind::Float32));
  TRY(y, quantize(ctx, node, y, s, z, zRaw.getElemKind()));
  return ctx.setOutput(node, y);
}

llvm::Error importQLinearMatMul(ImportContext &ctx,
                                const onnx::NodeProto &node) {
  TRY(NodeValue a, dequantInput(ctx, node, 0, 0));
  TRY(NodeValue b, dequantInput(ctx, node, 3, 1));
  TRY(NodeValue y, matMulFloat(ctx, node, a, b));
  return requantizeOutput(ctx, node, y, 6);
}

llvm::Error importQLinearConv(ImportContext &ctx, const onnx::NodeProto &node) {
  TRY(NodeValue x, dequantInput(ctx, node, 0, 1));
  TRY(NodeValue w, dequantInput(ctx, node, 3, 0));
  NodeValue bias;
  if (ImportContext::hasInput(node, 8)) { // int32, scale x_scale * w_scale
    TRY(NodeValue b, ctx.input(node, 8));
    TRY(NodeValue xs, ctx.input(node, 1));
    TRY(NodeValue ws, ctx.input(node, 4));
    TRY(bias, castTo(ctx, node, b, ElemKind::Float32));
    TRY(bias, binary(ctx, node, OpKind::Mul, bias, xs));
    TRY(bias, binary(ctx, node, OpKind::Mul, bias, ws));
  }
  TRY(NodeValue y, convolution(ctx, node, x, w, bias));
  return requantizeOutput(ctx, node, y, 6);
}

const ImportRule kQuantRules[] = {
    {"QuantizeLinear", 10, 17, importQuantizeLinear},
    {"DequantizeLinear", 10, 17, importDequantizeLinear},
    {"DynamicQuantizeLinear", 11, 17, importDynamicQuantizeLinear},
    {"MatMulInteger", 10, 17, importMatMulInteger},
    {"ConvInteger", 10, 17, importConvInteger},
    {"QLinearMatMul", 10, 17, importQLinearMatMul},
    {"QLinearConv", 10, 17, importQLinearConv},
};

} // namespace

RuleList onnximport::getQuantImportRules() { return kQuantRules; }
