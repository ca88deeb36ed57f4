//===- ImportNormalization.cpp - GroupNormalization and RMSNormalization --===//
//
// Both are composed of reductions and elementwise nodes, the same ops the
// exporters of opset 17 wrote for them, so the numbers are those of the
// composed form and the optimizer's elementwise fusion applies.
//
//===----------------------------------------------------------------------===//
#include "ImportHelpers.h"
#include "ProtoTensor.h"

using namespace ember;
using namespace ember::onnximport;

#define TRY EMBER_ASSIGN_OR_RETURN

namespace {

/// The element type stage one (the statistics) runs in: float32 for
/// stash_type 1 (the default), else the input's own type, which stash_type
/// must then name.
llvm::Expected<ElemKind> stashKind(const onnx::NodeProto &node, NodeValue x) {
  TRY(int64_t stash, AttrReader(node).getInt("stash_type", 1));
  if (stash == onnx::TensorProto::FLOAT)
    return ElemKind::Float32;
  if (stash == elemKindToONNX(x.getElemKind()))
    return x.getElemKind();
  return fail(node, "stash_type " + llvm::Twine(stash) +
                        " is neither float (1) nor the type of X (" +
                        x.getType()->toString() + ")");
}

/// A per-channel [C] parameter as [1, C, 1, ...] for \p x.
llvm::Expected<NodeValue> perChannel(ImportContext &ctx,
                                     const onnx::NodeProto &node, NodeValue p,
                                     NodeValue x, const char *what) {
  int64_t c = x.dims()[1];
  if (p.dims().size() != 1 || int64_t(p.dims()[0]) != c)
    return fail(node, llvm::Twine(what) + " must be [" + llvm::Twine(c) +
                          "] (one per channel), got " +
                          p.getType()->toString());
  Ints shape(x.dims().size(), 1);
  shape[1] = c;
  return reshapeTo(ctx, node, p, shape);
}

/// Opset 18's per-group [G] parameter repeated to one per channel [C].
llvm::Expected<NodeValue> groupToChannels(ImportContext &ctx,
                                          const onnx::NodeProto &node,
                                          NodeValue p, int64_t groups,
                                          int64_t channels, const char *what) {
  if (p.dims().size() != 1 || int64_t(p.dims()[0]) != groups)
    return fail(node, llvm::Twine(what) + " must be [" + llvm::Twine(groups) +
                          "] (one per group at opset 18-20), got " +
                          p.getType()->toString());
  TRY(p, reshapeTo(ctx, node, p, {groups, 1}));
  TRY(p, ctx.broadcastTo(node, p, {dim_t(groups), dim_t(channels / groups)}));
  return reshapeTo(ctx, node, p, {channels});
}

/// y = scale * (x - mean) / sqrt(var + eps) + bias, the statistics taken per
/// instance over each group of C / num_groups channels and all spatial dims.
/// Scale and bias are per group at opset 18-20, per channel from 21.
llvm::Error importGroupNorm(ImportContext &ctx, const onnx::NodeProto &node) {
  TRY(NodeValue x, ctx.input(node, 0));
  TRY(NodeValue scale, ctx.input(node, 1));
  TRY(NodeValue bias, ctx.input(node, 2));
  AttrReader attrs(node);
  TRY(float eps, attrs.getFloat("epsilon", 1e-5f));
  TRY(int64_t groups, attrs.getInt("num_groups", std::nullopt));
  TRY(ElemKind stash, stashKind(node, x));
  if (x.dims().size() < 2 || !isFloatKind(x.getElemKind()))
    return fail(node,
                "X must be float [N, C, ...], got " + x.getType()->toString());
  int64_t n = x.dims()[0], c = x.dims()[1];
  if (groups < 1 || c % groups)
    return fail(node, "num_groups " + llvm::Twine(groups) +
                          " does not divide the " + llvm::Twine(c) +
                          " channels");
  if (ctx.opset() < 21) {
    TRY(scale, groupToChannels(ctx, node, scale, groups, c, "scale"));
    TRY(bias, groupToChannels(ctx, node, bias, groups, c, "bias"));
  }
  TRY(scale, perChannel(ctx, node, scale, x, "scale"));
  TRY(bias, perChannel(ctx, node, bias, x, "bias"));
  TRY(NodeValue xs, castTo(ctx, node, x, stash));
  int64_t perGroup = c / groups;
  for (size_t i = 2; i < x.dims().size(); ++i)
    perGroup *= x.dims()[i];
  TRY(xs, reshapeTo(ctx, node, xs, {n, groups, perGroup}));
  TRY(NodeValue y, normalize(ctx, node, xs, {2}, eps));
  TRY(y, reshapeTo(ctx, node, y, dimsOf(x)));
  TRY(y, castTo(ctx, node, y, x.getElemKind()));
  TRY(y, binary(ctx, node, OpKind::Mul, y, scale));
  TRY(y, binary(ctx, node, OpKind::Add, y, bias));
  return ctx.setOutput(node, y);
}

/// y = x / sqrt(mean(x^2 over axis..) + eps) * scale, in the spec's order
/// of operations.
llvm::Error importRMSNorm(ImportContext &ctx, const onnx::NodeProto &node) {
  TRY(NodeValue x, ctx.input(node, 0));
  TRY(NodeValue scale, ctx.input(node, 1));
  AttrReader attrs(node);
  TRY(float eps, attrs.getFloat("epsilon", 1e-5f));
  TRY(int64_t axis, attrs.getInt("axis", -1));
  TRY(ElemKind stash, stashKind(node, x));
  if (x.dims().empty() || !isFloatKind(x.getElemKind()))
    return fail(node, "X must be a float tensor of rank 1 or more, got " +
                          x.getType()->toString());
  TRY(axis, normAxis(node, axis, x.dims().size()));
  Ints axes;
  for (size_t i = axis; i < x.dims().size(); ++i)
    axes.push_back(i);
  TRY(NodeValue xs, castTo(ctx, node, x, stash));
  TRY(NodeValue sq, make(ctx, node, OpKind::Mul, {xs, xs}));
  TRY(NodeValue ms, reduce(ctx, node, OpKind::ReduceMean, sq, axes, true));
  TRY(ms, make(ctx, node, OpKind::Add, {ms, constantLike(ctx, node, ms, eps)}));
  TRY(NodeValue rms, unary(ctx, node, OpKind::Sqrt, ms));
  TRY(NodeValue y, binary(ctx, node, OpKind::Div, xs, rms));
  TRY(y, castTo(ctx, node, y, x.getElemKind()));
  TRY(scale, ctx.broadcastTo(node, scale, x.dims()));
  TRY(y, make(ctx, node, OpKind::Mul, {y, scale}));
  return ctx.setOutput(node, y);
}

const ImportRule kNormalizationRules[] = {
    {"GroupNormalization", 18, 21, importGroupNorm},
    {"RMSNormalization", 23, 23, importRMSNorm},
};

} // namespace

RuleList onnximport::getNormalizationImportRules() {
  return kNormalizationRules;
}
