//===- QuantTypes.cpp - Which results carry quantized types ---------------===//
#include "ember/Graph/QuantTypes.h"

#include "ember/Base/Error.h"
#include "ember/Graph/Graph.h"

#include <cmath>

using namespace ember;

/// Element \p i of \p v, a Constant or a Splat (which the optimizer makes
/// of uniform constants), possibly through the Reshape and the exact Cast
/// (integer to integer or float to float) the importer puts between an
/// ONNX initializer and a Quantize.
static std::optional<double> elementOf(NodeValue v, dim_t i) {
  Node *n = v.getNode();
  if (auto *c = llvm::dyn_cast<Constant>(n))
    return c->getPayload().elementAsDouble(i);
  if (auto *s = llvm::dyn_cast<SplatNode>(n))
    return double(s->getValue());
  if (llvm::isa<ReshapeNode>(n))
    return elementOf(n->getNthInput(0), i);
  if (auto *c = llvm::dyn_cast<CastNode>(n)) {
    ElemKind from = c->getInput().getElemKind(), to = c->getElemTy();
    bool exact = (isIntegerKind(from) && isIntegerKind(to)) ||
                 (from == ElemKind::Float32 && to == ElemKind::Float32);
    if (exact)
      return elementOf(c->getInput(), i);
  }
  return std::nullopt;
}

std::optional<TypeQuant> ember::constantQuant(NodeValue scale, NodeValue zero,
                                              int64_t axis) {
  const Type &st = *scale.getType(), &zt = *zero.getType();
  if (st.getElemKind() != ElemKind::Float32 ||
      zt.getElemKind() != ElemKind::Int32 || st.size() != zt.size() ||
      st.size() < 1)
    return std::nullopt;
  TypeQuant q;
  dim_t n = st.size();
  q.axis = n == 1 ? TypeQuant::kPerTensor : int32_t(axis);
  for (dim_t i = 0; i < n; ++i) {
    std::optional<double> s = elementOf(scale, i), z = elementOf(zero, i);
    // A non-finite scale leaves the quantization unknown (checkQuantType).
    if (!s || !z || !std::isfinite(float(*s)))
      return std::nullopt;
    q.scales.push_back(float(*s));
    q.zeros.push_back(int32_t(*z));
  }
  return q;
}

std::optional<TypeQuant> ember::resultQuant(OpKind kind,
                                            llvm::ArrayRef<NodeValue> inputs,
                                            const AttrList &attrs) {
  switch (kind) {
  case OpKind::Quantize:
    return constantQuant(inputs[1], inputs[2], attrs[0].i);
  case OpKind::RequantAdd:
  case OpKind::RequantMul:
    return constantQuant(inputs[6], inputs[7], TypeQuant::kPerTensor);
  default:
    return std::nullopt;
  }
}

/// The operands (scale, zero point) that state \p n's result quantization;
/// scale is -1 where the node folds it into another operand.
static std::optional<std::pair<int, int>> quantOperands(const Node &n) {
  switch (toOpKind(n.getKind())) {
  case OpKind::Quantize:
    return std::make_pair(1, 2);
  case OpKind::RequantAdd:
  case OpKind::RequantMul:
    return std::make_pair(6, 7);
  case OpKind::RequantConv:
  case OpKind::RequantMatMul:
    return std::make_pair(-1, 6);
  default:
    return std::nullopt;
  }
}

/// Checks that \p ty's quantization equals constant \p scale and \p zero
/// (\p scale's node null: the zero points only).
static llvm::Error checkAgainst(const Node &n, const Type &ty, NodeValue scale,
                                NodeValue zero, int64_t axis) {
  const TypeQuant &got = *ty.getQuant();
  bool same;
  if (scale.getNode()) {
    std::optional<TypeQuant> want = constantQuant(scale, zero, axis);
    same = want && *want == got;
  } else {
    std::optional<double> z =
        zero.getType()->size() == 1 ? elementOf(zero, 0) : std::nullopt;
    same = z && got.isPerTensor() && double(got.zeros[0]) == *z;
  }
  if (!same)
    return makeErrorF("{0} ({1}): type {2} does not match its constant "
                      "scale and zero point operands",
                      n.getName(), n.getKindName(), ty.toString());
  return llvm::Error::success();
}

llvm::Error ember::verifyQuantTypes(const Node &n) {
  for (unsigned r = 0; r < n.getNumResults(); ++r)
    EMBER_RETURN_IF_ERR(checkQuantType(*n.getType(r)));
  auto ops = quantOperands(n);
  if (!ops || !n.getType()->isQuantized())
    return llvm::Error::success();
  NodeValue scale = ops->first < 0 ? NodeValue() : n.getNthInput(ops->first);
  int64_t axis = llvm::isa<QuantizeNode>(n) ? n.attr(0).i : 0;
  return checkAgainst(n, *n.getType(), scale, n.getNthInput(ops->second), axis);
}

/// Writes \p values into \p v if it is a Constant \p mayWrite accepts of
/// kind T's and as many elements.
template <typename T>
static void fill(NodeValue v, llvm::ArrayRef<T> values, ElemKind kind,
                 llvm::function_ref<bool(const Constant *)> mayWrite) {
  auto *c = llvm::dyn_cast<Constant>(v.getNode());
  if (!c || !mayWrite(c) || c->getType()->getElemKind() != kind ||
      c->getType()->size() != dim_t(values.size()))
    return;
  auto h = c->getPayloadMutable().getHandle<T>();
  for (size_t i = 0; i < values.size(); ++i)
    h.raw(i) = values[i];
}

void ember::fillQuantOperands(
    Node &n, llvm::function_ref<bool(const Constant *)> mayWrite) {
  auto ops = quantOperands(n);
  if (!ops || !n.getType()->isQuantized())
    return;
  const TypeQuant &q = *n.getType()->getQuant();
  if (ops->first >= 0)
    fill<float>(n.getNthInput(ops->first), q.scales, ElemKind::Float32,
                mayWrite);
  fill<int32_t>(n.getNthInput(ops->second), q.zeros, ElemKind::Int32, mayWrite);
}

/// The quantization every user of \p p states by reading it through a
/// Dequantize with constant operands, if they all agree.
static std::optional<TypeQuant> inputQuant(const Placeholder &p) {
  std::optional<TypeQuant> q;
  for (const NodeUse &u : p.getUsers()) {
    auto *d = llvm::dyn_cast<DequantizeNode>(u.user);
    if (!d || u.idx != 0)
      return std::nullopt;
    auto mine = constantQuant(d->getScale(), d->getZero(), d->getAxis());
    if (!mine || (q && *q != *mine))
      return std::nullopt;
    q = mine;
  }
  return q;
}

void ember::annotateQuantizedIO(Function &F) {
  Module &M = F.getParent();
  for (Placeholder *p : M.getInputPlaceholders())
    if (auto q = inputQuant(*p)) {
      const Type &t = *p->getType();
      Type ty(t.getElemKind(), t.dims(), *q);
      if (llvm::Error e = checkQuantType(ty)) {
        llvm::consumeError(std::move(e)); // an axis the Dequantize rejects
        continue;
      }
      M.refineResultType(p, 0, ty);
    }
  for (SaveNode *s : F.getSaves()) {
    const Type &t = *s->getInput().getType();
    auto *out = llvm::dyn_cast<Placeholder>(s->getOutput().getNode());
    if (t.isQuantized() && out && out->getType()->isSameStorage(t))
      M.refineResultType(out, 0, t);
  }
}
