//===- ImportRuntimeOps.cpp - Ops with genuine run-time operands ----------===//
//
// Operands that are graph inputs but leave the output shape alone are
// computed with in the graph (docs/RuntimeInputs.md, path 2): Trilu's k,
// CumSum's axis and Range's start and delta (its length is the declared
// output length, checked at run time like the implied operands).
//
//===----------------------------------------------------------------------===//
#include "ImportRuntimeOps.h"

#include "ember/Base/ElemAccess.h"

using namespace ember;
using namespace ember::onnximport;

#define TRY EMBER_ASSIGN_OR_RETURN

/// The Trilu mask when k is a run-time value: the output shape does not
/// depend on k, so the diagonal offsets j - i are a constant and the mask
/// compares them with k in the compiled graph (true where x is zeroed).
llvm::Expected<NodeValue>
onnximport::runtimeTriluZeroMask(ImportContext &ctx,
                                 const onnx::NodeProto &node, int64_t n,
                                 int64_t m, bool upper) {
  TRY(NodeValue k, ctx.input(node, 1));
  if (k.getType()->size() != 1)
    return fail(node, "input 1 (k) must be a scalar");
  TRY(k, castTo(ctx, node, k, ElemKind::Int64));
  TRY(k, reshapeTo(ctx, node, k, {1, 1}));
  Tensor d(ElemKind::Int64, {n, m});
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < m; ++j)
      d.getHandle<int64_t>().raw(i * m + j) = j - i;
  NodeValue dc =
      ctx.module().createConstant(nameOf(node) + ".diag", std::move(d));
  // upper keeps j - i >= k: zero where j - i < k; lower keeps j - i <= k.
  return upper ? binary(ctx, node, OpKind::Less, dc, k)
               : binary(ctx, node, OpKind::Less, k, dc);
}

/// CumSum along a run-time axis: the output shape does not depend on it, so
/// the sum along every axis is computed and the axis selects one; the
/// node is re-imported with the axis before each run, which rejects an
/// axis out of range (docs/RuntimeInputs.md).
llvm::Error onnximport::importRuntimeAxisCumSum(ImportContext &ctx,
                                                const onnx::NodeProto &node,
                                                NodeValue x,
                                                Placeholder *axisInput,
                                                AttrList attrs) {
  int64_t r = x.dims().size();
  if (r == 0 || axisInput->getType()->size() != 1)
    return fail(node, "needs an input of rank >= 1 and a scalar axis");
  ctx.checkAtRunTime(1, axisInput);
  TRY(NodeValue a, castTo(ctx, node, NodeValue(axisInput), ElemKind::Int64));
  TRY(a, reshapeTo(ctx, node, a, Ints(r, 1)));
  TRY(NodeValue neg,
      make(ctx, node, OpKind::Less, {a, constantLike(ctx, node, a, 0)}));
  TRY(NodeValue wrapped,
      make(ctx, node, OpKind::Add, {a, constantLike(ctx, node, a, r)}));
  TRY(a, make(ctx, node, OpKind::Where, {neg, wrapped, a}));
  NodeValue y;
  for (int64_t axis = r - 1; axis >= 0; --axis) {
    attrs[0] = Attr::makeInt(axis);
    TRY(NodeValue s, make(ctx, node, OpKind::CumSum, {x}, attrs));
    if (axis == r - 1) {
      y = s;
      continue;
    }
    TRY(NodeValue is,
        binary(ctx, node, OpKind::Equal, a, constantLike(ctx, node, a, axis)));
    TRY(is, ctx.broadcastTo(node, is, x.dims()));
    TRY(y, make(ctx, node, OpKind::Where, {is, s, y}));
  }
  return ctx.setOutput(node, y);
}

/// The graph input behind input \p i of \p node, or null for a constant;
/// an error for a value computed at run time.
static llvm::Expected<Placeholder *>
graphInputOf(ImportContext &ctx, const onnx::NodeProto &node, int i) {
  TRY(NodeValue v, ctx.input(node, i));
  if (llvm::isa<Constant>(v.getNode()))
    return nullptr;
  auto *p = llvm::dyn_cast<Placeholder>(v.getNode());
  if (!p || p->isOutput())
    return fail(node, "input '" + node.input(i) +
                          "' must be a constant (an initializer or a "
                          "Constant node) or a graph input");
  return p;
}

llvm::Error onnximport::importRuntimeRange(ImportContext &ctx,
                                           const onnx::NodeProto &node) {
  const std::vector<int64_t> *d =
      node.output_size() ? ctx.declaredDims(node.output(0)) : nullptr;
  if (!d || d->size() != 1 || (*d)[0] < 1)
    return fail(node, "input '" + node.input(0) +
                          "' must be a constant (an initializer or a "
                          "Constant node) or implied by the declared output "
                          "shapes: the output has no declared non-empty "
                          "1-D shape");
  for (int i = 0; i < 3; ++i) {
    TRY(Placeholder * p, graphInputOf(ctx, node, i));
    if (p)
      ctx.checkAtRunTime(i, p);
  }
  TRY(NodeValue start, ctx.input(node, 0));
  TRY(NodeValue delta, ctx.input(node, 2));
  if (start.getType()->size() != 1 || delta.getType()->size() != 1)
    return fail(node, "start and delta must be scalars");
  int64_t n = (*d)[0];
  ElemKind kind = start.getElemKind();
  Tensor steps(kind, {n});
  for (int64_t i = 0; i < n; ++i)
    storeElement(steps.data(), kind, i, double(i));
  NodeValue iota =
      ctx.module().createConstant(nameOf(node) + ".steps", std::move(steps));
  TRY(start, reshapeTo(ctx, node, start, {1}));
  TRY(delta, reshapeTo(ctx, node, delta, {1}));
  TRY(NodeValue scaled, binary(ctx, node, OpKind::Mul, iota, delta));
  TRY(NodeValue y, binary(ctx, node, OpKind::Add, scaled, start));
  return ctx.setOutput(node, y);
}
