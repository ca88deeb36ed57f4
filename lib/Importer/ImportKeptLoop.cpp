//===- ImportKeptLoop.cpp - Loops and Scans kept as loops -----------------===//
//
// A Loop with a run-time trip count or condition, or a Loop or Scan over
// the unrolling limit, imported as one copy of its body between LoopBegin
// and LoopEnd (docs/ControlFlow.md "Loops kept as loops"). Such loops nest.
//
//===----------------------------------------------------------------------===//
#include "ImportControlFlow.h"

#include "ImportHelpers.h"

#include <algorithm>

using namespace ember;
using namespace ember::onnximport;

#define TRY EMBER_ASSIGN_OR_RETURN

namespace {

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

/// Imports \p body of a loop kept as a loop: its declared shapes imply
/// its shape operands (test_loop11's Slice). Loops in it may be kept as
/// loops too: they nest (docs/ControlFlow.md "Nested loops").
llvm::Expected<std::vector<NodeValue>>
importLoopBody(ImportContext &ctx, const onnx::NodeProto &node,
               const onnx::GraphProto &body, llvm::ArrayRef<NodeValue> ins,
               const ImportOptions &opts) {
  declareStaticShapes(ctx, body);
  return importBody(ctx, node, body, ins, opts);
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

/// Carries the run-time check statuses \p inner of one iteration across the
/// loop of \p counter: a status LoopCarry, 0 on entry, joins \p states (the
/// LoopBegin is rebuilt with it, \p counter becomes the new one's) and the
/// result, the largest status so far, is its next value; its LoopFinal is
/// the loop's status (ImportChecks.cpp).
llvm::Expected<NodeValue>
carryChecks(ImportContext &ctx, const onnx::NodeProto &node,
            const std::string &name, std::vector<NodeValue> &states,
            NodeValue &counter, llvm::ArrayRef<NodeValue> inner) {
  Function &F = ctx.fn();
  NodeValue status = F.createLoopCarry(
      name + ".check", constantOf(ctx, node, ElemKind::Int64, {1}, 0));
  states.push_back(status);
  Node *old = counter.getNode();
  NodeValue begin = F.createLoopBegin(old->getName(), old->getNthInput(0),
                                      old->getNthInput(1), states)
                        ->getCounter();
  counter.replaceAllUsesWith(begin);
  F.eraseNode(old);
  counter = begin;
  NodeValue prev = F.createLoopParam(name + ".param", counter, status);
  TRY(std::optional<NodeValue> now, combineChecks(ctx, node, inner));
  return make(ctx, node, OpKind::Max, {prev, *now});
}

/// Imports \p body as the body of the loop of \p counter and takes its
/// run-time checks: with any, a status carried value joins \p states and
/// its next value is returned (carryChecks).
llvm::Expected<std::optional<NodeValue>>
importCheckedBody(ImportContext &ctx, const onnx::NodeProto &node,
                  const onnx::GraphProto &body, llvm::ArrayRef<NodeValue> ins,
                  const ImportOptions &opts, std::vector<NodeValue> &outs,
                  std::vector<NodeValue> &states, NodeValue &counter) {
  std::vector<NodeValue> outer = ctx.takeCheckStatuses();
  TRY(outs, importLoopBody(ctx, node, body, ins, opts));
  std::vector<NodeValue> inner = ctx.takeCheckStatuses();
  for (NodeValue s : outer)
    ctx.addCheckStatus(s);
  if (inner.empty())
    return std::nullopt;
  return carryChecks(ctx, node, nameOf(node), states, counter, inner);
}

/// The loop's status after it (the last LoopFinal of \p r.states, which
/// it drops) becomes a pending check status when \p next was carried.
void takeLoopChecks(ImportContext &ctx, std::optional<NodeValue> next,
                    LoopResults &r) {
  if (!next)
    return;
  ctx.addCheckStatus(r.states.back());
  r.states.pop_back();
}

/// A loop kept as a loop stops at \p bound, its scan outputs' static bound;
/// fails the call when it stopped there while it would have gone on: count
/// == bound < M and the condition still true (ONNX gives more rows).
llvm::Error checkScanBound(ImportContext &ctx, const onnx::NodeProto &node,
                           NodeValue m, NodeValue condState, NodeValue count,
                           int64_t bound, std::optional<int64_t> constM) {
  if (bound < 0 || (constM && *constM <= bound))
    return llvm::Error::success();
  NodeValue b = constantOf(ctx, node, ElemKind::Int64, {1}, double(bound));
  NodeValue cond =
      ctx.fn().createLoopFinal(nameOf(node) + ".final", count, condState);
  TRY(NodeValue atBound, make(ctx, node, OpKind::Equal, {count, b}));
  TRY(NodeValue more, make(ctx, node, OpKind::Less, {count, m}));
  TRY(NodeValue failed, make(ctx, node, OpKind::And, {atBound, more}));
  TRY(failed, make(ctx, node, OpKind::And, {failed, cond}));
  return addRuntimeCheck(
      ctx, node, failed,
      "the loop would run past " + std::to_string(bound) +
          " iterations, the static bound of its scan outputs (their declared "
          "leading dim or the trip count's bound); ONNX gives more rows");
}

} // namespace

/// The body is imported once between LoopBegin and LoopEnd; carried values
/// live in LoopCarry buffers, scan outputs in [bound, ...] buffers whose
/// rows past the iteration count stay zero and whose extent is that count.
llvm::Error ember::importRealLoop(ImportContext &ctx,
                                  const onnx::NodeProto &node,
                                  const onnx::GraphProto &body,
                                  const ImportOptions &opts) {
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
  std::vector<NodeValue> outs;
  TRY(std::optional<NodeValue> checked,
      importCheckedBody(ctx, node, body, ins, opts, outs, states, counter));
  NodeValue condNext = outs[0];
  if (condNext.getElemKind() != ElemKind::Bool ||
      condNext.getType()->size() != 1)
    return fail(node, "the body's condition output must be one bool, got " +
                          condNext.getType()->toString());
  TRY(condNext, reshapeTo(ctx, node, condNext, {1}));
  std::vector<NodeValue> ops = {condState, condNext};
  ops.insert(ops.end(), states.begin(), states.end());
  for (size_t j = 0; j < n; ++j) {
    NodeValue next = outs[1 + j];
    if (!(*next.getType() == *states[j].getType()))
      return fail(node, "carried value " + llvm::Twine(j) + " is " +
                            states[j].getType()->toString() +
                            " on entry but the body gives " +
                            next.getType()->toString() +
                            " (a carried value keeps one type)");
    ops.push_back(next);
  }
  if (checked)
    ops.push_back(*checked);
  std::vector<NodeValue> rows(outs.begin() + 1 + n, outs.end());
  TRY(LoopResults r,
      closeLoop(ctx, node, name, counter, ops, states, rows, bound));
  takeLoopChecks(ctx, checked, r);
  EMBER_RETURN_IF_ERR(checkScanBound(ctx, node, m, condState, r.count,
                                     rows.empty() ? -1 : bound, constM));
  std::vector<NodeValue> results = r.states;
  for (size_t j = 0; j < k; ++j) {
    results.push_back(r.scans[j]);
    if (int(n + j) < node.output_size() && !node.output(int(n + j)).empty())
      ctx.setExtent(node.output(int(n + j)), {0, r.count});
  }
  return bindOutputs(ctx, node, results);
}

namespace {

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

} // namespace

/// A Scan over the unrolling limit, kept as a loop of \p trips iterations
/// (docs/ControlFlow.md): iteration t gathers element t (or trips - 1 - t)
/// of each scan input along its axis, and the scan outputs are the loop's
/// [trips, ...] buffers, reversed and moved to their axes afterwards.
llvm::Expected<std::vector<NodeValue>>
ember::scanAsLoop(ImportContext &ctx, const onnx::NodeProto &node,
                  const onnx::GraphProto &body, const ScanSpec &s,
                  int64_t trips, const ImportOptions &opts) {
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
  size_t n = states.size();
  std::vector<NodeValue> outs;
  TRY(std::optional<NodeValue> checked,
      importCheckedBody(ctx, node, body, ins, opts, outs, states, counter));
  size_t k = outs.size() - n;
  std::vector<NodeValue> ops = {
      condState, F.createLoopParam(name + ".param", counter, condState)};
  ops.insert(ops.end(), states.begin(), states.end());
  for (size_t j = 0; j < n; ++j) {
    if (!(*outs[j].getType() == *states[j].getType()))
      return fail(node, "state " + llvm::Twine(j) + " is " +
                            states[j].getType()->toString() +
                            " on entry but the body gives " +
                            outs[j].getType()->toString());
    ops.push_back(outs[j]);
  }
  if (checked)
    ops.push_back(*checked);
  std::vector<NodeValue> rows(outs.begin() + n, outs.end());
  TRY(LoopResults r,
      closeLoop(ctx, node, name, counter, ops, states, rows, trips));
  takeLoopChecks(ctx, checked, r);
  std::vector<NodeValue> results = r.states;
  for (size_t j = 0; j < k; ++j) {
    TRY(NodeValue y, placeScanAxis(ctx, node, r.scans[j], trips,
                                   s.outReverse[j] != 0, s.outAxes[j]));
    results.push_back(y);
  }
  return results;
}
