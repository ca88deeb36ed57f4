//===- Int8Elementwise.cpp - Quantized elementwise ops on the CPU ---------===//
//
// A RequantAdd becomes one parallel loop over chunks of its bytes, each a
// call of ember_qadd_u8 (libjit/Int8Elementwise.inc), which computes the
// lowered Dequantize -> Add -> [Relu] -> Quantize chain's Float32
// operations in registers: the bytes are read once and written once,
// where the chain writes and reads Float32 tensors between its steps. A
// RequantMul whose RHS is the LHS's shape or broadcast along trailing dims
// (one byte per row of the LHS) does the same with ember_qmul_u8 over
// chunks of whole rows.
//
//===----------------------------------------------------------------------===//
#include "Int8Elementwise.h"

#include "CPU.h"
#include "LibCall.h"

#include "ember/Backend/TargetDesc.h"
#include "ember/Kernel/LowerToKernel.h"

#include <algorithm>

using namespace ember;
using namespace ember::cpu;
using kir::CallArg;
using kir::Kernel;

namespace {
/// Rows and row length of a RequantMul's LHS \p a when its RHS \p b holds
/// one byte per row (b is a's leading dims, then 1s; equal shapes are rows
/// of one element); none for other broadcasts.
std::optional<std::pair<int64_t, int64_t>> mulRows(llvm::ArrayRef<dim_t> a,
                                                   llvm::ArrayRef<dim_t> b) {
  size_t k = 0;
  while (k < a.size() && b[k] == a[k])
    ++k;
  int64_t rows = 1, inner = 1;
  for (size_t i = 0; i < a.size(); ++i) {
    if (i >= k && b[i] != 1)
      return std::nullopt;
    (i < k ? rows : inner) *= int64_t(a[i]);
  }
  return std::make_pair(rows, inner);
}
} // namespace

bool cpu::keepsInt8Elementwise(const Node &n) {
  if (auto *m = llvm::dyn_cast<RequantMulNode>(&n))
    return mulRows(m->getLHS().dims(), m->getRHS().dims()).has_value();
  if (auto *t = llvm::dyn_cast<TableLookupNode>(&n))
    return t->getTable().getElemKind() == ElemKind::Int8 ||
           t->getTable().getElemKind() == ElemKind::UInt8;
  return llvm::isa<RequantAddNode>(n);
}

namespace {
/// The bytes of one call: a quarter of L1 per stream (three streams stay
/// in L1 while the loop runs; many tasks for the threads; calls long enough
/// that their cost vanishes), a multiple of the kernel's 16-byte vectors.
int64_t chunkBytes(const TargetDesc &T) {
  int64_t l1 = T.l1dBytes ? int64_t(T.l1dBytes) : 32 * 1024;
  return std::max<int64_t>(64, l1 / 4 / 64 * 64);
}

/// The call of ember_qadd_u8 on \p n bytes from element \p start.
kir::Stmt qaddCall(Kernel &k, const RequantAddInst &I,
                   llvm::ArrayRef<unsigned> bufs, kir::ExprRef start,
                   int64_t n) {
  auto isSigned = [](Value *v) {
    return int64_t(v->getType()->getElemKind() == ElemKind::Int8);
  };
  std::vector<CallArg> args = {bufArg(bufs[0], start),
                               bufArg(bufs[1], start),
                               bufArg(bufs[2], start),
                               valArg(k.constInt(n)),
                               valArg(k.constInt(isSigned(I.getLHS()))),
                               valArg(k.constInt(isSigned(I.getRHS()))),
                               valArg(k.constInt(isSigned(I.getDest()))),
                               valArg(k.constInt(I.getRelu() != 0))};
  for (unsigned b = 3; b < 9; ++b)
    args.push_back(bufArg(bufs[b]));
  return EMBER_LIBJIT_CALL(k, ember_qadd_u8, args);
}

/// The call of ember_qmul_u8 on \p rows rows of \p inner bytes from row
/// \p row.
kir::Stmt qmulCall(Kernel &k, const RequantMulInst &I,
                   llvm::ArrayRef<unsigned> bufs, kir::ExprRef row,
                   int64_t rows, int64_t inner) {
  auto isSigned = [](Value *v) {
    return int64_t(v->getType()->getElemKind() == ElemKind::Int8);
  };
  kir::ExprRef at = k.mul(row, inner);
  std::vector<CallArg> args = {bufArg(bufs[0], at),
                               bufArg(bufs[1], at),
                               bufArg(bufs[2], row),
                               valArg(k.constInt(rows)),
                               valArg(k.constInt(inner)),
                               valArg(k.constInt(isSigned(I.getLHS()))),
                               valArg(k.constInt(isSigned(I.getRHS()))),
                               valArg(k.constInt(isSigned(I.getDest())))};
  for (unsigned b = 3; b < 9; ++b)
    args.push_back(bufArg(bufs[b]));
  return EMBER_LIBJIT_CALL(k, ember_qmul_u8, args);
}

/// The buffers of \p I's operands, result first.
std::vector<unsigned> buffers(Kernel &k, const Instruction &I,
                              const MemoryPlan &plan) {
  std::vector<unsigned> bufs;
  for (unsigned i = 0, e = I.getNumOperands(); i < e; ++i)
    bufs.push_back(k.addBuffer(kir::bufferFor(I.getOperand(i).value, plan)));
  return bufs;
}

/// RequantMul \p I as parallel calls over chunks of whole rows.
Kernel lowerMul(const RequantMulInst &I, const MemoryPlan &plan,
                const TargetDesc &target) {
  Kernel k(I.getName());
  std::vector<unsigned> bufs = buffers(k, I, plan);
  auto shape =
      mulRows(I.getLHS()->getType()->dims(), I.getRHS()->getType()->dims());
  auto [rows, inner] = *shape;
  if (rows == 0 || inner == 0)
    return k;
  int64_t per = std::max<int64_t>(1, chunkBytes(target) / inner);
  int64_t full = rows / per, tail = rows % per;
  unsigned e = k.newVar();
  if (full > 0)
    k.body().push_back(
        Kernel::loop(e, full, /*parallel=*/true,
                     {qmulCall(k, I, bufs, k.mul(k.var(e), per), per, inner)}));
  if (tail > 0)
    k.body().push_back(
        qmulCall(k, I, bufs, k.constInt(full * per), tail, inner));
  return k;
}

/// The call of the lookup kernel on \p n bytes from element \p start.
kir::Stmt lutCall(Kernel &k, const TableLookupInst &I,
                  llvm::ArrayRef<unsigned> bufs, kir::ExprRef start, int64_t n,
                  bool vbmi) {
  int64_t xSigned = I.getInput()->getType()->getElemKind() == ElemKind::Int8;
  std::vector<CallArg> args = {bufArg(bufs[0], start), bufArg(bufs[2], start),
                               bufArg(bufs[1]), valArg(k.constInt(n)),
                               valArg(k.constInt(xSigned))};
  return vbmi ? EMBER_LIBJIT_CALL(k, ember_lut_u8_vbmi, args)
              : EMBER_LIBJIT_CALL(k, ember_lut_u8, args);
}

/// TableLookup \p I as parallel calls over chunks of its bytes: vpermi2b
/// where the kernel target has AVX512-VBMI and the 16-lane kernels, one
/// load per byte elsewhere.
Kernel lowerLookup(const TableLookupInst &I, const MemoryPlan &plan,
                   const TargetDesc &target) {
  Kernel k(I.getName());
  std::vector<unsigned> bufs = buffers(k, I, plan);
  bool vbmi = useWideKernels(target) && target.has(ISAExt::AVX512BW) &&
              target.has(ISAExt::AVX512VBMI);
  int64_t n = int64_t(I.getDest()->getType()->size());
  int64_t chunk = chunkBytes(target), full = n / chunk, tail = n % chunk;
  unsigned e = k.newVar();
  if (full > 0)
    k.body().push_back(Kernel::loop(
        e, full, /*parallel=*/true,
        {lutCall(k, I, bufs, k.mul(k.var(e), chunk), chunk, vbmi)}));
  if (tail > 0)
    k.body().push_back(
        lutCall(k, I, bufs, k.constInt(full * chunk), tail, vbmi));
  return k;
}
} // namespace

std::optional<Kernel> cpu::lowerInt8Elementwise(const Instruction &I,
                                                const MemoryPlan &plan,
                                                const TargetDesc &target) {
  if (auto *mul = llvm::dyn_cast<RequantMulInst>(&I))
    return lowerMul(*mul, plan, target);
  if (auto *lut = llvm::dyn_cast<TableLookupInst>(&I))
    return lowerLookup(*lut, plan, target);
  auto *add = llvm::dyn_cast<RequantAddInst>(&I);
  if (!add)
    return std::nullopt;
  Kernel k(I.getName());
  std::vector<unsigned> bufs = buffers(k, I, plan);
  int64_t n = int64_t(add->getDest()->getType()->size());
  int64_t chunk = chunkBytes(target), full = n / chunk, tail = n % chunk;
  unsigned e = k.newVar();
  if (full > 0)
    k.body().push_back(
        Kernel::loop(e, full, /*parallel=*/true,
                     {qaddCall(k, *add, bufs, k.mul(k.var(e), chunk), chunk)}));
  if (tail > 0)
    k.body().push_back(qaddCall(k, *add, bufs, k.constInt(full * chunk), tail));
  return k;
}
