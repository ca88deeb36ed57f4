//===- ImportUnique.cpp - Unique ------------------------------------------===//
//
// Unique's result size depends on the data. With a constant input it is
// computed here. With an input fed at run time, a declared output gives
// the count K, and the graph compares every row (the slices along axis,
// or the elements) with every other: a row is a first occurrence when no
// earlier row equals it; its output slot is the number of first
// occurrences before it (sorted=0) or below it in lexicographic order
// (sorted=1). One-hot slot matrices then give Y, indices,
// inverse_indices and counts. Before each run the node is imported again
// with the actual input, and the call fails unless that gives K
// (docs/RuntimeInputs.md). The comparisons are n x n, so n is bounded.
//
//===----------------------------------------------------------------------===//
#include "ImportRuntimeOps.h"

#include <algorithm>
#include <map>

using namespace ember;
using namespace ember::onnximport;

#define TRY EMBER_ASSIGN_OR_RETURN

namespace {

constexpr int64_t kMaxUniqueRows = 4096;

/// X as rows [n, m]: the slices along \p axis, or the elements.
llvm::Expected<NodeValue> rowsOf(ImportContext &ctx,
                                 const onnx::NodeProto &node, NodeValue x,
                                 std::optional<int64_t> axis) {
  int64_t size = x.getType()->size();
  if (!axis)
    return reshapeTo(ctx, node, x, {size, 1});
  Ints perm = {*axis};
  for (int64_t d = 0; d < int64_t(x.dims().size()); ++d)
    if (d != *axis)
      perm.push_back(d);
  auto t = ctx.fn().tryCreateTranspose(nameOf(node), x, perm);
  if (!t)
    return fail(node, errorToString(t.takeError()));
  int64_t n = x.dims()[*axis];
  return reshapeTo(ctx, node, NodeValue(*t), {n, size / n});
}

/// The outputs, given the source row of each output slot.
llvm::Error bindUnique(ImportContext &ctx, const onnx::NodeProto &node,
                       NodeValue x, std::optional<int64_t> axis, NodeValue src,
                       NodeValue inverse, NodeValue counts) {
  NodeValue data = x;
  if (!axis) {
    TRY(data, reshapeTo(ctx, node, x, {x.getType()->size()}));
  }
  TRY(NodeValue y, make(ctx, node, OpKind::Gather, {data, src},
                        {Attr::makeInt(axis.value_or(0))}));
  bindOutput(ctx, node, 0, y);
  bindOutput(ctx, node, 1, src);
  bindOutput(ctx, node, 2, inverse);
  bindOutput(ctx, node, 3, counts);
  return llvm::Error::success();
}

llvm::Error importConstantUnique(ImportContext &ctx,
                                 const onnx::NodeProto &node, NodeValue x,
                                 std::optional<int64_t> axis, bool sorted) {
  const Tensor &t = llvm::cast<Constant>(x.getNode())->getPayload();
  int64_t size = t.size(), n = axis ? x.dims()[*axis] : size;
  int64_t inner = 1;
  for (size_t d = axis ? *axis + 1 : 0; axis && d < x.dims().size(); ++d)
    inner *= x.dims()[d];
  std::vector<std::vector<double>> rows(n);
  for (int64_t i = 0; i < size; ++i) {
    // Row of flat element i: its index along axis.
    int64_t r = axis ? (i / inner) % n : i;
    rows[r].push_back(t.elementAsDouble(i));
  }
  std::map<std::vector<double>, int64_t> firstOf;
  std::vector<int64_t> firsts;
  for (int64_t i = 0; i < n; ++i)
    if (firstOf.emplace(rows[i], i).second)
      firsts.push_back(i);
  if (sorted)
    std::sort(firsts.begin(), firsts.end(),
              [&](int64_t a, int64_t b) { return rows[a] < rows[b]; });
  std::map<int64_t, int64_t> slotOf;
  for (size_t s = 0; s < firsts.size(); ++s)
    slotOf[firsts[s]] = s;
  std::vector<int64_t> inverse(n), counts(firsts.size(), 0);
  for (int64_t i = 0; i < n; ++i) {
    inverse[i] = slotOf[firstOf[rows[i]]];
    ++counts[inverse[i]];
  }
  return bindUnique(
      ctx, node, x, axis,
      int64Constant(ctx, node, ".indices", {int64_t(firsts.size())}, firsts),
      int64Constant(ctx, node, ".inverse", {int64_t(inverse.size())}, inverse),
      int64Constant(ctx, node, ".counts", {int64_t(counts.size())}, counts));
}

/// The count K of unique rows the model declares (Y along axis, or the
/// length of indices or counts), or -1 when it declares none.
llvm::Expected<int64_t> declaredCount(ImportContext &ctx,
                                      const onnx::NodeProto &node,
                                      std::optional<int64_t> axis) {
  for (int k : {0, 1, 3}) {
    if (k >= node.output_size() || node.output(k).empty())
      continue;
    const std::vector<int64_t> *d = ctx.declaredDims(node.output(k));
    if (!d || d->empty())
      continue;
    int64_t at = k == 0 && axis ? *axis : 0;
    if (at < int64_t(d->size()) && (*d)[at] >= 1)
      return (*d)[at];
  }
  return -1;
}

class UniqueGraph {
public:
  UniqueGraph(ImportContext &ctx, const onnx::NodeProto &node)
      : ctx_(ctx), node_(node) {}
  llvm::Expected<NodeValue> op(OpKind k, NodeValue a, NodeValue b) {
    return binary(ctx_, node_, k, a, b);
  }
  llvm::Expected<NodeValue> f(NodeValue v) {
    return castTo(ctx_, node_, v, ElemKind::Float32);
  }
  llvm::Expected<NodeValue> sum(NodeValue v, int64_t axis) {
    return reduce(ctx_, node_, OpKind::ReduceSum, v, {axis}, false);
  }
  NodeValue matrix(int64_t rows, int64_t cols, float (*fn)(int64_t, int64_t),
                   const char *what) {
    Tensor t(ElemKind::Float32, {rows, cols});
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j)
        t.getHandle<float>().raw(i * cols + j) = fn(i, j);
    return ctx_.module().createConstant(nameOf(node_) + what, std::move(t));
  }
  /// [n, n] float: rows i and j equal; also 1 where row j < row i
  /// lexicographically when \p less is given.
  llvm::Error compare(NodeValue rows, NodeValue &eq, NodeValue *less);

private:
  ImportContext &ctx_;
  const onnx::NodeProto &node_;
};

llvm::Error UniqueGraph::compare(NodeValue rows, NodeValue &eq,
                                 NodeValue *less) {
  int64_t n = rows.dims()[0], m = rows.dims()[1];
  TRY(NodeValue ri, reshapeTo(ctx_, node_, rows, {n, 1, m}));
  TRY(NodeValue rj, reshapeTo(ctx_, node_, rows, {1, n, m}));
  TRY(NodeValue e, op(OpKind::Equal, ri, rj));
  TRY(NodeValue ef, f(e));
  TRY(eq, reduce(ctx_, node_, OpKind::ReduceMin, ef, {2}, false));
  if (!less)
    return llvm::Error::success();
  // Row j < row i: at the first element where they differ, j's is less.
  TRY(NodeValue lt, op(OpKind::Less, rj, ri));
  TRY(NodeValue ltf, f(lt));
  TRY(NodeValue ne, op(OpKind::Sub, constantLike(ctx_, node_, ef, 1), ef));
  TRY(NodeValue before,
      make(ctx_, node_, OpKind::CumSum, {ne},
           {Attr::makeInt(2), Attr::makeInt(1), Attr::makeInt(0)}));
  TRY(NodeValue same,
      op(OpKind::Less, before, constantLike(ctx_, node_, before, 0.5)));
  TRY(NodeValue samef, f(same));
  TRY(NodeValue at, op(OpKind::Mul, ltf, samef));
  TRY(*less, reduce(ctx_, node_, OpKind::ReduceMax, at, {2}, false));
  return llvm::Error::success();
}

llvm::Error importRuntimeUnique(ImportContext &ctx, const onnx::NodeProto &node,
                                NodeValue x, std::optional<int64_t> axis,
                                bool sorted) {
  TRY(int64_t k, declaredCount(ctx, node, axis));
  if (k >= 0) {
    EMBER_RETURN_IF_ERR(checkGraphInput(ctx, node, 0));
  }
  TRY(NodeValue rows, rowsOf(ctx, node, x, axis));
  int64_t n = rows.dims()[0];
  // Undeclared: sized for n rows, the extent is the number of first
  // occurrences (docs/RuntimeInputs.md).
  bool dynamic = k < 0;
  if (dynamic)
    k = n;
  // At most n rows can be unique: a larger declared count is wrong, and
  // would size the constants below.
  if (k > n)
    return fail(node, "the outputs declare " + llvm::Twine(k) +
                          " unique rows, more than the " + llvm::Twine(n) +
                          " rows the input holds");
  if (n > kMaxUniqueRows)
    return fail(node, llvm::Twine(n) + " rows fed at run time; the limit is " +
                          llvm::Twine(kMaxUniqueRows) +
                          " (every pair is compared)");
  UniqueGraph g(ctx, node);
  NodeValue eq, less;
  EMBER_RETURN_IF_ERR(g.compare(rows, eq, sorted ? &less : nullptr));
  NodeValue earlier = g.matrix(
      n, n, [](int64_t i, int64_t j) { return j < i ? 1.f : 0.f; }, ".lower");
  TRY(NodeValue dup, g.op(OpKind::Mul, eq, earlier));
  TRY(dup, g.sum(dup, 1));
  TRY(NodeValue first,
      g.op(OpKind::Less, dup, constantLike(ctx, node, dup, 0.5)));
  TRY(first, g.f(first)); // [n]
  NodeValue slot;
  if (sorted) {
    TRY(NodeValue firstRow, reshapeTo(ctx, node, first, {1, n}));
    TRY(NodeValue below, g.op(OpKind::Mul, less, firstRow));
    TRY(slot, g.sum(below, 1));
  } else {
    TRY(slot, make(ctx, node, OpKind::CumSum, {first},
                   {Attr::makeInt(0), Attr::makeInt(1), Attr::makeInt(0)}));
  }
  // M [K, n]: 1 where first occurrence i goes to slot r.
  NodeValue slots = g.matrix(
      k, 1, [](int64_t r, int64_t) { return float(r); }, ".slots");
  TRY(NodeValue slotRow, reshapeTo(ctx, node, slot, {1, n}));
  TRY(NodeValue firstRow, reshapeTo(ctx, node, first, {1, n}));
  TRY(NodeValue hit, g.op(OpKind::Equal, slotRow, slots));
  TRY(NodeValue mat, g.f(hit));
  TRY(mat, g.op(OpKind::Mul, mat, firstRow));
  NodeValue iota = g.matrix(
      1, n, [](int64_t, int64_t j) { return float(j); }, ".iota");
  TRY(NodeValue src, g.op(OpKind::Mul, mat, iota));
  TRY(src, g.sum(src, 1));
  TRY(NodeValue cnt, g.sum(eq, 1));
  TRY(NodeValue cntRow, reshapeTo(ctx, node, cnt, {1, n}));
  TRY(NodeValue counts, g.op(OpKind::Mul, mat, cntRow));
  TRY(counts, g.sum(counts, 1));
  // inverse_i: the slot of the first occurrence equal to row i.
  TRY(NodeValue fs, g.op(OpKind::Mul, firstRow, slotRow));
  TRY(NodeValue inv, g.op(OpKind::Mul, eq, fs));
  TRY(inv, g.sum(inv, 1));
  TRY(src, castTo(ctx, node, src, ElemKind::Int64));
  TRY(inv, castTo(ctx, node, inv, ElemKind::Int64));
  TRY(counts, castTo(ctx, node, counts, ElemKind::Int64));
  EMBER_RETURN_IF_ERR(bindUnique(ctx, node, x, axis, src, inv, counts));
  if (!dynamic)
    return llvm::Error::success();
  TRY(NodeValue total, reduce(ctx, node, OpKind::ReduceSum, first, {0}, true));
  TRY(total, castTo(ctx, node, total, ElemKind::Int64));
  for (int i : {0, 1, 3})
    if (i < node.output_size() && !node.output(i).empty())
      ctx.setExtent(node.output(i),
                    {unsigned(i == 0 ? axis.value_or(0) : 0), total});
  return llvm::Error::success();
}

llvm::Error importUnique(ImportContext &ctx, const onnx::NodeProto &node) {
  TRY(NodeValue x, ctx.input(node, 0));
  AttrReader attrs(node);
  TRY(int64_t sorted, attrs.getInt("sorted", 1));
  std::optional<int64_t> axis;
  if (attrs.has("axis")) {
    TRY(int64_t a, attrs.getInt("axis", std::nullopt));
    TRY(a, normAxis(node, a, x.dims().size()));
    axis = a;
  }
  if (x.getType()->size() == 0)
    return fail(node, "the input is empty");
  if (llvm::isa<Constant>(x.getNode()))
    return importConstantUnique(ctx, node, x, axis, sorted != 0);
  return importRuntimeUnique(ctx, node, x, axis, sorted != 0);
}

const ImportRule kUniqueRules[] = {
    {"Unique", 11, 22, importUnique},
};

} // namespace

RuleList onnximport::getUniqueImportRules() { return kUniqueRules; }
