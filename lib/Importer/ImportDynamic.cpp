//===- ImportDynamic.cpp - Outputs whose extent depends on the data -------===//
//
// NonZero, Compress, Unique, NonMaxSuppression and TopK with a run-time K,
// where the model does not declare the data-dependent dim as a number, are
// sized for its static upper bound and compute the actual extent in the
// graph (an Int64 [1]). Here that extent is carried through the ops that
// keep its axis (the table of docs/RuntimeInputs.md); any other consumer is
// an import error naming the node. A graph output with such an extent has
// its entries past it zeroed and a hidden count output linked to it
// (docs/Bundle.md).
//
//===----------------------------------------------------------------------===//
#include "ImportHelpers.h"

#include <cmath>
#include <limits>
#include <set>

using namespace ember;
using namespace ember::onnximport;

#define TRY EMBER_ASSIGN_OR_RETURN

namespace {

/// Ops whose output 0 has the shape of input 0, element for element.
const std::set<std::string> kSameShape = {
    "Abs",       "Cast",      "CastLike",
    "Ceil",      "Clip",      "Cos",
    "Elu",       "Erf",       "Exp",
    "Floor",     "Identity",  "IsInf",
    "IsNaN",     "LeakyRelu", "Log",
    "Neg",       "Not",       "Reciprocal",
    "Relu",      "Round",     "Sigmoid",
    "Sign",      "Sin",       "Softplus",
    "Sqrt",      "Tanh",      "Acos",
    "Acosh",     "Asin",      "Asinh",
    "Atan",      "Atanh",     "Cosh",
    "Sinh",      "Tan",       "HardSigmoid",
    "HardSwish", "Selu",      "Celu",
    "Mish",      "Softsign",  "ThresholdedRelu",
    "Shrink",    "Gelu",      "BitwiseNot",
    "Dropout"};

/// Ops that compute each entry of axis 0 (the batch) of output 0 from the
/// same entry of input 0 alone (the other inputs are weights or
/// parameters): a counted batch keeps its count, and the rows past it
/// never reach a counted one (the mask head of torchvision's Mask R-CNN:
/// RoiAlign's regions through Conv, ConvTranspose and Relu).
const std::set<std::string> kPerBatchEntry = {"Conv",
                                              "ConvTranspose",
                                              "ConvInteger",
                                              "QLinearConv",
                                              "MaxPool",
                                              "AveragePool",
                                              "LpPool",
                                              "GlobalAveragePool",
                                              "GlobalMaxPool",
                                              "GlobalLpPool",
                                              "BatchNormalization",
                                              "InstanceNormalization",
                                              "LRN",
                                              "DepthToSpace",
                                              "SpaceToDepth",
                                              "Resize",
                                              "Upsample",
                                              "GroupNormalization"};

/// Elementwise ops with multidirectional broadcasting.
const std::set<std::string> kBroadcast = {"Add",
                                          "And",
                                          "BitShift",
                                          "Div",
                                          "Equal",
                                          "Greater",
                                          "GreaterOrEqual",
                                          "Less",
                                          "LessOrEqual",
                                          "Max",
                                          "Mean",
                                          "Min",
                                          "Mod",
                                          "Mul",
                                          "Or",
                                          "Pow",
                                          "PRelu",
                                          "Sub",
                                          "Sum",
                                          "Where",
                                          "Xor"};

/// Reductions (and ArgMax/ArgMin) over the axes reductionAxes names.
bool isReduction(const std::string &op) {
  return op.rfind("Reduce", 0) == 0 || op == "ArgMax" || op == "ArgMin";
}

/// The axes (normalized for rank \p r) that reduction \p node reduces, or
/// nullopt for none (noop_with_empty_axes with no axes).
llvm::Expected<std::optional<std::set<int64_t>>>
reductionAxes(ImportContext &ctx, const onnx::NodeProto &node, int64_t r) {
  AttrReader attrs(node);
  Ints axes;
  if (node.op_type() == "ArgMax" || node.op_type() == "ArgMin") {
    TRY(int64_t axis, attrs.getInt("axis", 0));
    axes.push_back(axis);
  } else if (attrs.has("axes")) {
    TRY(axes, attrs.getInts("axes", std::nullopt));
  } else if (ImportContext::hasInput(node, 1)) {
    TRY(axes, ctx.constantInts(node, 1));
  }
  TRY(int64_t noop, attrs.getInt("noop_with_empty_axes", 0));
  if (axes.empty() && noop)
    return std::optional<std::set<int64_t>>();
  std::set<int64_t> out;
  for (int64_t i = 0; axes.empty() && i < r; ++i)
    out.insert(i);
  for (int64_t x : axes) {
    TRY(int64_t m, normAxis(node, x, r));
    out.insert(m);
  }
  return std::optional<std::set<int64_t>>(out);
}

/// The data-dependent extent of input 0 (rank \p r) of reduction \p node
/// when the reduction reduces its axis, else null.
llvm::Expected<const ImportContext::Extent *>
reducedExtent(ImportContext &ctx, const onnx::NodeProto &node, int64_t r) {
  const ImportContext::Extent *e = ctx.extentOf(node.input(0));
  if (!e)
    return nullptr;
  TRY(std::optional<std::set<int64_t>> axes, reductionAxes(ctx, node, r));
  if (!axes || !axes->count(e->axis))
    return nullptr;
  return e;
}

/// Axis \p a of input \p in (rank \p r) in output 0 of \p node (rank \p R),
/// or -1 when the op does not keep it.
llvm::Expected<int64_t> keptAxis(ImportContext &ctx,
                                 const onnx::NodeProto &node, int in, int64_t a,
                                 int64_t r, int64_t R) {
  const std::string &op = node.op_type();
  AttrReader attrs(node);
  if (kSameShape.count(op))
    return in == 0 && r == R ? a : -1;
  if (kBroadcast.count(op) || (op == "Expand" && in == 0))
    return a + R - r;
  if (kPerBatchEntry.count(op))
    // The caller checks that the batch keeps its size (a Resize may not
    // scale it).
    return in == 0 && a == 0 ? 0 : -1;
  if (op == "Pad" && in == 0) {
    // Kept where nothing is padded on the counted axis (rows padded before
    // it would move, after it would follow the bound).
    Ints pads, axes;
    if (ctx.opset() < 11) {
      TRY(pads, attrs.getInts(ctx.opset() < 2 ? "paddings" : "pads", Ints{}));
    } else {
      TRY(pads, optionalInts(ctx, node, 1, Ints{}));
      TRY(axes, optionalInts(ctx, node, 3, Ints{}));
    }
    if (axes.empty())
      for (int64_t i = 0; i < r; ++i)
        axes.push_back(i);
    if (pads.size() != 2 * axes.size())
      return -1;
    for (size_t i = 0; i < axes.size(); ++i) {
      TRY(int64_t at, normAxis(node, axes[i], r));
      if (at == a && (pads[i] || pads[i + axes.size()]))
        return -1;
    }
    return a;
  }
  if (op == "LayerNormalization" && in == 0) {
    TRY(int64_t axis, attrs.getInt("axis", -1));
    TRY(axis, normAxis(node, axis, r));
    return a < axis ? a : -1;
  }
  if (op == "Transpose") {
    Ints rev(r);
    for (int64_t i = 0; i < r; ++i)
      rev[i] = r - 1 - i;
    TRY(Ints perm, attrs.getInts("perm", rev));
    for (int64_t i = 0; i < int64_t(perm.size()); ++i)
      if (perm[i] == a)
        return i;
    return -1;
  }
  if (op == "Gather") {
    TRY(int64_t axis, attrs.getInt("axis", 0));
    TRY(NodeValue data, ctx.input(node, 0));
    TRY(axis, normAxis(node, axis, data.dims().size()));
    int64_t q = R - r + 1; // the rank of the indices
    if (in == 1)
      return axis + a;
    return a < axis ? a : a == axis ? -1 : a + q - 1;
  }
  if (op == "GatherND") {
    TRY(int64_t batch, attrs.getInt("batch_dims", 0));
    // The rows of the indices are the leading dims of the output.
    return in == 1 && batch == 0 && a < r - 1 ? a : -1;
  }
  if (op == "Unsqueeze" || op == "Squeeze") {
    bool unsq = op == "Unsqueeze";
    Ints axes;
    if (attrs.has("axes")) {
      TRY(axes, attrs.getInts("axes", std::nullopt));
    } else {
      TRY(axes, optionalInts(ctx, node, 1, Ints{}));
    }
    std::set<int64_t> moved;
    for (int64_t x : axes) {
      TRY(int64_t m, normAxis(node, x, unsq ? R : r));
      moved.insert(m);
    }
    if (unsq) {
      // The input's dims keep their order among the positions not inserted.
      for (int64_t i = 0, seen = 0; i < R; ++i)
        if (!moved.count(i) && seen++ == a)
          return i;
      return -1;
    }
    TRY(NodeValue x, ctx.input(node, 0));
    for (int64_t i = 0; moved.empty() && i < r; ++i)
      if (x.dims()[i] == 1)
        moved.insert(i);
    if (moved.count(a))
      return -1;
    return a - int64_t(std::count_if(moved.begin(), moved.end(),
                                     [&](int64_t m) { return m < a; }));
  }
  if (op == "Concat") {
    TRY(int64_t axis, attrs.getInt("axis", 0));
    TRY(axis, normAxis(node, axis, r));
    return a == axis ? -1 : a;
  }
  if ((op == "Softmax" || op == "LogSoftmax" || op == "Hardmax") && in == 0) {
    // Before opset 13 the dims from axis on are one row.
    bool rows = ctx.opset() < 13;
    TRY(int64_t axis, attrs.getInt("axis", rows ? 1 : -1));
    TRY(axis, normAxis(node, axis, r));
    return (rows ? a < axis : a != axis) ? a : -1;
  }
  if (op == "Gemm" && in == 0) {
    // The rows of A (the columns when transposed) are the result's rows.
    TRY(int64_t transA, attrs.getInt("transA", 0));
    return a == (transA ? 1 : 0) ? 0 : -1;
  }
  if (op == "MatMul")
    // LHS rows and batch dims, RHS columns.
    return in == 0 && a < r - 1    ? a + R - r
           : in == 1 && a == r - 1 ? R - 1
                                   : -1;
  if (op == "ScatterElements" || op == "ScatterND")
    return in == 0 ? a : -1;
  if (op == "RoiAlign")
    // The regions (and their batch indices) are the output's leading dim.
    return (in == 1 || in == 2) && a == 0 ? 0 : -1;
  if (in == 0 && isReduction(op)) {
    TRY(std::optional<std::set<int64_t>> axes, reductionAxes(ctx, node, r));
    if (!axes || axes->count(a))
      return axes ? -1 : a;
    TRY(int64_t keep, attrs.getInt("keepdims", 1));
    return keep ? a
                : a - int64_t(std::count_if(axes->begin(), axes->end(),
                                            [&](int64_t m) { return m < a; }));
  }
  if (op == "Slice" && in == 0) {
    // Before opset 10 the lists are attributes.
    bool attr = ctx.opset() < 10;
    Ints starts, ends, axes, steps;
    if (attr) {
      TRY(starts, attrs.getInts("starts", Ints{}));
      TRY(ends, attrs.getInts("ends", Ints{}));
      TRY(axes, attrs.getInts("axes", Ints{}));
    } else {
      TRY(starts, optionalInts(ctx, node, 1, Ints{}));
      if (const ImportContext::ShapeExtent *se =
              ctx.shapeExtentOf(node.input(2)))
        ends = se->bound; // at the bound (importSlice)
      else {
        TRY(ends, optionalInts(ctx, node, 2, Ints{}));
      }
      TRY(axes, optionalInts(ctx, node, 3, Ints{}));
      TRY(steps, optionalInts(ctx, node, 4, Ints{}));
    }
    if (steps.empty())
      steps.assign(starts.size(), 1);
    if (axes.empty())
      for (size_t i = 0; i < starts.size(); ++i)
        axes.push_back(i);
    if (ends.size() != starts.size() || steps.size() != starts.size())
      return -1;
    // A negative end counts from the bound, not from the actual extent.
    for (size_t i = 0; i < axes.size() && i < starts.size(); ++i) {
      TRY(int64_t at, normAxis(node, axes[i], r));
      if (at == a && (starts[i] != 0 || steps[i] != 1 || ends[i] < 0))
        return -1;
    }
    // The axis is untouched or cut to a prefix (sliceExtents).
    return a;
  }
  return -1;
}

/// True when counts \p a and \p b are provably equal: the same value, equal
/// constants, or the same op on pairwise equal operands (a Concat's summed
/// counts, a Slice's min, a count gathered twice from one source), the
/// pairs already compared in \p seen. Graph nodes are pure, so equal
/// inputs give equal results.
bool equalCounts(NodeValue a, NodeValue b,
                 std::set<std::pair<const Node *, const Node *>> &seen) {
  if (a == b)
    return true;
  const Node *x = a.getNode(), *y = b.getNode();
  if (a.getResNo() != b.getResNo() || x->getKind() != y->getKind() ||
      x->getNumResults() != y->getNumResults() ||
      x->getInputs().size() != y->getInputs().size() ||
      x->getAttrs().size() != y->getAttrs().size())
    return false;
  if (auto *cx = llvm::dyn_cast<Constant>(x))
    return cx->getType()->isEqual(*y->getType()) &&
           cx->getPayload().isBitwiseEqual(
               llvm::cast<Constant>(y)->getPayload());
  if (!isTableOp(x->getKind()))
    return false; // a Placeholder or other storage: only itself
  for (unsigned i = 0; i < x->getNumResults(); ++i)
    if (x->getType(i) != y->getType(i))
      return false;
  for (unsigned i = 0; i < x->getAttrs().size(); ++i)
    if (x->attr(i) != y->attr(i))
      return false;
  if (!seen.insert({x, y}).second)
    return true; // already found equal (an unequal pair ends the walk)
  for (unsigned i = 0; i < x->getInputs().size(); ++i)
    if (!equalCounts(x->getInputs()[i], y->getInputs()[i], seen))
      return false;
  return true;
}

/// Split along another axis keeps the extent in every output: torch's
/// `torch.where(mask)` is NonZero, Transpose, then Split of the [K, rank]
/// rows into one column per dim (and Squeeze).
llvm::Error splitExtents(ImportContext &ctx, const onnx::NodeProto &node,
                         const ImportContext::Extent &e,
                         llvm::function_ref<llvm::Error(const char *)> refuse) {
  TRY(int64_t axis, AttrReader(node).getInt("axis", 0));
  TRY(NodeValue x, ctx.input(node, 0));
  TRY(axis, normAxis(node, axis, x.dims().size()));
  if (axis == int64_t(e.axis))
    return refuse("Split divides that axis");
  for (const std::string &out : node.output())
    if (!out.empty())
      ctx.setExtent(out, e);
  return llvm::Error::success();
}

/// The Int64 [1] count of Concat operand \p i along \p axis: its extent
/// there, or its static size.
llvm::Expected<NodeValue> operandCount(ImportContext &ctx,
                                       const onnx::NodeProto &node, int i,
                                       int64_t axis) {
  const ImportContext::Extent *e = ctx.extentOf(node.input(i));
  if (e && int64_t(e->axis) == axis)
    return e->count;
  if (e)
    return fail(node, "input '" + node.input(i) +
                          "' has a data-dependent extent on another axis "
                          "than the Concat's (docs/RuntimeInputs.md)");
  TRY(NodeValue x, ctx.input(node, i));
  return constantOf(ctx, node, ElemKind::Int64, {1}, x.dims()[axis]);
}

/// Concat along the counted axis: the result's bound is the sum of the
/// operands' bounds, its count the sum of their counts, and its entries
/// compacted: output row j comes from operand k where j lies in
/// [o_k, o_k + c_k) (o_k the running sum of the counts), i.e. from row
/// j + sum over m < k of (B_m - c_m) of the bound-sized concatenation.
llvm::Error concatExtents(ImportContext &ctx, const onnx::NodeProto &node,
                          int64_t axis) {
  TRY(NodeValue cat, ctx.get(node.output(0)));
  int64_t n = cat.dims()[axis];
  llvm::SmallVector<dim_t, 1> flat = {dim_t(n)};
  TRY(NodeValue j, iotaConstant(ctx, node, n, flat));
  NodeValue zero = constantOf(ctx, node, ElemKind::Int64, flat, 0);
  NodeValue src = j, total, unused;
  for (int i = 0; i < node.input_size(); ++i) {
    TRY(NodeValue c, operandCount(ctx, node, i, axis));
    TRY(NodeValue x, ctx.input(node, i));
    if (i > 0) {
      // Rows from o_i on skip the unused tail of operand i - 1.
      TRY(NodeValue past, binary(ctx, node, OpKind::GreaterOrEqual, j, total));
      TRY(NodeValue skip, ctx.broadcastTo(node, unused, flat));
      TRY(skip, make(ctx, node, OpKind::Where, {past, skip, zero}));
      TRY(src, binary(ctx, node, OpKind::Add, src, skip));
      TRY(total, binary(ctx, node, OpKind::Add, total, c));
    } else {
      total = c;
    }
    NodeValue b = constantOf(ctx, node, ElemKind::Int64, {1}, x.dims()[axis]);
    TRY(unused, binary(ctx, node, OpKind::Sub, b, c));
  }
  // Rows past the total count read any valid row.
  NodeValue last = constantOf(ctx, node, ElemKind::Int64, {1}, n - 1);
  TRY(src, binary(ctx, node, OpKind::Min, src, last));
  TRY(NodeValue y,
      make(ctx, node, OpKind::Gather, {cat, src}, {Attr::makeInt(axis)}));
  ctx.bind(node.output(0), y);
  ctx.setExtent(node.output(0), {unsigned(axis), total});
  return llvm::Error::success();
}

/// Slice of input 0 keeps the extent axis untouched or cut to a prefix
/// (start 0, step 1: `keep[:k]` after NonMaxSuppression, as torchvision's
/// detectors keep their best detections): a prefix of E entries holds
/// min(count, E) of them.
llvm::Error sliceExtents(ImportContext &ctx, const onnx::NodeProto &node,
                         const ImportContext::Extent &e,
                         llvm::function_ref<llvm::Error(const char *)> refuse) {
  TRY(NodeValue x, ctx.input(node, 0));
  TRY(NodeValue y, ctx.get(node.output(0)));
  TRY(int64_t a,
      keptAxis(ctx, node, 0, e.axis, x.dims().size(), y.dims().size()));
  if (a < 0)
    return refuse("this op does not keep that axis");
  ImportContext::Extent out = e;
  if (y.dims()[a] < x.dims()[e.axis]) {
    NodeValue cut = constantOf(ctx, node, ElemKind::Int64, {1}, y.dims()[a]);
    TRY(out.count, binary(ctx, node, OpKind::Min, e.count, cut));
  }
  // An end from a count (importSlice checked that it cuts this axis).
  const ImportContext::ShapeExtent *se =
      ctx.opset() >= 10 && node.input_size() > 2
          ? ctx.shapeExtentOf(node.input(2))
          : nullptr;
  if (se && !sameCount(se->count, out.count)) {
    TRY(out.count, binary(ctx, node, OpKind::Min, out.count, se->count));
  }
  ctx.setExtent(node.output(0), out);
  return llvm::Error::success();
}

/// Inputs whose extent the op's importer took into account, so that the
/// output's extent (if any) comes from elsewhere: Reshape's data
/// (reshapeExtent), ScatterElements' indices and updates (masked past the
/// count, importScatterElements), Shape's (the extent in
/// place of the bound, withExtentDim), NonZero's input (zeroed past the
/// count first, zeroPastExtent), TopK's along its axis (ranked last,
/// importTopK), the data of a Gather
/// along that axis (valid indices lie within the extent; negative ones
/// count from it, indicesFromExtent) and NonMaxSuppression's boxes and
/// scores (boxes past the extent are no candidates, ImportNMS.cpp).
llvm::Expected<bool> consumesExtent(ImportContext &ctx,
                                    const onnx::NodeProto &node, int i,
                                    const ImportContext::Extent &e) {
  if (node.op_type() == "NonMaxSuppression")
    return i < 2;
  if (node.op_type() == "ScatterElements" && i > 0) {
    // Indices past their count scatter nothing (importScatterElements);
    // the updates must be counted with them.
    const ImportContext::Extent *idx = ctx.extentOf(node.input(1));
    if (i == 2 &&
        (!idx || idx->axis != e.axis || !sameCount(idx->count, e.count)))
      return fail(node, "the updates have a data-dependent extent the "
                        "indices do not share (docs/RuntimeInputs.md)");
    return true;
  }
  if (node.op_type() == "TopK" && i == 0) {
    TRY(int64_t axis, AttrReader(node).getInt("axis", -1));
    TRY(NodeValue x, ctx.input(node, 0));
    TRY(axis, normAxis(node, axis, x.dims().size()));
    return axis == int64_t(e.axis);
  }
  // Reshape's and Flatten's importers keep the count (reshapeExtent).
  if (node.op_type() == "NonZero" || node.op_type() == "Shape" ||
      ((node.op_type() == "Reshape" || node.op_type() == "Flatten") && i == 0))
    return true;
  if (isReduction(node.op_type()) && i == 0) {
    // Masked past the count by the importer (maskForReduction).
    TRY(NodeValue x, ctx.input(node, 0));
    TRY(const ImportContext::Extent *reduced,
        reducedExtent(ctx, node, x.dims().size()));
    return reduced != nullptr;
  }
  if (node.op_type() != "Gather" || i != 0)
    return false;
  TRY(int64_t axis, AttrReader(node).getInt("axis", 0));
  TRY(NodeValue x, ctx.input(node, 0));
  TRY(axis, normAxis(node, axis, x.dims().size()));
  return axis == int64_t(e.axis);
}

} // namespace

bool ember::sameCount(NodeValue a, NodeValue b) {
  std::set<std::pair<const Node *, const Node *>> seen;
  return equalCounts(a, b, seen);
}

llvm::Expected<NodeValue> ember::indicesFromExtent(ImportContext &ctx,
                                                   const onnx::NodeProto &node,
                                                   NodeValue idx,
                                                   int64_t axis) {
  const ImportContext::Extent *e = ctx.extentOf(node.input(0));
  if (!e || int64_t(e->axis) != axis)
    return idx;
  int64_t r = idx.dims().size();
  TRY(NodeValue count, reshapeTo(ctx, node, e->count, Ints(r, 1)));
  TRY(count, castTo(ctx, node, count, idx.getElemKind()));
  NodeValue zero = constantOf(ctx, node, idx.getElemKind(),
                              llvm::SmallVector<dim_t, 6>(r, 1), 0);
  TRY(NodeValue neg, binary(ctx, node, OpKind::Less, idx, zero));
  TRY(NodeValue wrapped, binary(ctx, node, OpKind::Add, idx, count));
  return make(ctx, node, OpKind::Where, {neg, wrapped, idx});
}

llvm::Error ember::propagateExtents(ImportContext &ctx,
                                    const onnx::NodeProto &node) {
  EMBER_RETURN_IF_ERR(propagateShapeExtents(ctx, node));
  const ImportContext::Extent *found = nullptr;
  int64_t outAxis = -1;
  for (int i = 0; i < node.input_size(); ++i) {
    const ImportContext::Extent *e = ctx.extentOf(node.input(i));
    if (!e)
      continue;
    auto refuse = [&](const char *why) {
      return fail(node, "input '" + node.input(i) +
                            "' has a data-dependent extent on axis " +
                            llvm::Twine(e->axis) +
                            " (the count of a NonZero, "
                            "Compress, Unique, NonMaxSuppression or TopK "
                            "the model does not declare); " +
                            why + " (docs/RuntimeInputs.md)");
    };
    if (node.op_type() == "Split" && i == 0)
      return splitExtents(ctx, node, *e, refuse);
    if (node.op_type() == "Concat" && ctx.isBound(node.output(0))) {
      TRY(int64_t axis, AttrReader(node).getInt("axis", 0));
      TRY(NodeValue y, ctx.get(node.output(0)));
      TRY(axis, normAxis(node, axis, y.dims().size()));
      if (axis == int64_t(e->axis))
        return concatExtents(ctx, node, axis);
    }
    TRY(bool consumed, consumesExtent(ctx, node, i, *e));
    if (consumed)
      continue;
    if (node.op_type() == "Slice" && i == 0 && ctx.isBound(node.output(0)))
      return sliceExtents(ctx, node, *e, refuse);
    if (node.output_size() != 1 || !ctx.isBound(node.output(0)))
      return refuse("this op does not keep it");
    TRY(NodeValue x, ctx.input(node, i));
    TRY(NodeValue y, ctx.get(node.output(0)));
    TRY(int64_t a,
        keptAxis(ctx, node, i, e->axis, x.dims().size(), y.dims().size()));
    if (a < 0 || a >= int64_t(y.dims().size()) ||
        y.dims()[a] != x.dims()[e->axis])
      return refuse("this op does not keep that axis");
    if (found && (outAxis != a || !sameCount(found->count, e->count)))
      return refuse("another input has another data-dependent extent");
    found = e;
    outAxis = a;
  }
  if (!found)
    return llvm::Error::success();
  // A broadcast operand must not span the dynamic axis: its entries would
  // pair with rows that do not exist.
  if (kBroadcast.count(node.op_type())) {
    TRY(NodeValue y, ctx.get(node.output(0)));
    int64_t R = y.dims().size();
    for (int i = 0; i < node.input_size(); ++i) {
      if (node.input(i).empty() || ctx.extentOf(node.input(i)))
        continue;
      TRY(NodeValue x, ctx.input(node, i));
      int64_t at = outAxis - (R - int64_t(x.dims().size()));
      if (at >= 0 && x.dims()[at] != 1)
        return fail(node, "input '" + node.input(i) +
                              "' spans a data-dependent extent with " +
                              llvm::Twine(x.dims()[at]) +
                              " entries; only a broadcast (1) operand is "
                              "supported there (docs/RuntimeInputs.md)");
    }
  }
  ctx.setExtent(node.output(0), {unsigned(outAxis), found->count});
  return llvm::Error::success();
}

llvm::Expected<NodeValue> ember::withExtentDim(ImportContext &ctx,
                                               const onnx::NodeProto &node,
                                               NodeValue dims, int64_t start) {
  const ImportContext::Extent *e = ctx.extentOf(node.input(0));
  int64_t n = dims.dims()[0], at = int64_t(e ? e->axis : 0) - start;
  if (!e || at < 0 || at >= n)
    return dims;
  TRY(NodeValue x, ctx.input(node, 0));
  ctx.setShapeExtent(node.output(0), {Ints(x.dims().begin() + start,
                                           x.dims().begin() + start + n),
                                      unsigned(at), e->count});
  TRY(NodeValue iota, iotaConstant(ctx, node, n, {dim_t(n)}));
  NodeValue axis = constantOf(ctx, node, ElemKind::Int64, {1}, double(at));
  TRY(NodeValue here, binary(ctx, node, OpKind::Equal, iota, axis));
  TRY(NodeValue count, ctx.broadcastTo(node, e->count, {dim_t(n)}));
  return make(ctx, node, OpKind::Where, {here, count, dims});
}

llvm::Expected<NodeValue>
ember::zeroPastExtent(ImportContext &ctx, const onnx::NodeProto &node,
                      NodeValue v, const std::string &name, double fill) {
  const ImportContext::Extent *e = ctx.extentOf(name);
  if (!e)
    return v;
  int64_t r = v.dims().size(), n = v.dims()[e->axis];
  Ints ones(r, 1), at(r, 1);
  at[e->axis] = n;
  TRY(NodeValue iota,
      iotaConstant(ctx, node, n,
                   llvm::SmallVector<dim_t, 6>(at.begin(), at.end())));
  TRY(NodeValue count, reshapeTo(ctx, node, e->count, ones));
  TRY(NodeValue keep, binary(ctx, node, OpKind::Less, iota, count));
  TRY(keep, ctx.broadcastTo(node, keep, v.dims()));
  NodeValue zero = constantOf(ctx, node, v.getElemKind(),
                              llvm::SmallVector<dim_t, 6>(r, 1), fill);
  TRY(zero, ctx.broadcastTo(node, zero, v.dims()));
  return make(ctx, node, OpKind::Where, {keep, v, zero});
}

llvm::Expected<Ints> ember::shapeWithExtent(ImportContext &ctx,
                                            const onnx::NodeProto &node, int i,
                                            int64_t rank) {
  const ImportContext::ShapeExtent *s = ctx.shapeExtentOf(node.input(i));
  if (!s)
    return ctx.constantInts(node, i);
  // The result is counted on the shape's entry, sized for its bound.
  int64_t n = s->bound.size();
  ctx.setExtent(node.output(0),
                {unsigned(s->at + std::max<int64_t>(rank - n, 0)), s->count});
  return s->bound;
}

llvm::Expected<NodeValue> ember::maskForReduction(ImportContext &ctx,
                                                  const onnx::NodeProto &node,
                                                  NodeValue x) {
  TRY(const ImportContext::Extent *e,
      reducedExtent(ctx, node, x.dims().size()));
  if (!e)
    return x;
  // The entries past the count take the reduction's identity.
  const std::string &op = node.op_type();
  double inf = std::numeric_limits<double>::infinity(), fill = 0;
  if (op == "ReduceMax" || op == "ArgMax" || op == "ReduceLogSumExp")
    fill = -inf;
  else if (op == "ReduceMin" || op == "ArgMin")
    fill = inf;
  else if (op == "ReduceProd")
    fill = 1;
  if (std::isinf(fill) && !isFloatKind(x.getElemKind()))
    return fail(node, "integer values reduced over a data-dependent extent "
                      "are supported for Sum, Mean and Prod only "
                      "(docs/RuntimeInputs.md)");
  return zeroPastExtent(ctx, node, x, node.input(0), fill);
}

llvm::Expected<NodeValue> ember::meanOverExtent(ImportContext &ctx,
                                                const onnx::NodeProto &node,
                                                NodeValue x, NodeValue y) {
  if (node.op_type() != "ReduceMean")
    return y;
  TRY(const ImportContext::Extent *e,
      reducedExtent(ctx, node, x.dims().size()));
  if (!e)
    return y;
  // The mean over the bound times bound / count.
  int64_t r = y.dims().size();
  NodeValue bound =
      constantOf(ctx, node, y.getElemKind(), llvm::SmallVector<dim_t, 6>(r, 1),
                 double(x.dims()[e->axis]));
  TRY(NodeValue count, reshapeTo(ctx, node, e->count, Ints(r, 1)));
  // No entries: the sum is 0 and so is the mean, as onnxruntime gives.
  NodeValue one = constantOf(ctx, node, ElemKind::Int64, Ints(r, 1), 1);
  TRY(count, binary(ctx, node, OpKind::Max, count, one));
  TRY(count, castTo(ctx, node, count, y.getElemKind()));
  TRY(y, binary(ctx, node, OpKind::Mul, y, bound));
  return binary(ctx, node, OpKind::Div, y, count);
}

llvm::Expected<NodeValue> ember::finishDynamicOutput(ImportContext &ctx,
                                                     const std::string &name,
                                                     NodeValue v) {
  onnx::NodeProto node;
  node.set_name("output." + name);
  node.set_op_type("Output");
  return zeroPastExtent(ctx, node, v, name);
}

void ember::linkDynamicOutput(ImportContext &ctx, const std::string &name,
                              Placeholder *p) {
  const ImportContext::Extent *e = ctx.extentOf(name);
  if (!e)
    return;
  Module &M = ctx.module();
  Placeholder *c =
      M.createPlaceholder(name + ".extent", *e->count.getType(), true);
  ctx.fn().createSave("save." + name + ".extent", e->count, c);
  M.addDynamicExtent({p, e->axis, c});
}
