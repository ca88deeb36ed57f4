//===- InferReduce.cpp - Reductions, ArgMax/ArgMin, TopK, NMSKeep -------===//
#include "Infer.h"

#include "ember/Base/Error.h"

using namespace ember;

using Dims = llvm::SmallVector<dim_t, kMaxRank>;
using Types = llvm::SmallVector<Type, 1>;

static llvm::Error checkAxis(int64_t axis, const Type &t) {
  if (axis < 0 || axis >= int64_t(t.rank()))
    return makeErrorF("axis {0} is out of range for {1}", axis, t.toString());
  return llvm::Error::success();
}

InferResult ember::inferReduce(llvm::ArrayRef<TypeRef> in,
                               const AttrList &attrs) {
  const Type &x = *in[0];
  llvm::ArrayRef<int64_t> axes = attrs[0].ints;
  bool keep = attrs[1].i;
  for (size_t i = 0; i < axes.size(); ++i) {
    EMBER_RETURN_IF_ERR(checkAxis(axes[i], x));
    if (i && axes[i] <= axes[i - 1])
      return makeErrorF("axes {0} must be sorted and distinct",
                        dimsToString(axes));
  }
  Dims d;
  for (unsigned i = 0; i < x.rank(); ++i) {
    bool reduced = llvm::is_contained(axes, int64_t(i));
    if (!reduced)
      d.push_back(x.dims()[i]);
    else if (keep)
      d.push_back(1);
  }
  return Types{x.withDims(d)};
}

InferResult ember::inferArgReduce(llvm::ArrayRef<TypeRef> in,
                                  const AttrList &attrs) {
  const Type &x = *in[0];
  int64_t axis = attrs[0].i;
  EMBER_RETURN_IF_ERR(checkAxis(axis, x));
  Dims d(x.dims().begin(), x.dims().end());
  if (attrs[1].i)
    d[axis] = 1;
  else
    d.erase(d.begin() + axis);
  return Types{Type(ElemKind::Int64, d)};
}

InferResult ember::inferTopK(llvm::ArrayRef<TypeRef> in,
                             const AttrList &attrs) {
  const Type &x = *in[0];
  int64_t k = attrs[0].i, axis = attrs[1].i;
  EMBER_RETURN_IF_ERR(checkAxis(axis, x));
  if (k < 1 || k > x.dims()[axis])
    return makeErrorF("K = {0} is out of range for axis {1} of {2}", k, axis,
                      x.toString());
  Dims d(x.dims().begin(), x.dims().end());
  d[axis] = k;
  return Types{x.withDims(d), Type(ElemKind::Int64, d)};
}

InferResult ember::inferNMSKeep(llvm::ArrayRef<TypeRef> in, const AttrList &) {
  const Type &cand = *in[0], &corners = *in[1];
  if (cand.rank() != 2 || corners.rank() != 3 ||
      corners.dims()[0] != cand.dims()[0] ||
      corners.dims()[1] != cand.dims()[1] || corners.dims()[2] != 4 ||
      corners.getElemKind() != cand.getElemKind())
    return makeErrorF("expects candidates [R, B] and corners [R, B, 4] of "
                      "one kind, got {0} and {1}",
                      cand.toString(), corners.toString());
  for (unsigned i = 2; i < 4; ++i)
    if (in[i]->size() != 1 || in[i]->getElemKind() != cand.getElemKind())
      return makeErrorF("operand {0} must hold one value of the candidates' "
                        "kind, got {1}",
                        i, in[i]->toString());
  return Types{cand, Type(ElemKind::Int64, cand.dims())};
}
