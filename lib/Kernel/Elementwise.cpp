//===- Elementwise.cpp - Elementwise instructions as kernel expressions ---===//
#include "KernelRules.h"

#include <limits>

using namespace ember;
using namespace ember::kir;

bool kir::isElementwise(const Instruction &I) {
  std::optional<OpKind> op = opKindForInstr(I.getKind());
  return op && getOpInfo(*op).elementwise;
}

static ExprRef notOf(Kernel &k, ExprRef b) {
  return k.binary(BinOp::Xor, b, k.constInt(1, ScalarKind::Bool));
}

/// Integer division that gives 0 for x / 0 and for MIN / -1 (the
/// Interpreter's convention), without ever dividing by 0 or -1.
static ExprRef safeIntDiv(Kernel &k, ExprRef a, ExprRef b) {
  ScalarKind t = a->type;
  int64_t minV = t == ScalarKind::Int32 ? std::numeric_limits<int32_t>::min()
                                        : std::numeric_limits<int64_t>::min();
  ExprRef zero = k.constInt(0, t), one = k.constInt(1, t);
  ExprRef isZero = k.binary(BinOp::Eq, b, zero);
  ExprRef isMinusOne = k.binary(BinOp::Eq, b, k.constInt(-1, t));
  ExprRef safeB = k.select(isZero, one, k.select(isMinusOne, one, b));
  ExprRef quot = k.binary(BinOp::Div, a, safeB);
  ExprRef negA = k.select(k.binary(BinOp::Eq, a, k.constInt(minV, t)), zero,
                          k.binary(BinOp::Sub, zero, a));
  return k.select(isZero, zero, k.select(isMinusOne, negA, quot));
}

/// Integer division of any width: unsigned kinds guard only x / 0; 8- and
/// 16-bit kinds divide in Int32 and wrap back (-128 / -1 is -128, as the
/// Interpreter computes it).
static ExprRef intDiv(Kernel &k, ExprRef a, ExprRef b) {
  ScalarKind t = a->type;
  if (isUnsignedKind(t)) {
    ExprRef zero = k.constInt(0, t);
    ExprRef isZero = k.binary(BinOp::Eq, b, zero);
    return k.select(
        isZero, zero,
        k.binary(BinOp::Div, a, k.select(isZero, k.constInt(1, t), b)));
  }
  if (elemSize(t) < 4)
    return k.cast(safeIntDiv(k, k.cast(a, ScalarKind::Int32),
                             k.cast(b, ScalarKind::Int32)),
                  t);
  return safeIntDiv(k, a, b);
}

/// Integer Mod: 0 for a divisor of 0 (or -1); with \p fmod the sign of the
/// dividend (C %), else of the divisor.
static ExprRef intMod(Kernel &k, ExprRef a, ExprRef b, bool fmod) {
  ScalarKind t = a->type;
  ExprRef zero = k.constInt(0, t);
  ExprRef bad = k.binary(BinOp::Eq, b, zero);
  if (!isUnsignedKind(t))
    bad = k.binary(BinOp::Or, bad, k.binary(BinOp::Eq, b, k.constInt(-1, t)));
  ExprRef r = k.binary(BinOp::Rem, a, k.select(bad, k.constInt(1, t), b));
  if (!fmod && !isUnsignedKind(t)) {
    ExprRef signsDiffer = k.binary(BinOp::Xor, k.binary(BinOp::Lt, r, zero),
                                   k.binary(BinOp::Lt, b, zero));
    ExprRef fix = k.binary(BinOp::And, notOf(k, k.binary(BinOp::Eq, r, zero)),
                           signsDiffer);
    r = k.select(fix, k.binary(BinOp::Add, r, b), r);
  }
  return k.select(bad, zero, r);
}

/// Unsigned shifts; a shift by the bit width or more gives 0.
static ExprRef bitShift(Kernel &k, ExprRef a, ExprRef b, bool left) {
  ScalarKind t = a->type;
  ExprRef zero = k.constInt(0, t);
  ExprRef ok = k.binary(BinOp::Lt, b, k.constInt(8 * elemSize(t), t));
  ExprRef r =
      k.binary(left ? BinOp::Shl : BinOp::Shr, a, k.select(ok, b, zero));
  return k.select(ok, r, zero);
}

/// Integer power through float64: exact while |a^b| < 2^53 (beyond, the
/// Interpreter's wrapping product is not defined by ONNX either); a
/// negative exponent truncates toward zero, and 0 to a negative power is 0.
static ExprRef intPow(Kernel &k, ExprRef a, ExprRef b) {
  ScalarKind t = a->type, f64 = ScalarKind::Float64;
  ExprRef p = k.binary(BinOp::Pow, k.cast(a, f64), k.cast(b, f64));
  ExprRef zero = k.constInt(0, t);
  ExprRef zeroToNeg = k.binary(BinOp::And, k.binary(BinOp::Eq, a, zero),
                               k.binary(BinOp::Lt, b, zero));
  return k.select(zeroToNeg, zero, k.cast(p, t));
}

/// x * Phi(x). The erf form takes Phi as one operator (the CPU expands it
/// with one exp, without computing 1 + erf). The tanh form uses 1 +
/// tanh(u) = 2 / (1 + e^(-2u)): one exp and one division, no cancellation
/// where tanh(u) nears -1.
static ExprRef geluValue(Kernel &k, ExprRef x, bool tanhForm) {
  ScalarKind t = x->type;
  auto c = [&](double v) { return constOf(k, v, t); };
  auto mul = [&](ExprRef a, ExprRef b) { return k.binary(BinOp::Mul, a, b); };
  if (!tanhForm)
    return mul(x, k.unary(UnOp::NormCdf, x));
  // -2u = x * (-2 sqrt(2/pi)) * (1 + 0.044715 x^2)
  ExprRef poly = k.binary(BinOp::Add, c(1), mul(c(0.044715), mul(x, x)));
  ExprRef m2u = mul(mul(x, c(-1.5957691216057308)), poly);
  return k.binary(BinOp::Div, x,
                  k.binary(BinOp::Add, c(1), k.unary(UnOp::Exp, m2u)));
}

static std::optional<UnOp> unaryOf(OpKind op) {
  switch (op) {
#define MAP(K)                                                                 \
  case OpKind::K:                                                              \
    return UnOp::K;
    MAP(Relu)
    MAP(Sigmoid)
    MAP(Tanh)
    MAP(Sqrt)
    MAP(Exp)
    MAP(Log)
    MAP(Neg)
    MAP(Abs)
    MAP(Floor)
    MAP(Ceil)
    MAP(Round)
    MAP(Erf)
    MAP(Sin)
    MAP(Cos)
    MAP(Tan)
    MAP(Asin)
    MAP(Acos)
    MAP(Atan)
    MAP(Sinh)
    MAP(Cosh)
    MAP(Asinh)
    MAP(Acosh)
    MAP(Atanh)
#undef MAP
  default:
    return std::nullopt;
  }
}

/// The value of an op defined by a formula in the op table (generated from
/// it by utils/opgen.py), or null for every other op.
static ExprRef formulaValue(Kernel &k, const Instruction &I, OpKind op,
                            ScalarKind t, llvm::ArrayRef<ExprRef> x) {
  auto c = [&](double v) { return constOf(k, v, t); };
  (void)c;
  (void)I;
  switch (op) {
#include "ember/Generated/FormulaKernel.inc"
  default:
    return nullptr;
  }
}

/// The value of \p I from its inputs \p x, computed in the inputs' kind
/// (Float32 for Float16); the caller casts it to the result kind.
static ExprRef computeValue(Kernel &k, const Instruction &I, OpKind op,
                            ScalarKind kind, llvm::ArrayRef<ExprRef> x) {
  if (auto uop = unaryOf(op))
    return k.unary(*uop, x[0]);
  ScalarKind t = x.empty() ? kind : x[0]->type;
  if (ExprRef e = formulaValue(k, I, op, t, x))
    return e;
  auto c = [&](double v) { return constOf(k, v, t); };
  switch (op) {
  case OpKind::Splat:
    return constOf(k, llvm::cast<SplatInst>(I).getValue(), kind);
  case OpKind::Clip: {
    auto &cl = llvm::cast<ClipInst>(I);
    return k.binary(BinOp::Min, k.binary(BinOp::Max, x[0], c(cl.getMin())),
                    c(cl.getMax()));
  }
  case OpKind::Reciprocal:
    return k.binary(BinOp::Div, c(1), x[0]);
  case OpKind::Gelu:
    return geluValue(k, x[0], I.attr(0).i != 0);
  case OpKind::Sign:
    return k.select(k.binary(BinOp::Lt, c(0), x[0]), c(1),
                    k.select(k.binary(BinOp::Lt, x[0], c(0)), c(-1), c(0)));
  case OpKind::IsNaN:
    return notOf(k, k.binary(BinOp::Eq, x[0], x[0]));
  case OpKind::IsInf: {
    double inf = std::numeric_limits<double>::infinity();
    ExprRef r = k.constInt(0, ScalarKind::Bool);
    if (I.attr(0).i)
      r = k.binary(BinOp::Eq, x[0], c(inf));
    if (I.attr(1).i)
      r = k.binary(BinOp::Or, r, k.binary(BinOp::Eq, x[0], c(-inf)));
    return r;
  }
  case OpKind::Not: // logical on Bool, bitwise on integers
    return t == ScalarKind::Bool
               ? notOf(k, x[0])
               : k.binary(BinOp::Xor, x[0], k.constInt(-1, t));
  case OpKind::Cast:
    return x[0];
  case OpKind::Where:
    return k.select(x[0], x[1], x[2]);
  case OpKind::Add:
    return k.binary(BinOp::Add, x[0], x[1]);
  case OpKind::Sub:
    return k.binary(BinOp::Sub, x[0], x[1]);
  case OpKind::Mul:
    return k.binary(BinOp::Mul, x[0], x[1]);
  case OpKind::Div:
    return isFloatKind(t) ? k.binary(BinOp::Div, x[0], x[1])
                          : intDiv(k, x[0], x[1]);
  case OpKind::Max:
    return k.binary(BinOp::Max, x[0], x[1]);
  case OpKind::Min:
    return k.binary(BinOp::Min, x[0], x[1]);
  case OpKind::Pow:
    return isFloatKind(t) ? k.binary(BinOp::Pow, x[0], x[1])
                          : intPow(k, x[0], x[1]);
  case OpKind::Mod:
    return isFloatKind(t) ? k.binary(BinOp::Rem, x[0], x[1])
                          : intMod(k, x[0], x[1], I.attr(0).i);
  case OpKind::BitShift:
    return bitShift(k, x[0], x[1], I.attr(0).i);
  case OpKind::Equal:
    return k.binary(BinOp::Eq, x[0], x[1]);
  case OpKind::Less:
    return k.binary(BinOp::Lt, x[0], x[1]);
  case OpKind::LessOrEqual:
    return k.binary(BinOp::Le, x[0], x[1]);
  case OpKind::Greater:
    return k.binary(BinOp::Lt, x[1], x[0]);
  case OpKind::GreaterOrEqual:
    return k.binary(BinOp::Le, x[1], x[0]);
  case OpKind::And:
    return k.binary(BinOp::And, x[0], x[1]);
  case OpKind::Or:
    return k.binary(BinOp::Or, x[0], x[1]);
  case OpKind::Xor:
    return k.binary(BinOp::Xor, x[0], x[1]);
  default:
    llvm_unreachable("elementwise op without a kernel rule");
  }
}

ExprRef kir::elementwiseValue(Kernel &k, const Instruction &I, ExprRef /*idx*/,
                              llvm::function_ref<ExprRef(unsigned)> operand) {
  OpKind op = *opKindForInstr(I.getKind());
  ScalarKind kind = I.getOperand(0).value->getType()->getElemKind();
  // Operands in order, so buffers are numbered deterministically; Float16
  // and BFloat16 compute in Float32.
  llvm::SmallVector<ExprRef, 3> x;
  for (unsigned n = 1; n < I.getNumOperands(); ++n) {
    ExprRef v = operand(n);
    bool half =
        v->type == ScalarKind::Float16 || v->type == ScalarKind::BFloat16;
    x.push_back(half ? k.cast(v, ScalarKind::Float32) : v);
  }
  return k.cast(computeValue(k, I, op, kind, x), kind);
}
