//===- ImportControlFlow.cpp - If, Loop and Scan --------------------------===//
//
// If selects between both branches' results; Loop and Scan are unrolled,
// or kept as loops between LoopBegin and LoopEnd (docs/ControlFlow.md).
//
//===----------------------------------------------------------------------===//
#include "ImportControlFlow.h"

#include "ImportHelpers.h"
#include "ProtoTensor.h"

#include <algorithm>
#include <cmath>

using namespace ember;
using namespace ember::onnximport;

#define TRY EMBER_ASSIGN_OR_RETURN

namespace {

/// The graph attribute \p name of \p node, or an error.
llvm::Expected<const onnx::GraphProto *> subgraph(const onnx::NodeProto &node,
                                                  llvm::StringRef name) {
  const onnx::AttributeProto *a = AttrReader(node).find(name);
  if (!a || a->type() != onnx::AttributeProto::GRAPH)
    return fail(node, "missing graph attribute '" + name + "'");
  return &a->g();
}

} // namespace

llvm::Expected<std::vector<NodeValue>>
ember::importBody(ImportContext &ctx, const onnx::NodeProto &node,
                  const onnx::GraphProto &body,
                  llvm::ArrayRef<NodeValue> inputs, const ImportOptions &opts) {
  if (body.input_size() != int(inputs.size()))
    return fail(node, "the body takes " + llvm::Twine(body.input_size()) +
                          " inputs; the node gives " +
                          llvm::Twine(inputs.size()));
  auto outer = ctx.saveScope();
  for (const auto &init : body.initializer()) {
    TRY(Tensor t, tensorFromProto(init));
    ctx.bind(init.name(),
             ctx.module().createConstant(init.name(), std::move(t)));
  }
  for (size_t i = 0; i < inputs.size(); ++i)
    ctx.bind(body.input(int(i)).name(), inputs[i]);
  llvm::Error err = importNodes(ctx, body, opts);
  std::vector<NodeValue> outs;
  for (int i = 0; !err && i < body.output_size(); ++i) {
    auto v = ctx.get(body.output(i).name());
    if (!v)
      err = v.takeError();
    else
      outs.push_back(*v);
  }
  ctx.restoreScope(std::move(outer));
  if (err)
    return llvm::Expected<std::vector<NodeValue>>(std::move(err));
  return outs;
}

llvm::Error ember::bindOutputs(ImportContext &ctx, const onnx::NodeProto &node,
                               llvm::ArrayRef<NodeValue> values) {
  if (int(values.size()) < node.output_size())
    return fail(node, "the body gives " + llvm::Twine(values.size()) +
                          " outputs; the node has " +
                          llvm::Twine(node.output_size()));
  for (int i = 0; i < node.output_size(); ++i)
    if (!node.output(i).empty())
      ctx.bind(node.output(i), values[i]);
  return llvm::Error::success();
}

namespace {

/// Branch output \p v (graph output \p name of a branch) with its count
/// along \p axis: its data-dependent extent there, else its static size.
llvm::Expected<NodeValue> branchCount(ImportContext &ctx,
                                      const onnx::NodeProto &node,
                                      const std::string &name, NodeValue v,
                                      int64_t axis) {
  const ImportContext::Extent *e = ctx.extentOf(name);
  if (e && int64_t(e->axis) == axis)
    return e->count;
  if (e)
    return fail(node, "branch output '" + name +
                          "' has a data-dependent extent on another axis "
                          "than where the branches differ "
                          "(docs/RuntimeInputs.md)");
  return constantOf(ctx, node, ElemKind::Int64, {1}, double(v.dims()[axis]));
}

/// \p v extended with zeros along \p axis to \p bound entries.
llvm::Expected<NodeValue> padTo(ImportContext &ctx, const onnx::NodeProto &node,
                                NodeValue v, int64_t axis, int64_t bound) {
  int64_t have = v.dims()[axis];
  if (have == bound)
    return v;
  Ints d(v.dims().begin(), v.dims().end());
  d[axis] = bound - have;
  NodeValue zeros =
      constantOf(ctx, node, v.getElemKind(),
                 llvm::SmallVector<dim_t, kMaxRank>(d.begin(), d.end()), 0);
  if (have == 0)
    return zeros;
  return make(ctx, node, OpKind::Concat, {v, zeros}, {Attr::makeInt(axis)});
}

/// Output \p i of an If with a run-time condition where a branch output
/// has a data-dependent extent, or the two differ in one dim (torchvision's
/// batched NMS: an empty result when there are no boxes, else the counted
/// selection): both sized for the larger, the count selected with them.
llvm::Expected<NodeValue>
selectCounted(ImportContext &ctx, const onnx::NodeProto &node, NodeValue cond,
              const onnx::GraphProto &thenG, const onnx::GraphProto &elseG,
              size_t i, NodeValue a, NodeValue b) {
  const std::string &na = thenG.output(int(i)).name(),
                    &nb = elseG.output(int(i)).name();
  const ImportContext::Extent *ea = ctx.extentOf(na), *eb = ctx.extentOf(nb);
  int64_t r = a.dims().size();
  int64_t axis = ea ? int64_t(ea->axis) : eb ? int64_t(eb->axis) : -1;
  bool ok = a.getElemKind() == b.getElemKind() && int64_t(b.dims().size()) == r;
  for (int64_t d = 0; ok && d < r; ++d)
    if (a.dims()[d] != b.dims()[d]) {
      ok = axis < 0 || axis == d;
      axis = d;
    }
  if (!ok || axis < 0)
    return fail(node, "with a run-time condition both branches must give "
                      "outputs of one type, or differ in the one dim a "
                      "data-dependent extent counts; output " +
                          llvm::Twine(i) + " is " + a.getType()->toString() +
                          " in then_branch and " + b.getType()->toString() +
                          " in else_branch");
  TRY(NodeValue ca, branchCount(ctx, node, na, a, axis));
  TRY(NodeValue cb, branchCount(ctx, node, nb, b, axis));
  int64_t bound = std::max(a.dims()[axis], b.dims()[axis]);
  TRY(a, padTo(ctx, node, a, axis, bound));
  TRY(b, padTo(ctx, node, b, axis, bound));
  TRY(NodeValue c, ctx.broadcastTo(node, cond, a.dims()));
  TRY(NodeValue y, make(ctx, node, OpKind::Where, {c, a, b}));
  TRY(NodeValue c1, reshapeTo(ctx, node, cond, {1}));
  TRY(NodeValue count, make(ctx, node, OpKind::Where, {c1, ca, cb}));
  if (!node.output(int(i)).empty())
    ctx.setExtent(node.output(int(i)), {unsigned(axis), count});
  return y;
}

/// If: a constant condition imports the taken branch only; a run-time one
/// imports both and selects each output with Where, which needs the two
/// branches' outputs to have one type or to differ in a counted dim
/// (selectCounted).
llvm::Error importIf(ImportContext &ctx, const onnx::NodeProto &node,
                     const ImportOptions &opts) {
  TRY(NodeValue cond, ctx.input(node, 0));
  TRY(const onnx::GraphProto *thenG, subgraph(node, "then_branch"));
  TRY(const onnx::GraphProto *elseG, subgraph(node, "else_branch"));
  if (cond.getType()->size() != 1 || cond.getElemKind() != ElemKind::Bool)
    return fail(node, "the condition must be one bool, got " +
                          cond.getType()->toString());
  if (auto *c = llvm::dyn_cast<Constant>(cond.getNode())) {
    bool taken = c->getPayload().elementAsDouble(0) != 0;
    TRY(auto outs, importBody(ctx, node, taken ? *thenG : *elseG, {}, opts));
    return bindOutputs(ctx, node, outs);
  }
  // Each branch's run-time checks count only where it is the one taken.
  std::vector<NodeValue> outer = ctx.takeCheckStatuses();
  TRY(auto thenOuts, importBody(ctx, node, *thenG, {}, opts));
  std::vector<NodeValue> thenChecks = ctx.takeCheckStatuses();
  TRY(auto elseOuts, importBody(ctx, node, *elseG, {}, opts));
  std::vector<NodeValue> elseChecks = ctx.takeCheckStatuses();
  for (NodeValue s : outer)
    ctx.addCheckStatus(s);
  EMBER_RETURN_IF_ERR(keepChecksWhere(ctx, node, cond, thenChecks));
  if (!elseChecks.empty()) {
    TRY(NodeValue notCond, make(ctx, node, OpKind::Not, {cond}));
    EMBER_RETURN_IF_ERR(keepChecksWhere(ctx, node, notCond, elseChecks));
  }
  if (thenOuts.size() != elseOuts.size())
    return fail(node, "the branches give " + llvm::Twine(thenOuts.size()) +
                          " and " + llvm::Twine(elseOuts.size()) + " outputs");
  std::vector<NodeValue> outs;
  for (size_t i = 0; i < thenOuts.size(); ++i) {
    const Type &a = *thenOuts[i].getType(), &b = *elseOuts[i].getType();
    if (!(a == b) || ctx.extentOf(thenG->output(int(i)).name()) ||
        ctx.extentOf(elseG->output(int(i)).name())) {
      TRY(NodeValue y, selectCounted(ctx, node, cond, *thenG, *elseG, i,
                                     thenOuts[i], elseOuts[i]));
      outs.push_back(y);
      continue;
    }
    TRY(NodeValue c, ctx.broadcastTo(node, cond, a.dims()));
    TRY(NodeValue y,
        make(ctx, node, OpKind::Where, {c, thenOuts[i], elseOuts[i]}));
    outs.push_back(y);
  }
  return bindOutputs(ctx, node, outs);
}

/// Fails unless \p trips iterations of \p body stay within
/// kMaxUnrolledNodes.
llvm::Error checkUnrollSize(const onnx::NodeProto &node,
                            const onnx::GraphProto &body, int64_t trips) {
  int64_t nodes = std::max(1, body.node_size());
  if (trips <= kMaxUnrolledNodes / nodes)
    return llvm::Error::success();
  return fail(node, llvm::Twine(trips) + " iterations of a " +
                        llvm::Twine(nodes) + "-node body would unroll to " +
                        "more than " + llvm::Twine(kMaxUnrolledNodes) +
                        " nodes (the unrolling limit)");
}

/// Element \p idx of \p x along \p axis, that axis removed.
llvm::Expected<NodeValue> sliceAt(ImportContext &ctx,
                                  const onnx::NodeProto &node, NodeValue x,
                                  int64_t axis, int64_t idx) {
  Ints starts(x.dims().size(), 0), steps(x.dims().size(), 1);
  Ints dims(x.dims().begin(), x.dims().end());
  starts[axis] = idx;
  dims[axis] = 1;
  TRY(NodeValue s, make(ctx, node, OpKind::Slice, {x},
                        {Attr::makeInts(starts), Attr::makeInts(steps),
                         Attr::makeInts(dims)}));
  dims.erase(dims.begin() + axis);
  return reshapeTo(ctx, node, s, dims);
}

/// \p parts (of one type) stacked along a new axis \p axis.
llvm::Expected<NodeValue> stack(ImportContext &ctx, const onnx::NodeProto &node,
                                llvm::ArrayRef<NodeValue> parts, int64_t axis) {
  std::vector<NodeValue> grown;
  for (NodeValue p : parts) {
    Ints dims(p.dims().begin(), p.dims().end());
    if (axis < 0 || axis > int64_t(dims.size()))
      return fail(node, "scan output axis " + llvm::Twine(axis) +
                            " is out of range for rank " +
                            llvm::Twine(dims.size() + 1));
    dims.insert(dims.begin() + axis, 1);
    TRY(NodeValue g, reshapeTo(ctx, node, p, dims));
    grown.push_back(g);
  }
  if (grown.size() == 1)
    return grown[0];
  return make(ctx, node, OpKind::Concat, grown, {Attr::makeInt(axis)});
}

/// A scalar Constant for body input \p i, shaped as the body declares it
/// ([] or [1]).
NodeValue scalarFor(ImportContext &ctx, const onnx::NodeProto &node,
                    const onnx::GraphProto &body, int i, ElemKind kind,
                    double v) {
  const auto &tt = body.input(i).type().tensor_type();
  bool oneDim = tt.has_shape() && tt.shape().dim_size() == 1;
  return constantOf(ctx, node, kind, oneDim ? Ints{1} : Ints{}, v);
}

/// A Loop input that must be a compile-time scalar, or an error naming it.
llvm::Expected<double> loopScalar(ImportContext &ctx,
                                  const onnx::NodeProto &node, int i,
                                  llvm::StringRef what) {
  TRY(NodeValue v, ctx.input(node, i));
  auto *c = llvm::dyn_cast<Constant>(v.getNode());
  if (!c || v.getType()->size() != 1)
    return fail(node, "the " + what + " '" + node.input(i) +
                          "' must be one constant value (an initializer or "
                          "computed from constants) to unroll the loop");
  return c->getPayload().elementAsDouble(0);
}

/// Whether a Loop is unrolled (the size rule of docs/ControlFlow.md): its
/// trip count and initial condition are constants and the unrolled body
/// stays within kMaxUnrolledNodes; else it is kept as a loop.
bool keepsUnrolled(ImportContext &ctx, const onnx::NodeProto &node,
                   const onnx::GraphProto &body) {
  auto constant = [&](int i) -> const Constant * {
    auto v = ctx.input(node, i);
    if (!v) {
      llvm::consumeError(v.takeError());
      return nullptr;
    }
    auto *c = llvm::dyn_cast<Constant>(v->getNode());
    return c && v->getType()->size() == 1 ? c : nullptr;
  };
  if (!ImportContext::hasInput(node, 0))
    return false;
  const Constant *m = constant(0);
  if (!m)
    return false;
  if (ImportContext::hasInput(node, 1) && !constant(1))
    return false;
  double trips = m->getPayload().elementAsDouble(0);
  int64_t nodes = std::max(1, body.node_size());
  return std::isnan(trips) || trips <= double(kMaxUnrolledNodes / nodes);
}

/// Loop with a constant trip count, unrolled. The body's condition output
/// must fold to a constant in every iteration (true continues, false stops
/// after that iteration), which holds when it passes the condition through
/// or is computed from constants and the iteration number.
llvm::Error importLoop(ImportContext &ctx, const onnx::NodeProto &node,
                       const ImportOptions &opts) {
  TRY(const onnx::GraphProto *body, subgraph(node, "body"));
  // The body takes the iteration number, the condition and one value per
  // carried input; both imports read the first two declarations.
  int numCarried = std::max(0, node.input_size() - 2);
  if (body->input_size() != 2 + numCarried)
    return fail(node, "the body takes " + llvm::Twine(body->input_size()) +
                          " inputs; a Loop with " + llvm::Twine(numCarried) +
                          " carried value(s) gives it " +
                          llvm::Twine(2 + numCarried) +
                          " (iteration number, condition, carried values)");
  if (!keepsUnrolled(ctx, node, *body)) {
    TRY(std::optional<LoopAppends> a, findLoopAppends(ctx, node, *body));
    if (!a)
      return importRealLoop(ctx, node, *body, opts);
    EMBER_RETURN_IF_ERR(importRealLoop(ctx, a->node, a->body, opts));
    return bindLoopAppends(ctx, node, *a);
  }
  TRY(double m, loopScalar(ctx, node, 0, "trip count"));
  if (std::isnan(m))
    return fail(node, "the trip count is NaN");
  // Saturated so that the conversion is defined (an INT64_MAX count is
  // refused by the unrolling limit below, not converted out of range).
  constexpr double kTripLimit = double(int64_t(1) << 62);
  int64_t trips = int64_t(std::clamp(m, -kTripLimit, kTripLimit));
  if (ImportContext::hasInput(node, 1)) {
    TRY(double cond, loopScalar(ctx, node, 1, "condition"));
    if (cond == 0)
      trips = 0;
  }
  EMBER_RETURN_IF_ERR(checkUnrollSize(node, *body, trips));
  std::vector<NodeValue> carried;
  for (int i = 2; i < node.input_size(); ++i) {
    TRY(NodeValue v, ctx.input(node, i));
    carried.push_back(v);
  }
  size_t n = carried.size();
  size_t k = size_t(std::max(0, body->output_size() - 1 - int(n)));
  std::vector<std::vector<NodeValue>> scans(k);
  for (int64_t t = 0; t < trips; ++t) {
    std::vector<NodeValue> ins = {
        scalarFor(ctx, node, *body, 0, ElemKind::Int64, double(t)),
        scalarFor(ctx, node, *body, 1, ElemKind::Bool, 1)};
    ins.insert(ins.end(), carried.begin(), carried.end());
    TRY(auto outs, importBody(ctx, node, *body, ins, opts));
    if (outs.size() != 1 + n + k)
      return fail(node, "the body gives " + llvm::Twine(outs.size()) +
                            " outputs; expected " + llvm::Twine(1 + n + k));
    auto *c = llvm::dyn_cast<Constant>(outs[0].getNode());
    if (!c || outs[0].getType()->size() != 1)
      return fail(node, "the body's condition output '" +
                            body->output(0).name() +
                            "' is not known at compile time; only loops "
                            "whose condition folds can be unrolled");
    std::copy(outs.begin() + 1, outs.begin() + 1 + n, carried.begin());
    for (size_t j = 0; j < k; ++j)
      scans[j].push_back(outs[1 + n + j]);
    if (c->getPayload().elementAsDouble(0) == 0)
      break;
  }
  std::vector<NodeValue> results = carried;
  for (auto &parts : scans) {
    if (parts.empty())
      return fail(node, "the loop runs no iteration: its scan outputs would "
                        "be empty (empty tensors are not supported)");
    TRY(NodeValue y, stack(ctx, node, parts, 0));
    results.push_back(y);
  }
  return bindOutputs(ctx, node, results);
}

/// One Scan (opset 9 form) over \p s, unrolled within the size rule, else
/// kept as a loop; gives the final states and the stacked scan outputs.
/// \p copies Scans of this size are imported side by side (an opset 8
/// Scan's batch), so the size rule counts all of them.
llvm::Expected<std::vector<NodeValue>>
unrollScan(ImportContext &ctx, const onnx::NodeProto &node,
           const onnx::GraphProto &body, ScanSpec &s, const ImportOptions &opts,
           int64_t copies = 1) {
  int64_t trips = -1;
  for (size_t j = 0; j < s.inputs.size(); ++j) {
    TRY(int64_t axis, normAxis(node, s.inAxes[j], s.inputs[j].dims().size()));
    s.inAxes[j] = axis;
    int64_t len = s.inputs[j].dims()[axis];
    if (trips >= 0 && len != trips)
      return fail(node, "scan inputs of " + llvm::Twine(trips) + " and " +
                            llvm::Twine(len) + " steps");
    trips = len;
  }
  if (trips < 1)
    return fail(node, "a Scan needs at least one scan input");
  if (trips > kMaxUnrolledNodes / (std::max(1, body.node_size()) *
                                   std::max<int64_t>(1, copies)))
    return scanAsLoop(ctx, node, body, s, trips, opts);
  size_t n = s.states.size();
  if (size_t(body.output_size()) < n)
    return fail(node, "the body has " + std::to_string(body.output_size()) +
                          " outputs, fewer than the " + std::to_string(n) +
                          " state variables");
  size_t k = size_t(body.output_size()) - n;
  std::vector<std::vector<NodeValue>> scans(k);
  for (int64_t t = 0; t < trips; ++t) {
    std::vector<NodeValue> ins = s.states;
    for (size_t j = 0; j < s.inputs.size(); ++j) {
      int64_t at = s.inReverse[j] ? trips - 1 - t : t;
      TRY(NodeValue x, sliceAt(ctx, node, s.inputs[j], s.inAxes[j], at));
      ins.push_back(x);
    }
    TRY(auto outs, importBody(ctx, node, body, ins, opts));
    std::copy(outs.begin(), outs.begin() + n, s.states.begin());
    for (size_t j = 0; j < k; ++j)
      scans[j].push_back(outs[n + j]);
  }
  std::vector<NodeValue> results = s.states;
  for (size_t j = 0; j < k; ++j) {
    if (s.outReverse[j])
      std::reverse(scans[j].begin(), scans[j].end());
    int64_t rank = int64_t(scans[j][0].dims().size()) + 1;
    int64_t axis = s.outAxes[j] < 0 ? s.outAxes[j] + rank : s.outAxes[j];
    TRY(NodeValue y, stack(ctx, node, scans[j], axis));
    results.push_back(y);
  }
  return results;
}

/// \p v of size \p n, or \p n copies of \p dflt when empty.
llvm::Expected<Ints> perInput(const onnx::NodeProto &node, Ints v, size_t n,
                              llvm::StringRef name) {
  if (v.empty())
    return Ints(n, 0);
  if (v.size() != n)
    return fail(node, name + " has " + llvm::Twine(v.size()) +
                          " entries; expected " + llvm::Twine(n));
  return v;
}

/// Opset 8 Scan: states and scan inputs carry a leading batch axis; each
/// batch element is scanned on its own (scan axis 1 of the input) and the
/// results stacked along axis 0 again.
llvm::Error importBatchedScan(ImportContext &ctx, const onnx::NodeProto &node,
                              const onnx::GraphProto &body, const ScanSpec &s,
                              const ImportOptions &opts) {
  int64_t batch = s.inputs[0].dims().empty() ? 0 : s.inputs[0].dims()[0];
  for (NodeValue v : s.states)
    if (v.dims().empty() || v.dims()[0] != batch)
      return fail(node, "state " + v.getType()->toString() +
                            " does not have the batch size " +
                            llvm::Twine(batch));
  EMBER_RETURN_IF_ERR(checkUnrollSize(node, body, batch));
  std::vector<std::vector<NodeValue>> perBatch;
  for (int64_t b = 0; b < batch; ++b) {
    ScanSpec sb = s;
    for (NodeValue &v : sb.states) {
      TRY(v, sliceAt(ctx, node, v, 0, b));
    }
    for (NodeValue &v : sb.inputs) {
      TRY(v, sliceAt(ctx, node, v, 0, b));
    }
    std::fill(sb.inAxes.begin(), sb.inAxes.end(), 0);
    TRY(auto results, unrollScan(ctx, node, body, sb, opts, batch));
    perBatch.push_back(std::move(results));
  }
  std::vector<NodeValue> results;
  for (size_t j = 0; batch && j < perBatch[0].size(); ++j) {
    std::vector<NodeValue> parts;
    for (auto &r : perBatch)
      parts.push_back(r[j]);
    TRY(NodeValue y, stack(ctx, node, parts, 0));
    results.push_back(y);
  }
  return bindOutputs(ctx, node, results);
}

/// Scan, unrolled. Opset 8 has a leading batch axis (scanned per batch
/// element and stacked again) and an optional sequence_lens, which must be
/// absent; opset 9 adds axes and directions per input and output.
llvm::Error importScan(ImportContext &ctx, const onnx::NodeProto &node,
                       const ImportOptions &opts) {
  TRY(const onnx::GraphProto *body, subgraph(node, "body"));
  AttrReader attrs(node);
  TRY(int64_t m, attrs.getInt("num_scan_inputs", std::nullopt));
  bool batched = ctx.opset() < 9;
  if (batched && ImportContext::hasInput(node, 0))
    return fail(node, "sequence_lens is not supported");
  int first = batched ? 1 : 0;
  int64_t numIn = node.input_size() - first;
  if (m < 1 || m > numIn)
    return fail(node, "num_scan_inputs " + llvm::Twine(m) + " of " +
                          llvm::Twine(numIn) + " inputs");
  ScanSpec s;
  for (int i = first; i < node.input_size(); ++i) {
    TRY(NodeValue v, ctx.input(node, i));
    (i - first < numIn - m ? s.states : s.inputs).push_back(v);
  }
  size_t k = size_t(std::max(0, body->output_size() - int(s.states.size())));
  TRY(Ints dirs,
      attrs.getInts(batched ? "directions" : "scan_input_directions", Ints{}));
  TRY(s.inReverse, perInput(node, dirs, size_t(m), "scan_input_directions"));
  TRY(Ints inAxes, attrs.getInts("scan_input_axes", Ints{}));
  TRY(s.inAxes, perInput(node, inAxes, size_t(m), "scan_input_axes"));
  TRY(Ints outAxes, attrs.getInts("scan_output_axes", Ints{}));
  TRY(s.outAxes, perInput(node, outAxes, k, "scan_output_axes"));
  TRY(Ints outDirs, attrs.getInts("scan_output_directions", Ints{}));
  TRY(s.outReverse, perInput(node, outDirs, k, "scan_output_directions"));
  if (!batched) {
    TRY(auto results, unrollScan(ctx, node, *body, s, opts));
    return bindOutputs(ctx, node, results);
  }
  return importBatchedScan(ctx, node, *body, s, opts);
}

} // namespace

bool ember::isControlFlow(llvm::StringRef opType) {
  return opType == "If" || opType == "Loop" || opType == "Scan";
}

llvm::Error ember::importControlFlow(ImportContext &ctx,
                                     const onnx::NodeProto &node,
                                     const ImportOptions &opts) {
  if (node.op_type() == "If")
    return importIf(ctx, node, opts);
  if (node.op_type() == "Loop")
    return importLoop(ctx, node, opts);
  return importScan(ctx, node, opts);
}
