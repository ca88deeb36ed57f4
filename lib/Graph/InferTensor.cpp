//===- InferTensor.cpp - Gather, scatter, slice, pad and tile -------------===//
#include "Infer.h"

#include "ember/Base/Error.h"

using namespace ember;

using Dims = llvm::SmallVector<dim_t, kMaxRank>;
using Types = llvm::SmallVector<Type, 1>;

static llvm::Error checkIndices(const Type &idx) {
  if (idx.getElemKind() != ElemKind::Int64 &&
      idx.getElemKind() != ElemKind::Int32)
    return makeErrorF("indices {0} must be int32 or int64", idx.toString());
  return llvm::Error::success();
}

static llvm::Error checkAxis(int64_t axis, const Type &t) {
  if (axis < 0 || axis >= int64_t(t.rank()))
    return makeErrorF("axis {0} is out of range for {1}", axis, t.toString());
  return llvm::Error::success();
}

static llvm::Expected<Type> checkedDims(const Type &like,
                                        llvm::ArrayRef<dim_t> dims) {
  if (dims.size() > kMaxRank)
    return makeErrorF("result rank {0} exceeds {1}", dims.size(), kMaxRank);
  for (dim_t d : dims)
    if (d <= 0)
      return makeErrorF("result shape {0} has an empty dimension",
                        dimsToString(dims));
  return like.withDims(dims);
}

InferResult ember::inferGather(llvm::ArrayRef<TypeRef> in,
                               const AttrList &attrs) {
  const Type &x = *in[0], &idx = *in[1];
  int64_t axis = attrs[0].i;
  EMBER_RETURN_IF_ERR(checkIndices(idx));
  EMBER_RETURN_IF_ERR(checkAxis(axis, x));
  Dims d(x.dims().begin(), x.dims().begin() + axis);
  d.append(idx.dims().begin(), idx.dims().end());
  d.append(x.dims().begin() + axis + 1, x.dims().end());
  EMBER_ASSIGN_OR_RETURN(Type t, checkedDims(x, d));
  return Types{t};
}

InferResult ember::inferGatherElements(llvm::ArrayRef<TypeRef> in,
                                       const AttrList &attrs) {
  const Type &x = *in[0], &idx = *in[1];
  EMBER_RETURN_IF_ERR(checkIndices(idx));
  EMBER_RETURN_IF_ERR(checkAxis(attrs[0].i, x));
  if (idx.rank() != x.rank())
    return makeErrorF("indices {0} must have the rank of {1}", idx.toString(),
                      x.toString());
  // Off the axis, an index's coordinates address the data directly.
  for (size_t i = 0; i < x.rank(); ++i)
    if (int64_t(i) != attrs[0].i && idx.dims()[i] > x.dims()[i])
      return makeErrorF("indices {0} are larger than {1} off axis {2}",
                        idx.toString(), x.toString(), attrs[0].i);
  return Types{x.withDims(idx.dims())};
}

/// Shape of GatherND(x, idx) with \p b batch dims, or an error.
static llvm::Expected<Dims> gatherNDDims(const Type &x, const Type &idx,
                                         int64_t b) {
  EMBER_RETURN_IF_ERR(checkIndices(idx));
  int64_t q = idx.rank(), r = x.rank();
  if (q < 1 || b < 0 || b >= std::min(q, r))
    return makeErrorF("batch dims {0} do not fit {1} and {2}", b,
                      idx.toString(), x.toString());
  int64_t last = idx.dims()[q - 1];
  if (last < 1 || last > r - b)
    return makeErrorF("index tuples of length {0} do not fit {1}", last,
                      x.toString());
  for (int64_t i = 0; i < b; ++i)
    if (x.dims()[i] != idx.dims()[i])
      return makeErrorF("batch dims of {0} and {1} differ", x.toString(),
                        idx.toString());
  Dims d(idx.dims().begin(), idx.dims().end() - 1);
  d.append(x.dims().begin() + b + last, x.dims().end());
  return d;
}

InferResult ember::inferGatherND(llvm::ArrayRef<TypeRef> in,
                                 const AttrList &attrs) {
  EMBER_ASSIGN_OR_RETURN(Dims d, gatherNDDims(*in[0], *in[1], attrs[0].i));
  if (d.empty())
    d.push_back(1); // Handled by the importer with a reshape.
  EMBER_ASSIGN_OR_RETURN(Type t, checkedDims(*in[0], d));
  return Types{t};
}

static llvm::Error checkReduction(int64_t r) {
  if (r < 0 || r > 4)
    return makeErrorF("unknown reduction {0}", r);
  return llvm::Error::success();
}

InferResult ember::inferScatterElements(llvm::ArrayRef<TypeRef> in,
                                        const AttrList &attrs) {
  const Type &x = *in[0], &idx = *in[1], &upd = *in[2];
  EMBER_RETURN_IF_ERR(checkIndices(idx));
  EMBER_RETURN_IF_ERR(checkAxis(attrs[0].i, x));
  EMBER_RETURN_IF_ERR(checkReduction(attrs[1].i));
  if (idx.rank() != x.rank() || !idx.isSameShape(upd) ||
      upd.getElemKind() != x.getElemKind())
    return makeErrorF("indices {0} and updates {1} do not fit data {2}",
                      idx.toString(), upd.toString(), x.toString());
  return Types{x};
}

InferResult ember::inferScatterND(llvm::ArrayRef<TypeRef> in,
                                  const AttrList &attrs) {
  const Type &x = *in[0], &idx = *in[1], &upd = *in[2];
  EMBER_RETURN_IF_ERR(checkReduction(attrs[0].i));
  EMBER_ASSIGN_OR_RETURN(Dims d, gatherNDDims(x, idx, 0));
  if (d.empty())
    d.push_back(1);
  if (upd.dims() != llvm::ArrayRef<dim_t>(d) ||
      upd.getElemKind() != x.getElemKind())
    return makeErrorF("updates {0} must have shape {1}", upd.toString(),
                      dimsToString(d));
  return Types{x};
}

InferResult ember::inferSlice(llvm::ArrayRef<TypeRef> in,
                              const AttrList &attrs) {
  const Type &x = *in[0];
  llvm::ArrayRef<int64_t> starts = attrs[0].ints, steps = attrs[1].ints,
                          dims = attrs[2].ints;
  if (starts.size() != x.rank() || steps.size() != x.rank() ||
      dims.size() != x.rank())
    return makeErrorF("starts, steps and dims must each have {0} entries",
                      x.rank());
  for (unsigned i = 0; i < x.rank(); ++i) {
    int64_t last = starts[i] + (dims[i] - 1) * steps[i];
    if (dims[i] < 1 || steps[i] == 0 || starts[i] < 0 ||
        starts[i] >= x.dims()[i] || last < 0 || last >= x.dims()[i])
      return makeErrorF("slice of dim {0} (start {1}, step {2}, count {3}) "
                        "leaves {4}",
                        i, starts[i], steps[i], dims[i], x.toString());
  }
  return Types{x.withDims(dims)};
}

InferResult ember::inferPad(llvm::ArrayRef<TypeRef> in, const AttrList &attrs) {
  const Type &x = *in[0];
  llvm::ArrayRef<int64_t> pads = attrs[0].ints;
  int64_t mode = attrs[1].i;
  unsigned r = x.rank();
  if (pads.size() != 2 * r)
    return makeErrorF("expected {0} pads for {1}, got {2}", 2 * r, x.toString(),
                      pads.size());
  if (mode < 0 || mode > 2)
    return makeErrorF("unknown pad mode {0}", mode);
  Dims d;
  for (unsigned i = 0; i < r; ++i) {
    if (pads[i] < 0 || pads[i + r] < 0)
      return makeErrorF("pads {0} must be non-negative", dimsToString(pads));
    if (mode == 1 && (pads[i] >= x.dims()[i] || pads[i + r] >= x.dims()[i]))
      return makeErrorF("reflect pads {0} must be smaller than the dims of "
                        "{1}",
                        dimsToString(pads), x.toString());
    dim_t v;
    if (__builtin_add_overflow(x.dims()[i], pads[i], &v) ||
        __builtin_add_overflow(v, pads[i + r], &v))
      return makeErrorF("pads {0} overflow the dims of {1}", dimsToString(pads),
                        x.toString());
    d.push_back(v);
  }
  return Types{x.withDims(d)};
}

InferResult ember::inferTile(llvm::ArrayRef<TypeRef> in,
                             const AttrList &attrs) {
  const Type &x = *in[0];
  llvm::ArrayRef<int64_t> reps = attrs[0].ints;
  if (reps.size() != x.rank())
    return makeErrorF("expected {0} repeats, got {1}", x.rank(), reps.size());
  Dims d;
  for (unsigned i = 0; i < x.rank(); ++i) {
    dim_t v;
    if (__builtin_mul_overflow(x.dims()[i], reps[i], &v))
      return makeErrorF("repeats {0} overflow the dims of {1}",
                        dimsToString(reps), x.toString());
    d.push_back(v);
  }
  EMBER_ASSIGN_OR_RETURN(Type t, checkedDims(x, d));
  return Types{t};
}
