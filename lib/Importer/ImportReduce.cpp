//===- ImportReduce.cpp - ONNX reductions and ArgMax/ArgMin ---------------===//
//
// ReduceSum/Max/Min/Prod/Mean map to reduction nodes; ReduceL1, ReduceL2,
// ReduceLogSum, ReduceLogSumExp and ReduceSumSquare are composed from them.
//
//===----------------------------------------------------------------------===//
#include "ImportHelpers.h"

#include "llvm/ADT/bit.h"

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

/// Reduction \p K (composed as \p C) of \p x over \p axes (nullopt: no
/// reduction, only the composed elementwise part).
template <OpKind K, Compose C>
llvm::Expected<NodeValue>
reduceOver(ImportContext &ctx, const onnx::NodeProto &node, NodeValue x,
           const std::optional<Ints> &axes, bool keep) {
  NodeValue in = x;
  if (C == Compose::L1) {
    TRY(in, unary(ctx, node, OpKind::Abs, x));
  } else if (C == Compose::L2 || C == Compose::SumSquare) {
    TRY(in, make(ctx, node, OpKind::Mul, {x, x}));
  }
  NodeValue y = in;
  if (C == Compose::LogSumExp && axes) {
    TRY(NodeValue m, reduce(ctx, node, OpKind::ReduceMax, x, *axes, true));
    TRY(NodeValue d, binary(ctx, node, OpKind::Sub, x, m));
    TRY(NodeValue e, unary(ctx, node, OpKind::Exp, d));
    TRY(NodeValue s, reduce(ctx, node, OpKind::ReduceSum, e, *axes, true));
    TRY(s, unary(ctx, node, OpKind::Log, s));
    TRY(y, make(ctx, node, OpKind::Add, {s, m}));
    TRY(NodeValue shape, reduce(ctx, node, OpKind::ReduceMax, x, *axes, keep));
    return reshapeTo(ctx, node, y,
                     Ints(shape.dims().begin(), shape.dims().end()));
  }
  // Without axes (noop_with_empty_axes) the composed part still applies.
  if (axes) {
    TRY(y, reduce(ctx, node, K, in, *axes, keep));
  }
  if (C == Compose::L2) {
    TRY(y, unary(ctx, node, OpKind::Sqrt, y));
  } else if (C == Compose::LogSum) {
    TRY(y, unary(ctx, node, OpKind::Log, y));
  }
  return y;
}

/// The sets of \p k axes of \p x whose removal leaves the dims \p d.
std::vector<Ints> axisSetsLeaving(llvm::ArrayRef<dim_t> x,
                                  const std::vector<int64_t> &d, int64_t k) {
  std::vector<Ints> sets;
  int64_t r = x.size();
  if (r > 16 || int64_t(d.size()) + k != r)
    return sets;
  for (uint32_t m = 0; m < (1u << r); ++m) {
    if (llvm::popcount(m) != k)
      continue;
    Ints axes, kept;
    for (int64_t i = 0; i < r; ++i) {
      if (m >> i & 1)
        axes.push_back(i);
      else
        kept.push_back(x[i]);
    }
    if (kept == d)
      sets.push_back(axes);
  }
  return sets;
}

/// keepdims=0 with the axes \p p fed at run time: the declared output
/// shape says which dims remain but not, where equal dims sit side by side,
/// which were reduced. Every set of axes whose removal leaves the declared
/// shape is reduced and the run-time axes (all in the set: k distinct axes
/// are the set) select one, as CumSum's axis does (docs/RuntimeInputs.md,
/// path 2); the re-import before each run rejects axes giving another shape.
template <OpKind K, Compose C>
llvm::Error importRuntimeAxesReduce(ImportContext &ctx,
                                    const onnx::NodeProto &node, NodeValue x,
                                    Placeholder *p) {
  int64_t r = x.dims().size(), k = p->getType()->size();
  const std::vector<int64_t> *d =
      node.output_size() ? ctx.declaredDims(node.output(0)) : nullptr;
  std::vector<Ints> sets;
  if (d)
    sets = axisSetsLeaving(x.dims(), *d, k);
  if (sets.empty() || sets.size() > 16)
    return fail(node, "input '" + node.input(1) +
                          "' must be a constant (an initializer or a Constant "
                          "node) or implied by the declared output shapes: "
                          "with keepdims=0 the declared shape must be the "
                          "input's without " +
                          llvm::Twine(k) + " of its dims (in at most 16 ways)");
  ctx.checkAtRunTime(1, p);
  TRY(NodeValue a, castTo(ctx, node, NodeValue(p), ElemKind::Int64));
  TRY(a, reshapeTo(ctx, node, a, {k, 1}));
  TRY(a, wrapNegative(ctx, node, a, r));
  TRY(NodeValue y, (reduceOver<K, C>(ctx, node, x, sets.back(), false)));
  for (size_t s = sets.size() - 1; s-- > 0;) {
    NodeValue set = int64Constant(ctx, node, "axes", {1, k}, sets[s]);
    TRY(NodeValue eq, binary(ctx, node, OpKind::Equal, a, set));
    TRY(eq, castTo(ctx, node, eq, ElemKind::Float32));
    TRY(NodeValue in, reduce(ctx, node, OpKind::ReduceMax, eq, {1}, true));
    TRY(NodeValue all, reduce(ctx, node, OpKind::ReduceMin, in, {0}, true));
    TRY(NodeValue sel, binary(ctx, node, OpKind::Less,
                              constantLike(ctx, node, all, 0.5), all));
    TRY(sel, reshapeTo(ctx, node, sel, Ints(d->size(), 1)));
    TRY(sel, ctx.broadcastTo(node, sel, y.dims()));
    TRY(NodeValue ys, (reduceOver<K, C>(ctx, node, x, sets[s], false)));
    TRY(y, make(ctx, node, OpKind::Where, {sel, ys, y}));
  }
  return ctx.setOutput(node, y);
}

template <OpKind K, Compose C, int64_t AxesInputOpset>
llvm::Error importReduce(ImportContext &ctx, const onnx::NodeProto &node) {
  TRY(NodeValue x, ctx.input(node, 0));
  TRY(int64_t keep, AttrReader(node).getInt("keepdims", 1));
  bool axesAsInput = ctx.opset() >= AxesInputOpset;
  if (axesAsInput && !keep && ImportContext::hasInput(node, 1)) {
    TRY(NodeValue a, ctx.input(node, 1));
    auto *p = llvm::dyn_cast<Placeholder>(a.getNode());
    if (p && !p->isOutput() && p->getType()->size() > 0)
      return importRuntimeAxesReduce<K, C>(ctx, node, x, p);
  }
  TRY(std::optional<Ints> axes, reducedAxes(ctx, node, x, axesAsInput));
  TRY(NodeValue in, maskForReduction(ctx, node, x));
  TRY(NodeValue y, (reduceOver<K, C>(ctx, node, in, axes, keep)));
  TRY(y, meanOverExtent(ctx, node, x, y));
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
  TRY(x, maskForReduction(ctx, node, x));
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
