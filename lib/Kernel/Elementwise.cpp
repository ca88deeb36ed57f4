//===- Elementwise.cpp - Elementwise instructions as kernel expressions ---===//
#include "KernelRules.h"

#include <limits>

using namespace ember;
using namespace ember::kir;

bool kir::isElementwise(const Instruction &I) {
  auto op = opKindForInstr(I.getKind());
  if (!op)
    return false;
  switch (*op) {
  case OpKind::Add:
  case OpKind::Sub:
  case OpKind::Mul:
  case OpKind::Div:
  case OpKind::Max:
  case OpKind::Min:
  case OpKind::Pow:
  case OpKind::Relu:
  case OpKind::Sigmoid:
  case OpKind::Tanh:
  case OpKind::Sqrt:
  case OpKind::Exp:
  case OpKind::Log:
  case OpKind::Neg:
  case OpKind::Abs:
  case OpKind::Clip:
  case OpKind::Splat:
    return true;
  default:
    return false;
  }
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

static ExprRef binaryValue(Kernel &k, OpKind op, ExprRef a, ExprRef b) {
  switch (op) {
  case OpKind::Add:
    return k.binary(BinOp::Add, a, b);
  case OpKind::Sub:
    return k.binary(BinOp::Sub, a, b);
  case OpKind::Mul:
    return k.binary(BinOp::Mul, a, b);
  case OpKind::Div:
    if (isFloatKind(a->type))
      return k.binary(BinOp::Div, a, b);
    return safeIntDiv(k, a, b);
  case OpKind::Max:
    return k.binary(BinOp::Max, a, b);
  case OpKind::Min:
    return k.binary(BinOp::Min, a, b);
  case OpKind::Pow:
    return k.binary(BinOp::Pow, a, b);
  default:
    return nullptr;
  }
}

ExprRef kir::elementwiseValue(Kernel &k, const Instruction &I, ExprRef idx,
                              llvm::function_ref<ExprRef(unsigned)> operand) {
  OpKind op = *opKindForInstr(I.getKind());
  ElemKind kind = I.getOperand(0).value->getType()->getElemKind();
  switch (op) {
  case OpKind::Splat:
    if (isFloatKind(kind))
      return k.constFloat(llvm::cast<SplatInst>(I).getValue(), kind);
    return k.constInt(int64_t(llvm::cast<SplatInst>(I).getValue()), kind);
  case OpKind::Relu:
    return k.unary(UnOp::Relu, operand(1));
  case OpKind::Sigmoid:
    return k.unary(UnOp::Sigmoid, operand(1));
  case OpKind::Tanh:
    return k.unary(UnOp::Tanh, operand(1));
  case OpKind::Sqrt:
    return k.unary(UnOp::Sqrt, operand(1));
  case OpKind::Exp:
    return k.unary(UnOp::Exp, operand(1));
  case OpKind::Log:
    return k.unary(UnOp::Log, operand(1));
  case OpKind::Neg:
    return k.unary(UnOp::Neg, operand(1));
  case OpKind::Abs:
    return k.unary(UnOp::Abs, operand(1));
  case OpKind::Clip: {
    auto &c = llvm::cast<ClipInst>(I);
    ExprRef x = operand(1);
    ExprRef lo = k.constFloat(c.getMin(), kind);
    ExprRef hi = k.constFloat(c.getMax(), kind);
    return k.binary(BinOp::Min, k.binary(BinOp::Max, x, lo), hi);
  }
  default: {
    // Operands in order, so buffers are numbered deterministically.
    ExprRef a = operand(1);
    ExprRef b = operand(2);
    return binaryValue(k, op, a, b);
  }
  }
}
