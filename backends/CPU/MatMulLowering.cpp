//===- MatMulLowering.cpp - Operands of the CPU's float MatMul ------------===//
//
// What CPULowering::lowerMatMul builds its libjit call from besides the
// product itself: the epilogue's bias and residual arguments, and, where
// MatMulTiling.h's rule packs A (matMulPacksLHS), or A is read through a
// folded Transpose whose last dim is not contiguous (MatMulOperands.h), the
// kernel before the product that re-lays A [..., m, K] out as row tiles of
// MR rows in chunks of 16 columns, [..., tiles][K / 16][MR][16], one libjit
// call per tile (ember_matmul_pack_a_f32), into scratch.
//
//===----------------------------------------------------------------------===//
#include "CPU.h"
#include "LibCall.h"
#include "MatMulOperands.h"
#include "MatMulTiling.h"

#include "ember/Kernel/LowerToKernel.h"

using namespace ember;
using namespace ember::cpu;
using kir::CallArg;
using kir::ExprRef;
using kir::Kernel;

kir::Buffer cpu::packMatMulLHS(const MatMulInst &I, const MatMulOperand &A,
                               const MemoryPlan &plan, int64_t mr,
                               size_t scratchAt, size_t &scratchSize,
                               std::vector<Kernel> &out) {
  TypeRef ta = I.getLHS()->getType();
  auto batchDims = ta->dims().drop_back(2);
  int64_t m = ta->dims()[ta->rank() - 2], K = ta->dims().back();
  int64_t tiles = (m + mr - 1) / mr, floats = matMulPackedLHSFloats(m, K, mr);
  int64_t batch = m * K != 0 ? ta->size() / (m * K) : 0;
  uint64_t bytes = uint64_t(batch * floats) * sizeof(float);
  kir::Buffer packed{Region::Activation, scratchAt, bytes, ElemKind::Float32,
                     "matmul.lhs.packed"};
  scratchSize = std::max<size_t>(scratchSize, scratchAt + bytes);
  Kernel k((I.getName() + ".pack_lhs").str());
  unsigned d = k.addBuffer(packed);
  unsigned a = k.addBuffer(kir::bufferFor(A.source, plan));
  // e = bi * tiles + t: one tile per task.
  unsigned e = k.newVar();
  ExprRef bi = k.div(k.var(e), tiles), t = k.rem(k.var(e), tiles);
  std::vector<CallArg> args = {
      bufArg(d, k.mul(bi, floats)),
      bufArg(a, stridedBatchOffset(k, bi, batchDims, batchDims, A.strides)),
      valArg(k.constInt(m)),
      valArg(k.constInt(K)),
      valArg(k.constInt(A.rowStride())),
      valArg(k.constInt(A.colStride())),
      valArg(t),
      valArg(k.add(t, k.constInt(1)))};
  k.body() = {
      Kernel::loop(e, batch * tiles, /*parallel=*/true,
                   {EMBER_LIBJIT_CALL(k, ember_matmul_pack_a_f32, args)})};
  out.push_back(std::move(k));
  return packed;
}

void cpu::appendMatMulEpilogue(Kernel &k, const MatMulInst &I,
                               const MemoryPlan &plan, ExprRef cOffset,
                               std::vector<CallArg> &args) {
  Value *bias = nullptr, *res = nullptr;
  for (Value *v : I.getEpilogue())
    (v->getType()->rank() == 1 ? bias : res) = v;
  args.push_back(
      bias ? bufArg(k.addBuffer(kir::bufferFor(bias, plan)), k.constInt(0))
           : valArg(k.constInt(0)));
  args.push_back(res ? bufArg(k.addBuffer(kir::bufferFor(res, plan)), cOffset)
                     : valArg(k.constInt(0)));
}
