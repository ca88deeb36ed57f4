//===- AttentionLayout.h - How Attention reads its heads --------*- C++ -*-===//
//
// An Attention reads Q, K and V as Transpose(X, XPerm) and stores its result
// as Transpose(result, OutPerm) (Ops.py), so a head split [B, T, H, D] ->
// [B, H, T, D] and the merge after it are strides, not copies. These
// helpers give the dims and element strides of those logical views for the
// backends that walk them (Interpreter, CPU); an empty perm is the identity.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_GRAPH_ATTENTIONLAYOUT_H
#define EMBER_GRAPH_ATTENTIONLAYOUT_H

#include "ember/Base/ElemKind.h"
#include "ember/Base/Type.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

namespace ember {

using AttnDims = llvm::SmallVector<int64_t, kMaxRank>;

/// True when \p perm is empty or a permutation of [0, rank) that keeps the
/// last axis last (the head dim stays contiguous).
inline bool isAttentionPerm(llvm::ArrayRef<int64_t> perm, size_t rank) {
  if (perm.empty())
    return true;
  if (perm.size() != rank || rank == 0 || perm.back() != int64_t(rank) - 1)
    return false;
  llvm::SmallVector<bool, kMaxRank> seen(rank, false);
  for (int64_t p : perm) {
    if (p < 0 || p >= int64_t(rank) || seen[p])
      return false;
    seen[p] = true;
  }
  return true;
}

/// The dims of Transpose(X, \p perm) for X of \p dims.
inline AttnDims permutedDims(llvm::ArrayRef<dim_t> dims,
                             llvm::ArrayRef<int64_t> perm) {
  AttnDims out(dims.begin(), dims.end());
  for (size_t i = 0; i < perm.size(); ++i)
    out[i] = dims[perm[i]];
  return out;
}

/// The element strides of the dims of Transpose(X, \p perm) for X stored
/// row-major with \p dims.
inline AttnDims permutedStrides(llvm::ArrayRef<dim_t> dims,
                                llvm::ArrayRef<int64_t> perm) {
  AttnDims rowMajor(dims.size(), 1);
  for (int i = int(dims.size()) - 2; i >= 0; --i)
    rowMajor[i] = rowMajor[i + 1] * dims[i + 1];
  return permutedDims(rowMajor, perm);
}

/// The element strides of an Attention's result dims when it is stored as
/// Transpose(result, \p outPerm) with \p stored dims: result dim outPerm[i]
/// is stored dim i.
inline AttnDims resultStrides(llvm::ArrayRef<dim_t> stored,
                              llvm::ArrayRef<int64_t> outPerm) {
  AttnDims rowMajor = permutedStrides(stored, {});
  if (outPerm.empty())
    return rowMajor;
  AttnDims out(stored.size(), 0);
  for (size_t i = 0; i < outPerm.size(); ++i)
    out[outPerm[i]] = rowMajor[i];
  return out;
}

/// The offset of flat batch index \p b over dims [0, n) of \p dims with
/// element \p strides.
inline int64_t batchOffset(int64_t b, llvm::ArrayRef<int64_t> dims,
                           llvm::ArrayRef<int64_t> strides, size_t n) {
  int64_t off = 0;
  for (int i = int(n) - 1; i >= 0; --i) {
    off += (b % dims[i]) * strides[i];
    b /= dims[i];
  }
  return off;
}

} // namespace ember

#endif
