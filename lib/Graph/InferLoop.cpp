//===- InferLoop.cpp - Types of the loop ops ------------------------------===//
//
// A Loop with a run-time trip count keeps its body as one region of the
// graph between LoopBegin and LoopEnd (docs/ControlFlow.md). These checks
// hold the operand lists of LoopBegin and LoopEnd to that layout.
//
//===----------------------------------------------------------------------===//
#include "Infer.h"

#include "ember/Base/Error.h"

using namespace ember;

bool ember::isLoopOp(OpKind kind) {
  return kind == OpKind::LoopCarry || kind == OpKind::LoopBegin ||
         kind == OpKind::LoopParam || kind == OpKind::LoopEnd ||
         kind == OpKind::LoopFinal;
}

static bool isScalarOf(const Type &t, ElemKind kind) {
  return t.getElemKind() == kind && t.size() == 1;
}

static Type counterType() { return Type(ElemKind::Int64, {1}); }

InferResult ember::inferLoopBegin(llvm::ArrayRef<TypeRef> in,
                                  const AttrList &) {
  if (!isScalarOf(*in[0], ElemKind::Int64))
    return makeErrorF("the trip count must be one Int64, got {0}",
                      in[0]->toString());
  if (!isScalarOf(*in[1], ElemKind::Bool))
    return makeErrorF("the condition must be one Bool, got {0}",
                      in[1]->toString());
  return llvm::SmallVector<Type, 1>{counterType()};
}

InferResult ember::inferLoopParam(llvm::ArrayRef<TypeRef> in,
                                  const AttrList &) {
  if (!(*in[0] == counterType()))
    return makeErrorF("the loop counter must be Int64 [1], got {0}",
                      in[0]->toString());
  return llvm::SmallVector<Type, 1>{*in[1]};
}

InferResult ember::inferLoopEnd(llvm::ArrayRef<TypeRef> in,
                                const AttrList &attrs) {
  int64_t n = attrs[0].i, maxTrips = attrs[1].i;
  if (!(*in[0] == counterType()))
    return makeErrorF("the loop counter must be Int64 [1], got {0}",
                      in[0]->toString());
  llvm::ArrayRef<TypeRef> ops = in.drop_front();
  if (n < 0 || ops.size() < size_t(2 + 2 * n) || (ops.size() - 2 * n) % 2)
    return makeErrorF("{0} operands do not hold a condition, {1} carried "
                      "values and pairs of scan buffers and rows",
                      ops.size(), n);
  if (!isScalarOf(*ops[0], ElemKind::Bool) || !(*ops[0] == *ops[1]))
    return makeErrorF("the condition and its next value must be one Bool of "
                      "one type, got {0} and {1}",
                      ops[0]->toString(), ops[1]->toString());
  for (int64_t j = 0; j < n; ++j)
    if (!(*ops[2 + j] == *ops[2 + n + j]))
      return makeErrorF("carried value {0} is {1} but its next value is {2}", j,
                        ops[2 + j]->toString(), ops[2 + n + j]->toString());
  size_t k = (ops.size() - 2 - 2 * n) / 2;
  if (k && maxTrips < 1)
    return makeErrorF("scan outputs need a bound MaxTrips >= 1, got {0}",
                      maxTrips);
  for (size_t j = 0; j < k; ++j) {
    const Type &buf = *ops[2 + 2 * n + j], &row = *ops[2 + 2 * n + k + j];
    bool fits = buf.rank() == row.rank() + 1 &&
                buf.getElemKind() == row.getElemKind() &&
                int64_t(buf.dims()[0]) >= maxTrips &&
                std::equal(row.dims().begin(), row.dims().end(),
                           buf.dims().begin() + 1);
    if (!fits)
      return makeErrorF("scan buffer {0} is {1}, not [>= {2}] rows of {3}", j,
                        buf.toString(), maxTrips, row.toString());
  }
  return llvm::SmallVector<Type, 1>{counterType()};
}
