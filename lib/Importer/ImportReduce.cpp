//===- ImportReduce.cpp - ONNX reductions and ArgMax/ArgMin ---------------===//
//
// ReduceSum/Max/Min/Prod/Mean map to reduction nodes; ReduceL1, ReduceL2,
// ReduceLogSum, ReduceLogSumExp and ReduceSumSquare are composed from them.
//
//===----------------------------------------------------------------------===//
#include "ImportHelpers.h"

using namespace ember;
using namespace ember::onnximport;

#define TRY EMBER_ASSIGN_OR_RETURN

namespace {

enum class Compose { None, L1, L2, LogSum, LogSumExp, SumSquare };

/// The reduced axes of \p node, or nullopt for "no reduction" (noop with
/// empty axes).
llvm::Expected<std::optional<Ints>> reducedAxes(ImportContext &ctx,
                                                const onnx::NodeProto &node,
                                                NodeValue x, bool axesAsInput) {
  AttrReader attrs(node);
  Ints axes;
  if (axesAsInput) {
    if (ImportContext::hasInput(node, 1)) {
      TRY(axes, ctx.constantInts(node, 1));
    }
  } else {
    TRY(axes, attrs.getInts("axes", Ints()));
  }
  TRY(int64_t noop, attrs.getInt("noop_with_empty_axes", 0));
  if (axes.empty()) {
    if (noop)
      return std::optional<Ints>();
    for (size_t i = 0; i < x.dims().size(); ++i)
      axes.push_back(i);
  }
  return std::optional<Ints>(axes);
}

template <OpKind K, Compose C, int64_t AxesInputOpset>
llvm::Error importReduce(ImportContext &ctx, const onnx::NodeProto &node) {
  TRY(NodeValue x, ctx.input(node, 0));
  TRY(int64_t keep, AttrReader(node).getInt("keepdims", 1));
  TRY(std::optional<Ints> axes,
      reducedAxes(ctx, node, x, ctx.opset() >= AxesInputOpset));
  NodeValue in = x;
  if (C == Compose::L1) {
    TRY(in, unary(ctx, node, OpKind::Abs, x));
  } else if (C == Compose::L2 || C == Compose::SumSquare) {
    TRY(in, make(ctx, node, OpKind::Mul, {x, x}));
  }
  if (!axes) {
    // noop_with_empty_axes: the composed elementwise part still applies.
    NodeValue y = in;
    if (C == Compose::L2) {
      TRY(y, unary(ctx, node, OpKind::Sqrt, y));
    } else if (C == Compose::LogSum) {
      TRY(y, unary(ctx, node, OpKind::Log, y));
    }
    return ctx.setOutput(node, y);
  }
  NodeValue y;
  if (C == Compose::LogSumExp) {
    TRY(NodeValue m, reduce(ctx, node, OpKind::ReduceMax, x, *axes, true));
    TRY(NodeValue d, binary(ctx, node, OpKind::Sub, x, m));
    TRY(NodeValue e, unary(ctx, node, OpKind::Exp, d));
    TRY(NodeValue s, reduce(ctx, node, OpKind::ReduceSum, e, *axes, true));
    TRY(s, unary(ctx, node, OpKind::Log, s));
    TRY(y, make(ctx, node, OpKind::Add, {s, m}));
    TRY(NodeValue shape, reduce(ctx, node, OpKind::ReduceMax, x, *axes, keep));
    TRY(y, reshapeTo(ctx, node, y,
                     Ints(shape.dims().begin(), shape.dims().end())));
    return ctx.setOutput(node, y);
  }
  TRY(y, reduce(ctx, node, K, in, *axes, keep));
  if (C == Compose::L2) {
    TRY(y, unary(ctx, node, OpKind::Sqrt, y));
  } else if (C == Compose::LogSum) {
    TRY(y, unary(ctx, node, OpKind::Log, y));
  }
  return ctx.setOutput(node, y);
}

template <OpKind K>
llvm::Error importArgReduce(ImportContext &ctx, const onnx::NodeProto &node) {
  TRY(NodeValue x, ctx.input(node, 0));
  AttrReader attrs(node);
  TRY(int64_t axis, attrs.getInt("axis", 0));
  TRY(axis, normAxis(node, axis, x.dims().size()));
  TRY(int64_t keep, attrs.getInt("keepdims", 1));
  TRY(int64_t last, attrs.getInt("select_last_index", 0));
  TRY(NodeValue y,
      make(ctx, node, K, {x},
           {Attr::makeInt(axis), Attr::makeInt(keep), Attr::makeInt(last)}));
  return ctx.setOutput(node, y);
}

/// ReduceSum took its axes as an input from opset 13, the others from 18.
const ImportRule kReduceRules[] = {
    {"ReduceSum", 1, 17, importReduce<OpKind::ReduceSum, Compose::None, 13>},
    {"ReduceMax", 1, 18, importReduce<OpKind::ReduceMax, Compose::None, 18>},
    {"ReduceMin", 1, 18, importReduce<OpKind::ReduceMin, Compose::None, 18>},
    {"ReduceProd", 1, 18, importReduce<OpKind::ReduceProd, Compose::None, 18>},
    {"ReduceMean", 1, 18, importReduce<OpKind::ReduceMean, Compose::None, 18>},
    {"ReduceL1", 1, 18, importReduce<OpKind::ReduceSum, Compose::L1, 18>},
    {"ReduceL2", 1, 18, importReduce<OpKind::ReduceSum, Compose::L2, 18>},
    {"ReduceLogSum", 1, 18,
     importReduce<OpKind::ReduceSum, Compose::LogSum, 18>},
    {"ReduceLogSumExp", 1, 18,
     importReduce<OpKind::ReduceSum, Compose::LogSumExp, 18>},
    {"ReduceSumSquare", 1, 18,
     importReduce<OpKind::ReduceSum, Compose::SumSquare, 18>},
    {"ArgMax", 1, 17, importArgReduce<OpKind::ArgMax>},
    {"ArgMin", 1, 17, importArgReduce<OpKind::ArgMin>},
};

} // namespace

RuleList onnximport::getReduceImportRules() { return kReduceRules; }
