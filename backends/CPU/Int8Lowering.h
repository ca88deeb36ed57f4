//===- Int8Lowering.h - Shared parts of the int8 product lowering -*- C++
//-*-===//
//
// What MatMulInt8.cpp (IntMatMul, RequantMatMul) and ConvInt8.cpp (IntConv,
// RequantConv) share: the weights as the kernel's signed operand and the
// arguments of libjit's integer product kernels (libjit/MatMulInt8.inc).
// Private to the CPU backend.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_BACKENDS_CPU_INT8LOWERING_H
#define EMBER_BACKENDS_CPU_INT8LOWERING_H

#include "MatMulInt8.h"

#include "ember/Kernel/LowerToKernel.h"

#include <optional>
#include <utility>
#include <vector>

namespace ember {
class IntConvInst;
class RequantConvInst;

namespace cpu {
namespace i8 {

/// The weights of a product as the kernel's signed operand.
struct Weights {
  const uint8_t *bytes; ///< In the constant image.
  uint8_t flip;         ///< 0x80 for UInt8 weights (less 128), else 0.
  /// Weight w (an index into bytes) as Int8.
  int32_t at(int64_t w) const { return int8_t(bytes[w] ^ flip); }
};

/// The weights behind \p w with zero points \p zero, or nullopt unless
/// the weights are constants and every zero point is known and 0 once
/// Int8.
std::optional<Weights> constantWeights(Value *w, Value *zero,
                                       const Int8Context &ctx);

/// 128 for Int8 activations (read as UInt8 plus 128), else 0.
int64_t activationFlip(Value *x);

/// The kernel call's arguments after C, A and B.
struct Int8Call {
  int64_t n, K, lda, kc;
  kir::ExprRef i0, i1, t0, t1;
  int64_t aSigned, aFlip;
  kir::CallArg u;
  int64_t us, uo;
  kir::CallArg v;
  int64_t vs, vo;
};

/// The requantizing store's arguments (ember_matmul_i8q_*): the bytes, the
/// partial sums (or null), then bias, multiplier, zero point, bounds and
/// the bytes' strides (0, 0: row-major, n per row).
struct RequantCall {
  kir::CallArg y, partial, bias;
  int64_t bRow, bCol;
  kir::CallArg mult;
  int64_t mRow, mCol;
  kir::ExprRef zero, lo, hi;
  int64_t yRow = 0, yCol = 0;
};

/// The call of the plan's kernel: C = A * B corrected, or with \p q its
/// requantizing entry.
kir::Stmt callInt8(kir::Kernel &k, const Int8Plan &plan, kir::CallArg c,
                   kir::CallArg a, kir::CallArg b, const Int8Call &x,
                   const RequantCall *q = nullptr);

/// The parts of a requantizing store that do not depend on the product's
/// layout: output zero point and bounds (Relu as a lower bound of the zero
/// point, see RequantConv in Ops.py).
template <class InstT>
void requantBounds(kir::Kernel &k, const InstT &I, const Int8Context &ctx,
                   RequantCall &q) {
  unsigned z = k.addBuffer(kir::bufferFor(I.getOutZero(), ctx.plan));
  bool isSigned = I.getElemTy() == ElemKind::Int8;
  q.zero = k.cast(k.load(z, k.constInt(0)), kir::ScalarKind::Int64);
  q.lo = k.constInt(isSigned ? -128 : 0);
  if (I.getRelu())
    q.lo = k.binary(kir::BinOp::Max, q.zero, q.lo);
  q.hi = k.constInt(isSigned ? 127 : 255);
}

/// Int32 scratch for partial sums of \p elems elements at \p offset in
/// the activation region when K spans more than one block of \p plan,
/// else a null pointer.
kir::CallArg partialSums(kir::Kernel &k, const Int8Plan &plan, int64_t K,
                         int64_t elems, size_t offset, const Int8Context &ctx,
                         kir::ExprRef at);

/// The task index \p e of a product split by \p tasks over \p groups
/// independent products: group, first row, row end, first panel, panel end.
struct TaskSpan {
  kir::ExprRef g, i0, i1, t0, t1;
};

TaskSpan taskSpan(kir::Kernel &k, kir::ExprRef e, const MatMulTasks &tasks,
                  int64_t m, int64_t np);

/// Checks that libjit has the plan's tile.
bool haveTile(const Int8Plan &plan, const TargetDesc &T);

/// B packed as MatMulInt8.inc reads it, and its column sums [batch][n].
struct PackedB {
  std::vector<uint8_t> bytes;
  std::vector<int32_t> sums;
};

/// A bias or multiplier vector of \p v's length (1 or \p channels) as a
/// call argument at channel \p c0 with its stride.
std::pair<kir::CallArg, int64_t> channelVector(kir::Kernel &k, Value *v,
                                               const Int8Context &ctx,
                                               kir::ExprRef c0);

/// IntConv \p I on the integer kernel (ConvInt8.cpp); false where it does
/// not take it (see lowerIntProductCPU).
bool lowerConvInt8(const IntConvInst &I, const Int8Context &ctx,
                   std::vector<kir::Kernel> &out);
/// RequantConv \p I likewise, with its requantizing store.
bool lowerConvInt8(const RequantConvInst &I, const Int8Context &ctx,
                   std::vector<kir::Kernel> &out);

} // namespace i8
} // namespace cpu
} // namespace ember

#endif // EMBER_BACKENDS_CPU_INT8LOWERING_H
