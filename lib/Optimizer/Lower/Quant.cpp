//===- Quant.cpp - Lowering of Quantize and Dequantize --------------------===//
//
// Both become float arithmetic on the tensor with the scale and zero point
// broadcast along their axis; the fold-qdq pass has by then turned the
// pairs around Conv and MatMul into integer products. Those products'
// requantization (RequantConv, RequantMatMul) becomes the integer product,
// an Int32 bias add and Float32 arithmetic, RequantAdd the Dequantize ->
// Add -> [Relu] -> Quantize chain it replaced and RequantMul the Dequantize
// -> [Broadcast] -> Mul -> Quantize one, and TableLookup a Gather at the
// byte's index: these are their definitions,
// which a backend's fused kernel reproduces bit for bit.
//
//===----------------------------------------------------------------------===//
#include "LowerRules.h"

using namespace ember;

/// The [1] or [n] vector \p v laid along \p axis and broadcast to \p dims.
static NodeValue alongAxis(Function &F, const std::string &name, NodeValue v,
                           int64_t axis, llvm::ArrayRef<dim_t> dims) {
  llvm::SmallVector<int64_t, kMaxRank> shape(dims.size(), 1);
  if (v.dims()[0] != 1)
    shape[axis] = v.dims()[0];
  NodeValue r = F.createReshape(name + ".r", v, shape);
  if (dims.empty() || r.dims() == dims)
    return r;
  return F.createBroadcast(name + ".b", r, dims);
}

/// (x - zero) * scale in Float32, scale and zero along \p axis.
static NodeValue dequantized(Function &F, const std::string &name, NodeValue x,
                             NodeValue scale, NodeValue zero, int64_t axis) {
  NodeValue zf = F.createCast(name + ".zf", zero, ElemKind::Float32);
  NodeValue z = alongAxis(F, name + ".z", zf, axis, x.dims());
  NodeValue s = alongAxis(F, name + ".s", scale, axis, x.dims());
  NodeValue f = F.createCast(name + ".f", x, ElemKind::Float32);
  NodeValue c = F.createSub(name + ".sub", f, z);
  return F.createMul(name + ".mul", c, s);
}

/// saturate(round_half_even(x / scale) + zero) as \p to.
static NodeValue quantized(Function &F, const std::string &name, NodeValue x,
                           NodeValue scale, NodeValue zero, int64_t axis,
                           ElemKind to) {
  NodeValue zf = F.createCast(name + ".zf", zero, ElemKind::Float32);
  NodeValue z = alongAxis(F, name + ".z", zf, axis, x.dims());
  NodeValue s = alongAxis(F, name + ".s", scale, axis, x.dims());
  NodeValue q =
      F.createRound(name + ".round", F.createDiv(name + ".div", x, s));
  q = F.createAdd(name + ".add", q, z);
  bool isSigned = to == ElemKind::Int8;
  q = F.createClip(name + ".clip", q, isSigned ? -128.f : 0.f,
                   isSigned ? 127.f : 255.f);
  return F.createCast(name + ".cast", q, to);
}

Replacement ember::lowerDequantize(Function &F, DequantizeNode &n) {
  return {dequantized(F, n.getName().str(), n.getInput(), n.getScale(),
                      n.getZero(), n.getAxis())};
}

Replacement ember::lowerQuantize(Function &F, QuantizeNode &n) {
  return {quantized(F, n.getName().str(), n.getInput(), n.getScale(),
                    n.getZero(), n.getAxis(), n.getElemTy())};
}

/// The two per-tensor byte operands of RequantAdd or RequantMul \p n in
/// Float32 (the definition both ops share).
template <class RequantNode>
static std::pair<NodeValue, NodeValue>
dequantizedOperands(Function &F, const std::string &name, RequantNode &n) {
  return {dequantized(F, name + ".lhs", n.getLHS(), n.getLHSScale(),
                      n.getLHSZero(), 0),
          dequantized(F, name + ".rhs", n.getRHS(), n.getRHSScale(),
                      n.getRHSZero(), 0)};
}

Replacement ember::lowerRequantAdd(Function &F, RequantAddNode &n) {
  std::string name = n.getName().str();
  auto [a, b] = dequantizedOperands(F, name, n);
  NodeValue sum = F.createAdd(name + ".sum", a, b);
  if (n.getRelu())
    sum = F.createRelu(name + ".relu", sum);
  return {quantized(F, name, sum, n.getOutScale(), n.getOutZero(), 0,
                    n.getElemTy())};
}

Replacement ember::lowerRequantMul(Function &F, RequantMulNode &n) {
  std::string name = n.getName().str();
  auto [a, b] = dequantizedOperands(F, name, n);
  if (b.dims() != a.dims())
    b = F.createBroadcast(name + ".rhs.b", b, a.dims());
  NodeValue product = F.createMul(name + ".product", a, b);
  return {quantized(F, name, product, n.getOutScale(), n.getOutZero(), 0,
                    n.getElemTy())};
}

Replacement ember::lowerTableLookup(Function &F, TableLookupNode &n) {
  std::string name = n.getName().str();
  NodeValue x = n.getInput();
  NodeValue index = F.createCast(name + ".idx", x, ElemKind::Int32);
  if (x.getElemKind() == ElemKind::Int8)
    index = F.createAdd(
        name + ".off", index,
        F.createSplat(name + ".128", index.dims(), ElemKind::Int32, 128.f));
  return {F.createGather(name, n.getTable(), index, 0)};
}

/// saturate(max?(round(float(acc + bias) * mult) + zero)) as \p to, with
/// bias and mult ([1] or per channel) along \p axis of \p acc.
static NodeValue requantize(Function &F, const std::string &name, NodeValue acc,
                            NodeValue bias, NodeValue mult, NodeValue zero,
                            int64_t axis, bool relu, ElemKind to) {
  auto dims = acc.dims();
  acc = F.createAdd(name + ".acc", acc,
                    alongAxis(F, name + ".bias", bias, axis, dims));
  NodeValue y = F.createMul(name + ".scaled",
                            F.createCast(name + ".f", acc, ElemKind::Float32),
                            alongAxis(F, name + ".m", mult, axis, dims));
  y = F.createRound(name + ".round", y);
  NodeValue zf = F.createCast(name + ".zf", zero, ElemKind::Float32);
  NodeValue z = alongAxis(F, name + ".z", zf, 0, dims);
  y = F.createAdd(name + ".add", y, z);
  if (relu)
    y = F.createMax(name + ".relu", y, z);
  bool isSigned = to == ElemKind::Int8;
  y = F.createClip(name + ".clip", y, isSigned ? -128.f : 0.f,
                   isSigned ? 127.f : 255.f);
  return F.createCast(name + ".q", y, to);
}

Replacement ember::lowerRequantConv(Function &F, RequantConvNode &n) {
  std::string name = n.getName().str();
  NodeValue acc = F.createIntConv(
      name, n.getInput(), n.getFilter(), n.getInputZero(), n.getFilterZero(),
      n.getStrides(), n.getPads(), n.getDilations(), n.getGroup());
  return {requantize(F, name, acc, n.getBias(), n.getMultiplier(),
                     n.getOutZero(), 1, n.getRelu() != 0, n.getElemTy())};
}

Replacement ember::lowerRequantMatMul(Function &F, RequantMatMulNode &n) {
  std::string name = n.getName().str();
  NodeValue acc = F.createIntMatMul(name, n.getLHS(), n.getRHS(),
                                    n.getLHSZero(), n.getRHSZero());
  return {requantize(F, name, acc, n.getBias(), n.getMultiplier(),
                     n.getOutZero(), int64_t(acc.dims().size()) - 1,
                     n.getRelu() != 0, n.getElemTy())};
}
