//===- ImportAffineSlice.cpp - Slices of a compile-time length ------------===//
//
// A Slice whose starts and ends are computed at run time but differ by a
// constant (`x[i:i+k]` in a loop body, with i the iteration number) has a
// length known at compile time: a small affine analysis of the two operands
// finds it, and the Slice is compiled as a run-time-offset gather of that
// length (docs/RuntimeInputs.md, path 2).
//
//===----------------------------------------------------------------------===//
#include "ImportRuntimeOps.h"

#include "ember/Base/ElemAccess.h"

#include <algorithm>
#include <cmath>
#include <numeric>

using namespace ember;
using namespace ember::onnximport;

#define TRY EMBER_ASSIGN_OR_RETURN

namespace {

/// Element idx of a value as base[baseIdx] + off (no base: the constant
/// off).
struct AffineElem {
  NodeValue base;
  int64_t baseIdx = 0;
  int64_t off = 0;
  bool sameBase(const AffineElem &o) const {
    return base.getNode() == o.base.getNode() &&
           (!base.getNode() ||
            (base.getResNo() == o.base.getResNo() && baseIdx == o.baseIdx));
  }
};

/// How deep the analysis follows operands: the patterns it is for are a
/// few nodes deep; a longer chain is a leaf.
constexpr int kMaxAffineDepth = 16;

/// The flat index of \p v's operand \p in that element \p idx of \p v
/// reads when \p in is \p v's shape or a single value, else none.
std::optional<int64_t> sameOrSplat(NodeValue v, NodeValue in, int64_t idx) {
  if (in.getType()->size() == 1)
    return 0;
  if (in.getType()->size() == v.getType()->size())
    return idx;
  return std::nullopt;
}

/// Offsets and steps are kept within +-2^61, so that the sums, spans and
/// rounding below cannot overflow; a slice bound that large runs off any
/// tensor, saturated or not.
constexpr int64_t kAffineLimit = int64_t(1) << 61;
int64_t saturated(double d) {
  if (std::isnan(d))
    return 0;
  return int64_t(std::clamp(d, -double(kAffineLimit), double(kAffineLimit)));
}
int64_t saturated(int64_t v) {
  return std::clamp(v, -kAffineLimit, kAffineLimit);
}

/// Element \p idx of \p v (an integer value) as an AffineElem: constants,
/// Add / Sub of a constant, shape-only and integer-cast nodes and 1-D
/// Concats are looked through; anything else is its own base.
AffineElem affineAt(NodeValue v, int64_t idx, int depth = 0) {
  AffineElem leaf{v, idx, 0};
  Node *n = v.getNode();
  if (auto *c = llvm::dyn_cast<Constant>(n))
    return {NodeValue(), 0, saturated(c->getPayload().elementAsDouble(idx))};
  if (depth > kMaxAffineDepth)
    return leaf;
  auto operandAt = [&](NodeValue in) -> std::optional<AffineElem> {
    if (!isIntegerKind(in.getType()->getElemKind()))
      return std::nullopt;
    if (std::optional<int64_t> i = sameOrSplat(v, in, idx))
      return affineAt(in, *i, depth + 1);
    return std::nullopt;
  };
  if (llvm::isa<AddNode>(n) || llvm::isa<SubNode>(n)) {
    auto a = operandAt(n->getNthInput(0)), b = operandAt(n->getNthInput(1));
    if (!a || !b)
      return leaf;
    bool sub = llvm::isa<SubNode>(n);
    if (!b->base.getNode())
      return {a->base, a->baseIdx,
              saturated(sub ? a->off - b->off : a->off + b->off)};
    if (!a->base.getNode() && !sub)
      return {b->base, b->baseIdx, saturated(a->off + b->off)};
    return leaf;
  }
  if (llvm::isa<ReshapeNode>(n) || llvm::isa<BroadcastNode>(n) ||
      llvm::isa<CastNode>(n)) {
    auto a = operandAt(n->getNthInput(0));
    return a ? *a : leaf;
  }
  if (auto *cat = llvm::dyn_cast<ConcatNode>(n)) {
    if (v.dims().size() != 1)
      return leaf;
    int64_t at = idx;
    for (NodeValue in : cat->getInputs()) {
      int64_t size = in.getType()->size();
      if (at < size)
        return affineAt(in, at, depth + 1);
      at -= size;
    }
  }
  return leaf;
}

/// The number of entries ONNX's Slice takes from a dim of \p n for
/// constant \p start, \p end and \p step: both counted from the back when
/// negative and clamped into [0, n] ([-1, n - 1] going back).
int64_t constantSliceLength(int64_t start, int64_t end, int64_t step,
                            int64_t n) {
  int64_t lo = step > 0 ? 0 : -1, hi = step > 0 ? n : n - 1;
  start = std::clamp(start < 0 ? start + n : start, lo, hi);
  end = std::clamp(end < 0 ? end + n : end, lo, hi);
  int64_t mag = step > 0 ? step : -step;
  int64_t dist = step > 0 ? end - start : start - end;
  return dist > 0 ? (dist + mag - 1) / mag : 0;
}

} // namespace

llvm::Expected<std::optional<FixedSlice>>
onnximport::fixedSliceLengths(ImportContext &ctx, const onnx::NodeProto &node,
                              NodeValue x) {
  if (!ImportContext::hasInput(node, 1) || !ImportContext::hasInput(node, 2))
    return std::nullopt;
  TRY(NodeValue starts, ctx.input(node, 1));
  TRY(NodeValue ends, ctx.input(node, 2));
  if (llvm::isa<Constant>(starts.getNode()) &&
      llvm::isa<Constant>(ends.getNode()))
    return std::nullopt;
  int64_t r = x.dims().size(), k = starts.getType()->size();
  if (starts.dims().size() != 1 || ends.getType()->size() != k || k > r ||
      !isIntegerKind(starts.getType()->getElemKind()) ||
      !isIntegerKind(ends.getType()->getElemKind()))
    return std::nullopt;
  // axes and steps must be constants: they pick the dims and the lengths.
  for (int i = 3; i < 5; ++i)
    if (ImportContext::hasInput(node, i)) {
      TRY(NodeValue v, ctx.input(node, i));
      if (!llvm::isa<Constant>(v.getNode()))
        return std::nullopt;
    }
  Ints all(k);
  std::iota(all.begin(), all.end(), 0);
  TRY(Ints axes, optionalInts(ctx, node, 3, all));
  TRY(Ints steps, optionalInts(ctx, node, 4, Ints(k, 1)));
  if (axes.size() != size_t(k) || steps.size() != size_t(k))
    return fail(node, "starts, ends, axes and steps differ in length");
  FixedSlice fs{dimsOf(x), Ints(r, 1), Ints(r, -1), Ints(r, 0)};
  for (int64_t j = 0; j < k; ++j) {
    AffineElem b = affineAt(starts, j), e = affineAt(ends, j);
    if (!b.sameBase(e))
      return std::nullopt;
    TRY(int64_t a, normAxis(node, axes[j], r));
    int64_t n = x.dims()[a], span = e.off - b.off, step = saturated(steps[j]);
    if (step == 0)
      return fail(node, "step 0");
    // ends - starts elements, one in every step, at most what the dim holds
    // from its first element: ceil(n / |step|).
    int64_t mag = step > 0 ? step : -step, dist = step > 0 ? span : -span;
    int64_t len = dist > 0 ? (dist + mag - 1) / mag : 0;
    fs.length[a] = std::min(len, (n + mag - 1) / mag);
    fs.step[a] = step;
    // A constant entry (x[i:i+3, 1:3]'s second) has ONNX's exact length and
    // needs no check.
    if (!b.base.getNode()) {
      fs.length[a] = constantSliceLength(b.off, e.off, step, n);
    } else {
      fs.entry[a] = j;
      fs.span[a] = span;
    }
  }
  return fs;
}

llvm::Error onnximport::checkFixedWindow(ImportContext &ctx,
                                         const onnx::NodeProto &node,
                                         NodeValue x, const FixedSlice &fixed,
                                         int64_t a, NodeValue start,
                                         NodeValue rawStart) {
  if (fixed.entry[a] < 0)
    return llvm::Error::success();
  int64_t n = x.dims()[a], len = fixed.length[a], step = fixed.step[a];
  auto lit = [&](int64_t v) {
    return constantOf(ctx, node, ElemKind::Int64, {1}, double(v));
  };
  // The end, the start plus the constant span (so that the ends operand is
  // not built), as ONNX takes it: counted from the back when negative, then
  // clamped into [0, n] (into [-1, n - 1] going back).
  TRY(NodeValue e,
      binary(ctx, node, OpKind::Add, rawStart, lit(fixed.span[a])));
  TRY(e, wrapNegative(ctx, node, e, n));
  TRY(e, make(ctx, node, OpKind::Max, {e, lit(step > 0 ? 0 : -1)}));
  TRY(e, make(ctx, node, OpKind::Min, {e, lit(step > 0 ? n : n - 1)}));
  // ONNX takes ceil(dist / |step|) entries: exactly len where
  // (len - 1) |step| < dist <= len |step|.
  int64_t mag = step > 0 ? step : -step;
  TRY(NodeValue dist, step > 0 ? binary(ctx, node, OpKind::Sub, e, start)
                               : binary(ctx, node, OpKind::Sub, start, e));
  TRY(NodeValue tooShort,
      make(ctx, node, OpKind::Less, {dist, lit((len - 1) * mag + 1)}));
  TRY(NodeValue tooLong, make(ctx, node, OpKind::Less, {lit(len * mag), dist}));
  TRY(NodeValue failed, make(ctx, node, OpKind::Or, {tooShort, tooLong}));
  return addRuntimeCheck(
      ctx, node, failed,
      "the window of " + std::to_string(len) + " entries (step " +
          std::to_string(step) + ") computed at run time runs off the " +
          std::to_string(n) + " entries of axis " + std::to_string(a) +
          "; ONNX gives a shorter slice, and the compiled length is fixed");
}
