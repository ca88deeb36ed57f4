//===- InferWindow.cpp - N-d pooling, transposed convolution, Resize ------===//
#include "Infer.h"

#include "ember/Base/Error.h"

using namespace ember;

using Dims = llvm::SmallVector<dim_t, kMaxRank>;
using Types = llvm::SmallVector<Type, 1>;

InferResult ember::inferPoolND(llvm::ArrayRef<TypeRef> in,
                               const AttrList &attrs) {
  const Type &x = *in[0];
  llvm::ArrayRef<int64_t> k = attrs[0].ints, s = attrs[1].ints,
                          p = attrs[2].ints, dil = attrs[3].ints;
  if (x.rank() < 3)
    return makeErrorF("input {0} needs N, C and spatial dims", x.toString());
  if (attrs[4].i && !isFloatKind(x.getElemKind()))
    return makeErrorF("average pooling needs a float input, got {0}",
                      x.toString());
  size_t n = x.rank() - 2;
  if (k.size() != n || s.size() != n || dil.size() != n || p.size() != 2 * n)
    return makeErrorF("kernel, strides, dilations and pads do not match the "
                      "{0} spatial dims of {1}",
                      n, x.toString());
  Dims d = {x.dims()[0], x.dims()[1]};
  for (size_t i = 0; i < n; ++i) {
    dim_t span = 0, padded = 0;
    bool bad = k[i] < 1 || s[i] < 1 || dil[i] < 1 || p[i] < 0 || p[i + n] < 0 ||
               __builtin_mul_overflow(dil[i], k[i] - 1, &span) ||
               __builtin_add_overflow(span, 1, &span) ||
               __builtin_add_overflow(x.dims()[2 + i], p[i], &padded) ||
               __builtin_add_overflow(padded, p[i + n], &padded);
    if (bad || padded < span || p[i] >= span)
      return makeErrorF("window {0} (stride {1}, dilation {2}, pads {3}) does "
                        "not fit {4}",
                        dimsToString(k), dimsToString(s), dimsToString(dil),
                        dimsToString(p), x.toString());
    d.push_back((padded - span) / s[i] + 1);
  }
  return Types{x.withDims(d)};
}

InferResult ember::inferConvTranspose(llvm::ArrayRef<TypeRef> in,
                                      const AttrList &attrs) {
  const Type &x = *in[0], &w = *in[1], &b = *in[2];
  int64_t group = attrs[3].i;
  llvm::ArrayRef<int64_t> dims = attrs[4].ints;
  size_t n = x.rank() < 3 ? 0 : x.rank() - 2;
  if (n == 0 || w.rank() != x.rank() || dims.size() != x.rank())
    return makeErrorF("input {0}, filter {1} and result dims {2} must share "
                      "a rank of at least 3",
                      x.toString(), w.toString(), dimsToString(dims));
  if (attrs[0].ints.size() != n || attrs[2].ints.size() != n ||
      attrs[1].ints.size() != 2 * n)
    return makeError("strides, dilations and pads do not match the spatial "
                     "rank");
  if (group < 1 || x.dims()[1] != w.dims()[0] || x.dims()[1] % group)
    return makeErrorF("filter {0} does not fit input {1} with group {2}",
                      w.toString(), x.toString(), group);
  dim_t m;
  if (__builtin_mul_overflow(w.dims()[1], group, &m))
    return makeErrorF("group {0} is too large", group);
  if (dims[0] != x.dims()[0] || dims[1] != m || b.rank() != 1 ||
      b.dims()[0] != m)
    return makeErrorF("result {0} or bias {1} does not have {2} channels",
                      dimsToString(dims), b.toString(), m);
  if (w.getElemKind() != x.getElemKind() || b.getElemKind() != x.getElemKind())
    return makeError("input, filter and bias must share an element kind");
  for (int64_t d : dims)
    if (d < 1)
      return makeErrorF("result dims {0} must be positive", dimsToString(dims));
  return Types{x.withDims(dims)};
}

InferResult ember::inferResize(llvm::ArrayRef<TypeRef> in,
                               const AttrList &attrs) {
  const Type &x = *in[0];
  llvm::ArrayRef<int64_t> dims = attrs[0].ints;
  if (dims.size() != x.rank() || attrs[1].floats.size() != x.rank())
    return makeErrorF("sizes {0} and scales must match the rank of {1}",
                      dimsToString(dims), x.toString());
  if (attrs[2].i < 0 || attrs[2].i > 2 || attrs[3].i < 0 || attrs[3].i > 3 ||
      attrs[4].i < 0 || attrs[4].i > 3)
    return makeError("unknown mode, coordinate mode or nearest mode");
  for (int64_t d : dims)
    if (d < 1)
      return makeErrorF("sizes {0} must be positive", dimsToString(dims));
  return Types{x.withDims(dims)};
}
