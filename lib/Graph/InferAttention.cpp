//===- InferAttention.cpp - Result types of the attention fusions ---------===//
//
// ScaledSoftmax and Attention read an optional additive mask by broadcast:
// it has the scores' rank and each of its dims is the scores' or 1, so a
// padding mask [B,1,1,T] or a causal one [1,1,T,T] is never expanded.
// Attention's Q, K, V and result go through its perms (AttentionLayout.h).
//
//===----------------------------------------------------------------------===//
#include "Infer.h"

#include "ember/Base/Error.h"
#include "ember/Graph/AttentionLayout.h"

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
                                  const AttrList &attrs) {
  const Type &qt = *in[0], &kt = *in[1], &vt = *in[2];
  size_t r = qt.rank();
  if (qt.getElemKind() != ElemKind::Float32 ||
      vt.getElemKind() != ElemKind::Float32 || kt.rank() != r || vt.rank() != r)
    return makeErrorF("Q {0}, K {1}, V {2}: float32 of one rank expected",
                      qt.toString(), kt.toString(), vt.toString());
  // attrs: Scale, Causal, QPerm, KPerm, VPerm, OutPerm. A perm that moved
  // the last axis would make the head dim strided, which no kernel walks.
  static const char *const kPermNames[] = {"QPerm", "KPerm", "VPerm",
                                           "OutPerm"};
  for (size_t a = 2; a < 6; ++a)
    if (!isAttentionPerm(attrs[a].ints, r))
      return makeErrorF("{0} {1} is not empty or a permutation of the "
                        "rank-{2} dims that keeps the last one last",
                        kPermNames[a - 2], dimsToString(attrs[a].ints), r);
  Dims q = permutedDims(qt.dims(), attrs[2].ints);
  Dims k = permutedDims(kt.dims(), attrs[3].ints);
  Dims v = permutedDims(vt.dims(), attrs[4].ints);
  bool ok = q[r - 1] == k[r - 1] && k[r - 2] == v[r - 2];
  for (size_t i = 0; ok && i + 2 < r; ++i)
    ok = q[i] == k[i] && q[i] == v[i];
  if (!ok)
    return makeErrorF("Q {0}, K {1}, V {2} do not agree", dimsToString(q),
                      dimsToString(k), dimsToString(v));
  Dims scores = q;
  scores[r - 1] = k[r - 2];
  EMBER_RETURN_IF_ERR(checkMask(in, 3, scores));
  Dims out = q;
  out[r - 1] = v[r - 1];
  return llvm::SmallVector<Type, 1>{
      Type(ElemKind::Float32, permutedDims(out, attrs[5].ints))};
}
