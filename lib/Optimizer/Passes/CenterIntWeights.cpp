//===- CenterIntWeights.cpp - IntMatMul weights at the centered zero point
//-===//
//
// An IntMatMul of constant 8-bit weights whose zero point is not the byte's
// center (0 for Int8, 128 for UInt8) becomes one at the center plus a
// correction, exactly in Int32:
//
//   sum_k (a - za)(b - zb) = sum_k (a - za)(b - c) - (zb - c) sum_k (a - za)
//
// with c the center. Signed-by-unsigned byte products (vpdpbusd and its
// kind) take the weights as signed bytes, which b - c always is and b - zb
// is not; asymmetric UInt8 weights (what onnxruntime's quantize_dynamic
// writes for QUInt8, the only weight type its ConvInteger runs) otherwise
// leave the product to a scalar loop. The row sums cost one pass over the
// activations, a K-th of the product.
//
//===----------------------------------------------------------------------===//
#include "PassUtils.h"
#include "Passes.h"

using namespace ember;

/// The centered zero point of \p kind's bytes, or nullopt for other kinds.
static std::optional<int> centerOf(ElemKind kind) {
  if (kind == ElemKind::Int8)
    return 0;
  if (kind == ElemKind::UInt8)
    return 128;
  return std::nullopt;
}

/// \p v of shape \p from as \p to (same rank, size-1 dims repeated).
static NodeValue broadcastTo(Function &F, const std::string &name, NodeValue v,
                             llvm::ArrayRef<int64_t> to) {
  if (std::equal(to.begin(), to.end(), v.dims().begin(), v.dims().end()))
    return v;
  return F.createBroadcast(name, v, to);
}

/// The correction term (zb - c) * sum_k (a - za), shaped like \p mm.
static NodeValue correction(Function &F, IntMatMulNode *mm, int center) {
  std::string name = mm->getName().str() + ".center";
  NodeValue a = mm->getLHS();
  size_t r = a.dims().size();
  int64_t m = a.dims()[r - 2], k = a.dims()[r - 1];
  llvm::SmallVector<int64_t, kMaxRank> out(mm->getResult().dims().begin(),
                                           mm->getResult().dims().end());
  llvm::SmallVector<int64_t, kMaxRank> col(r, 1), row(r, 1);
  col[r - 2] = m;
  row[r - 1] = out[r - 1];
  // sum_k a - K * za, per row: [..., M, 1].
  NodeValue sum = F.createReduceSum(
      name + ".rowsum", F.createCast(name + ".a", a, ElemKind::Int32),
      {int64_t(r - 1)}, 1);
  NodeValue za = F.createMul(
      name + ".kza", F.createReshape(name + ".za", mm->getLHSZero(), col),
      F.createSplat(name + ".k", col, ElemKind::Int32, float(k)));
  llvm::SmallVector<int64_t, kMaxRank> sumDims(sum.dims().begin(),
                                               sum.dims().end());
  NodeValue centered = F.createSub(name + ".rows", sum,
                                   broadcastTo(F, name + ".zab", za, sumDims));
  // zb - c, per column: [1, ..., 1, N].
  NodeValue zb = F.createReshape(name + ".zb", mm->getRHSZero(), row);
  NodeValue shift = F.createSub(
      name + ".shift", zb,
      F.createSplat(name + ".c", row, ElemKind::Int32, float(center)));
  return F.createMul(name + ".term",
                     broadcastTo(F, name + ".rowsb", centered, out),
                     broadcastTo(F, name + ".shiftb", shift, out));
}

/// The rewrite of \p mm, or an empty value when its weights are not
/// constant bytes off their center or its batch comes from the weights.
static NodeValue center(Function &F, IntMatMulNode *mm) {
  NodeValue b = mm->getRHS();
  auto c = centerOf(b.getElemKind());
  if (!c || !llvm::isa<Constant>(b.getNode()) ||
      isUniform(mm->getRHSZero(), *c))
    return NodeValue();
  unsigned budget = 16;
  if (!isConstantExpr(mm->getRHSZero(), budget))
    return NodeValue();
  auto bd = b.dims();
  if (std::any_of(bd.begin(), bd.end() - 2, [](dim_t d) { return d != 1; }))
    return NodeValue();
  std::string name = mm->getName().str();
  int64_t n = mm->getRHSZero().dims()[0];
  NodeValue zc = F.createSplat(name + ".zc", {n}, ElemKind::Int32, float(*c));
  NodeValue product = F.createIntMatMul(name + ".centered", mm->getLHS(), b,
                                        mm->getLHSZero(), zc);
  return F.createSub(name + ".corrected", product, correction(F, mm, *c));
}

bool CenterIntWeightsPass::run(Function &F, PassContext &ctx) {
  bool changed = false;
  for (Node *n : nodesInOrder(F)) {
    auto *mm = llvm::dyn_cast<IntMatMulNode>(n);
    if (!mm)
      continue;
    NodeValue r = center(F, mm);
    if (!r)
      continue;
    mm->getNthResult(0).replaceAllUsesWith(r);
    F.eraseNode(mm);
    ++ctx.counters["center-int-weights.centered"];
    changed = true;
  }
  return changed;
}
