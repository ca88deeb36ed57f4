//===- InferAttention.cpp - Result types of the attention fusions ---------===//
//
// ScaledSoftmax and Attention read an optional additive mask by broadcast:
// it has the scores' rank and each of its dims is the scores' or 1, so a
// padding mask [B,1,1,T] or a causal one [1,1,T,T] is never expanded.
//
//===----------------------------------------------------------------------===//
#include "Infer.h"

#include "ember/Base/Error.h"

using namespace ember;

using Dims = llvm::SmallVector<dim_t, kMaxRank>;

/// Checks that \p in[first..] holds at most one Float32 mask that
/// broadcasts to \p scores.
static llvm::Error checkMask(llvm::ArrayRef<TypeRef> in, size_t first,
                             llvm::ArrayRef<dim_t> scores) {
  if (in.size() > first + 1)
    return makeErrorF("at most one mask, got {0}", in.size() - first);
  if (in.size() == first)
    return llvm::Error::success();
  const Type &m = *in[first];
  bool ok = m.getElemKind() == ElemKind::Float32 && m.rank() == scores.size();
  for (size_t i = 0; ok && i < scores.size(); ++i)
    ok = m.dims()[i] == scores[i] || m.dims()[i] == 1;
  if (!ok)
    return makeErrorF("mask {0} does not broadcast to the scores {1}",
                      m.toString(), dimsToString(scores));
  return llvm::Error::success();
}

InferResult ember::inferScaledSoftmax(llvm::ArrayRef<TypeRef> in,
                                      const AttrList &) {
  const Type &x = *in[0];
  if (x.getElemKind() != ElemKind::Float32)
    return makeErrorF("input {0} is not float32", x.toString());
  EMBER_RETURN_IF_ERR(checkMask(in, 1, x.dims()));
  return llvm::SmallVector<Type, 1>{x};
}

InferResult ember::inferAttention(llvm::ArrayRef<TypeRef> in,
                                  const AttrList &) {
  const Type &q = *in[0], &k = *in[1], &v = *in[2];
  size_t r = q.rank();
  if (q.getElemKind() != ElemKind::Float32 ||
      v.getElemKind() != ElemKind::Float32 || k.rank() != r || v.rank() != r)
    return makeErrorF("Q {0}, K {1}, V {2}: float32 of one rank expected",
                      q.toString(), k.toString(), v.toString());
  bool ok =
      q.dims()[r - 1] == k.dims()[r - 1] && k.dims()[r - 2] == v.dims()[r - 2];
  for (size_t i = 0; ok && i + 2 < r; ++i)
    ok = q.dims()[i] == k.dims()[i] && q.dims()[i] == v.dims()[i];
  if (!ok)
    return makeErrorF("Q {0}, K {1}, V {2} do not agree", q.toString(),
                      k.toString(), v.toString());
  Dims scores(q.dims().begin(), q.dims().end());
  scores[r - 1] = k.dims()[r - 2];
  EMBER_RETURN_IF_ERR(checkMask(in, 3, scores));
  Dims out(q.dims().begin(), q.dims().end());
  out[r - 1] = v.dims()[r - 1];
  return llvm::SmallVector<Type, 1>{Type(ElemKind::Float32, out)};
}
