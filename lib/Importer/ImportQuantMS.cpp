//===- ImportQuantMS.cpp - onnxruntime's com.microsoft quantized ops ------===//
//
// onnxruntime's quantizer in QOperator format writes the quantized forms of
// the operators between its QLinearConv nodes in the com.microsoft domain
// (opset 1): QLinearAdd, QLinearMul, QLinearGlobalAveragePool, QGemm, ...
// Each is defined as its float operator on the dequantized operands, the
// result quantized (per-tensor scales and zero points, round half to even,
// saturation), and imports as exactly that Dequantize -> op -> Quantize
// chain, so that the fold-qdq pass makes of it the integer nodes it makes
// of onnxruntime's QDQ files (RequantAdd, RequantMul, byte tables, the
// integer mean, RequantMatMul). The float operators come from the
// default-domain importers at the opset whose semantics the contrib op has.
//
//===----------------------------------------------------------------------===//
#include "ImportHelpers.h"

#include "ember/Base/ElemAccess.h"

#include <utility>
#include <vector>

using namespace ember;
using namespace ember::onnximport;

#define TRY EMBER_ASSIGN_OR_RETURN

namespace {

bool isByte(ElemKind k) { return k == ElemKind::UInt8 || k == ElemKind::Int8; }

/// \p v without the Reshape nodes in front of it.
NodeValue throughReshape(NodeValue v) {
  while (llvm::isa<ReshapeNode>(v.getNode()))
    v = v.getNode()->getNthInput(0);
  return v;
}

/// An error unless \p node has between \p lo and \p hi inputs.
llvm::Error checkArity(const onnx::NodeProto &node, int lo, int hi) {
  int n = node.input_size();
  if (n >= lo && n <= hi)
    return llvm::Error::success();
  if (lo == hi)
    return fail(node, "expects " + llvm::Twine(lo) + " inputs, got " +
                          llvm::Twine(n));
  return fail(node, "expects " + llvm::Twine(lo) + " to " + llvm::Twine(hi) +
                        " inputs, got " + llvm::Twine(n));
}

/// Scale input \p i, one Float32 (per tensor), as shape [1].
llvm::Expected<NodeValue> scaleInput(ImportContext &ctx,
                                     const onnx::NodeProto &node, int i) {
  TRY(NodeValue s, ctx.input(node, i));
  if (s.getElemKind() != ElemKind::Float32 || s.getType()->size() != 1)
    return fail(node, "input " + llvm::Twine(i) +
                          " (a scale) must be one float (per tensor), got " +
                          s.getType()->toString());
  return reshapeTo(ctx, node, s, {1});
}

/// Zero point input \p i of an operand of \p kind as Int32 [1]: one value
/// of that kind, or 0 where the optional input is absent.
llvm::Expected<NodeValue> zeroInput(ImportContext &ctx,
                                    const onnx::NodeProto &node, int i,
                                    ElemKind kind) {
  if (!ImportContext::hasInput(node, i))
    return constantOf(ctx, node, ElemKind::Int32, {1}, 0);
  TRY(NodeValue z, ctx.input(node, i));
  if (z.getElemKind() != kind || z.getType()->size() != 1)
    return fail(node, "input " + llvm::Twine(i) +
                          " (a zero point) must be one " + elemKindName(kind) +
                          " (per tensor), got " + z.getType()->toString());
  TRY(z, castTo(ctx, node, z, ElemKind::Int32));
  return reshapeTo(ctx, node, z, {1});
}

/// Input \p xi (uint8 or int8) dequantized per tensor by scale input \p si
/// and zero point input \p zi.
llvm::Expected<NodeValue> dequantized(ImportContext &ctx,
                                      const onnx::NodeProto &node, int xi,
                                      int si, int zi) {
  TRY(NodeValue x, ctx.input(node, xi));
  if (!isByte(x.getElemKind()))
    return fail(node, "input " + llvm::Twine(xi) +
                          " must be uint8 or int8, got " +
                          x.getType()->toString());
  TRY(NodeValue s, scaleInput(ctx, node, si));
  TRY(NodeValue z, zeroInput(ctx, node, zi, x.getElemKind()));
  return make(ctx, node, OpKind::Dequantize, {x, s, z}, {Attr::makeInt(0)});
}

/// Binds the node's output to \p y quantized per tensor by scale input
/// \p si and zero point input \p zi; the zero point's kind is the result's,
/// \p kind where it is absent.
llvm::Error setQuantizedOutput(ImportContext &ctx, const onnx::NodeProto &node,
                               NodeValue y, int si, int zi, ElemKind kind) {
  TRY(NodeValue s, scaleInput(ctx, node, si));
  if (ImportContext::hasInput(node, zi)) {
    TRY(NodeValue z, ctx.input(node, zi));
    if (!isByte(z.getElemKind()))
      return fail(node, "input " + llvm::Twine(zi) +
                            " (a zero point) must be uint8 or int8, got " +
                            z.getType()->toString());
    kind = z.getElemKind();
  }
  TRY(NodeValue z, zeroInput(ctx, node, zi, kind));
  TRY(NodeValue q, make(ctx, node, OpKind::Quantize, {y, s, z},
                        {Attr::makeInt(0), Attr::makeElemKind(kind)}));
  return ctx.setOutput(node, q);
}

/// The results of the default-domain \p opType at \p opset on \p ins (a
/// null value: an absent optional input) with the attributes of \p node
/// named in \p attrs (and \p extra), \p outs of them, imported by the op's
/// own importer, so that its checks and semantics are the standard op's.
llvm::Expected<std::vector<NodeValue>>
standardOp(ImportContext &ctx, const onnx::NodeProto &node,
           llvm::StringRef opType, int64_t opset, llvm::ArrayRef<NodeValue> ins,
           int outs, llvm::ArrayRef<const char *> attrs,
           llvm::ArrayRef<onnx::AttributeProto> extra = {}) {
  onnx::NodeProto f;
  f.set_name(node.name());
  f.set_op_type(opType.str());
  // Names no model value has: the node's output name is unique in the graph.
  std::string base = node.output(0) + "\x1f" + opType.str() + ":";
  for (size_t i = 0; i < ins.size(); ++i) {
    f.add_input(ins[i] ? base + std::to_string(i) : "");
    if (ins[i])
      ctx.bind(f.input(int(i)), ins[i]);
  }
  for (int i = 0; i < outs; ++i)
    f.add_output(base + "y" + std::to_string(i));
  for (const onnx::AttributeProto &a : node.attribute())
    for (const char *name : attrs)
      if (a.name() == name)
        *f.add_attribute() = a;
  for (const onnx::AttributeProto &a : extra)
    *f.add_attribute() = a;
  const ImportRule *rule = nullptr;
  for (const ImportRule &r : getImportRules())
    if (opType == r.opType && opset >= r.minOpset && opset <= r.maxOpset)
      rule = &r;
  if (!rule)
    return fail(node, opType + " of opset " + llvm::Twine(opset) +
                          " is not supported");
  int64_t modelOpset = ctx.opset();
  ctx.setOpset(opset);
  llvm::Error err = rule->fn(ctx, f);
  ctx.setOpset(modelOpset);
  if (err)
    return err;
  std::vector<NodeValue> results;
  for (int i = 0; i < outs; ++i) {
    TRY(NodeValue v, ctx.get(f.output(i)));
    results.push_back(v);
  }
  return results;
}

/// The one result of standardOp.
llvm::Expected<NodeValue>
floatOp(ImportContext &ctx, const onnx::NodeProto &node, llvm::StringRef opType,
        int64_t opset, llvm::ArrayRef<NodeValue> ins,
        llvm::ArrayRef<const char *> attrs,
        llvm::ArrayRef<onnx::AttributeProto> extra = {}) {
  TRY(std::vector<NodeValue> r,
      standardOp(ctx, node, opType, opset, ins, 1, attrs, extra));
  return r[0];
}

/// An error unless integer attribute \p name of \p node is 0 (its default).
llvm::Error requireZero(const onnx::NodeProto &node, llvm::StringRef name) {
  TRY(int64_t v, AttrReader(node).getInt(name, 0));
  if (v != 0)
    return fail(node, name + "=" + llvm::Twine(v) + " is not supported");
  return llvm::Error::success();
}

/// QLinearAdd, QLinearMul: A, A_scale, A_zp?, B, B_scale, B_zp?, C_scale,
/// C_zp?, with multidirectional broadcasting.
template <OpKind Kind>
llvm::Error importQLinearBinary(ImportContext &ctx,
                                const onnx::NodeProto &node) {
  EMBER_RETURN_IF_ERR(checkArity(node, 7, 8));
  TRY(NodeValue a, dequantized(ctx, node, 0, 1, 2));
  TRY(NodeValue b, dequantized(ctx, node, 3, 4, 5));
  TRY(NodeValue y, binary(ctx, node, Kind, a, b));
  TRY(NodeValue a0, ctx.input(node, 0));
  return setQuantizedOutput(ctx, node, y, 6, 7, a0.getElemKind());
}

/// The unary ops X, X_scale, X_zp?, Y_scale, Y_zp? of \p opType at
/// \p opset, with the attributes \p attrs.
llvm::Error importQLinearUnary(ImportContext &ctx, const onnx::NodeProto &node,
                               llvm::StringRef opType, int64_t opset,
                               llvm::ArrayRef<const char *> attrs) {
  EMBER_RETURN_IF_ERR(checkArity(node, 4, 5));
  TRY(NodeValue x, dequantized(ctx, node, 0, 1, 2));
  TRY(NodeValue y, floatOp(ctx, node, opType, opset, {x}, attrs));
  TRY(NodeValue x0, ctx.input(node, 0));
  return setQuantizedOutput(ctx, node, y, 3, 4, x0.getElemKind());
}

llvm::Error importQLinearSigmoid(ImportContext &ctx,
                                 const onnx::NodeProto &node) {
  return importQLinearUnary(ctx, node, "Sigmoid", 13, {});
}

llvm::Error importQLinearLeakyRelu(ImportContext &ctx,
                                   const onnx::NodeProto &node) {
  return importQLinearUnary(ctx, node, "LeakyRelu", 13, {"alpha"});
}

llvm::Error importQLinearAveragePool(ImportContext &ctx,
                                     const onnx::NodeProto &node) {
  EMBER_RETURN_IF_ERR(requireZero(node, "channels_last"));
  return importQLinearUnary(ctx, node, "AveragePool", 11,
                            {"auto_pad", "ceil_mode", "count_include_pad",
                             "kernel_shape", "pads", "strides"});
}

llvm::Error importQLinearReduceMean(ImportContext &ctx,
                                    const onnx::NodeProto &node) {
  return importQLinearUnary(ctx, node, "ReduceMean", 13, {"axes", "keepdims"});
}

/// QLinearSoftmax takes the Softmax semantics of its `opset` attribute
/// (before 13: over the flattened trailing axes).
llvm::Error importQLinearSoftmax(ImportContext &ctx,
                                 const onnx::NodeProto &node) {
  TRY(int64_t opset, AttrReader(node).getInt("opset", std::nullopt));
  return importQLinearUnary(ctx, node, "Softmax", opset, {"axis"});
}

/// The mean over the image of X (rank >= 3), channels second or
/// (channels_last) last.
llvm::Error importQLinearGlobalAveragePool(ImportContext &ctx,
                                           const onnx::NodeProto &node) {
  EMBER_RETURN_IF_ERR(checkArity(node, 4, 5));
  TRY(int64_t last, AttrReader(node).getInt("channels_last", 0));
  if (last != 0 && last != 1)
    return fail(node, "channels_last must be 0 or 1, got " + llvm::Twine(last));
  TRY(NodeValue x, dequantized(ctx, node, 0, 1, 2));
  int64_t r = x.dims().size();
  if (r < 3)
    return fail(node, "needs an input of rank 3 or more, got " +
                          x.getType()->toString());
  Ints axes;
  for (int64_t a = last ? 1 : 2; a < (last ? r - 1 : r); ++a)
    axes.push_back(a);
  TRY(NodeValue y, reduce(ctx, node, OpKind::ReduceMean, x, axes, true));
  TRY(NodeValue x0, ctx.input(node, 0));
  return setQuantizedOutput(ctx, node, y, 3, 4, x0.getElemKind());
}

/// QLinearConcat: Y_scale, Y_zp, then (X, X_scale, X_zp) per input.
llvm::Error importQLinearConcat(ImportContext &ctx,
                                const onnx::NodeProto &node) {
  int n = node.input_size();
  if (n < 5 || (n - 2) % 3 != 0)
    return fail(node, "expects Y_scale, Y_zero_point and a (tensor, scale, "
                      "zero point) triple per input, got " +
                          llvm::Twine(n) + " inputs");
  std::vector<NodeValue> ins;
  for (int i = 2; i < n; i += 3) {
    TRY(NodeValue x, dequantized(ctx, node, i, i + 1, i + 2));
    ins.push_back(x);
  }
  TRY(NodeValue y, floatOp(ctx, node, "Concat", 13, ins, {"axis"}));
  TRY(NodeValue x0, ctx.input(node, 2));
  return setQuantizedOutput(ctx, node, y, 0, 1, x0.getElemKind());
}

/// QLinearWhere: condition, X, X_scale, X_zp, Y, Y_scale, Y_zp, Z_scale,
/// Z_zp.
llvm::Error importQLinearWhere(ImportContext &ctx,
                               const onnx::NodeProto &node) {
  EMBER_RETURN_IF_ERR(checkArity(node, 9, 9));
  TRY(NodeValue c, ctx.input(node, 0));
  TRY(NodeValue x, dequantized(ctx, node, 1, 2, 3));
  TRY(NodeValue y, dequantized(ctx, node, 4, 5, 6));
  TRY(NodeValue z, floatOp(ctx, node, "Where", 13, {c, x, y}, {}));
  TRY(NodeValue x0, ctx.input(node, 1));
  return setQuantizedOutput(ctx, node, z, 7, 8, x0.getElemKind());
}

/// QGemm's B (2-D) dequantized per tensor or per column of the product
/// (axis 0 of B with transB, 1 without); \p n is that extent.
llvm::Expected<NodeValue> gemmWeight(ImportContext &ctx,
                                     const onnx::NodeProto &node,
                                     int64_t transB, dim_t &n) {
  TRY(NodeValue b, ctx.input(node, 3));
  TRY(NodeValue s, ctx.input(node, 4));
  if (!isByte(b.getElemKind()) || b.dims().size() != 2)
    return fail(node, "B must be a 2-D uint8 or int8 tensor, got " +
                          b.getType()->toString());
  n = b.dims()[transB ? 0 : 1];
  if (s.getType()->size() == 1)
    return dequantized(ctx, node, 3, 4, 5);
  if (s.getElemKind() != ElemKind::Float32 || s.dims().size() != 1 ||
      s.dims()[0] != n)
    return fail(node, "b_scale must be one float or " + llvm::Twine(n) +
                          " (one per column), got " + s.getType()->toString());
  TRY(NodeValue z, ctx.input(node, 5));
  if (z.getElemKind() != b.getElemKind() || z.getType()->size() != n)
    return fail(node, "b_zero_point must have b_scale's size and B's type, "
                      "got " +
                          z.getType()->toString());
  TRY(z, castTo(ctx, node, z, ElemKind::Int32));
  TRY(z, reshapeTo(ctx, node, z, {int64_t(n)}));
  return make(ctx, node, OpKind::Dequantize, {b, s, z},
              {Attr::makeInt(transB ? 0 : 1)});
}

/// a_scale * b_scale, [1] or per column, formed in Float32 as onnxruntime
/// does; a Constant where both are, so that fold-qdq sees the bias scale
/// (it runs before constant folding).
llvm::Expected<NodeValue> biasScale(ImportContext &ctx,
                                    const onnx::NodeProto &node) {
  TRY(NodeValue sa, scaleInput(ctx, node, 1));
  TRY(NodeValue sb, ctx.input(node, 4));
  TRY(sb, reshapeTo(ctx, node, sb, {int64_t(sb.getType()->size())}));
  auto *ca = llvm::dyn_cast<Constant>(throughReshape(sa).getNode());
  auto *cb = llvm::dyn_cast<Constant>(throughReshape(sb).getNode());
  if (!ca || !cb)
    return binary(ctx, node, OpKind::Mul, sa, sb);
  dim_t n = sb.getType()->size();
  Tensor t(ElemKind::Float32, {n});
  float a = float(ca->getPayload().elementAsDouble(0));
  for (dim_t i = 0; i < n; ++i)
    storeElement(t.data(), ElemKind::Float32, i,
                 a * float(cb->getPayload().elementAsDouble(i)));
  return NodeValue(
      ctx.module().createConstant(nameOf(node) + ".c_scale", std::move(t)));
}

/// QGemm's Int32 C at scale a_scale * b_scale (per column), broadcast to
/// [n] (or [m, n] where it has rows), dequantized along its last axis.
llvm::Expected<NodeValue>
gemmBias(ImportContext &ctx, const onnx::NodeProto &node, dim_t m, dim_t n) {
  TRY(NodeValue c, ctx.input(node, 6));
  if (c.getElemKind() != ElemKind::Int32 || c.dims().size() > 2)
    return fail(node, "C must be an int32 tensor of rank 2 or less, got " +
                          c.getType()->toString());
  bool rows = c.dims().size() == 2 && c.dims()[0] != 1;
  std::vector<dim_t> dims =
      rows ? std::vector<dim_t>{m, n} : std::vector<dim_t>{n};
  if (!rows) {
    TRY(c, reshapeTo(ctx, node, c, {int64_t(c.getType()->size())}));
  }
  TRY(c, ctx.broadcastTo(node, c, dims));
  TRY(NodeValue s, biasScale(ctx, node));
  NodeValue z =
      constantOf(ctx, node, ElemKind::Int32, {s.getType()->size()}, 0);
  return make(ctx, node, OpKind::Dequantize, {c, s, z},
              {Attr::makeInt(int64_t(dims.size()) - 1)});
}

/// QGemm: A, a_scale, a_zp, B, b_scale, b_zp, C?, y_scale?, y_zp?:
/// alpha * a_scale * b_scale * ((A - a_zp)(B - b_zp) + C), quantized where
/// y_scale is given and Float32 otherwise. C's scale is alpha * a_scale *
/// b_scale, so the float Gemm takes C at a_scale * b_scale with beta =
/// alpha; with alpha 1 it is the Gemm fold-qdq makes a RequantMatMul of.
llvm::Error importQGemm(ImportContext &ctx, const onnx::NodeProto &node) {
  EMBER_RETURN_IF_ERR(checkArity(node, 6, 9));
  AttrReader attrs(node);
  TRY(float alpha, attrs.getFloat("alpha", 1.f));
  TRY(int64_t transA, attrs.getInt("transA", 0));
  TRY(int64_t transB, attrs.getInt("transB", 0));
  TRY(NodeValue a, dequantized(ctx, node, 0, 1, 2));
  if (a.dims().size() != 2)
    return fail(node, "A must be 2-D, got " + a.getType()->toString());
  dim_t n = 0;
  TRY(NodeValue b, gemmWeight(ctx, node, transB, n));
  std::vector<NodeValue> ins = {a, b};
  if (ImportContext::hasInput(node, 6)) {
    TRY(NodeValue c, gemmBias(ctx, node, a.dims()[transA ? 1 : 0], n));
    ins.push_back(c);
  }
  onnx::AttributeProto beta;
  beta.set_name("beta");
  beta.set_type(onnx::AttributeProto::FLOAT);
  beta.set_f(alpha);
  TRY(NodeValue y, floatOp(ctx, node, "Gemm", 13, ins,
                           {"alpha", "transA", "transB"}, {beta}));
  if (!ImportContext::hasInput(node, 7))
    return ctx.setOutput(node, y);
  if (!ImportContext::hasInput(node, 8))
    return fail(node, "y_scale without y_zero_point is not supported");
  TRY(NodeValue a0, ctx.input(node, 0));
  return setQuantizedOutput(ctx, node, y, 7, 8, a0.getElemKind());
}

/// Input \p i or, where the optional input is absent, a null value.
llvm::Expected<NodeValue> optionalInput(ImportContext &ctx,
                                        const onnx::NodeProto &node, int i) {
  if (!ImportContext::hasInput(node, i))
    return NodeValue();
  return ctx.input(node, i);
}

/// float(MatMulInteger(a, b, za, zb)) * (a_scale * b_scale) + bias, as
/// onnxruntime's MatMulIntegerToFloat and DynamicQuantizeMatMul compute it:
/// the exact Int32 product, then one Float32 multiply by the scales'
/// product (per column where b_scale is) and the bias add.
llvm::Error setScaledProduct(ImportContext &ctx, const onnx::NodeProto &node,
                             NodeValue a, NodeValue b, NodeValue za,
                             NodeValue zb, NodeValue sa, NodeValue sb,
                             NodeValue bias) {
  if (sa.getType()->size() != 1)
    return fail(node, "the scale of A must be one float (per tensor), got " +
                          sa.getType()->toString());
  TRY(sa, reshapeTo(ctx, node, sa, {1}));
  if (sb.dims().size() > 1)
    return fail(node, "b_scale must be a scalar or 1-D (per column), got " +
                          sb.getType()->toString());
  TRY(NodeValue acc,
      floatOp(ctx, node, "MatMulInteger", 10, {a, b, za, zb}, {}));
  TRY(NodeValue scale, binary(ctx, node, OpKind::Mul, sa, sb));
  TRY(NodeValue y, castTo(ctx, node, acc, ElemKind::Float32));
  TRY(y, binary(ctx, node, OpKind::Mul, y, scale));
  if (bias) {
    TRY(y, binary(ctx, node, OpKind::Add, y, bias));
  }
  return ctx.setOutput(node, y);
}

/// MatMulIntegerToFloat: A, B, a_scale, b_scale, a_zp?, b_zp?, bias?.
llvm::Error importMatMulIntegerToFloat(ImportContext &ctx,
                                       const onnx::NodeProto &node) {
  EMBER_RETURN_IF_ERR(checkArity(node, 4, 7));
  NodeValue in[7];
  for (int i = 0; i < 7; ++i) {
    TRY(in[i], optionalInput(ctx, node, i));
  }
  return setScaledProduct(ctx, node, in[0], in[1], in[4], in[5], in[2], in[3],
                          in[6]);
}

/// DynamicQuantizeMatMul: A (float), B, b_scale, b_zp?, bias?: A quantized
/// to uint8 as DynamicQuantizeLinear does, then MatMulIntegerToFloat.
llvm::Error importDynamicQuantizeMatMul(ImportContext &ctx,
                                        const onnx::NodeProto &node) {
  EMBER_RETURN_IF_ERR(checkArity(node, 3, 5));
  NodeValue in[5];
  for (int i = 0; i < 5; ++i) {
    TRY(in[i], optionalInput(ctx, node, i));
  }
  TRY(std::vector<NodeValue> qa,
      standardOp(ctx, node, "DynamicQuantizeLinear", 11, {in[0]}, 3, {}));
  return setScaledProduct(ctx, node, qa[0], in[1], qa[2], in[3], qa[1], in[2],
                          in[4]);
}

/// com.microsoft has one opset version, 1: each row is an op of it.
const std::pair<const char *, ImportFn> kMicrosoftOps[] = {
    {"QLinearAdd", importQLinearBinary<OpKind::Add>},
    {"QLinearMul", importQLinearBinary<OpKind::Mul>},
    {"QLinearGlobalAveragePool", importQLinearGlobalAveragePool},
    {"QLinearSigmoid", importQLinearSigmoid},
    {"QLinearLeakyRelu", importQLinearLeakyRelu},
    {"QLinearAveragePool", importQLinearAveragePool},
    {"QLinearReduceMean", importQLinearReduceMean},
    {"QLinearSoftmax", importQLinearSoftmax},
    {"QLinearConcat", importQLinearConcat},
    {"QLinearWhere", importQLinearWhere},
    {"QGemm", importQGemm},
    {"MatMulIntegerToFloat", importMatMulIntegerToFloat},
    {"DynamicQuantizeMatMul", importDynamicQuantizeMatMul},
};

} // namespace

RuleList onnximport::getMicrosoftImportRules() {
  static const std::vector<ImportRule> rules = [] {
    std::vector<ImportRule> v;
    for (const auto &[opType, fn] : kMicrosoftOps)
      v.push_back({opType, 1, 1, fn});
    return v;
  }();
  return rules;
}
