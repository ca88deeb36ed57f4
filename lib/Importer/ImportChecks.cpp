//===- ImportChecks.cpp - Run-time checks in compiled code ----------------===//
//
// Some imports are exact only for the values that reach a node at run time
// (an affine Slice's window, a kept loop's trip count under its scan bound).
// A run-time check computes, with ordinary ops, whether the values were
// such; each call writes the number of a failed check into a hidden output
// and the call fails with the check's message (docs/RuntimeInputs.md
// "Run-time checks"), on every backend alike, since only graph ops are used.
//
//===----------------------------------------------------------------------===//
#include "ImportHelpers.h"

using namespace ember;
using namespace ember::onnximport;

#define TRY EMBER_ASSIGN_OR_RETURN

llvm::Error onnximport::addRuntimeCheck(ImportContext &ctx,
                                        const onnx::NodeProto &node,
                                        NodeValue failed,
                                        const std::string &what) {
  if (auto *c = llvm::dyn_cast<Constant>(failed.getNode())) {
    // Known at compile time: nothing to check, or an error now.
    if (c->getPayload().elementAsDouble(0) == 0)
      return llvm::Error::success();
    return fail(node, what);
  }
  int64_t num = ctx.module().addRuntimeCheck(
      "run-time check failed: " + ImportContext::describe(node) + ": " + what);
  NodeValue yes = constantOf(ctx, node, ElemKind::Int64, {1}, double(num));
  NodeValue no = constantOf(ctx, node, ElemKind::Int64, {1}, 0);
  TRY(NodeValue status, make(ctx, node, OpKind::Where, {failed, yes, no}));
  ctx.addCheckStatus(status);
  return llvm::Error::success();
}

llvm::Expected<std::optional<NodeValue>>
onnximport::combineChecks(ImportContext &ctx, const onnx::NodeProto &node,
                          llvm::ArrayRef<NodeValue> statuses) {
  if (statuses.empty())
    return std::nullopt;
  NodeValue all = statuses[0];
  for (NodeValue s : statuses.drop_front()) {
    TRY(all, make(ctx, node, OpKind::Max, {all, s}));
  }
  return all;
}

llvm::Error onnximport::keepChecksWhere(ImportContext &ctx,
                                        const onnx::NodeProto &node,
                                        NodeValue cond,
                                        llvm::ArrayRef<NodeValue> statuses) {
  NodeValue no = constantOf(ctx, node, ElemKind::Int64, {1}, 0);
  TRY(NodeValue c, reshapeTo(ctx, node, cond, {1}));
  for (NodeValue s : statuses) {
    TRY(NodeValue kept, make(ctx, node, OpKind::Where, {c, s, no}));
    ctx.addCheckStatus(kept);
  }
  return llvm::Error::success();
}

llvm::Error onnximport::finishRuntimeChecks(ImportContext &ctx) {
  onnx::NodeProto node;
  node.set_name("check.status");
  node.set_op_type("Output");
  TRY(std::optional<NodeValue> all,
      combineChecks(ctx, node, ctx.takeCheckStatuses()));
  if (!all)
    return llvm::Error::success();
  Module &M = ctx.module();
  Placeholder *p = M.createPlaceholder("check.status", *all->getType(), true);
  ctx.fn().createSave("save.check.status", *all, p);
  M.setCheckStatus(p);
  return llvm::Error::success();
}
