//===- ImportSequence.cpp - Sequences as import-time lists ----------------===//
//
// A static-memory compiler has no run-time list of tensors. Sequences that a
// graph builds and consumes itself (SequenceConstruct / Insert / Erase / At,
// SplitToSequence, ConcatFromSequence: what exporters write for a Python
// list of tensors) are resolved while importing: the sequence is the list
// of its elements' NodeValues, each op edits the list, and only tensors
// reach the graph. That needs every position to be a constant; a sequence
// graph input or output, or a position computed at run time, is refused
// with an error naming the node (docs/ControlFlow.md, "Sequences").
//
//===----------------------------------------------------------------------===//
#include "ImportHelpers.h"

using namespace ember;
using namespace ember::onnximport;

#define TRY EMBER_ASSIGN_OR_RETURN

namespace {

using Elems = std::vector<NodeValue>;

/// Sequences are resolved at import, so their positions and split sizes
/// cannot be run-time values.
llvm::Error requireConstant(ImportContext &ctx, const onnx::NodeProto &node,
                            int i) {
  TRY(NodeValue v, ctx.input(node, i));
  if (!llvm::isa<Constant>(v.getNode()))
    return fail(node, "input '" + node.input(i) +
                          "' must be a constant: sequences are resolved "
                          "while importing");
  return llvm::Error::success();
}

/// Position input \p i of \p node in a sequence of \p n elements, made
/// non-negative; \p inclusiveEnd admits n (insertion at the back).
llvm::Expected<int64_t> position(ImportContext &ctx,
                                 const onnx::NodeProto &node, int i, int64_t n,
                                 bool inclusiveEnd) {
  EMBER_RETURN_IF_ERR(requireConstant(ctx, node, i));
  TRY(const Tensor *t, ctx.constantInput(node, i));
  if (t->size() != 1)
    return fail(node, "the position must be a scalar");
  TRY(int64_t pos, constantScalarInt(ctx, node, i));
  int64_t hi = inclusiveEnd ? n : n - 1;
  if (pos < -n || pos > hi)
    return fail(node, "position " + llvm::Twine(pos) +
                          " is outside a sequence of " + llvm::Twine(n) +
                          " elements");
  return pos < 0 ? pos + n : pos;
}

/// The sequence's elements must share one element type (the ONNX type
/// constraint of a sequence).
llvm::Error checkSameKind(const onnx::NodeProto &node, const Elems &seq,
                          NodeValue v) {
  if (!seq.empty() && seq.front().getElemKind() != v.getElemKind())
    return fail(node, "a sequence holds one element type; got " +
                          v.getType()->toString() + " after " +
                          seq.front().getType()->toString());
  return llvm::Error::success();
}

llvm::Error importSequenceEmpty(ImportContext &ctx,
                                const onnx::NodeProto &node) {
  ctx.bindSequence(node.output(0), {});
  return llvm::Error::success();
}

llvm::Error importSequenceConstruct(ImportContext &ctx,
                                    const onnx::NodeProto &node) {
  Elems seq;
  for (int i = 0; i < node.input_size(); ++i) {
    TRY(NodeValue v, ctx.input(node, i));
    EMBER_RETURN_IF_ERR(checkSameKind(node, seq, v));
    seq.push_back(v);
  }
  ctx.bindSequence(node.output(0), std::move(seq));
  return llvm::Error::success();
}

llvm::Error importSequenceInsert(ImportContext &ctx,
                                 const onnx::NodeProto &node) {
  TRY(Elems seq, ctx.sequenceInput(node, 0));
  TRY(NodeValue v, ctx.input(node, 1));
  EMBER_RETURN_IF_ERR(checkSameKind(node, seq, v));
  int64_t pos = seq.size();
  if (ImportContext::hasInput(node, 2)) {
    TRY(pos, position(ctx, node, 2, seq.size(), true));
  }
  seq.insert(seq.begin() + pos, v);
  ctx.bindSequence(node.output(0), std::move(seq));
  return llvm::Error::success();
}

llvm::Error importSequenceErase(ImportContext &ctx,
                                const onnx::NodeProto &node) {
  TRY(Elems seq, ctx.sequenceInput(node, 0));
  if (seq.empty())
    return fail(node, "cannot erase from an empty sequence");
  int64_t pos = seq.size() - 1;
  if (ImportContext::hasInput(node, 1)) {
    TRY(pos, position(ctx, node, 1, seq.size(), false));
  }
  seq.erase(seq.begin() + pos);
  ctx.bindSequence(node.output(0), std::move(seq));
  return llvm::Error::success();
}

llvm::Error importSequenceAt(ImportContext &ctx, const onnx::NodeProto &node) {
  TRY(Elems seq, ctx.sequenceInput(node, 0));
  TRY(int64_t pos, position(ctx, node, 1, seq.size(), false));
  return ctx.setOutput(node, seq[pos]);
}

llvm::Error importSequenceLength(ImportContext &ctx,
                                 const onnx::NodeProto &node) {
  TRY(Elems seq, ctx.sequenceInput(node, 0));
  return ctx.setOutput(
      node, constantOf(ctx, node, ElemKind::Int64, {}, double(seq.size())));
}

/// The part sizes of SplitToSequence along an axis of \p n: input 1 as a
/// scalar (equal parts, the last one shorter) or a list, else parts of 1.
llvm::Expected<Ints> splitSizes(ImportContext &ctx, const onnx::NodeProto &node,
                                int64_t n) {
  if (!ImportContext::hasInput(node, 1))
    return Ints(n, 1);
  EMBER_RETURN_IF_ERR(requireConstant(ctx, node, 1));
  TRY(const Tensor *t, ctx.constantInput(node, 1));
  TRY(Ints sizes, ctx.constantInts(node, 1));
  if (t->dims().empty() && sizes.size() == 1) {
    int64_t part = sizes[0];
    if (part < 1)
      return fail(node, "the split size must be positive");
    sizes.clear();
    for (int64_t off = 0; off < n; off += part)
      sizes.push_back(std::min(part, n - off));
    return sizes;
  }
  int64_t total = 0;
  for (int64_t s : sizes) {
    if (s < 1 || s > n)
      return fail(node, "split sizes must be between 1 and the dimension");
    total += s;
  }
  if (total != n)
    return fail(node, "split sizes add up to " + llvm::Twine(total) +
                          ", not the dimension " + llvm::Twine(n));
  return sizes;
}

llvm::Error importSplitToSequence(ImportContext &ctx,
                                  const onnx::NodeProto &node) {
  TRY(NodeValue x, ctx.input(node, 0));
  AttrReader attrs(node);
  size_t r = x.dims().size();
  if (r == 0)
    return fail(node, "input must have rank >= 1");
  TRY(int64_t axis, attrs.getInt("axis", 0));
  TRY(axis, normAxis(node, axis, r));
  TRY(int64_t keepdims, attrs.getInt("keepdims", 1));
  int64_t n = x.dims()[axis];
  if (n > kMaxFoldElements)
    return fail(node, "would split into more than " +
                          llvm::Twine(kMaxFoldElements) + " parts");
  TRY(Ints sizes, splitSizes(ctx, node, n));
  // keepdims=0 drops the axis only when splitting into parts of 1.
  bool squeeze = keepdims == 0 && !ImportContext::hasInput(node, 1);
  Elems seq;
  Ints starts(r, 0), steps(r, 1), counts(x.dims().begin(), x.dims().end());
  for (int64_t s : sizes) {
    counts[axis] = s;
    NodeValue part = x;
    if (s != n) {
      TRY(part, make(ctx, node, OpKind::Slice, {x},
                     {Attr::makeInts(starts), Attr::makeInts(steps),
                      Attr::makeInts(counts)}));
    }
    if (squeeze) {
      Ints d(counts.begin(), counts.end());
      d.erase(d.begin() + axis);
      TRY(part, reshapeTo(ctx, node, part, d));
    }
    seq.push_back(part);
    starts[axis] += s;
  }
  ctx.bindSequence(node.output(0), std::move(seq));
  return llvm::Error::success();
}

llvm::Error importConcatFromSequence(ImportContext &ctx,
                                     const onnx::NodeProto &node) {
  TRY(Elems seq, ctx.sequenceInput(node, 0));
  if (seq.empty())
    return fail(node, "cannot concatenate an empty sequence");
  AttrReader attrs(node);
  TRY(int64_t axis, attrs.getInt("axis", std::nullopt));
  TRY(int64_t newAxis, attrs.getInt("new_axis", 0));
  size_t r = seq.front().dims().size();
  TRY(axis, normAxis(node, axis, r + (newAxis ? 1 : 0)));
  Elems parts;
  for (NodeValue v : seq) {
    if (v.dims().size() != r)
      return fail(node, "the sequence's elements differ in rank");
    if (newAxis) {
      Ints d(v.dims().begin(), v.dims().end());
      d.insert(d.begin() + axis, 1);
      TRY(v, reshapeTo(ctx, node, v, d));
    }
    parts.push_back(v);
  }
  if (parts.size() == 1)
    return ctx.setOutput(node, parts[0]);
  TRY(NodeValue y,
      make(ctx, node, OpKind::Concat, parts, {Attr::makeInt(axis)}));
  return ctx.setOutput(node, y);
}

const ImportRule kSequenceRules[] = {
    {"SequenceEmpty", 11, 17, importSequenceEmpty},
    {"SequenceConstruct", 11, 17, importSequenceConstruct},
    {"SequenceInsert", 11, 17, importSequenceInsert},
    {"SequenceErase", 11, 17, importSequenceErase},
    {"SequenceAt", 11, 17, importSequenceAt},
    {"SequenceLength", 11, 17, importSequenceLength},
    {"SplitToSequence", 11, 17, importSplitToSequence},
    {"ConcatFromSequence", 11, 17, importConcatFromSequence},
};

} // namespace

RuleList onnximport::getSequenceImportRules() { return kSequenceRules; }
