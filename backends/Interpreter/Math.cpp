//===- Math.cpp - Kind-generic elementwise kernels ------------------------===//
//
// Unary math, Mod, comparisons, logic, Where, Cast, CumSum, and the
// arithmetic ops of Elementwise.cpp for the kinds that file leaves out
// (float16, float64, 8- and 16-bit integers, ...).
//
//===----------------------------------------------------------------------===//
#include "Generic.h"

#include <cmath>
#include <cstring>
#include <limits>

using namespace ember;
using namespace ember::interp;

template <typename Fn>
static void mapUnary(const Instruction &I, const ExecContext &ctx, Fn fn) {
  Buf d(ctx, I.getOperand(0).value), x(ctx, I.getOperand(1).value);
  for (dim_t i = 0, e = d.size(); i < e; ++i)
    d.st(i, fn(x.ld(i)));
}

template <typename Fn>
static void mapBinary(const Instruction &I, const ExecContext &ctx, Fn fn) {
  Buf d(ctx, I.getOperand(0).value), a(ctx, I.getOperand(1).value),
      b(ctx, I.getOperand(2).value);
  for (dim_t i = 0, e = d.size(); i < e; ++i)
    d.st(i, fn(a.ld(i), b.ld(i)));
}

/// Integer binary ops computed on int64 (exact beyond 2^53).
template <typename Fn>
static void mapBinaryInt(const Instruction &I, const ExecContext &ctx, Fn fn) {
  Buf d(ctx, I.getOperand(0).value), a(ctx, I.getOperand(1).value),
      b(ctx, I.getOperand(2).value);
  for (dim_t i = 0, e = d.size(); i < e; ++i) {
    int64_t r = fn(a.ldInt(i), b.ldInt(i));
    if (d.kind() == ElemKind::Int64 || d.kind() == ElemKind::UInt64)
      std::memcpy(d.p + i * 8, &r, 8);
    else
      d.st(i, double(r));
  }
}

static double roundHalfEven(double x) { return std::nearbyint(x); }

static bool unaryMath(OpKind op, const Instruction &I, const ExecContext &ctx) {
  switch (op) {
#define UNARY(K, EXPR)                                                         \
  case OpKind::K:                                                              \
    mapUnary(I, ctx, [](double x) { return EXPR; });                           \
    return true;
    UNARY(Relu, x > 0 ? x : 0.0)
    UNARY(Sigmoid, 1.0 / (1.0 + std::exp(-x)))
    UNARY(Tanh, std::tanh(x))
    UNARY(Sqrt, std::sqrt(x))
    UNARY(Exp, std::exp(x))
    UNARY(Log, std::log(x))
    UNARY(Neg, -x)
    UNARY(Abs, std::fabs(x))
    UNARY(Erf, std::erf(x))
    UNARY(Floor, std::floor(x))
    UNARY(Ceil, std::ceil(x))
    UNARY(Round, roundHalfEven(x))
    UNARY(Reciprocal, 1.0 / x)
    UNARY(Sin, std::sin(x))
    UNARY(Cos, std::cos(x))
    UNARY(Tan, std::tan(x))
    UNARY(Asin, std::asin(x))
    UNARY(Acos, std::acos(x))
    UNARY(Atan, std::atan(x))
    UNARY(Sinh, std::sinh(x))
    UNARY(Cosh, std::cosh(x))
    UNARY(Asinh, std::asinh(x))
    UNARY(Acosh, std::acosh(x))
    UNARY(Atanh, std::atanh(x))
    UNARY(Sign, x > 0 ? 1.0 : (x < 0 ? -1.0 : 0.0))
    UNARY(IsNaN, std::isnan(x) ? 1.0 : 0.0)
    UNARY(Not, x != 0 ? 0.0 : 1.0)
#undef UNARY
  case OpKind::Clip: {
    double lo = I.attr(0).f, hi = I.attr(1).f;
    mapUnary(I, ctx, [=](double x) { return std::min(std::max(x, lo), hi); });
    return true;
  }
  case OpKind::Gelu: {
    // erfc keeps the tail accurate where 1 + erf(x) cancels.
    if (I.attr(0).i == 0) {
      mapUnary(I, ctx, [](double x) {
        return 0.5 * x * std::erfc(-x * 0.70710678118654752);
      });
      return true;
    }
    mapUnary(I, ctx, [](double x) {
      double u = 0.7978845608028654 * (x + 0.044715 * x * x * x);
      return 0.5 * x * (1 + std::tanh(u));
    });
    return true;
  }
  case OpKind::IsInf: {
    bool pos = I.attr(0).i, neg = I.attr(1).i;
    mapUnary(I, ctx, [=](double x) {
      return std::isinf(x) && ((x > 0 && pos) || (x < 0 && neg)) ? 1.0 : 0.0;
    });
    return true;
  }
  default:
    return false;
  }
}

/// The value of an op defined by a formula in the op table, in double
/// (generated from the formula by utils/opgen.py).
static double formulaValue(OpKind op, const Instruction &I, const double *x) {
  (void)I;
  switch (op) {
#include "ember/Generated/FormulaEval.inc"
  default:
    llvm_unreachable("not a formula op");
  }
}

static bool formulaMath(OpKind op, const Instruction &I,
                        const ExecContext &ctx) {
  if (!getOpInfo(op).formula)
    return false;
  Buf d(ctx, I.getOperand(0).value);
  llvm::SmallVector<Buf, 3> in;
  for (unsigned j = 1; j < I.getNumOperands(); ++j)
    in.emplace_back(ctx, I.getOperand(j).value);
  llvm::SmallVector<double, 3> x(in.size());
  for (dim_t i = 0, e = d.size(); i < e; ++i) {
    for (size_t j = 0; j < in.size(); ++j)
      x[j] = in[j].ld(i);
    d.st(i, formulaValue(op, I, x.data()));
  }
  return true;
}

static int64_t intDiv(int64_t a, int64_t b) {
  if (b == 0 || (b == -1 && a == std::numeric_limits<int64_t>::min()))
    return 0; // Undefined in ONNX; no trap.
  return a / b;
}

static int64_t intMod(int64_t a, int64_t b, bool fmod) {
  if (b == 0 || b == -1)
    return 0;
  int64_t r = a % b;
  if (!fmod && r != 0 && ((r < 0) != (b < 0)))
    r += b;
  return r;
}

static int64_t intPow(int64_t a, int64_t b) {
  if (b < 0)
    return a == 1 ? 1 : (a == -1 ? (b % 2 ? -1 : 1) : 0);
  // Wrapping (two's complement, as the other integer ops), and by squaring:
  // an exponent of 2^62 takes 62 steps, not 2^62 multiplications.
  uint64_t r = 1, base = uint64_t(a);
  for (uint64_t e = uint64_t(b); e; e >>= 1) {
    if (e & 1)
      r *= base;
    base *= base;
  }
  return int64_t(r);
}

/// And, Or, Xor and Not on integers: bitwise (on Bool, predicate() and
/// unaryMath() compute them as logic).
static bool bitwise(OpKind op, const Instruction &I, const ExecContext &ctx) {
  switch (op) {
  case OpKind::And:
    mapBinaryInt(I, ctx, [](int64_t a, int64_t b) { return a & b; });
    return true;
  case OpKind::Or:
    mapBinaryInt(I, ctx, [](int64_t a, int64_t b) { return a | b; });
    return true;
  case OpKind::Xor:
    mapBinaryInt(I, ctx, [](int64_t a, int64_t b) { return a ^ b; });
    return true;
  case OpKind::Not: {
    Buf d(ctx, I.getOperand(0).value), x(ctx, I.getOperand(1).value);
    unsigned bits = 8 * elemSize(d.kind());
    ElemKind k = d.kind();
    bool isUnsigned =
        k == ElemKind::UInt8 || k == ElemKind::UInt16 || k == ElemKind::UInt32;
    for (dim_t i = 0, e = d.size(); i < e; ++i) {
      int64_t r = ~x.ldInt(i);
      if (bits == 64)
        std::memcpy(d.p + i * 8, &r, 8);
      else
        d.st(i, double(isUnsigned ? r & ((int64_t(1) << bits) - 1) : r));
    }
    return true;
  }
  default:
    return false;
  }
}

static bool binaryInt(OpKind op, const Instruction &I, const ExecContext &ctx) {
  switch (op) {
  case OpKind::Add:
    mapBinaryInt(I, ctx, [](int64_t a, int64_t b) { return a + b; });
    return true;
  case OpKind::Sub:
    mapBinaryInt(I, ctx, [](int64_t a, int64_t b) { return a - b; });
    return true;
  case OpKind::Mul:
    mapBinaryInt(I, ctx, [](int64_t a, int64_t b) { return a * b; });
    return true;
  case OpKind::Div:
    mapBinaryInt(I, ctx, intDiv);
    return true;
  case OpKind::Max:
    mapBinaryInt(I, ctx, [](int64_t a, int64_t b) { return std::max(a, b); });
    return true;
  case OpKind::Min:
    mapBinaryInt(I, ctx, [](int64_t a, int64_t b) { return std::min(a, b); });
    return true;
  case OpKind::Pow:
    mapBinaryInt(I, ctx, intPow);
    return true;
  case OpKind::BitShift: {
    bool left = I.attr(0).i;
    unsigned bits =
        8 * elemSize(I.getOperand(0).value->getType()->getElemKind());
    mapBinaryInt(I, ctx, [=](int64_t a, int64_t b) -> int64_t {
      uint64_t ua = uint64_t(a), ub = uint64_t(b);
      if (ub >= bits)
        return 0;
      uint64_t mask = bits == 64 ? ~uint64_t(0) : (uint64_t(1) << bits) - 1;
      return int64_t(((left ? ua << ub : ua >> ub)) & mask);
    });
    return true;
  }
  case OpKind::Mod: {
    bool fmod = I.attr(0).i;
    mapBinaryInt(I, ctx,
                 [=](int64_t a, int64_t b) { return intMod(a, b, fmod); });
    return true;
  }
  default:
    return false;
  }
}

static bool binaryFloat(OpKind op, const Instruction &I,
                        const ExecContext &ctx) {
  switch (op) {
#define BINARY(K, EXPR)                                                        \
  case OpKind::K:                                                              \
    mapBinary(I, ctx, [](double a, double b) { return EXPR; });                \
    return true;
    BINARY(Add, a + b)
    BINARY(Sub, a - b)
    BINARY(Mul, a * b)
    BINARY(Div, a / b)
    BINARY(Max, std::isnan(a) || std::isnan(b) ? NAN : std::max(a, b))
    BINARY(Min, std::isnan(a) || std::isnan(b) ? NAN : std::min(a, b))
    BINARY(Pow, std::pow(a, b))
    BINARY(Mod, std::fmod(a, b))
#undef BINARY
  default:
    return false;
  }
}

/// Comparisons and logic read their operands' kind, not the Bool result's.
static bool predicate(OpKind op, const Instruction &I, const ExecContext &ctx) {
  switch (op) {
#define PRED(K, EXPR)                                                          \
  case OpKind::K:                                                              \
    mapBinary(I, ctx, [](double a, double b) { return (EXPR) ? 1.0 : 0.0; });  \
    return true;
    PRED(Greater, a > b)
    PRED(Less, a < b)
    PRED(GreaterOrEqual, a >= b)
    PRED(LessOrEqual, a <= b)
    PRED(And, a != 0 && b != 0)
    PRED(Or, a != 0 || b != 0)
    PRED(Xor, (a != 0) != (b != 0))
#undef PRED
  case OpKind::Equal: {
    Buf d(ctx, I.getOperand(0).value), a(ctx, I.getOperand(1).value),
        b(ctx, I.getOperand(2).value);
    bool ints = !isFloatKind(a.kind());
    for (dim_t i = 0, e = d.size(); i < e; ++i)
      d.st(i, ints ? a.ldInt(i) == b.ldInt(i) : a.ld(i) == b.ld(i));
    return true;
  }
  default:
    return false;
  }
}

static void where(const Instruction &I, const ExecContext &ctx) {
  Buf d(ctx, I.getOperand(0).value), c(ctx, I.getOperand(1).value),
      a(ctx, I.getOperand(2).value), b(ctx, I.getOperand(3).value);
  size_t es = elemSize(d.kind());
  for (dim_t i = 0, e = d.size(); i < e; ++i)
    std::memcpy(d.p + i * es, (c.ldInt(i) ? a.p : b.p) + i * es, es);
}

static void cast(const Instruction &I, const ExecContext &ctx) {
  Buf d(ctx, I.getOperand(0).value), x(ctx, I.getOperand(1).value);
  bool exactInt = !isFloatKind(x.kind()) && !isFloatKind(d.kind());
  for (dim_t i = 0, e = d.size(); i < e; ++i) {
    if (exactInt && elemSize(d.kind()) == 8) {
      int64_t v = x.ldInt(i);
      std::memcpy(d.p + i * 8, &v, 8);
    } else if (exactInt && d.kind() != ElemKind::Bool) {
      // Wrap like a C integer conversion.
      d.st(i, double(int64_t(uint64_t(x.ldInt(i)))));
    } else {
      d.st(i, x.ld(i));
    }
  }
}

static void cumSum(const CumSumInst &I, const ExecContext &ctx) {
  Buf d(ctx, I.getDest()), x(ctx, I.getInput());
  dim_t outer, inner, n = d.dims()[I.getAxis()];
  splitAt(d.dims(), I.getAxis(), outer, inner);
  bool excl = I.getExclusive(), rev = I.getReverse();
  for (dim_t o = 0; o < outer; ++o)
    for (dim_t in = 0; in < inner; ++in) {
      double acc = 0;
      for (dim_t s = 0; s < n; ++s) {
        dim_t k = rev ? n - 1 - s : s;
        dim_t idx = (o * n + k) * inner + in;
        double v = x.ld(idx);
        if (!excl)
          acc += v;
        d.st(idx, acc);
        if (excl)
          acc += v;
      }
    }
}

bool interp::executeMath(const Instruction &I, const ExecContext &ctx) {
  OpKind op = *opKindForInstr(I.getKind());
  switch (op) {
  case OpKind::Where:
    where(I, ctx);
    return true;
  case OpKind::Cast:
    cast(I, ctx);
    return true;
  case OpKind::CumSum:
    cumSum(llvm::cast<CumSumInst>(I), ctx);
    return true;
  case OpKind::Splat: {
    Buf d(ctx, I.getOperand(0).value);
    for (dim_t i = 0, e = d.size(); i < e; ++i)
      d.st(i, I.attr(2).f);
    return true;
  }
  default:
    break;
  }
  ElemKind k = I.getOperand(0).value->getType()->getElemKind();
  if (isIntegerKind(k) && bitwise(op, I, ctx))
    return true;
  if (predicate(op, I, ctx) || unaryMath(op, I, ctx) || formulaMath(op, I, ctx))
    return true;
  return isFloatKind(k) ? binaryFloat(op, I, ctx) : binaryInt(op, I, ctx);
}
