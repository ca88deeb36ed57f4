//===- Infer.cpp - Result-type inference for the op table -----------------===//
#include "Infer.h"

#include "ember/Base/Error.h"
#include "ember/Graph/Node.h"

using namespace ember;

using Dims = llvm::SmallVector<dim_t, kMaxRank>;

InferResult ember::inferSameAsInput0(llvm::ArrayRef<TypeRef> in,
                                     const AttrList &) {
  return llvm::SmallVector<Type, 1>{*in[0]};
}

InferResult ember::inferSave(llvm::ArrayRef<TypeRef>, const AttrList &) {
  return llvm::SmallVector<Type, 1>{};
}

InferResult ember::inferSplat(llvm::ArrayRef<TypeRef>, const AttrList &attrs) {
  return llvm::SmallVector<Type, 1>{Type(ElemKind(attrs[1].i), attrs[0].ints)};
}

/// A MatMul's epilogue operands \p ep (a bias [N], then a residual of the
/// \p result type, each optional) and its activation.
static llvm::Error checkMatMulEpilogue(llvm::ArrayRef<TypeRef> ep,
                                       const AttrList &attrs,
                                       const Type &result) {
  if (attrs.size() > 1 &&
      (attrs[1].i < 0 || attrs[1].i >= int64_t(FusedActivation::NumKinds)))
    return makeErrorF("unknown fused activation {0}", attrs[1].i);
  if (ep.size() > 2)
    return makeErrorF("{0} epilogue operands (at most a bias and a residual)",
                      ep.size());
  dim_t n = result.dims().back();
  for (size_t i = 0; i < ep.size(); ++i) {
    const Type &e = *ep[i];
    bool bias = i == 0 && e.rank() == 1 && e.dims()[0] == n &&
                e.getElemKind() == result.getElemKind();
    if (!bias && e != result)
      return makeErrorF("epilogue operand {0} is neither a bias [{1}] nor a "
                        "residual {2}",
                        e.toString(), n, result.toString());
  }
  return llvm::Error::success();
}

InferResult ember::inferMatMul(llvm::ArrayRef<TypeRef> in,
                               const AttrList &attrs) {
  const Type &a = *in[0], &b = *in[1];
  if (a.getElemKind() != b.getElemKind())
    return makeErrorF("element kinds differ: {0} vs {1}", a.toString(),
                      b.toString());
  if (a.rank() != b.rank())
    return makeErrorF("operands must have the same rank: {0} vs {1}",
                      a.toString(), b.toString());
  unsigned r = a.rank();
  bool transB = attrs[0].i;
  Dims d(a.dims().begin(), a.dims().end());
  for (unsigned i = 0; i + 2 < r; ++i) {
    dim_t x = a.dims()[i], y = b.dims()[i];
    if (x != y && x != 1 && y != 1)
      return makeErrorF("batch dimensions are not broadcastable: {0} vs {1}",
                        a.toString(), b.toString());
    d[i] = x == 1 ? y : x;
  }
  dim_t kb = b.dims()[transB ? r - 1 : r - 2];
  if (a.dims()[r - 1] != kb)
    return makeErrorF("inner dimensions differ: {0} x {1}{2}", a.toString(),
                      b.toString(), transB ? " (transposed)" : "");
  d[r - 1] = b.dims()[transB ? r - 2 : r - 1];
  // BFloat16 operands accumulate in, and give, Float32 (docs/Precision.md).
  Type result = a.getElemKind() == ElemKind::BFloat16
                    ? Type(ElemKind::Float32, d)
                    : a.withDims(d);
  EMBER_RETURN_IF_ERR(checkMatMulEpilogue(in.drop_front(2), attrs, result));
  return llvm::SmallVector<Type, 1>{result};
}

InferResult ember::inferGemm(llvm::ArrayRef<TypeRef> in,
                             const AttrList &attrs) {
  const Type &a = *in[0], &b = *in[1], &c = *in[2];
  if (a.getElemKind() != b.getElemKind()) // Malformed models mix them.
    return makeErrorF("element kinds differ: A {0}, B {1}", a.toString(),
                      b.toString());
  bool transA = attrs[2].i, transB = attrs[3].i;
  dim_t m = transA ? a.dims()[1] : a.dims()[0];
  dim_t ka = transA ? a.dims()[0] : a.dims()[1];
  dim_t kb = transB ? b.dims()[1] : b.dims()[0];
  dim_t n = transB ? b.dims()[0] : b.dims()[1];
  if (ka != kb)
    return makeErrorF("inner dimensions differ: A {0}{1}, B {2}{3}",
                      a.toString(), transA ? " (transposed)" : "", b.toString(),
                      transB ? " (transposed)" : "");
  Type result = a.withDims({m, n});
  if (c != result)
    return makeErrorF("C must have the result type {0}, got {1}",
                      result.toString(), c.toString());
  return llvm::SmallVector<Type, 1>{result};
}

/// Output size of one spatial dim of a window op, or an error.
static llvm::Expected<dim_t> windowOut(dim_t in, dim_t kernel, dim_t stride,
                                       dim_t padBegin, dim_t padEnd,
                                       dim_t dilation) {
  if (kernel <= 0 || stride <= 0 || dilation <= 0 || padBegin < 0 || padEnd < 0)
    return makeErrorF("kernel {0}, stride {1}, dilation {2} must be positive "
                      "and pads {3}, {4} non-negative",
                      kernel, stride, dilation, padBegin, padEnd);
  dim_t span, padded;
  if (__builtin_mul_overflow(dilation, kernel - 1, &span) ||
      __builtin_add_overflow(span, 1, &span) ||
      __builtin_add_overflow(in, padBegin, &padded) ||
      __builtin_add_overflow(padded, padEnd, &padded))
    return makeErrorF("kernel {0}, dilation {1} and pads {2}, {3} overflow",
                      kernel, dilation, padBegin, padEnd);
  if (padded < span)
    return makeErrorF("window of extent {0} is larger than the padded input "
                      "extent {1}",
                      span, padded);
  return (padded - span) / stride + 1;
}

static llvm::Error checkWindowAttrs(llvm::ArrayRef<int64_t> strides,
                                    llvm::ArrayRef<int64_t> pads,
                                    llvm::ArrayRef<int64_t> kernel) {
  if (strides.size() != 2 || pads.size() != 4 || kernel.size() != 2)
    return makeErrorF("expected 2 kernel dims, 2 strides and 4 pads, got "
                      "{0}, {1}, {2}",
                      kernel.size(), strides.size(), pads.size());
  return llvm::Error::success();
}

InferResult ember::inferConv(llvm::ArrayRef<TypeRef> in,
                             const AttrList &attrs) {
  const Type &x = *in[0], &w = *in[1], &b = *in[2];
  llvm::ArrayRef<int64_t> strides = attrs[0].ints, pads = attrs[1].ints,
                          dil = attrs[2].ints;
  int64_t group = attrs[3].i;
  dim_t kernel[2] = {w.dims()[2], w.dims()[3]};
  EMBER_RETURN_IF_ERR(checkWindowAttrs(strides, pads, kernel));
  if (dil.size() != 2)
    return makeErrorF("expected 2 dilations, got {0}", dil.size());
  dim_t c = x.dims()[1], m = w.dims()[0];
  if (group <= 0 || c % group || m % group)
    return makeErrorF("group {0} must divide input channels {1} and output "
                      "channels {2}",
                      group, c, m);
  if (w.dims()[1] != c / group)
    return makeErrorF("filter {0} expects {1} channels per group, input {2} "
                      "has {3} with group {4}",
                      w.toString(), w.dims()[1], x.toString(), c, group);
  if (b.dims()[0] != m)
    return makeErrorF("bias {0} must have {1} elements", b.toString(), m);
  // A BFloat16 filter on a Float32 input: the input is read rounded to
  // BFloat16 and the sums stay Float32 (convert-precision,
  // docs/Precision.md).
  bool bf16 = w.getElemKind() == ElemKind::BFloat16 &&
              x.getElemKind() == ElemKind::Float32;
  if ((!bf16 && w.getElemKind() != x.getElemKind()) ||
      b.getElemKind() != x.getElemKind())
    return makeError("input, filter and bias must share an element kind");
  Dims d = {x.dims()[0], m, 0, 0};
  for (int i = 0; i < 2; ++i) {
    EMBER_ASSIGN_OR_RETURN(d[2 + i],
                           windowOut(x.dims()[2 + i], kernel[i], strides[i],
                                     pads[i], pads[i + 2], dil[i]));
  }
  Type result = x.withDims(d);
  if (in.size() > 4)
    return makeError("at most one residual operand is allowed");
  if (in.size() == 4 && *in[3] != result)
    return makeErrorF("residual {0} must have the result type {1}",
                      in[3]->toString(), result.toString());
  if (attrs[4].i < 0 || attrs[4].i >= int64_t(FusedActivation::NumKinds))
    return makeErrorF("unknown fused activation {0}", attrs[4].i);
  return llvm::SmallVector<Type, 1>{result};
}

InferResult ember::inferPool(llvm::ArrayRef<TypeRef> in,
                             const AttrList &attrs) {
  const Type &x = *in[0];
  llvm::ArrayRef<int64_t> kernel = attrs[0].ints, strides = attrs[1].ints,
                          pads = attrs[2].ints;
  EMBER_RETURN_IF_ERR(checkWindowAttrs(strides, pads, kernel));
  Dims d = {x.dims()[0], x.dims()[1], 0, 0};
  for (int i = 0; i < 2; ++i) {
    // A window that starts in the leading padding would see no input.
    if (pads[i] >= kernel[i])
      return makeErrorF("leading pads {0} must be smaller than the kernel {1}",
                        dimsToString(pads), dimsToString(kernel));
    EMBER_ASSIGN_OR_RETURN(d[2 + i],
                           windowOut(x.dims()[2 + i], kernel[i], strides[i],
                                     pads[i], pads[i + 2], 1));
  }
  return llvm::SmallVector<Type, 1>{x.withDims(d)};
}

InferResult ember::inferBatchNorm(llvm::ArrayRef<TypeRef> in,
                                  const AttrList &) {
  const Type &x = *in[0], &s = *in[1];
  if (s.dims()[0] != x.dims()[1] || s.getElemKind() != x.getElemKind())
    return makeErrorF("parameters {0} do not match the {1} channels of {2}",
                      s.toString(), x.dims()[1], x.toString());
  return llvm::SmallVector<Type, 1>{x};
}

InferResult ember::inferLayerNorm(llvm::ArrayRef<TypeRef> in,
                                  const AttrList &) {
  const Type &x = *in[0], &s = *in[1];
  if (s.dims()[0] != x.dims().back() || s.getElemKind() != x.getElemKind())
    return makeErrorF("parameters {0} do not match the last axis of {1}",
                      s.toString(), x.toString());
  return llvm::SmallVector<Type, 1>{x};
}

InferResult ember::inferSoftmax(llvm::ArrayRef<TypeRef> in,
                                const AttrList &attrs) {
  int64_t axis = attrs[0].i;
  if (axis < 0 || axis >= int64_t(in[0]->rank()))
    return makeErrorF("axis {0} is out of range for {1}", axis,
                      in[0]->toString());
  return llvm::SmallVector<Type, 1>{*in[0]};
}

InferResult ember::inferTranspose(llvm::ArrayRef<TypeRef> in,
                                  const AttrList &attrs) {
  llvm::ArrayRef<int64_t> perm = attrs[0].ints;
  const Type &x = *in[0];
  if (perm.size() != x.rank())
    return makeErrorF("permutation {0} does not match rank of {1}",
                      dimsToString(perm), x.toString());
  llvm::SmallVector<bool, kMaxRank> seen(x.rank(), false);
  Dims d;
  for (int64_t p : perm) {
    if (p < 0 || p >= int64_t(x.rank()) || seen[p])
      return makeErrorF("{0} is not a permutation", dimsToString(perm));
    seen[p] = true;
    d.push_back(x.dims()[p]);
  }
  return llvm::SmallVector<Type, 1>{x.withDims(d)};
}

InferResult ember::inferReshape(llvm::ArrayRef<TypeRef> in,
                                const AttrList &attrs) {
  Type result = in[0]->withDims(attrs[0].ints);
  if (result.size() != in[0]->size())
    return makeErrorF("cannot reshape {0} to {1}: element counts differ",
                      in[0]->toString(), dimsToString(attrs[0].ints));
  return llvm::SmallVector<Type, 1>{result};
}

InferResult ember::inferBroadcast(llvm::ArrayRef<TypeRef> in,
                                  const AttrList &attrs) {
  llvm::ArrayRef<int64_t> dims = attrs[0].ints;
  const Type &x = *in[0];
  if (dims.size() != x.rank())
    return makeErrorF("target {0} must have the rank of {1}",
                      dimsToString(dims), x.toString());
  for (unsigned i = 0; i < x.rank(); ++i)
    if (x.dims()[i] != 1 && x.dims()[i] != dims[i])
      return makeErrorF("cannot broadcast {0} to {1}", x.toString(),
                        dimsToString(dims));
  return llvm::SmallVector<Type, 1>{x.withDims(dims)};
}

InferResult ember::inferConcat(llvm::ArrayRef<TypeRef> in,
                               const AttrList &attrs) {
  if (in.empty())
    return makeError("needs at least one operand");
  int64_t axis = attrs[0].i;
  const Type &first = *in[0];
  if (axis < 0 || axis >= int64_t(first.rank()))
    return makeErrorF("axis {0} is out of range for {1}", axis,
                      first.toString());
  Dims d(first.dims().begin(), first.dims().end());
  d[axis] = 0;
  for (TypeRef t : in) {
    if (t->rank() != first.rank() || t->getElemKind() != first.getElemKind())
      return makeErrorF("operands {0} and {1} cannot be joined",
                        first.toString(), t->toString());
    for (unsigned i = 0; i < first.rank(); ++i)
      if (int64_t(i) != axis && t->dims()[i] != first.dims()[i])
        return makeErrorF("operands {0} and {1} differ outside axis {2}",
                          first.toString(), t->toString(), axis);
    d[axis] += t->dims()[axis];
  }
  return llvm::SmallVector<Type, 1>{first.withDims(d)};
}
