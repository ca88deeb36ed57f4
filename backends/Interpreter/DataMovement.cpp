//===- DataMovement.cpp - Transpose, broadcast and concat kernels --------===//
//
// These move bytes only, so one implementation serves every element kind.
//
//===----------------------------------------------------------------------===//
#include "Kernels.h"

#include <cstring>

using namespace ember;
using namespace ember::interp;

/// Calls fn(outIndex, inIndex) for every element of an output of dims
/// \p outDims, where input index = sum(coord[i] * inStrides[i]).
template <typename Fn>
static void forEachIndex(llvm::ArrayRef<dim_t> outDims,
                         llvm::ArrayRef<dim_t> inStrides, Fn fn) {
  unsigned r = outDims.size();
  llvm::SmallVector<dim_t, kMaxRank> coord(r, 0);
  dim_t total = 1;
  for (dim_t d : outDims)
    total *= d;
  dim_t inIdx = 0;
  for (dim_t o = 0; o < total; ++o) {
    fn(o, inIdx);
    for (int i = int(r) - 1; i >= 0; --i) {
      inIdx += inStrides[i];
      if (++coord[i] < outDims[i])
        break;
      inIdx -= coord[i] * inStrides[i];
      coord[i] = 0;
    }
  }
}

static void copyElements(char *dst, const char *src, size_t esize,
                         llvm::ArrayRef<dim_t> outDims,
                         llvm::ArrayRef<dim_t> inStrides) {
  forEachIndex(outDims, inStrides, [&](dim_t o, dim_t i) {
    std::memcpy(dst + o * esize, src + i * esize, esize);
  });
}

static void transpose(const TransposeInst &I, const ExecContext &ctx) {
  TypeRef in = I.getInput()->getType();
  auto inStrides = in->strides();
  llvm::SmallVector<dim_t, kMaxRank> strides;
  for (int64_t p : I.getShuffle())
    strides.push_back(inStrides[p]);
  copyElements(ctx.addr(I.getDest()), ctx.addr(I.getInput()),
               elemSize(in->getElemKind()), I.getDest()->getType()->dims(),
               strides);
}

static void broadcast(const BroadcastInst &I, const ExecContext &ctx) {
  TypeRef in = I.getInput()->getType();
  auto strides = in->strides();
  for (unsigned i = 0; i < in->rank(); ++i)
    if (in->dims()[i] == 1)
      strides[i] = 0;
  copyElements(ctx.addr(I.getDest()), ctx.addr(I.getInput()),
               elemSize(in->getElemKind()), I.getDest()->getType()->dims(),
               strides);
}

static void concat(const ConcatInst &I, const ExecContext &ctx) {
  TypeRef out = I.getDest()->getType();
  int64_t axis = I.getAxis();
  size_t esize = elemSize(out->getElemKind());
  dim_t outer = 1, inner = 1;
  for (int64_t i = 0; i < axis; ++i)
    outer *= out->dims()[i];
  for (unsigned i = axis + 1; i < out->rank(); ++i)
    inner *= out->dims()[i];
  char *dst = ctx.addr(I.getDest());
  dim_t rowOut = out->dims()[axis] * inner * esize, offset = 0;
  for (Value *v : I.getInputs()) {
    dim_t rowIn = v->getType()->dims()[axis] * inner * esize;
    const char *src = ctx.addr(v);
    for (dim_t o = 0; o < outer; ++o)
      std::memcpy(dst + o * rowOut + offset, src + o * rowIn, rowIn);
    offset += rowIn;
  }
}

bool interp::executeDataMovement(const Instruction &I, const ExecContext &ctx) {
  return runKernelFor(I, ctx, transpose, broadcast, concat);
}
