//===- ConstantImage.cpp - Appending to and folding into the image --------===//
#include "ember/Kernel/ConstantImage.h"
#include "ember/Kernel/LowerToKernel.h"

#include <cstring>

using namespace ember;
using namespace ember::kir;

namespace {
size_t alignTo64(size_t n) { return (n + 63) / 64 * 64; }
} // namespace

Buffer kir::appendZeros(std::vector<uint8_t> &constants, size_t bytes,
                        std::string name, ElemKind kind) {
  size_t offset = (constants.size() + 63) / 64 * 64;
  constants.resize(offset + bytes, 0);
  return Buffer{Region::Constant, offset, bytes, kind, std::move(name)};
}

Buffer kir::appendConstant(std::vector<uint8_t> &constants, const void *data,
                           size_t bytes, std::string name, ElemKind kind) {
  Buffer b = appendZeros(constants, bytes, std::move(name), kind);
  std::memcpy(constants.data() + b.offset, data, bytes);
  return b;
}

/// The transposed copy is written once, here; at run time only a
/// contiguous copy into the result buffer remains (Gemm's transB on a
/// weight, say).
std::optional<Kernel>
kir::foldConstantTranspose(const TransposeInst &I, const MemoryPlan &plan,
                           std::vector<uint8_t> &constants) {
  auto *w = llvm::dyn_cast<WeightVar>(getOrigin(I.getInput()));
  TypeRef in = I.getInput()->getType(), outTy = I.getDest()->getType();
  if (!w || !w->isConstant() || in->size() == 0)
    return std::nullopt;
  size_t esize = elemSize(in->getElemKind()), bytes = in->sizeInBytes();
  Buffer src = bufferFor(I.getInput(), plan);
  size_t offset = alignTo64(constants.size());
  constants.resize(offset + bytes, 0);
  const uint8_t *from = constants.data() + src.offset;
  uint8_t *to = constants.data() + offset;
  auto inStrides = in->strides();
  unsigned r = outTy->rank();
  llvm::SmallVector<dim_t, kMaxRank> coord(r, 0);
  for (dim_t o = 0, e = outTy->size(); o < e; ++o) {
    dim_t i = 0;
    for (unsigned d = 0; d < r; ++d)
      i += coord[d] * inStrides[I.getShuffle()[d]];
    std::memcpy(to + o * esize, from + i * esize, esize);
    for (int d = int(r) - 1; d >= 0 && ++coord[d] == outTy->dims()[d]; --d)
      coord[d] = 0;
  }
  Kernel k(I.getName());
  unsigned dst = k.addBuffer(bufferFor(I.getDest(), plan));
  unsigned cst =
      k.addBuffer(Buffer{Region::Constant, offset, bytes, in->getElemKind(),
                         I.getName().str() + ".folded"});
  unsigned v = k.newVar();
  k.body() = {
      Kernel::loop(v, outTy->size(), /*parallel=*/true,
                   {Kernel::store(dst, k.var(v), k.load(cst, k.var(v)))})};
  return k;
}
