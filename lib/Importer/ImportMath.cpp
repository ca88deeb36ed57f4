//===- ImportMath.cpp - Elementwise ONNX ops and activations --------------===//
//
// Direct mappings to elementwise nodes, and activations composed from them
// (STYLE rule 8): Elu, Selu, Celu, LeakyRelu, PRelu, ThresholdedRelu,
// HardSigmoid, HardSwish, Shrink, LogSoftmax, Hardmax, variadic Sum/Mean/
// Max/Min.
//
//===----------------------------------------------------------------------===//
#include "ImportHelpers.h"
#include "ProtoTensor.h"

#include <algorithm>
#include <cmath>
#include <numeric>

using namespace ember;
using namespace ember::onnximport;

#define TRY EMBER_ASSIGN_OR_RETURN

namespace {

template <OpKind K>
llvm::Error importUnaryOp(ImportContext &ctx, const onnx::NodeProto &node) {
  TRY(NodeValue x, ctx.input(node, 0));
  TRY(NodeValue y, unary(ctx, node, K, x));
  return ctx.setOutput(node, y);
}

/// Neg and Abs of an integer tensor: 0 - x and max(x, 0 - x), exact for
/// every value whose negation is representable; Abs of an unsigned tensor
/// is x. Float tensors keep the unary op.
template <OpKind K>
llvm::Error importSignOp(ImportContext &ctx, const onnx::NodeProto &node) {
  TRY(NodeValue x, ctx.input(node, 0));
  ElemKind kind = x.getElemKind();
  if (!isIntegerKind(kind)) {
    TRY(NodeValue y, unary(ctx, node, K, x));
    return ctx.setOutput(node, y);
  }
  bool isUnsigned = kind == ElemKind::UInt8 || kind == ElemKind::UInt16 ||
                    kind == ElemKind::UInt32 || kind == ElemKind::UInt64;
  if (K == OpKind::Abs && isUnsigned)
    return ctx.setOutput(node, x);
  TRY(NodeValue neg,
      binary(ctx, node, OpKind::Sub, constantLike(ctx, node, x, 0), x));
  if (K == OpKind::Neg)
    return ctx.setOutput(node, neg);
  TRY(NodeValue y, binary(ctx, node, OpKind::Max, x, neg));
  return ctx.setOutput(node, y);
}

template <OpKind K>
llvm::Error importBinaryOp(ImportContext &ctx, const onnx::NodeProto &node) {
  TRY(NodeValue a, ctx.input(node, 0));
  TRY(NodeValue b, ctx.input(node, 1));
  TRY(NodeValue y, binary(ctx, node, K, a, b));
  return ctx.setOutput(node, y);
}

/// Max, Min, Sum and Mean over any number of inputs.
template <OpKind K, bool IsMean>
llvm::Error importVariadic(ImportContext &ctx, const onnx::NodeProto &node) {
  TRY(NodeValue acc, ctx.input(node, 0));
  for (int i = 1; i < node.input_size(); ++i) {
    TRY(NodeValue b, ctx.input(node, i));
    TRY(acc, binary(ctx, node, K, acc, b));
  }
  if (IsMean && node.input_size() > 1) {
    NodeValue n = constantLike(ctx, node, acc, node.input_size());
    TRY(acc, binary(ctx, node, OpKind::Div, acc, n));
  }
  return ctx.setOutput(node, acc);
}

llvm::Error importPow(ImportContext &ctx, const onnx::NodeProto &node) {
  TRY(NodeValue a, ctx.input(node, 0));
  TRY(NodeValue b, ctx.input(node, 1));
  // The exponent may have another type: compute in the base's kind.
  TRY(b, castTo(ctx, node, b, a.getElemKind()));
  TRY(NodeValue y, binary(ctx, node, OpKind::Pow, a, b));
  return ctx.setOutput(node, y);
}

llvm::Error importMod(ImportContext &ctx, const onnx::NodeProto &node) {
  TRY(NodeValue a, ctx.input(node, 0));
  TRY(NodeValue b, ctx.input(node, 1));
  TRY(int64_t fmod, AttrReader(node).getInt("fmod", 0));
  if (!fmod && isFloatKind(a.getElemKind()))
    return fail(node, "fmod=0 requires integer operands");
  if (a.getElemKind() != b.getElemKind())
    return fail(node, "operand element types differ");
  TRY(auto ab, ctx.broadcastPair(node, a, b));
  TRY(NodeValue y, make(ctx, node, OpKind::Mod, {ab.first, ab.second},
                        {Attr::makeInt(fmod)}));
  return ctx.setOutput(node, y);
}

/// Gelu (opset 20): `approximate` none (erf) or tanh.
llvm::Error importGelu(ImportContext &ctx, const onnx::NodeProto &node) {
  TRY(NodeValue x, ctx.input(node, 0));
  TRY(std::string a, AttrReader(node).getString("approximate", "none"));
  if (a != "none" && a != "tanh")
    return fail(node, "unknown approximate '" + a + "'");
  TRY(NodeValue y,
      make(ctx, node, OpKind::Gelu, {x}, {Attr::makeInt(a == "tanh" ? 1 : 0)}));
  return ctx.setOutput(node, y);
}

/// Swish (opset 24): x * sigmoid(alpha * x); SwiGLU (28, Gated): that
/// times input B, of the same shape.
template <bool Gated>
llvm::Error importSwish(ImportContext &ctx, const onnx::NodeProto &node) {
  TRY(NodeValue x, ctx.input(node, 0));
  NodeValue gate;
  if (Gated) {
    TRY(gate, ctx.input(node, 1));
    if (gate.getType()->dims() != x.getType()->dims())
      return fail(node, "A " + x.getType()->toString() + " and B " +
                            gate.getType()->toString() +
                            " must have the same shape");
  }
  TRY(float alpha, AttrReader(node).getFloat("alpha", 1.f));
  NodeValue ax = x;
  if (alpha != 1.f) {
    TRY(ax, binary(ctx, node, OpKind::Mul, x,
                   constantOf(ctx, node, x.getElemKind(), {}, alpha)));
  }
  TRY(NodeValue s, unary(ctx, node, OpKind::Sigmoid, ax));
  TRY(NodeValue y, make(ctx, node, OpKind::Mul, {x, s}));
  if (Gated) {
    TRY(y, make(ctx, node, OpKind::Mul, {y, gate}));
  }
  return ctx.setOutput(node, y);
}

llvm::Error importIsInf(ImportContext &ctx, const onnx::NodeProto &node) {
  TRY(NodeValue x, ctx.input(node, 0));
  AttrReader attrs(node);
  TRY(int64_t pos, attrs.getInt("detect_positive", 1));
  TRY(int64_t neg, attrs.getInt("detect_negative", 1));
  TRY(NodeValue y, make(ctx, node, OpKind::IsInf, {x},
                        {Attr::makeInt(pos), Attr::makeInt(neg)}));
  return ctx.setOutput(node, y);
}

/// cond ? a : b with three-way broadcasting.
llvm::Expected<NodeValue> select(ImportContext &ctx,
                                 const onnx::NodeProto &node, NodeValue c,
                                 NodeValue a, NodeValue b) {
  if (a.getElemKind() != b.getElemKind())
    return fail(node, "value element types differ");
  TRY(auto ab, ctx.broadcastPair(node, a, b));
  TRY(auto ca, ctx.broadcastPair(node, c, ab.first));
  TRY(auto cb, ctx.broadcastPair(node, ca.first, ab.second));
  TRY(NodeValue a2, ctx.broadcastTo(node, ca.second, cb.first.dims()));
  return make(ctx, node, OpKind::Where, {cb.first, a2, cb.second});
}

llvm::Error importWhere(ImportContext &ctx, const onnx::NodeProto &node) {
  TRY(NodeValue c, ctx.input(node, 0));
  TRY(NodeValue a, ctx.input(node, 1));
  TRY(NodeValue b, ctx.input(node, 2));
  if (c.getElemKind() != ElemKind::Bool)
    return fail(node, "condition must be bool");
  TRY(NodeValue y, select(ctx, node, c, a, b));
  return ctx.setOutput(node, y);
}

/// The largest matrix Det expands: n! products of n entries.
constexpr int64_t kMaxDetOrder = 4;

/// Det of [..., n, n] as the sum over permutations p of sign(p) times the
/// product of x[i, p(i)]: exact in its operations and cheap for the small
/// n it is limited to (kMaxDetOrder).
llvm::Error importDet(ImportContext &ctx, const onnx::NodeProto &node) {
  TRY(NodeValue x, ctx.input(node, 0));
  size_t r = x.dims().size();
  if (r < 2 || x.dims()[r - 1] != x.dims()[r - 2] ||
      !isFloatKind(x.getElemKind()))
    return fail(node, "needs float square matrices [..., n, n], got " +
                          x.getType()->toString());
  int64_t n = x.dims()[r - 1];
  if (n > kMaxDetOrder)
    return fail(node, "matrices of order " + llvm::Twine(n) +
                          "; Det is expanded by permutations up to order " +
                          llvm::Twine(kMaxDetOrder));
  int64_t batch = x.getType()->size() / (n * n);
  TRY(NodeValue flat, reshapeTo(ctx, node, x, {batch, n * n}));
  std::vector<NodeValue> entry;
  for (int64_t k = 0; k < n * n; ++k) {
    TRY(NodeValue e, make(ctx, node, OpKind::Slice, {flat},
                          {Attr::makeInts({0, k}), Attr::makeInts({1, 1}),
                           Attr::makeInts({batch, 1})}));
    entry.push_back(e);
  }
  std::vector<int64_t> perm(n);
  std::iota(perm.begin(), perm.end(), 0);
  NodeValue sum;
  do {
    int64_t inversions = 0;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = i + 1; j < n; ++j)
        inversions += perm[i] > perm[j];
    NodeValue term = entry[perm[0]];
    for (int64_t i = 1; i < n; ++i) {
      TRY(term, binary(ctx, node, OpKind::Mul, term, entry[i * n + perm[i]]));
    }
    bool odd = inversions % 2;
    if (!sum) {
      if (odd) {
        TRY(sum, binary(ctx, node, OpKind::Sub,
                        constantLike(ctx, node, term, 0), term));
      } else {
        sum = term;
      }
    } else {
      TRY(sum, binary(ctx, node, odd ? OpKind::Sub : OpKind::Add, sum, term));
    }
  } while (std::next_permutation(perm.begin(), perm.end()));
  Ints out(x.dims().begin(), x.dims().end() - 2);
  TRY(NodeValue y, reshapeTo(ctx, node, sum, out));
  return ctx.setOutput(node, y);
}

llvm::Error importCast(ImportContext &ctx, const onnx::NodeProto &node) {
  TRY(NodeValue x, ctx.input(node, 0));
  TRY(int64_t to, AttrReader(node).getInt("to", std::nullopt));
  TRY(ElemKind kind,
      elemKindFromONNX(int32_t(to), ImportContext::describe(node)));
  TRY(NodeValue y, castTo(ctx, node, x, kind));
  return ctx.setOutput(node, y);
}

llvm::Error importCastLike(ImportContext &ctx, const onnx::NodeProto &node) {
  TRY(NodeValue x, ctx.input(node, 0));
  TRY(NodeValue like, ctx.input(node, 1));
  TRY(NodeValue y, castTo(ctx, node, x, like.getElemKind()));
  return ctx.setOutput(node, y);
}

/// x op scalar, with the scalar in x's kind.
llvm::Expected<NodeValue> withScalar(ImportContext &ctx,
                                     const onnx::NodeProto &node, OpKind k,
                                     NodeValue x, double v) {
  return make(ctx, node, k, {x, constantLike(ctx, node, x, v)});
}

/// alpha * (exp(x) - 1), the negative branch of Elu/Selu.
llvm::Expected<NodeValue> expm1Scaled(ImportContext &ctx,
                                      const onnx::NodeProto &node, NodeValue x,
                                      double alpha) {
  TRY(NodeValue e, unary(ctx, node, OpKind::Exp, x));
  TRY(e, withScalar(ctx, node, OpKind::Sub, e, 1.0));
  return withScalar(ctx, node, OpKind::Mul, e, alpha);
}

/// Elu (0), Selu (1), Celu (2), LeakyRelu (3), ThresholdedRelu (4).
template <int Which>
llvm::Error importActivation(ImportContext &ctx, const onnx::NodeProto &node) {
  TRY(NodeValue x, ctx.input(node, 0));
  AttrReader attrs(node);
  static const float kAlpha[] = {1.f, 1.67326319217681884765625f, 1.f, 0.01f,
                                 1.f};
  TRY(float alpha, attrs.getFloat("alpha", kAlpha[Which]));
  NodeValue zero = constantLike(ctx, node, x, 0.0), y;
  if (Which == 2) { // max(0, x) + min(0, alpha * (exp(x / alpha) - 1))
    TRY(NodeValue s, withScalar(ctx, node, OpKind::Div, x, alpha));
    TRY(s, expm1Scaled(ctx, node, s, alpha));
    TRY(s, make(ctx, node, OpKind::Min, {s, zero}));
    TRY(NodeValue p, make(ctx, node, OpKind::Max, {x, zero}));
    TRY(y, make(ctx, node, OpKind::Add, {p, s}));
    return ctx.setOutput(node, y);
  }
  if (Which == 4) {
    TRY(NodeValue c, withScalar(ctx, node, OpKind::Greater, x, alpha));
    TRY(y, make(ctx, node, OpKind::Where, {c, x, zero}));
    return ctx.setOutput(node, y);
  }
  TRY(NodeValue pos, make(ctx, node, OpKind::Greater, {x, zero}));
  NodeValue neg;
  if (Which == 3) {
    TRY(neg, withScalar(ctx, node, OpKind::Mul, x, alpha));
  } else {
    TRY(neg, expm1Scaled(ctx, node, x, alpha));
  }
  TRY(y, make(ctx, node, OpKind::Where, {pos, x, neg}));
  if (Which == 1) {
    TRY(float gamma, attrs.getFloat("gamma", 1.05070102214813232421875f));
    TRY(y, withScalar(ctx, node, OpKind::Mul, y, gamma));
  }
  return ctx.setOutput(node, y);
}

llvm::Error importPRelu(ImportContext &ctx, const onnx::NodeProto &node) {
  TRY(NodeValue x, ctx.input(node, 0));
  TRY(NodeValue slope, ctx.input(node, 1));
  // Before opset 7 a slope of several values is one per channel (axis 1),
  // as PyTorch exports it, not a numpy-broadcast operand.
  size_t r = x.dims().size();
  if (ctx.opset() < 7 && r >= 2 && slope.dims().size() == 1 &&
      slope.dims()[0] > 1 && slope.dims()[0] == x.dims()[1]) {
    Ints perChannel(r - 1, 1);
    perChannel[0] = slope.dims()[0];
    TRY(slope, reshapeTo(ctx, node, slope, perChannel));
  }
  TRY(slope, ctx.broadcastTo(node, slope, x.dims()));
  TRY(NodeValue neg, binary(ctx, node, OpKind::Mul, x, slope));
  TRY(NodeValue pos,
      make(ctx, node, OpKind::Greater, {x, constantLike(ctx, node, x, 0.0)}));
  TRY(NodeValue y, make(ctx, node, OpKind::Where, {pos, x, neg}));
  return ctx.setOutput(node, y);
}

/// HardSigmoid (IsSwish=false) and HardSwish (x * HardSigmoid(1/6, 1/2)).
template <bool IsSwish>
llvm::Error importHard(ImportContext &ctx, const onnx::NodeProto &node) {
  TRY(NodeValue x, ctx.input(node, 0));
  AttrReader attrs(node);
  TRY(float alpha, attrs.getFloat("alpha", IsSwish ? 1.f / 6 : 0.2f));
  TRY(float beta, attrs.getFloat("beta", 0.5f));
  TRY(NodeValue t, withScalar(ctx, node, OpKind::Mul, x, alpha));
  TRY(t, withScalar(ctx, node, OpKind::Add, t, beta));
  TRY(t, make(ctx, node, OpKind::Clip, {t},
              {Attr::makeFloat(0.f), Attr::makeFloat(1.f)}));
  if (IsSwish) {
    TRY(t, make(ctx, node, OpKind::Mul, {x, t}));
  }
  return ctx.setOutput(node, t);
}

llvm::Error importShrink(ImportContext &ctx, const onnx::NodeProto &node) {
  TRY(NodeValue x, ctx.input(node, 0));
  AttrReader attrs(node);
  TRY(float lambd, attrs.getFloat("lambd", 0.5f));
  TRY(float bias, attrs.getFloat("bias", 0.f));
  TRY(NodeValue lo, withScalar(ctx, node, OpKind::Less, x, -lambd));
  TRY(NodeValue hi, withScalar(ctx, node, OpKind::Greater, x, lambd));
  TRY(NodeValue up, withScalar(ctx, node, OpKind::Add, x, bias));
  TRY(NodeValue down, withScalar(ctx, node, OpKind::Sub, x, bias));
  TRY(NodeValue y, make(ctx, node, OpKind::Where,
                        {hi, down, constantLike(ctx, node, x, 0.0)}));
  TRY(y, make(ctx, node, OpKind::Where, {lo, up, y}));
  return ctx.setOutput(node, y);
}

/// Softmax-family axis handling: opset < 13 coerces to 2-D at axis.
struct SoftmaxAxis {
  std::vector<int64_t> axes; // reduced axes
};

llvm::Expected<SoftmaxAxis>
softmaxAxes(ImportContext &ctx, const onnx::NodeProto &node, NodeValue x) {
  int64_t rank = x.dims().size();
  if (rank == 0)
    return fail(node, "input must have rank >= 1");
  bool coerce = ctx.opset() < 13;
  TRY(int64_t axis, AttrReader(node).getInt("axis", coerce ? 1 : -1));
  TRY(axis, normAxis(node, axis, std::max<int64_t>(rank, 1)));
  SoftmaxAxis s;
  for (int64_t i = axis; i < (coerce ? rank : axis + 1); ++i)
    s.axes.push_back(i);
  return s;
}

/// log(softmax(x)) = x - max - log(sum(exp(x - max))).
llvm::Error importLogSoftmax(ImportContext &ctx, const onnx::NodeProto &node) {
  TRY(NodeValue x, ctx.input(node, 0));
  TRY(SoftmaxAxis s, softmaxAxes(ctx, node, x));
  TRY(NodeValue m, reduce(ctx, node, OpKind::ReduceMax, x, s.axes, true));
  TRY(NodeValue d, binary(ctx, node, OpKind::Sub, x, m));
  TRY(NodeValue e, unary(ctx, node, OpKind::Exp, d));
  TRY(NodeValue sum, reduce(ctx, node, OpKind::ReduceSum, e, s.axes, true));
  TRY(NodeValue l, unary(ctx, node, OpKind::Log, sum));
  TRY(NodeValue y, binary(ctx, node, OpKind::Sub, d, l));
  return ctx.setOutput(node, y);
}

/// Softmax for any kind and the opset < 13 semantics, composed.
llvm::Error importSoftmaxAny(ImportContext &ctx, const onnx::NodeProto &node) {
  TRY(NodeValue x, ctx.input(node, 0));
  TRY(SoftmaxAxis s, softmaxAxes(ctx, node, x));
  if (s.axes.size() == 1 && x.getElemKind() == ElemKind::Float32) {
    TRY(NodeValue y,
        make(ctx, node, OpKind::Softmax, {x}, {Attr::makeInt(s.axes[0])}));
    return ctx.setOutput(node, y);
  }
  TRY(NodeValue m, reduce(ctx, node, OpKind::ReduceMax, x, s.axes, true));
  TRY(NodeValue d, binary(ctx, node, OpKind::Sub, x, m));
  TRY(NodeValue e, unary(ctx, node, OpKind::Exp, d));
  TRY(NodeValue sum, reduce(ctx, node, OpKind::ReduceSum, e, s.axes, true));
  TRY(NodeValue y, binary(ctx, node, OpKind::Div, e, sum));
  return ctx.setOutput(node, y);
}

/// Hardmax: 1 at the first maximum along the axis (flattened for opset<13).
llvm::Error importHardmax(ImportContext &ctx, const onnx::NodeProto &node) {
  TRY(NodeValue x, ctx.input(node, 0));
  TRY(SoftmaxAxis s, softmaxAxes(ctx, node, x));
  std::vector<int64_t> orig(x.dims().begin(), x.dims().end());
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < int64_t(orig.size()); ++i)
    (i < s.axes.front() ? outer : inner) *= orig[i];
  // Work on [outer, inner, rest]: the axis block flattened.
  int64_t rest = 1;
  for (size_t i = s.axes.back() + 1; i < orig.size(); ++i)
    rest *= orig[i];
  inner /= rest;
  TRY(NodeValue x3, reshapeTo(ctx, node, x, {outer, inner, rest}));
  TRY(NodeValue am,
      make(ctx, node, OpKind::ArgMax, {x3},
           {Attr::makeInt(1), Attr::makeInt(1), Attr::makeInt(0)}));
  TRY(NodeValue idx, iotaConstant(ctx, node, inner, {1, dim_t(inner), 1}));
  TRY(NodeValue eq, binary(ctx, node, OpKind::Equal, am, idx));
  TRY(NodeValue y, castTo(ctx, node, eq, x.getElemKind()));
  TRY(y, reshapeTo(ctx, node, y, orig));
  return ctx.setOutput(node, y);
}

/// Clip with constant or run-time bounds on any numeric kind.
llvm::Error importClipAny(ImportContext &ctx, const onnx::NodeProto &node) {
  TRY(NodeValue x, ctx.input(node, 0));
  NodeValue bound[2];
  double value[2] = {-INFINITY, INFINITY};
  bool constant[2] = {true, true};
  if (ctx.opset() < 11) {
    AttrReader attrs(node);
    TRY(float lo, attrs.getFloat("min", -INFINITY));
    TRY(float hi, attrs.getFloat("max", INFINITY));
    value[0] = lo;
    value[1] = hi;
  } else {
    for (int i = 0; i < 2; ++i) {
      if (!ImportContext::hasInput(node, i + 1))
        continue;
      TRY(bound[i], ctx.input(node, i + 1));
      if (bound[i].getType()->size() != 1)
        return fail(node, "min and max must be scalars");
      auto *c = llvm::dyn_cast<Constant>(bound[i].getNode());
      constant[i] = c != nullptr;
      if (c)
        value[i] = c->getPayload().elementAsDouble(0);
    }
  }
  if (constant[0] && constant[1] && isFloatKind(x.getElemKind())) {
    TRY(NodeValue y, make(ctx, node, OpKind::Clip, {x},
                          {Attr::makeFloat(float(value[0])),
                           Attr::makeFloat(float(value[1]))}));
    return ctx.setOutput(node, y);
  }
  NodeValue y = x;
  for (int i = 0; i < 2; ++i) {
    NodeValue b = bound[i];
    if (constant[i]) {
      if (std::isinf(value[i]))
        continue;
      b = constantLike(ctx, node, x, value[i]);
    }
    TRY(y, binary(ctx, node, i == 0 ? OpKind::Max : OpKind::Min, y, b));
  }
  return ctx.setOutput(node, y);
}

llvm::Error importBitShift(ImportContext &ctx, const onnx::NodeProto &node) {
  TRY(NodeValue a, ctx.input(node, 0));
  TRY(NodeValue b, ctx.input(node, 1));
  TRY(std::string dir, AttrReader(node).getString("direction", std::nullopt));
  if (dir != "LEFT" && dir != "RIGHT")
    return fail(node, "direction must be LEFT or RIGHT");
  ElemKind k = a.getElemKind();
  if (k != ElemKind::UInt8 && k != ElemKind::UInt16 && k != ElemKind::UInt32 &&
      k != ElemKind::UInt64)
    return fail(node, "operands must be unsigned integers");
  if (b.getElemKind() != k)
    return fail(node, "operand element types differ");
  TRY(auto ab, ctx.broadcastPair(node, a, b));
  TRY(NodeValue y, make(ctx, node, OpKind::BitShift, {ab.first, ab.second},
                        {Attr::makeInt(dir == "LEFT")}));
  return ctx.setOutput(node, y);
}

/// Binary ops before opset 7: with broadcast=1, B broadcasts to A, aligned
/// at attribute 'axis' when given and at the trailing dims otherwise.
template <OpKind K>
llvm::Error importLegacyBinary(ImportContext &ctx,
                               const onnx::NodeProto &node) {
  TRY(NodeValue a, ctx.input(node, 0));
  TRY(NodeValue b, ctx.input(node, 1));
  AttrReader attrs(node);
  TRY(int64_t bcast, attrs.getInt("broadcast", 0));
  if (bcast && attrs.has("axis")) {
    int64_t r = a.dims().size();
    TRY(int64_t axis, attrs.getInt("axis", std::nullopt));
    TRY(axis, normAxis(node, axis, std::max<int64_t>(r, 1)));
    if (axis + int64_t(b.dims().size()) > r)
      return fail(node, "B does not fit A at axis " + llvm::Twine(axis));
    Ints shape(r, 1);
    for (size_t i = 0; i < b.dims().size(); ++i)
      shape[axis + i] = b.dims()[i];
    TRY(b, reshapeTo(ctx, node, b, shape));
  }
  if (K == OpKind::Pow) {
    TRY(b, castTo(ctx, node, b, a.getElemKind()));
  }
  TRY(NodeValue y, binary(ctx, node, K, a, b));
  return ctx.setOutput(node, y);
}

const ImportRule kMathRules[] = {
    {"Add", 1, 6, importLegacyBinary<OpKind::Add>},
    {"Sub", 1, 6, importLegacyBinary<OpKind::Sub>},
    {"Mul", 1, 6, importLegacyBinary<OpKind::Mul>},
    {"Div", 1, 6, importLegacyBinary<OpKind::Div>},
    {"Pow", 1, 6, importLegacyBinary<OpKind::Pow>},
    {"Clip", 6, 17, importClipAny},
    {"BitShift", 11, 17, importBitShift},
    {"Abs", 6, 17, importSignOp<OpKind::Abs>},
    {"Neg", 6, 17, importSignOp<OpKind::Neg>},
    {"Gelu", 20, 20, importGelu},
    {"Swish", 24, 24, importSwish<false>},
    {"SwiGLU", 28, 28, importSwish<true>},
    {"IsInf", 10, 17, importIsInf},
    {"Pow", 7, 17, importPow},
    {"Mod", 10, 17, importMod},
    {"Max", 6, 17, importVariadic<OpKind::Max, false>},
    {"Min", 6, 17, importVariadic<OpKind::Min, false>},
    {"Sum", 6, 17, importVariadic<OpKind::Add, false>},
    {"Mean", 6, 17, importVariadic<OpKind::Add, true>},
    {"Where", 9, 17, importWhere},
    {"Det", 11, 17, importDet},
    {"Cast", 6, 17, importCast},
    {"CastLike", 15, 17, importCastLike},
    {"Elu", 6, 17, importActivation<0>},
    {"Selu", 6, 17, importActivation<1>},
    {"Celu", 12, 17, importActivation<2>},
    {"LeakyRelu", 6, 17, importActivation<3>},
    {"ThresholdedRelu", 10, 17, importActivation<4>},
    {"PRelu", 6, 17, importPRelu},
    {"HardSigmoid", 6, 17, importHard<false>},
    {"HardSwish", 14, 17, importHard<true>},
    {"Shrink", 9, 17, importShrink},
    {"LogSoftmax", 1, 17, importLogSoftmax},
    {"Hardmax", 1, 17, importHardmax},
    {"Softmax", 1, 17, importSoftmaxAny},
};

// The ops that import as one node of a kind (Ops.py's import section).
const ImportRule kDirectRules[] = {
#include "ember/Generated/DirectImports.inc"
};

} // namespace

RuleList onnximport::getMathImportRules() { return kMathRules; }
RuleList onnximport::getDirectImportRules() { return kDirectRules; }
