//===- ImportShapeExtent.cpp - Shape arithmetic on a counted dim ----------===//
//
// The Shape of a value with a data-dependent extent is computed in the
// graph (withExtentDim) and recorded as a ShapeExtent: its static bound
// with the counted entry. Models rebuild shapes from it by picking entries
// (Gather), changing rank (Unsqueeze, Squeeze), joining lists (Concat) and
// replacing -1 (Equal, Where), adding 0 (Add, Sub) before a Reshape,
// ConstantOfShape or Expand, which need the shape at import. Here those ops
// carry the record: an entry list without the counted entry is static, and
// becomes a Constant; one with it keeps the count. Reshape then sizes its
// result for the bound and keeps the count on the axis whose rows it keeps
// (reshapeExtent).
//
//===----------------------------------------------------------------------===//
#include "ImportHelpers.h"

#include "ember/Base/ElemAccess.h"

#include <optional>
#include <set>

using namespace ember;
using namespace ember::onnximport;

#define TRY EMBER_ASSIGN_OR_RETURN

namespace {

/// Integer entries of a shape-like value at import: the static values, and
/// the position of the counted entry (-1: none) with its count.
struct ShapeVals {
  Ints v;
  int64_t at = -1;
  NodeValue count;
};

/// Input \p i of \p node as ShapeVals: a recorded shape extent or an
/// integer Constant; nullopt for anything else.
std::optional<ShapeVals> shapeVals(ImportContext &ctx,
                                   const onnx::NodeProto &node, int i) {
  if (const ImportContext::ShapeExtent *s = ctx.shapeExtentOf(node.input(i)))
    return ShapeVals{s->bound, int64_t(s->at), s->count};
  if (!ctx.isBound(node.input(i)))
    return std::nullopt;
  llvm::Expected<NodeValue> x = ctx.input(node, i);
  if (!x) {
    llvm::consumeError(x.takeError());
    return std::nullopt;
  }
  auto *c = llvm::dyn_cast<Constant>(x->getNode());
  if (!c || isFloatKind(c->getType()->getElemKind()))
    return std::nullopt;
  ShapeVals out;
  // Saturated to +-2^62 (a shape entry of 2^63 - 1 does not convert).
  constexpr double kLimit = double(int64_t(1) << 62);
  for (dim_t j = 0; j < c->getPayload().size(); ++j)
    out.v.push_back(int64_t(
        std::clamp(c->getPayload().elementAsDouble(j), -kLimit, kLimit)));
  return out;
}

/// Equal and Where on shape entries, as torch writes expand(-1, ...):
/// `Where(shape == -1, 1, shape)`. A count is never negative, so it equals
/// no negative constant; a Where keeps the count where it picks it.
std::optional<ShapeVals> selectedEntries(ImportContext &ctx,
                                         const onnx::NodeProto &node) {
  std::vector<ShapeVals> in;
  for (int i = 0; i < node.input_size(); ++i) {
    std::optional<ShapeVals> v = shapeVals(ctx, node, i);
    if (!v)
      return std::nullopt;
    in.push_back(*v);
  }
  size_t n = 1;
  for (const ShapeVals &v : in)
    n = std::max(n, v.v.size());
  for (const ShapeVals &v : in)
    if (v.v.size() != n && v.v.size() != 1)
      return std::nullopt;
  auto at = [&](const ShapeVals &v, size_t j) {
    return v.v.size() == 1 ? v.v[0] : v.v[j];
  };
  auto counted = [&](const ShapeVals &v, size_t j) {
    return v.at >= 0 && (v.v.size() == 1 || size_t(v.at) == j);
  };
  ShapeVals out;
  for (size_t j = 0; j < n; ++j) {
    if (node.op_type() == "Equal") {
      if (in.size() != 2)
        return std::nullopt;
      bool c0 = counted(in[0], j), c1 = counted(in[1], j);
      if (c0 && c1)
        return std::nullopt;
      if ((c0 && at(in[1], j) >= 0) || (c1 && at(in[0], j) >= 0))
        return std::nullopt; // the count may equal it
      out.v.push_back(!c0 && !c1 && at(in[0], j) == at(in[1], j));
      continue;
    }
    if (in.size() != 3 || counted(in[0], j))
      return std::nullopt;
    const ShapeVals &pick = at(in[0], j) ? in[1] : in[2];
    if (counted(pick, j)) {
      if (out.at >= 0)
        return std::nullopt;
      out.at = j;
      out.count = pick.count;
    }
    out.v.push_back(at(pick, j));
  }
  return out;
}

/// Add or Sub of static entries, 0 at the counted one (torch's `0 + n` for
/// a slice end): the count stays.
std::optional<ShapeVals> offsetEntries(ImportContext &ctx,
                                       const onnx::NodeProto &node) {
  std::optional<ShapeVals> a = shapeVals(ctx, node, 0);
  std::optional<ShapeVals> b = shapeVals(ctx, node, 1);
  if (!a || !b || a->v.size() != b->v.size() || (a->at >= 0 && b->at >= 0) ||
      (node.op_type() == "Sub" && b->at >= 0))
    return std::nullopt;
  ShapeVals out = a->at >= 0 ? *a : *b;
  const ShapeVals &other = a->at >= 0 ? *b : *a;
  if (other.v[out.at] != 0)
    return std::nullopt;
  for (size_t j = 0; j < out.v.size(); ++j)
    out.v[j] = node.op_type() == "Add" ? a->v[j] + b->v[j] : a->v[j] - b->v[j];
  return out;
}

/// The entries of output 0 of \p node from its shape-like inputs, or
/// nullopt where the op is not one that moves entries (or not known).
std::optional<ShapeVals> movedEntries(ImportContext &ctx,
                                      const onnx::NodeProto &node) {
  const std::string &op = node.op_type();
  static const std::set<std::string> kSame = {"Identity", "Unsqueeze",
                                              "Squeeze", "Reshape", "Cast"};
  if (kSame.count(op)) {
    if (op == "Cast") {
      llvm::Expected<int64_t> to = AttrReader(node).getInt("to", 0);
      // Int32 (6) and Int64 (7) keep every shape entry.
      if (!to || (*to != 6 && *to != 7)) {
        if (!to)
          llvm::consumeError(to.takeError());
        return std::nullopt;
      }
    }
    return shapeVals(ctx, node, 0);
  }
  if (op == "Gather") {
    llvm::Expected<int64_t> axis = AttrReader(node).getInt("axis", 0);
    if (!axis || *axis != 0) {
      if (!axis)
        llvm::consumeError(axis.takeError());
      return std::nullopt;
    }
    std::optional<ShapeVals> in = shapeVals(ctx, node, 0);
    std::optional<ShapeVals> idx = shapeVals(ctx, node, 1);
    if (!in || !idx || idx->at >= 0)
      return std::nullopt;
    ShapeVals out;
    out.count = in->count;
    int64_t n = in->v.size();
    for (int64_t j : idx->v) {
      j = j < 0 ? j + n : j;
      if (j < 0 || j >= n)
        return std::nullopt;
      if (j == in->at && out.at >= 0)
        return std::nullopt; // the count twice: one entry is recorded
      if (j == in->at)
        out.at = out.v.size();
      out.v.push_back(in->v[j]);
    }
    return out;
  }
  if (op == "Equal" || op == "Where")
    return selectedEntries(ctx, node);
  if (op == "Add" || op == "Sub")
    return offsetEntries(ctx, node);
  if (op == "Concat") {
    ShapeVals out;
    for (int i = 0; i < node.input_size(); ++i) {
      std::optional<ShapeVals> in = shapeVals(ctx, node, i);
      if (!in || (in->at >= 0 && out.at >= 0))
        return std::nullopt;
      if (in->at >= 0) {
        out.at = out.v.size() + in->at;
        out.count = in->count;
      }
      out.v.insert(out.v.end(), in->v.begin(), in->v.end());
    }
    return out;
  }
  return std::nullopt;
}

} // namespace

llvm::Error ember::propagateShapeExtents(ImportContext &ctx,
                                         const onnx::NodeProto &node) {
  bool any = false;
  for (const std::string &in : node.input())
    any |= !in.empty() && ctx.shapeExtentOf(in) != nullptr;
  if (!any || node.output_size() != 1 || !ctx.isBound(node.output(0)))
    return llvm::Error::success();
  std::optional<ShapeVals> out = movedEntries(ctx, node);
  TRY(NodeValue y, ctx.get(node.output(0)));
  if (!out || int64_t(y.getType()->size()) != int64_t(out->v.size()) ||
      isFloatKind(y.getElemKind()))
    return llvm::Error::success();
  if (out->at >= 0) {
    ctx.setShapeExtent(node.output(0), {out->v, unsigned(out->at), out->count});
    return llvm::Error::success();
  }
  // Only static entries: a constant, which Reshape and the shape fills read.
  Tensor t(y.getElemKind(), y.dims());
  for (size_t j = 0; j < out->v.size(); ++j)
    storeElement(t.data(), t.getElemKind(), j, double(out->v[j]));
  ctx.bind(node.output(0),
           ctx.module().createConstant(nameOf(node), std::move(t)));
  return llvm::Error::success();
}

llvm::Error ember::reshapeExtent(ImportContext &ctx,
                                 const onnx::NodeProto &node, NodeValue x,
                                 llvm::ArrayRef<int64_t> raw,
                                 llvm::ArrayRef<int64_t> shape) {
  const ImportContext::Extent *e = ctx.extentOf(node.input(0));
  const ImportContext::ShapeExtent *s =
      node.input_size() > 1 ? ctx.shapeExtentOf(node.input(1)) : nullptr;
  if (!e && !s)
    return llvm::Error::success();
  if (!e)
    return fail(node, "the shape holds a data-dependent count "
                      "(docs/RuntimeInputs.md) but the data has none");
  // The output axis whose entries are the input's counted rows, each row
  // possibly merged with the \p m entries of the dims after it (`x.view(-1,
  // 4)` of [K, C, 4]): the same number of elements before it and the bound
  // times m there. The rows past the count stay a suffix, m entries each.
  int64_t before = 1, at = -1, m = 1, bound = x.dims()[e->axis];
  for (unsigned a = 0; a < e->axis; ++a)
    before *= x.dims()[a];
  for (int64_t o = 0, p = 1; o < int64_t(shape.size()) && at < 0; ++o) {
    int64_t merged = 1;
    for (size_t a = e->axis + 1; p == before && a <= x.dims().size(); ++a) {
      if (shape[o] == bound * merged) {
        at = o;
        m = merged;
        break;
      }
      if (a < x.dims().size())
        merged *= x.dims()[a];
    }
    p *= shape[o];
  }
  // That entry must follow the count: computed from it, -1, or 0 (copied
  // from the counted axis); a constant would fix the actual size.
  bool follows =
      at >= 0 &&
      (s ? int64_t(s->at) == at && m == 1 && sameCount(s->count, e->count)
         : raw[at] == -1 || (raw[at] == 0 && at == e->axis && m == 1));
  if (!follows)
    return fail(node, "input '" + node.input(0) +
                          "' has a data-dependent extent on axis " +
                          llvm::Twine(e->axis) +
                          "; a reshape keeps its rows only on an axis that "
                          "the shape computes from that count, or -1 there "
                          "(docs/RuntimeInputs.md)");
  NodeValue count = e->count;
  if (m > 1) {
    NodeValue times = constantOf(ctx, node, ElemKind::Int64, {1}, double(m));
    TRY(count, binary(ctx, node, OpKind::Mul, count, times));
  }
  ctx.setExtent(node.output(0), {unsigned(at), count});
  return llvm::Error::success();
}
