//===- Elementwise.cpp - Elementwise and splat kernels --------------------===//
#include "Kernels.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <type_traits>

using namespace ember;
using namespace ember::interp;

template <typename T, typename Fn>
static void binary(const Instruction &I, const ExecContext &ctx, Fn fn) {
  Value *d = I.getOperand(0).value;
  T *out = ctx.ptr<T>(d);
  const T *a = ctx.ptr<T>(I.getOperand(1).value);
  const T *b = ctx.ptr<T>(I.getOperand(2).value);
  for (dim_t i = 0, e = d->getType()->size(); i < e; ++i)
    out[i] = fn(a[i], b[i]);
}

/// Integer arithmetic wraps around (two's complement) like the CPU and CUDA
/// kernels do, instead of overflowing (undefined in C++).
template <typename T, typename Op> static T wrapping(T a, T b, Op op) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return T(op(U(a), U(b)));
  } else {
    return op(a, b);
  }
}

template <typename T>
static bool binaryOp(OpKind op, const Instruction &I, const ExecContext &ctx) {
  switch (op) {
  case OpKind::Add:
    binary<T>(I, ctx, [](T a, T b) { return wrapping(a, b, std::plus<>()); });
    return true;
  case OpKind::Sub:
    binary<T>(I, ctx,
              [](T a, T b) { return wrapping(a, b, std::minus<>()); });
    return true;
  case OpKind::Mul:
    binary<T>(I, ctx,
              [](T a, T b) { return wrapping(a, b, std::multiplies<>()); });
    return true;
  case OpKind::Div:
    binary<T>(I, ctx, [](T a, T b) {
      if constexpr (std::is_integral_v<T>) {
        // Integer division by zero (and MIN / -1) is undefined in ONNX; give
        // 0 instead of trapping.
        if (b == 0 || (b == T(-1) && a == std::numeric_limits<T>::min()))
          return T(0);
      }
      return T(a / b);
    });
    return true;
  case OpKind::Max:
    binary<T>(I, ctx, [](T a, T b) { return std::max(a, b); });
    return true;
  case OpKind::Min:
    binary<T>(I, ctx, [](T a, T b) { return std::min(a, b); });
    return true;
  case OpKind::Pow:
    binary<T>(I, ctx, [](T a, T b) { return T(std::pow(a, b)); });
    return true;
  default:
    return false;
  }
}

template <typename Fn>
static void unary(const Instruction &I, const ExecContext &ctx, Fn fn) {
  Value *d = I.getOperand(0).value;
  float *out = ctx.ptr<float>(d);
  const float *in = ctx.ptr<float>(I.getOperand(1).value);
  for (dim_t i = 0, e = d->getType()->size(); i < e; ++i)
    out[i] = fn(in[i]);
}

static bool unaryOp(OpKind op, const Instruction &I, const ExecContext &ctx) {
  switch (op) {
  case OpKind::Relu:
    unary(I, ctx, [](float x) { return x > 0.f ? x : 0.f; });
    return true;
  case OpKind::Sigmoid:
    unary(I, ctx, [](float x) { return 1.f / (1.f + std::exp(-x)); });
    return true;
  case OpKind::Tanh:
    unary(I, ctx, [](float x) { return std::tanh(x); });
    return true;
  case OpKind::Sqrt:
    unary(I, ctx, [](float x) { return std::sqrt(x); });
    return true;
  case OpKind::Exp:
    unary(I, ctx, [](float x) { return std::exp(x); });
    return true;
  case OpKind::Log:
    unary(I, ctx, [](float x) { return std::log(x); });
    return true;
  case OpKind::Neg:
    unary(I, ctx, [](float x) { return -x; });
    return true;
  case OpKind::Abs:
    unary(I, ctx, [](float x) { return std::fabs(x); });
    return true;
  case OpKind::Clip: {
    float lo = I.attr(0).f, hi = I.attr(1).f;
    unary(I, ctx, [=](float x) { return std::min(std::max(x, lo), hi); });
    return true;
  }
  default:
    return false;
  }
}

template <typename T> static void splat(Value *d, const ExecContext &ctx, float v) {
  std::fill_n(ctx.ptr<T>(d), d->getType()->size(), T(v));
}

bool interp::executeElementwise(const Instruction &I, const ExecContext &ctx) {
  OpKind op = *opKindForInstr(I.getKind());
  Value *d = I.getOperand(0).value;
  ElemKind k = d->getType()->getElemKind();
  if (op == OpKind::Splat) {
    float v = I.attr(2).f;
    switch (k) {
    case ElemKind::Float32:
      splat<float>(d, ctx, v);
      return true;
    case ElemKind::Int64:
      splat<int64_t>(d, ctx, v);
      return true;
    case ElemKind::Int32:
      splat<int32_t>(d, ctx, v);
      return true;
    case ElemKind::Bool:
      splat<uint8_t>(d, ctx, v);
      return true;
    default:
      return false;
    }
  }
  switch (k) {
  case ElemKind::Float32:
    return binaryOp<float>(op, I, ctx) || unaryOp(op, I, ctx);
  case ElemKind::Int64:
    return op != OpKind::Pow && binaryOp<int64_t>(op, I, ctx);
  case ElemKind::Int32:
    return op != OpKind::Pow && binaryOp<int32_t>(op, I, ctx);
  default:
    return false;
  }
}
