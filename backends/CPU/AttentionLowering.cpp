//===- AttentionLowering.cpp - ScaledSoftmax and Attention as libjit calls
//-===//
//
// ScaledSoftmax: one ember_softmax_masked_f32 call per row in a parallel
// loop, the mask row found by its broadcast strides. Attention: one
// ember_attention_f32 call per batch index and block of queries, in a
// parallel loop (Attention.inc). The blocks come from the kernel target:
// the queries of a task are the register tile's vectors (4 key rows by nv
// vectors of 16 queries as accumulators, plus nv vectors of Q^T and a
// broadcast, within the vector registers), and a key block is as many keys
// as keep its scores within half of L1d.
//
//===----------------------------------------------------------------------===//
#include "CPU.h"
#include "LibCall.h"
#include "ember/Graph/AttentionLayout.h"
#include "ember/Kernel/LowerToKernel.h"

#include <algorithm>

using namespace ember;
using kir::ExprRef;
using kir::Kernel;

namespace {
/// Broadcast strides of a mask against scores of \p dims (0 where the
/// mask's dim is 1).
struct MaskStrides {
  llvm::SmallVector<int64_t, kMaxRank> s;
  MaskStrides(Value *mask, llvm::ArrayRef<dim_t> dims) : s(dims.size(), 0) {
    llvm::ArrayRef<dim_t> md = mask->getType()->dims();
    int64_t st = 1;
    for (int i = int(dims.size()) - 1; i >= 0; --i) {
      s[i] = md[i] == 1 ? 0 : st;
      st *= md[i];
    }
  }
};
} // namespace

/// The offset of flat index \p outer over dims [0, \p n) of \p dims with
/// element \p strides.
static ExprRef stridedOffset(Kernel &k, ExprRef outer,
                             llvm::ArrayRef<dim_t> dims,
                             llvm::ArrayRef<int64_t> strides, size_t n) {
  ExprRef off = k.constInt(0);
  int64_t inner = 1;
  for (int i = int(n) - 1; i >= 0; --i) {
    if (strides[i])
      off = k.add(off, k.mul(k.rem(k.div(outer, inner), dims[i]), strides[i]));
    inner *= dims[i];
  }
  return off;
}

static ExprRef maskOffset(Kernel &k, ExprRef outer, llvm::ArrayRef<dim_t> dims,
                          size_t n, const MaskStrides &ms) {
  return stridedOffset(k, outer, dims, ms.s, n);
}

std::optional<Kernel> cpu::lowerScaledSoftmaxRows(const Instruction &I,
                                                  const MemoryPlan &plan) {
  auto *s = llvm::dyn_cast<ScaledSoftmaxInst>(&I);
  if (!s || s->getInput()->getType()->size() == 0)
    return std::nullopt;
  llvm::ArrayRef<dim_t> dims = s->getInput()->getType()->dims();
  size_t r = dims.size();
  int64_t n = dims[r - 1], tq = dims[r - 2];
  Kernel k(I.getName());
  unsigned y = k.addBuffer(kir::bufferFor(s->getDest(), plan));
  unsigned x = k.addBuffer(kir::bufferFor(s->getInput(), plan));
  unsigned row = k.newVar();
  ExprRef rv = k.var(row);
  kir::CallArg mask = valArg(k.constInt(0));
  int64_t maskStride = 0;
  if (!s->getMask().empty()) {
    MaskStrides ms(s->getMask()[0], dims);
    unsigned mb = k.addBuffer(kir::bufferFor(s->getMask()[0], plan));
    mask = bufArg(mb, maskOffset(k, rv, dims, r - 1, ms));
    maskStride = ms.s[r - 1];
  }
  std::vector<kir::CallArg> args = {bufArg(y, k.mul(rv, n)),
                                    bufArg(x, k.mul(rv, n)),
                                    mask,
                                    valArg(k.constInt(n)),
                                    valArg(k.constInt(maskStride)),
                                    valArg(k.constFloat(s->getScale())),
                                    valArg(k.constInt(s->getCausal())),
                                    valArg(k.rem(rv, tq))};
  int64_t rows = s->getInput()->getType()->size() / n;
  k.body() = {
      Kernel::loop(row, rows, /*parallel=*/true,
                   {EMBER_LIBJIT_CALL(k, ember_softmax_masked_f32, args)})};
  return k;
}

cpu::AttentionBlocks cpu::chooseAttentionBlocks(const TargetDesc &T,
                                                int64_t tq) {
  // A 16-float vector of libjit takes 16 / lanes registers.
  int64_t perV = std::max<int64_t>(1, 16 / int64_t(T.floatLanes()));
  int64_t nv = (int64_t(T.vectorRegisters) - 1) / (5 * perV);
  nv = std::clamp<int64_t>(nv, 1, libjit::kAttnMaxBQ / 16);
  nv = std::min<int64_t>(nv, (tq + 15) / 16);
  // The score block stays in L1d while every tile of output columns
  // streams it (P V), within half of L1d next to the tiles' V rows.
  uint64_t l1 = T.l1dBytes ? T.l1dBytes : 32768;
  int64_t bk = int64_t(l1 / 2 / (sizeof(float) * 16 * nv));
  bk = std::clamp<int64_t>(bk / 4 * 4, 4, libjit::kAttnMaxBK);
  return {nv, bk};
}

namespace {
/// An Attention operand or result as the kernel walks it: logical dims
/// [.., T, D] and their element strides (AttentionLayout.h).
struct HeadView {
  AttnDims dims, strides;
  /// Row 0 of flat batch index \p bh, plus \p rowOff rows.
  ExprRef at(Kernel &k, ExprRef bh, ExprRef rowOff) const {
    size_t r = dims.size();
    return k.add(stridedOffset(k, bh, dims, strides, r - 2),
                 k.mul(rowOff, strides[r - 2]));
  }
  int64_t rowStride() const { return strides[strides.size() - 2]; }
};
HeadView operandView(const Value *x, llvm::ArrayRef<int64_t> perm) {
  return {permutedDims(x->getType()->dims(), perm),
          permutedStrides(x->getType()->dims(), perm)};
}
} // namespace

std::optional<Kernel> cpu::lowerAttentionBlocks(const Instruction &I,
                                                const MemoryPlan &plan,
                                                const TargetDesc &T) {
  auto *a = llvm::dyn_cast<AttentionInst>(&I);
  if (!a || a->getDest()->getType()->size() == 0)
    return std::nullopt;
  HeadView qv = operandView(a->getQ(), a->getQPerm());
  HeadView kv = operandView(a->getK(), a->getKPerm());
  HeadView vv = operandView(a->getV(), a->getVPerm());
  llvm::ArrayRef<dim_t> qd = qv.dims;
  size_t r = qd.size();
  int64_t tq = qd[r - 2], d = qd[r - 1];
  int64_t tk = kv.dims[r - 2], dv = vv.dims[r - 1];
  HeadView ov{qv.dims,
              resultStrides(a->getDest()->getType()->dims(), a->getOutPerm())};
  ov.dims[r - 1] = dv;
  int64_t batch = a->getQ()->getType()->size() / (tq * d);
  AttentionBlocks blk = chooseAttentionBlocks(T, tq);
  int64_t bq = 16 * blk.nv, nqb = (tq + bq - 1) / bq;
  Kernel k(I.getName());
  unsigned o = k.addBuffer(kir::bufferFor(a->getDest(), plan));
  unsigned q = k.addBuffer(kir::bufferFor(a->getQ(), plan));
  unsigned kb = k.addBuffer(kir::bufferFor(a->getK(), plan));
  unsigned vb = k.addBuffer(kir::bufferFor(a->getV(), plan));
  unsigned t = k.newVar();
  ExprRef bh = k.div(k.var(t), nqb), qb = k.rem(k.var(t), nqb);
  ExprRef q0 = k.mul(qb, bq);
  kir::CallArg mask = valArg(k.constInt(0));
  int64_t mRow = 0, mCol = 0;
  if (!a->getMask().empty()) {
    llvm::SmallVector<dim_t, kMaxRank> sd(qd.begin(), qd.end());
    sd[r - 1] = tk;
    MaskStrides ms(a->getMask()[0], sd);
    mRow = ms.s[r - 2];
    mCol = ms.s[r - 1];
    unsigned mb = k.addBuffer(kir::bufferFor(a->getMask()[0], plan));
    mask = bufArg(mb, k.add(maskOffset(k, bh, sd, r - 2, ms), k.mul(q0, mRow)));
  }
  ExprRef rows = k.binary(kir::BinOp::Min, k.constInt(bq),
                          k.add(k.constInt(tq), k.mul(q0, -1)));
  ExprRef zero = k.constInt(0);
  std::vector<kir::CallArg> args = {bufArg(o, ov.at(k, bh, q0)),
                                    bufArg(q, qv.at(k, bh, q0)),
                                    bufArg(kb, kv.at(k, bh, zero)),
                                    bufArg(vb, vv.at(k, bh, zero)),
                                    mask,
                                    valArg(rows),
                                    valArg(k.constInt(tk)),
                                    valArg(k.constInt(d)),
                                    valArg(k.constInt(dv)),
                                    valArg(k.constInt(mRow)),
                                    valArg(k.constInt(mCol)),
                                    valArg(k.constFloat(a->getScale())),
                                    valArg(k.constInt(a->getCausal())),
                                    valArg(q0),
                                    valArg(k.constInt(blk.nv)),
                                    valArg(k.constInt(blk.bk)),
                                    valArg(k.constInt(qv.rowStride())),
                                    valArg(k.constInt(kv.rowStride())),
                                    valArg(k.constInt(vv.rowStride())),
                                    valArg(k.constInt(ov.rowStride()))};
  k.body() = {Kernel::loop(t, batch * nqb, /*parallel=*/true,
                           {EMBER_LIBJIT_CALL(k, ember_attention_f32, args)})};
  return k;
}
