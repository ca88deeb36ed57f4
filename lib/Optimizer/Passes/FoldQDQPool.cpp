//===- FoldQDQPool.cpp - Pooling and views between quantized products -----===//
//
// onnxruntime's QDQ files put a Dequantize/Quantize pair around every
// operator between two products: Quantize(MaxPool(Dequantize(x))),
// Quantize(Flatten(Dequantize(x))), Quantize(GlobalAveragePool(...)). Run
// as written, each pair dequantizes a whole activation to Float32 and back.
//
// MaxPool, Reshape and Transpose commute with a per-tensor Dequantize: it is
// monotonic (a max of dequantized values is the dequantized max) and
// elementwise. So Quantize(op(Dequantize(x))) is Quantize(Dequantize(op(x)))
// exactly, and where the Quantize has the Dequantize's scale, zero point and
// type, Quantize(Dequantize(y)) is y (see isExactRoundTrip): the movement
// runs on the bytes and the pair disappears.
//
// A mean over axes (GlobalAveragePool) becomes an Int32 sum of the bytes
// less their zero point and one requantize of it:
//   Quantize((float(sum(x) - N * zx) * sx) * (1 / N))
// in Float32, each operation rounded once. That is this fold's definition
// of the quantized mean (Interpreter and CPU compute it alike); it differs
// from the Float32 chain only in where the mean's sum rounds (the integer
// sum is exact), so by at most one output step at a rounding tie.
//
//===----------------------------------------------------------------------===//
#include "FoldQDQ.h"
#include "PassUtils.h"

#include <cfloat>

using namespace ember;
using namespace ember::qdq;

namespace {

/// The per-tensor Dequantize of bytes behind \p v, or null.
DequantizeNode *perTensorByteDequantize(NodeValue v) {
  auto *d = llvm::dyn_cast<DequantizeNode>(v.getNode());
  if (!d || !isByte(d->getInput()) || d->getScale().dims()[0] != 1)
    return nullptr;
  return d;
}

/// The single value of a [1] constant, or none.
std::optional<double> scalarOf(NodeValue v) {
  auto c = constantValues(v);
  if (!c || c->size() != 1)
    return std::nullopt;
  return (*c)[0];
}

/// True when Quantize(Dequantize(y)) is y for every byte y: \p q has \p d's
/// scale, zero point and element type, and the scale s is a normal float
/// with 255 * s finite. Then for a = y - z (|a| <= 255) the Dequantize is
/// a * s rounded once and the Quantize's division by s rounds once more:
/// two relative errors of at most 2^-24 each leave a within 255 * 2^-23 of
/// itself, far below the 0.5 that rounding to an integer forgives.
bool isExactRoundTrip(const DequantizeNode &d, const QuantizeNode &q) {
  if (q.getScale().dims()[0] != 1 ||
      q.getElemTy() != d.getInput().getElemKind())
    return false;
  auto ds = scalarOf(d.getScale()), qs = scalarOf(q.getScale());
  auto dz = scalarOf(d.getZero()), qz = scalarOf(q.getZero());
  if (!ds || !qs || !dz || !qz || float(*ds) != float(*qs) || *dz != *qz)
    return false;
  float s = float(*ds);
  return s >= FLT_MIN && s <= FLT_MAX / 256.f;
}

/// True when every MaxPool window holds an input element (each pad below
/// the window's extent): padding never decides a max, so the byte pool's
/// result is one of the Dequantize's inputs.
bool windowsHoldInput(const MaxPoolNode &p) {
  llvm::ArrayRef<int64_t> k = p.getKernel(), pads = p.getPads();
  if (k.size() != 2 || pads.size() != 4)
    return false;
  return pads[0] < k[0] && pads[2] < k[0] && pads[1] < k[1] && pads[3] < k[1];
}

/// True for the movements that commute with a per-tensor Dequantize (one
/// operand each).
bool commutes(const Node &op) {
  if (auto *p = llvm::dyn_cast<MaxPoolNode>(&op))
    return windowsHoldInput(*p);
  return llvm::isa<ReshapeNode>(op) || llvm::isa<TransposeNode>(op);
}

/// Quantize(ops(Dequantize(x))) as the ops (\p ops, last first) on the
/// bytes, see the file comment.
NodeValue foldMovement(Function &F, QuantizeNode *q, llvm::ArrayRef<Node *> ops,
                       DequantizeNode *d) {
  NodeValue y = d->getInput();
  for (Node *op : llvm::reverse(ops))
    y = createLike(F, *op, {y}, op->getAttrs())->getNthResult(0);
  if (isExactRoundTrip(*d, *q))
    return y;
  std::string name = ops.front()->getName().str() + ".int";
  NodeValue f =
      F.createDequantize(name + ".dq", y, d->getScale(), d->getZero(), 0);
  return F.createQuantize(q->getName(), f, q->getScale(), q->getZero(), 0,
                          q->getElemTy());
}

/// The [1] value \p v broadcast to \p dims.
NodeValue broadcastScalar(Function &F, const std::string &name, NodeValue v,
                          llvm::ArrayRef<dim_t> dims) {
  llvm::SmallVector<int64_t, kMaxRank> ones(dims.size(), 1);
  NodeValue r = F.createReshape(name + ".r", v, ones);
  return r.dims() == dims ? r : F.createBroadcast(name + ".b", r, dims);
}

/// Quantize(ReduceMean(Dequantize(x))) as an Int32 sum and one requantize,
/// see the file comment; null when the sum could leave Int32.
NodeValue foldMean(Function &F, QuantizeNode *q, ReduceMeanNode *mean,
                   DequantizeNode *d) {
  NodeValue x = d->getInput();
  dim_t n = 1;
  for (int64_t a : mean->getAxes()) {
    n *= x.dims()[a];
    // 255 * n below 2^31 keeps the sum exact in Int32.
    if (n > (dim_t(1) << 23))
      return NodeValue();
  }
  if (mean->getResult().dims().empty() || n == 0)
    return NodeValue();
  std::string name = mean->getName().str() + ".int";
  NodeValue xi = F.createCast(name + ".i32", x, ElemKind::Int32);
  NodeValue sum = F.createReduceSum(name + ".sum", xi, mean->getAxes(),
                                    mean->getKeepDims());
  llvm::ArrayRef<dim_t> dims = sum.dims();
  NodeValue zn =
      F.createMul(name + ".zn", d->getZero(),
                  F.createSplat(name + ".n", {1}, ElemKind::Int32, float(n)));
  NodeValue s = F.createSub(name + ".sub", sum,
                            broadcastScalar(F, name + ".z", zn, dims));
  NodeValue v = F.createCast(name + ".f", s, ElemKind::Float32);
  v = F.createMul(name + ".scaled", v,
                  broadcastScalar(F, name + ".s", d->getScale(), dims));
  v = F.createMul(
      name + ".mean", v,
      F.createSplat(name + ".inv", dims, ElemKind::Float32, 1.f / float(n)));
  return F.createQuantize(q->getName(), v, q->getScale(), q->getZero(), 0,
                          q->getElemTy());
}

} // namespace

NodeValue qdq::foldQuantizedMovement(Function &F, QuantizeNode *q) {
  if (q->getScale().dims()[0] != 1)
    return NodeValue();
  Node *op = q->getInput().getNode();
  if (!hasOneUse(op) || op->getNumInputs() != 1)
    return NodeValue();
  if (auto *mean = llvm::dyn_cast<ReduceMeanNode>(op)) {
    DequantizeNode *d = perTensorByteDequantize(mean->getInput());
    return d ? foldMean(F, q, mean, d) : NodeValue();
  }
  // A chain of movements (Transpose then Reshape, say), each used once.
  llvm::SmallVector<Node *, 4> ops;
  while (commutes(*op) && hasOneUse(op)) {
    ops.push_back(op);
    op = op->getNthInput(0).getNode();
  }
  DequantizeNode *d = perTensorByteDequantize(op->getNthResult(0));
  return d && !ops.empty() ? foldMovement(F, q, ops, d) : NodeValue();
}
