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

/// Imports \p body once with its inputs bound to \p inputs and returns its
/// outputs. Names of the enclosing graphs stay visible (ONNX subgraphs may
/// read them); the body's own names are unbound again afterwards, so that
/// an unrolled body can be imported once per iteration.
llvm::Expected<std::vector<NodeValue>>
importBody(ImportContext &ctx, const onnx::NodeProto &node,
           const onnx::GraphProto &body, llvm::ArrayRef<NodeValue> inputs,
           const ImportOptions &opts) {
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

/// Binds the node's outputs to \p values (as many as the node names).
llvm::Error bindOutputs(ImportContext &ctx, const onnx::NodeProto &node,
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
  TRY(auto thenOuts, importBody(ctx, node, *thenG, {}, opts));
  TRY(auto elseOuts, importBody(ctx, node, *elseG, {}, opts));
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

/// Body input \p i of \p body reshaped from \p v ([1]) to what the body
/// declares ([] or [1]).
llvm::Expected<NodeValue> bodyScalar(ImportContext &ctx,
                                     const onnx::NodeProto &node,
                                     const onnx::GraphProto &body, int i,
                                     NodeValue v) {
  const auto &tt = body.input(i).type().tensor_type();
  bool oneDim = tt.has_shape() && tt.shape().dim_size() == 1;
  return reshapeTo(ctx, node, v, oneDim ? Ints{1} : Ints{});
}

/// Input \p i of a Loop as one value of \p kind shaped [1], or \p dflt
/// when the input is absent.
llvm::Expected<NodeValue> loopOperand(ImportContext &ctx,
                                      const onnx::NodeProto &node, int i,
                                      ElemKind kind, double dflt) {
  if (!ImportContext::hasInput(node, i))
    return constantOf(ctx, node, kind, {1}, dflt);
  TRY(NodeValue v, ctx.input(node, i));
  if (v.getElemKind() != kind || v.getType()->size() != 1)
    return fail(node, "input '" + node.input(i) + "' must be one " +
                          elemKindName(kind) + ", got " +
                          v.getType()->toString());
  return reshapeTo(ctx, node, v, {1});
}

/// The static bound of the loop's scan outputs: the smallest declared
/// leading dim of one, else the constant trip count; -1 without scan
/// outputs (the loop then runs until M or the condition stops it).
llvm::Expected<int64_t> scanBound(ImportContext &ctx,
                                  const onnx::NodeProto &node, size_t n,
                                  size_t k, std::optional<int64_t> constM) {
  int64_t bound = -1;
  // A trip count computed from a data-dependent count (`range(len(boxes))`)
  // is at most that count's bound.
  const ImportContext::ShapeExtent *se = ImportContext::hasInput(node, 0)
                                             ? ctx.shapeExtentOf(node.input(0))
                                             : nullptr;
  int64_t mBound = se && se->bound.size() == 1 ? se->bound[0] : -1;
  for (size_t j = 0; j < k; ++j) {
    int64_t b = constM ? *constM : mBound;
    std::string name =
        int(n + j) < node.output_size() ? node.output(int(n + j)) : "";
    const std::vector<int64_t> *d = ctx.declaredDims(name);
    if (d && !d->empty() && (*d)[0] > 0)
      b = b < 0 ? (*d)[0] : std::min(b, (*d)[0]);
    if (b < 0)
      return fail(node, "scan output '" + name +
                            "' has no static bound: declare its leading "
                            "dim or give the loop a constant trip count");
    bound = bound < 0 ? b : std::min(bound, b);
  }
  return bound;
}

/// Set while a loop body is imported as a loop: loops do not nest. Per
/// thread, since tools import models on several threads.
thread_local bool inLoopBody = false;

/// Imports \p body of a loop kept as a loop: its declared shapes imply
/// its shape operands (test_loop11's Slice); loops in it are not kept.
llvm::Expected<std::vector<NodeValue>>
importLoopBody(ImportContext &ctx, const onnx::NodeProto &node,
               const onnx::GraphProto &body, llvm::ArrayRef<NodeValue> ins,
               const ImportOptions &opts) {
  declareStaticShapes(ctx, body);
  inLoopBody = true;
  auto outs = importBody(ctx, node, body, ins, opts);
  inLoopBody = false;
  return outs;
}

/// A carried value holds elements: a loop buffer is never empty.
llvm::Error checkCarried(const onnx::NodeProto &node, NodeValue v) {
  if (v.getType()->size() == 0)
    return fail(node, "a carried value with no elements is not supported "
                      "in a loop kept as a loop");
  return llvm::Error::success();
}

/// A loop's values after it: its iteration count, the carried values and
/// the stacked scan outputs.
struct LoopResults {
  NodeValue count;
  std::vector<NodeValue> states, scans;
};

/// Ends the loop of \p counter: \p ops (condition, carried values and their
/// next values) gain a zeroed \p bound-row buffer per scan row of \p rows
/// and the rows; then the LoopEnd and the values after the loop.
llvm::Expected<LoopResults>
closeLoop(ImportContext &ctx, const onnx::NodeProto &node,
          const std::string &name, NodeValue counter,
          std::vector<NodeValue> ops, llvm::ArrayRef<NodeValue> states,
          llvm::ArrayRef<NodeValue> rows, int64_t bound) {
  Function &F = ctx.fn();
  std::vector<NodeValue> bufs;
  for (NodeValue row : rows) {
    if (bound < 1 || row.getType()->size() == 0)
      return fail(node, "a scan output with no elements is not supported "
                        "in a loop kept as a loop");
    Ints dims(row.dims().begin(), row.dims().end());
    dims.insert(dims.begin(), bound);
    bufs.push_back(F.createLoopCarry(
        name + ".scan", constantOf(ctx, node, row.getElemKind(), dims, 0)));
  }
  ops.insert(ops.end(), bufs.begin(), bufs.end());
  ops.insert(ops.end(), rows.begin(), rows.end());
  TRY(Node * end,
      F.tryCreateLoopEnd(name + ".end", counter, ops, int64_t(states.size()),
                         rows.empty() ? -1 : bound));
  LoopResults r;
  r.count = end->getNthResult(0);
  for (NodeValue st : states)
    r.states.push_back(F.createLoopFinal(name + ".final", r.count, st));
  for (NodeValue b : bufs)
    r.scans.push_back(F.createLoopFinal(name + ".final", r.count, b));
  return r;
}

/// A Loop kept as a loop (docs/ControlFlow.md "Loops kept as loops"): the
/// body is imported once between LoopBegin and LoopEnd; carried values
/// live in LoopCarry buffers, scan outputs in [bound, ...] buffers whose
/// rows past the iteration count stay zero and whose extent is that count.
llvm::Error importRealLoop(ImportContext &ctx, const onnx::NodeProto &node,
                           const onnx::GraphProto &body,
                           const ImportOptions &opts) {
  if (inLoopBody)
    return fail(node, "a Loop kept as a loop inside another one's body is "
                      "not supported (only unrolled loops nest)");
  constexpr double kNoBound = 9.2e18; // below INT64_MAX as a double
  TRY(NodeValue m, loopOperand(ctx, node, 0, ElemKind::Int64, kNoBound));
  TRY(NodeValue cond, loopOperand(ctx, node, 1, ElemKind::Bool, 1));
  std::optional<int64_t> constM;
  if (ImportContext::hasInput(node, 0)) {
    TRY(NodeValue m0, ctx.input(node, 0));
    if (auto *c = llvm::dyn_cast<Constant>(m0.getNode()))
      constM =
          int64_t(std::clamp(c->getPayload().elementAsDouble(0), 0., kNoBound));
  }
  if (constM && *constM > kMaxLoopTrips)
    return fail(node, "a constant trip count of " + llvm::Twine(*constM) +
                          "; the limit is " + llvm::Twine(kMaxLoopTrips));
  size_t n = size_t(std::max(0, node.input_size() - 2));
  if (body.output_size() < int(1 + n))
    return fail(node, "the body gives " + llvm::Twine(body.output_size()) +
                          " outputs, fewer than the condition and " +
                          llvm::Twine(n) + " carried values");
  size_t k = size_t(body.output_size()) - 1 - n;
  TRY(int64_t bound, scanBound(ctx, node, n, k, constM));
  std::string name = nameOf(node);
  Function &F = ctx.fn();
  NodeValue condState = F.createLoopCarry(name + ".cond", cond);
  std::vector<NodeValue> states;
  for (size_t j = 0; j < n; ++j) {
    TRY(NodeValue init, ctx.input(node, int(2 + j)));
    EMBER_RETURN_IF_ERR(checkCarried(node, init));
    states.push_back(F.createLoopCarry(name + ".carry", init));
  }
  NodeValue counter =
      F.createLoopBegin(name + ".begin", m, condState, states)->getCounter();
  TRY(NodeValue iter, bodyScalar(ctx, node, body, 0, counter));
  NodeValue condIn = F.createLoopParam(name + ".param", counter, condState);
  TRY(condIn, bodyScalar(ctx, node, body, 1, condIn));
  std::vector<NodeValue> ins = {iter, condIn};
  for (NodeValue s : states)
    ins.push_back(F.createLoopParam(name + ".param", counter, s));
  auto outs = importLoopBody(ctx, node, body, ins, opts);
  if (!outs)
    return outs.takeError();
  NodeValue condNext = (*outs)[0];
  if (condNext.getElemKind() != ElemKind::Bool ||
      condNext.getType()->size() != 1)
    return fail(node, "the body's condition output must be one bool, got " +
                          condNext.getType()->toString());
  TRY(condNext, reshapeTo(ctx, node, condNext, {1}));
  std::vector<NodeValue> ops = {condState, condNext};
  ops.insert(ops.end(), states.begin(), states.end());
  for (size_t j = 0; j < n; ++j) {
    NodeValue next = (*outs)[1 + j];
    if (!(*next.getType() == *states[j].getType()))
      return fail(node, "carried value " + llvm::Twine(j) + " is " +
                            states[j].getType()->toString() +
                            " on entry but the body gives " +
                            next.getType()->toString() +
                            " (a carried value keeps one type)");
    ops.push_back(next);
  }
  std::vector<NodeValue> rows(outs->begin() + 1 + n, outs->end());
  TRY(LoopResults r,
      closeLoop(ctx, node, name, counter, ops, states, rows, bound));
  std::vector<NodeValue> results = r.states;
  for (size_t j = 0; j < k; ++j) {
    results.push_back(r.scans[j]);
    if (int(n + j) < node.output_size() && !node.output(int(n + j)).empty())
      ctx.setExtent(node.output(int(n + j)), {0, r.count});
  }
  return bindOutputs(ctx, node, results);
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

/// One Scan (opset 9 form) over \p states and \p inputs, unrolled; gives
/// the final states and the stacked scan outputs.
struct ScanSpec {
  std::vector<NodeValue> states, inputs;
  Ints inAxes, inReverse, outAxes, outReverse;
};

llvm::Expected<std::vector<NodeValue>>
scanAsLoop(ImportContext &ctx, const onnx::NodeProto &node,
           const onnx::GraphProto &body, const ScanSpec &s, int64_t trips,
           const ImportOptions &opts);

llvm::Expected<std::vector<NodeValue>> unrollScan(ImportContext &ctx,
                                                  const onnx::NodeProto &node,
                                                  const onnx::GraphProto &body,
                                                  ScanSpec &s,
                                                  const ImportOptions &opts) {
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
  if (trips > kMaxUnrolledNodes / std::max(1, body.node_size()))
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

/// \p x (a loop's [trips, ...] scan buffer) reversed along axis 0 when
/// \p reverse, then with that axis moved to \p axis.
llvm::Expected<NodeValue> placeScanAxis(ImportContext &ctx,
                                        const onnx::NodeProto &node,
                                        NodeValue x, int64_t trips,
                                        bool reverse, int64_t axis) {
  if (reverse) {
    TRY(NodeValue iota, iotaConstant(ctx, node, trips, {dim_t(trips)}));
    NodeValue last = constantOf(ctx, node, ElemKind::Int64, {1}, trips - 1);
    TRY(NodeValue back, binary(ctx, node, OpKind::Sub, last, iota));
    TRY(x, make(ctx, node, OpKind::Gather, {x, back}, {Attr::makeInt(0)}));
  }
  int64_t rank = int64_t(x.dims().size());
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis >= rank)
    return fail(node, "scan output axis " + llvm::Twine(axis) +
                          " is out of range for rank " + llvm::Twine(rank));
  if (axis == 0)
    return x;
  Ints perm;
  for (int64_t d = 1; d <= axis; ++d)
    perm.push_back(d);
  perm.push_back(0);
  for (int64_t d = axis + 1; d < rank; ++d)
    perm.push_back(d);
  return make(ctx, node, OpKind::Transpose, {x}, {Attr::makeInts(perm)});
}

/// A Scan over the unrolling limit, kept as a loop of \p trips iterations
/// (docs/ControlFlow.md): iteration t gathers element t (or trips - 1 - t)
/// of each scan input along its axis, and the scan outputs are the loop's
/// [trips, ...] buffers, reversed and moved to their axes afterwards.
llvm::Expected<std::vector<NodeValue>>
scanAsLoop(ImportContext &ctx, const onnx::NodeProto &node,
           const onnx::GraphProto &body, const ScanSpec &s, int64_t trips,
           const ImportOptions &opts) {
  if (inLoopBody)
    return fail(node, "a Scan kept as a loop inside a loop's body is not "
                      "supported (only unrolled loops nest)");
  if (trips > kMaxLoopTrips)
    return fail(node, "a constant trip count of " + llvm::Twine(trips) +
                          "; the limit is " + llvm::Twine(kMaxLoopTrips));
  std::string name = nameOf(node);
  Function &F = ctx.fn();
  NodeValue m = constantOf(ctx, node, ElemKind::Int64, {1}, double(trips));
  NodeValue condState = F.createLoopCarry(
      name + ".cond", constantOf(ctx, node, ElemKind::Bool, {1}, 1));
  std::vector<NodeValue> states, ins;
  for (NodeValue v : s.states) {
    EMBER_RETURN_IF_ERR(checkCarried(node, v));
    states.push_back(F.createLoopCarry(name + ".carry", v));
  }
  NodeValue counter =
      F.createLoopBegin(name + ".begin", m, condState, states)->getCounter();
  for (NodeValue st : states)
    ins.push_back(F.createLoopParam(name + ".param", counter, st));
  TRY(NodeValue t, reshapeTo(ctx, node, counter, {}));
  NodeValue last = constantOf(ctx, node, ElemKind::Int64, {}, trips - 1);
  TRY(NodeValue back, binary(ctx, node, OpKind::Sub, last, t));
  for (size_t j = 0; j < s.inputs.size(); ++j) {
    TRY(NodeValue x, make(ctx, node, OpKind::Gather,
                          {s.inputs[j], s.inReverse[j] ? back : t},
                          {Attr::makeInt(s.inAxes[j])}));
    ins.push_back(x);
  }
  auto outs = importLoopBody(ctx, node, body, ins, opts);
  if (!outs)
    return outs.takeError();
  size_t n = states.size(), k = outs->size() - n;
  std::vector<NodeValue> ops = {
      condState, F.createLoopParam(name + ".param", counter, condState)};
  ops.insert(ops.end(), states.begin(), states.end());
  for (size_t j = 0; j < n; ++j) {
    if (!(*(*outs)[j].getType() == *states[j].getType()))
      return fail(node, "state " + llvm::Twine(j) + " is " +
                            states[j].getType()->toString() +
                            " on entry but the body gives " +
                            (*outs)[j].getType()->toString());
    ops.push_back((*outs)[j]);
  }
  std::vector<NodeValue> rows(outs->begin() + n, outs->end());
  TRY(LoopResults r,
      closeLoop(ctx, node, name, counter, ops, states, rows, trips));
  std::vector<NodeValue> results = r.states;
  for (size_t j = 0; j < k; ++j) {
    TRY(NodeValue y, placeScanAxis(ctx, node, r.scans[j], trips,
                                   s.outReverse[j] != 0, s.outAxes[j]));
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
    TRY(auto results, unrollScan(ctx, node, body, sb, opts));
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
