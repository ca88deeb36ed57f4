//===- InferElementwise.cpp - Comparisons, logic, Where, Cast -------------===//
#include "Infer.h"

#include "ember/Base/Error.h"

using namespace ember;

using Types = llvm::SmallVector<Type, 1>;

InferResult ember::inferCompare(llvm::ArrayRef<TypeRef> in, const AttrList &) {
  if (in[0]->getElemKind() == ElemKind::Bool)
    return makeErrorF("cannot order Bool operands {0}", in[0]->toString());
  return Types{Type(ElemKind::Bool, in[0]->dims())};
}

InferResult ember::inferLogical(llvm::ArrayRef<TypeRef> in, const AttrList &) {
  for (TypeRef t : in)
    if (t->getElemKind() != ElemKind::Bool && !isIntegerKind(t->getElemKind()))
      return makeErrorF("operand {0} must be Bool or a plain integer",
                        t->toString());
  return Types{*in[0]};
}

InferResult ember::inferClassify(llvm::ArrayRef<TypeRef> in, const AttrList &) {
  return Types{Type(ElemKind::Bool, in[0]->dims())};
}

InferResult ember::inferWhere(llvm::ArrayRef<TypeRef> in, const AttrList &) {
  const Type &c = *in[0], &a = *in[1];
  if (c.getElemKind() != ElemKind::Bool)
    return makeErrorF("condition {0} must be Bool", c.toString());
  if (!c.isSameShape(a))
    return makeErrorF("condition {0} and values {1} differ in shape",
                      c.toString(), a.toString());
  return Types{a};
}

InferResult ember::inferCast(llvm::ArrayRef<TypeRef> in,
                             const AttrList &attrs) {
  ElemKind to = ElemKind(attrs[0].i);
  if (isQuantizedKind(to) || isQuantizedKind(in[0]->getElemKind()))
    return makeError("Cast does not convert quantized kinds");
  return Types{Type(to, in[0]->dims())};
}
