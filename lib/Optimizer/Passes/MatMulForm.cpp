//===- MatMulForm.cpp - MatMul operands in the form the kernels read ------===//
//
// Two rewrites that spare a MatMul's operands a copy:
// - MatMul(a, Transpose(b)) where the Transpose only swaps the last two dims
//   is MatMul(a, b) with TransB flipped: the kernels read a transposed RHS
//   in place (or pack it), and a constant one is packed once at compile time.
// - MatMul(a [..., M, K], b [1, ..., 1, K, N]) is one 2-D product over the
//   flattened leading dims, Reshape(MatMul(Reshape(a, [P*M, K]), b [K, N])):
//   a Reshape is a free view, and a kernel with P*M rows streams the
//   (possibly pre-packed) weight once instead of once per batch index.
//
//===----------------------------------------------------------------------===//
#include "PassUtils.h"
#include "Passes.h"

using namespace ember;

/// The input of \p v if \p v is a Transpose that swaps only its last two dims.
static NodeValue lastTwoSwapped(NodeValue v) {
  auto *t = llvm::dyn_cast<TransposeNode>(v.getNode());
  if (!t)
    return NodeValue();
  llvm::ArrayRef<int64_t> p = t->getShuffle();
  unsigned r = p.size();
  if (r < 2 || p[r - 2] != int64_t(r - 1) || p[r - 1] != int64_t(r - 2))
    return NodeValue();
  for (unsigned i = 0; i + 2 < r; ++i)
    if (p[i] != int64_t(i))
      return NodeValue();
  return t->getInput();
}

/// True if every batch (leading) dim of \p v is 1.
static bool unitBatch(NodeValue v) {
  llvm::ArrayRef<dim_t> d = v.dims();
  return llvm::all_of(d.drop_back(2), [](dim_t x) { return x == 1; });
}

/// The replacement of \p mm, or null when it is already in form.
static NodeValue rewrite(Function &F, MatMulNode &mm, PassContext &ctx) {
  NodeValue a = mm.getLHS(), b = mm.getRHS();
  int64_t transB = mm.getTransB();
  bool changed = false;
  if (NodeValue inner = lastTwoSwapped(b)) {
    b = inner, transB = !transB, changed = true;
    ++ctx.counters["matmul-form.transposes-folded"];
  }
  unsigned r = a.dims().size();
  std::string name = mm.getName().str();
  if (r > 2 && unitBatch(b)) {
    llvm::ArrayRef<dim_t> ad = a.dims(), bd = b.dims();
    dim_t rows = 1;
    for (unsigned i = 0; i + 1 < r; ++i)
      rows *= ad[i];
    a = F.createReshape(name + ".lhs2d", a, {rows, ad[r - 1]});
    b = F.createReshape(name + ".rhs2d", b, {bd[r - 2], bd[r - 1]});
    NodeValue y = F.createMatMul(name, a, b, transB);
    ++ctx.counters["matmul-form.flattened"];
    return F.createReshape(name + ".nd", y, mm.getResult().dims());
  }
  if (!changed)
    return NodeValue();
  return F.createMatMul(name, a, b, transB);
}

bool MatMulFormPass::run(Function &F, PassContext &ctx) {
  bool changed = false;
  for (Node *n : nodesInOrder(F)) {
    auto *mm = llvm::dyn_cast<MatMulNode>(n);
    // An epilogue's residual has the N-D result's shape: left as it is.
    if (!mm || !mm->getEpilogue().empty() || mm->getFusedActivation() != 0)
      continue;
    NodeValue y = rewrite(F, *mm, ctx);
    if (!y)
      continue;
    mm->getResult().replaceAllUsesWith(y);
    F.eraseNode(mm);
    changed = true;
  }
  return changed;
}
