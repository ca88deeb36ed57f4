//===- FoldQDQTable.cpp - Elementwise functions of bytes as tables -------===//
//
// Quantize(f(Dequantize(x))) with f an elementwise op of one Float32
// operand (Sigmoid, Tanh, Clip, Exp, ...; onnxruntime's QDQ files put one
// pair around each) and x per-tensor bytes takes one of 256 values
// per input byte. The table of those values is that same chain applied to
// the 256 bytes in order, a constant subgraph that constant folding
// evaluates at compile time; the tensor then becomes a Gather from the
// table at index x (x + 128 for Int8). So every byte maps to exactly what
// the chain computes where the compiler evaluates constants, and the
// tensor moves as bytes instead of Float32.
//
//===----------------------------------------------------------------------===//
#include "FoldQDQ.h"
#include "PassUtils.h"

#include "ember/Graph/OpInfo.h"

using namespace ember;
using namespace ember::qdq;

namespace {

/// The 256 values of \p kind (Int8 or UInt8) in order of their index.
Constant *allBytes(Function &F, const std::string &name, ElemKind kind) {
  Tensor t(kind, {256});
  if (kind == ElemKind::Int8) {
    auto h = t.getHandle<int8_t>();
    for (int i = 0; i < 256; ++i)
      h.at({i}) = int8_t(i - 128);
  } else {
    auto h = t.getHandle<uint8_t>();
    for (int i = 0; i < 256; ++i)
      h.at({i}) = uint8_t(i);
  }
  return F.getParent().createConstant(name, std::move(t));
}

/// True for an elementwise op of one Float32 operand and result.
bool isUnaryFloat(const Node &n) {
  if (!isTableOp(n.getKind()) || n.getNumInputs() != 1 ||
      n.getNumResults() != 1 ||
      n.getNthResult(0).getElemKind() != ElemKind::Float32 ||
      n.getNthInput(0).getElemKind() != ElemKind::Float32)
    return false;
  return getOpInfo(toOpKind(n.getKind())).elementwise;
}

} // namespace

NodeValue qdq::foldQuantizedTable(Function &F, QuantizeNode *q) {
  Node *f = q->getInput().getNode();
  if (q->getScale().dims()[0] != 1 || !hasOneUse(f) || !isUnaryFloat(*f))
    return NodeValue();
  auto *d = llvm::dyn_cast<DequantizeNode>(f->getNthInput(0).getNode());
  if (!d || !isByte(d->getInput()) || d->getScale().dims()[0] != 1)
    return NodeValue();
  NodeValue x = d->getInput();
  ElemKind kind = x.getElemKind();
  std::string name = f->getName().str() + ".table";
  NodeValue bytes = allBytes(F, name + ".in", kind);
  NodeValue v =
      F.createDequantize(name + ".dq", bytes, d->getScale(), d->getZero(), 0);
  v = createLike(F, *f, {v}, f->getAttrs())->getNthResult(0);
  NodeValue table =
      F.createQuantize(name, v, q->getScale(), q->getZero(), 0, q->getElemTy());
  NodeValue index = F.createCast(name + ".idx", x, ElemKind::Int32);
  if (kind == ElemKind::Int8)
    index = F.createAdd(
        name + ".off", index,
        F.createSplat(name + ".128", index.dims(), ElemKind::Int32, 128.f));
  return F.createGather(name + ".gather", table, index, 0);
}
