//===- NMS.cpp - Greedy non-maximum suppression as one kernel -------------===//
//
// NMSKeep walks each row's boxes in score order and keeps a candidate
// unless an already kept box overlaps it (backends/Interpreter/Reduce.cpp
// is the reference). The kept boxes' positions are appended to Slots, so a
// box is tested against the kept ones only: O(boxes x kept) tests per row.
// Loops have constant trip counts, so the kept list is walked in blocks of
// T positions, a block entered only while it starts below the kept count:
// per box, at most B / T block checks plus T - 1 idle slots of the last
// block; T = ceil(sqrt(B)) makes both about sqrt(B).
//
//===----------------------------------------------------------------------===//
#include "KernelRules.h"

#include <cmath>

using namespace ember;
using namespace ember::kir;

namespace {

/// Not of a Bool.
ExprRef notOf(Kernel &k, ExprRef b) {
  return k.binary(BinOp::Xor, b, k.constInt(1, ScalarKind::Bool));
}

/// Corner \p c (x min, y min, x max, y max) of the box at row offset
/// \p at of \p corners.
ExprRef corner(Kernel &k, unsigned corners, ExprRef at, int c) {
  return k.load(corners, k.add(k.mul(at, 4), k.constInt(c)));
}

/// ONNX NonMaxSuppression's overlap test of boxes \p a and \p b (corner
/// offsets) in Float32: a positive intersection, positive areas and
/// IoU > \p thr.
ExprRef overlaps(Kernel &k, unsigned corners, ExprRef a, ExprRef b,
                 ExprRef thr) {
  ExprRef ca[4], cb[4];
  for (int c = 0; c < 4; ++c) {
    ca[c] = corner(k, corners, a, c);
    cb[c] = corner(k, corners, b, c);
  }
  auto sub = [&](ExprRef x, ExprRef y) { return k.binary(BinOp::Sub, x, y); };
  auto mul = [&](ExprRef x, ExprRef y) { return k.binary(BinOp::Mul, x, y); };
  auto side = [&](int lo, int hi) {
    return sub(k.binary(BinOp::Min, ca[hi], cb[hi]),
               k.binary(BinOp::Max, ca[lo], cb[lo]));
  };
  ExprRef iw = side(0, 2), ih = side(1, 3), inter = mul(iw, ih);
  ExprRef areaA = mul(sub(ca[2], ca[0]), sub(ca[3], ca[1]));
  ExprRef areaB = mul(sub(cb[2], cb[0]), sub(cb[3], cb[1]));
  ExprRef uni = sub(k.binary(BinOp::Add, areaA, areaB), inter);
  ExprRef zero = k.constFloat(0), all = nullptr;
  for (ExprRef v : {iw, ih, inter, areaA, areaB, uni}) {
    ExprRef pos = k.binary(BinOp::Lt, zero, v);
    all = all ? k.binary(BinOp::And, all, pos) : pos;
  }
  ExprRef iou = k.binary(BinOp::Div, inter, uni);
  return k.binary(BinOp::And, all, k.binary(BinOp::Lt, thr, iou));
}

Kernel nmsKeep(const NMSKeepInst &I, const MemoryPlan &plan) {
  dim_t rows = I.getCandidates()->getType()->dims()[0];
  dim_t n = I.getCandidates()->getType()->dims()[1];
  int64_t t = std::max<int64_t>(1, std::ceil(std::sqrt(double(n))));
  int64_t blocks = (int64_t(n) + t - 1) / t;
  Kernel k(I.getName());
  unsigned keep = k.addBuffer(bufferFor(I.getDestKeep(), plan));
  unsigned slots = k.addBuffer(bufferFor(I.getDestSlots(), plan));
  unsigned cand = k.addBuffer(bufferFor(I.getCandidates(), plan));
  unsigned corners = k.addBuffer(bufferFor(I.getCorners(), plan));
  unsigned thrBuf = k.addBuffer(bufferFor(I.getIoUThreshold(), plan));
  unsigned maxBuf = k.addBuffer(bufferFor(I.getMaxOut(), plan));
  unsigned kept = k.addLocal(ScalarKind::Int64);
  unsigned hit = k.addLocal(ScalarKind::Bool);
  k.body() = loopNest(k, {rows}, [&](llvm::ArrayRef<ExprRef> c) {
    ExprRef row = k.mul(c[0], n);
    unsigned i = k.newVar(), jb = k.newVar(), jj = k.newVar();
    ExprRef at = k.add(row, k.var(i));
    ExprRef count = k.local(kept);
    ExprRef room = k.binary(BinOp::Lt, k.cast(count, ScalarKind::Float32),
                            k.load(maxBuf, k.constInt(0)));
    ExprRef ok = k.binary(
        BinOp::And,
        notOf(k, k.binary(BinOp::Eq, k.load(cand, at), k.constFloat(0))), room);
    // Slot j of the kept list, tested while j < kept.
    ExprRef j = k.add(k.mul(k.var(jb), t), k.var(jj));
    ExprRef other = k.add(row, k.load(slots, k.add(row, j)));
    ExprRef test =
        overlaps(k, corners, at, other, k.load(thrBuf, k.constInt(0)));
    Stmt inner = Kernel::loop(
        jj, t, false,
        {Kernel::ifThen(
            k.binary(BinOp::Lt, j, count),
            {Kernel::assign(hit, k.binary(BinOp::Or, k.local(hit), test))})});
    Stmt scan = Kernel::loop(
        jb, blocks, false,
        {Kernel::ifThen(k.binary(BinOp::Lt, k.mul(k.var(jb), t), count),
                        {inner})});
    ExprRef kept1 = k.binary(BinOp::And, ok, notOf(k, k.local(hit)));
    std::vector<Stmt> box = {
        Kernel::assign(hit, k.constInt(0, ScalarKind::Bool)),
        Kernel::ifThen(ok, {scan}),
        Kernel::store(keep, at,
                      k.select(kept1, k.constFloat(1), k.constFloat(0))),
        Kernel::ifThen(kept1,
                       {Kernel::store(slots, k.add(row, count), k.var(i)),
                        Kernel::assign(kept, k.add(count, k.constInt(1)))})};
    return std::vector<Stmt>{Kernel::assign(kept, k.constInt(0)),
                             Kernel::loop(i, n, false, std::move(box))};
  });
  return k;
}

} // namespace

bool kir::lowerNMSKeep(const NMSKeepInst &I, const MemoryPlan &plan,
                       std::vector<Kernel> &out) {
  if (I.getCandidates()->getType()->size() == 0)
    return true;
  return appendKernel(out, nmsKeep(I, plan));
}
