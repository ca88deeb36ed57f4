//===- InferQuant.cpp - Result types of the integer products --------------===//
//
// IntMatMul and IntConv take 8-bit operands and give Int32. Their shapes
// follow MatMul and Conv, so both check and infer through those functions
// on Float32 views of the operands.
//
//===----------------------------------------------------------------------===//
#include "Infer.h"

#include "ember/Base/Error.h"

using namespace ember;

/// Int8 and UInt8: the operand kinds of the integer products.
static bool isByteKind(ElemKind k) {
  return k == ElemKind::Int8 || k == ElemKind::UInt8;
}

/// Checks that operands 0 and 1 are bytes and operands 2 and 3 (the zero
/// points) Int32 vectors of \p lhsZero and \p rhsZero elements.
static llvm::Error checkOperands(llvm::ArrayRef<TypeRef> in, dim_t lhsZero,
                                 dim_t rhsZero) {
  if (!isByteKind(in[0]->getElemKind()) || !isByteKind(in[1]->getElemKind()))
    return makeErrorF("operands must be Int8 or UInt8: {0}, {1}",
                      in[0]->toString(), in[1]->toString());
  dim_t want[2] = {lhsZero, rhsZero};
  for (int i = 0; i < 2; ++i)
    if (in[2 + i]->getElemKind() != ElemKind::Int32 ||
        in[2 + i]->dims()[0] != want[i])
      return makeErrorF("zero point {0} must be Int32 with {1} elements",
                        in[2 + i]->toString(), want[i]);
  return llvm::Error::success();
}

/// \p t with element kind \p kind.
static Type asKind(const Type &t, ElemKind kind) {
  return Type(kind, t.dims());
}

InferResult ember::inferIntMatMul(llvm::ArrayRef<TypeRef> in,
                                  const AttrList & /*attrs*/) {
  Type a = asKind(*in[0], ElemKind::Float32),
       b = asKind(*in[1], ElemKind::Float32);
  TypeRef views[2] = {&a, &b};
  AttrList mm = {Attr::makeInt(0)};
  EMBER_ASSIGN_OR_RETURN(auto res, inferMatMul(views, mm));
  unsigned r = a.rank();
  EMBER_RETURN_IF_ERR(checkOperands(in, a.dims()[r - 2], b.dims()[r - 1]));
  return llvm::SmallVector<Type, 1>{asKind(res[0], ElemKind::Int32)};
}

InferResult ember::inferIntConv(llvm::ArrayRef<TypeRef> in,
                                const AttrList &attrs) {
  Type x = asKind(*in[0], ElemKind::Float32),
       w = asKind(*in[1], ElemKind::Float32);
  Type bias(ElemKind::Float32, {w.dims()[0]});
  TypeRef views[3] = {&x, &w, &bias};
  AttrList conv(attrs.begin(), attrs.end());
  conv.push_back(Attr::makeInt(0)); // FusedActivation: none
  conv.push_back(Attr::makeFloat(0));
  conv.push_back(Attr::makeFloat(0));
  EMBER_ASSIGN_OR_RETURN(auto res, inferConv(views, conv));
  EMBER_RETURN_IF_ERR(checkOperands(in, 1, w.dims()[0]));
  return llvm::SmallVector<Type, 1>{asKind(res[0], ElemKind::Int32)};
}

/// Checks the Scale and Zero operands (1 and 2) of Quantize/Dequantize
/// against \p x and \p axis.
static llvm::Error checkScale(llvm::ArrayRef<TypeRef> in, const Type &x,
                              int64_t axis) {
  const Type &s = *in[1], &z = *in[2];
  if (s.getElemKind() != ElemKind::Float32 ||
      z.getElemKind() != ElemKind::Int32 || s.dims() != z.dims())
    return makeErrorF("scale {0} and zero point {1} must be Float32 and "
                      "Int32 of one shape",
                      s.toString(), z.toString());
  if (axis < 0 || (s.dims()[0] != 1 && axis >= int64_t(x.rank())))
    return makeErrorF("axis {0} is out of range for {1}", axis, x.toString());
  if (s.dims()[0] != 1 && s.dims()[0] != x.dims()[axis])
    return makeErrorF("scale {0} must have 1 or {1} elements", s.toString(),
                      x.dims()[axis]);
  return llvm::Error::success();
}

InferResult ember::inferDequantize(llvm::ArrayRef<TypeRef> in,
                                   const AttrList &attrs) {
  ElemKind k = in[0]->getElemKind();
  if (!isByteKind(k) && k != ElemKind::Int32)
    return makeErrorF("input {0} must be Int8, UInt8 or Int32",
                      in[0]->toString());
  EMBER_RETURN_IF_ERR(checkScale(in, *in[0], attrs[0].i));
  return llvm::SmallVector<Type, 1>{asKind(*in[0], ElemKind::Float32)};
}

InferResult ember::inferQuantize(llvm::ArrayRef<TypeRef> in,
                                 const AttrList &attrs) {
  ElemKind to = ElemKind(attrs[1].i);
  if (!isByteKind(to))
    return makeError("ElemTy must be Int8 or UInt8");
  EMBER_RETURN_IF_ERR(checkScale(in, *in[0], attrs[0].i));
  return llvm::SmallVector<Type, 1>{asKind(*in[0], to)};
}

/// Checks the requantization operands \p in[4..6] (Bias, Multiplier,
/// OutZero) of a product with \p channels channels and gives \p acc (the
/// Int32 sum's type) as ElemTy \p to.
static InferResult requantized(llvm::ArrayRef<TypeRef> in, const Type &acc,
                               dim_t channels, int64_t to) {
  if (!isByteKind(ElemKind(to)))
    return makeError("ElemTy must be Int8 or UInt8");
  const Type &bias = *in[4], &mult = *in[5], &zero = *in[6];
  auto oneOr = [&](const Type &t) {
    return t.dims()[0] == 1 || t.dims()[0] == channels;
  };
  if (bias.getElemKind() != ElemKind::Int32 || !oneOr(bias) ||
      mult.getElemKind() != ElemKind::Float32 || !oneOr(mult))
    return makeErrorF("bias {0} and multiplier {1} must be Int32 and "
                      "Float32 of 1 or {2} elements",
                      bias.toString(), mult.toString(), channels);
  if (zero.getElemKind() != ElemKind::Int32 || zero.dims()[0] != 1)
    return makeErrorF("output zero point {0} must be Int32 [1]",
                      zero.toString());
  return llvm::SmallVector<Type, 1>{asKind(acc, ElemKind(to))};
}

InferResult ember::inferRequantConv(llvm::ArrayRef<TypeRef> in,
                                    const AttrList &attrs) {
  AttrList conv(attrs.begin(), attrs.begin() + 4);
  EMBER_ASSIGN_OR_RETURN(auto acc, inferIntConv(in.take_front(4), conv));
  return requantized(in, acc[0], in[1]->dims()[0], attrs[4].i);
}

InferResult ember::inferRequantMatMul(llvm::ArrayRef<TypeRef> in,
                                      const AttrList &attrs) {
  EMBER_ASSIGN_OR_RETURN(auto acc, inferIntMatMul(in.take_front(4), {}));
  return requantized(in, acc[0], acc[0].dims().back(), attrs[0].i);
}

/// Checks the per-tensor scales and zero points (operands 2 to 7) of a
/// quantized elementwise op.
static llvm::Error checkTensorQuantization(llvm::ArrayRef<TypeRef> in) {
  for (unsigned i = 2; i < 8; i += 2)
    if (in[i]->getElemKind() != ElemKind::Float32 || in[i]->size() != 1 ||
        in[i + 1]->getElemKind() != ElemKind::Int32 || in[i + 1]->size() != 1)
      return makeErrorF("scale {0} and zero point {1} must be Float32 [1] "
                        "and Int32 [1]",
                        in[i]->toString(), in[i + 1]->toString());
  return llvm::Error::success();
}

InferResult ember::inferRequantAdd(llvm::ArrayRef<TypeRef> in,
                                   const AttrList &attrs) {
  if (!isByteKind(ElemKind(attrs[0].i)))
    return makeError("ElemTy must be Int8 or UInt8");
  const Type &a = *in[0], &b = *in[1];
  if (!isByteKind(a.getElemKind()) || !isByteKind(b.getElemKind()) ||
      a.dims() != b.dims())
    return makeErrorF("operands {0} and {1} must be Int8 or UInt8 of one "
                      "shape",
                      a.toString(), b.toString());
  EMBER_RETURN_IF_ERR(checkTensorQuantization(in));
  return llvm::SmallVector<Type, 1>{asKind(a, ElemKind(attrs[0].i))};
}

InferResult ember::inferRequantMul(llvm::ArrayRef<TypeRef> in,
                                   const AttrList &attrs) {
  if (!isByteKind(ElemKind(attrs[0].i)))
    return makeError("ElemTy must be Int8 or UInt8");
  const Type &a = *in[0], &b = *in[1];
  bool fits = a.dims().size() == b.dims().size();
  for (size_t i = 0; fits && i < a.dims().size(); ++i)
    fits = b.dims()[i] == a.dims()[i] || b.dims()[i] == 1;
  if (!isByteKind(a.getElemKind()) || !isByteKind(b.getElemKind()) || !fits)
    return makeErrorF("operands {0} and {1} must be Int8 or UInt8 of one "
                      "rank, each dim of the second the first's or 1",
                      a.toString(), b.toString());
  EMBER_RETURN_IF_ERR(checkTensorQuantization(in));
  return llvm::SmallVector<Type, 1>{asKind(a, ElemKind(attrs[0].i))};
}

InferResult ember::inferTableLookup(llvm::ArrayRef<TypeRef> in,
                                    const AttrList &) {
  const Type &table = *in[0], &x = *in[1];
  if (table.dims()[0] != 256 || !isByteKind(x.getElemKind()))
    return makeErrorF("table {0} must have 256 elements and input {1} be "
                      "Int8 or UInt8",
                      table.toString(), x.toString());
  return llvm::SmallVector<Type, 1>{Type(table.getElemKind(), x.dims())};
}
