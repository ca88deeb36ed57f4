//===- ImportHelpers.cpp - Building blocks for op importers ---------------===//
#include "ImportHelpers.h"
#include "ProtoTensor.h"

#include "ember/Base/ElemAccess.h"

#include "glog/logging.h"

#include <algorithm>
#include <cmath>

using namespace ember;
using namespace ember::onnximport;

std::string onnximport::nameOf(const onnx::NodeProto &node) {
  if (!node.name().empty())
    return node.name();
  return node.output_size() ? node.output(0) : node.op_type();
}

llvm::Error onnximport::fail(const onnx::NodeProto &node,
                             const llvm::Twine &msg) {
  return ImportContext::nodeError(node, msg);
}

/// \p kind applied to \p ins, one of them empty: an empty Constant when
/// result \p resNo is empty too, else an error (an empty input may only
/// give an empty result).
static llvm::Expected<NodeValue>
emptyResult(ImportContext &ctx, const onnx::NodeProto &node, OpKind kind,
            llvm::ArrayRef<NodeValue> ins, const AttrList &attrs,
            unsigned resNo) {
  llvm::SmallVector<TypeRef, 4> types;
  for (NodeValue v : ins)
    types.push_back(v.getType());
  auto res = checkAndInfer(kind, nameOf(node), types, attrs,
                           /*allowEmpty=*/true);
  if (!res)
    return fail(node, errorToString(res.takeError()));
  if (resNo >= res->size() || (*res)[resNo].size() != 0)
    return fail(node, "an empty input gives a non-empty result here "
                      "(unsupported)");
  const Type &t = (*res)[resNo];
  return emptyConstant(ctx, node, t.getElemKind(),
                       Ints(t.dims().begin(), t.dims().end()));
}

llvm::Expected<NodeValue> onnximport::make(ImportContext &ctx,
                                           const onnx::NodeProto &node,
                                           OpKind kind,
                                           llvm::ArrayRef<NodeValue> ins,
                                           AttrList attrs, unsigned resNo) {
  // Schema checks reject nodes that lack required inputs; an importer that
  // still passes an absent optional input on gets an error, not a crash.
  for (size_t i = 0; i < ins.size(); ++i)
    if (!ins[i])
      return fail(node, "operand " + llvm::Twine(i) + " is missing");
  if (llvm::any_of(ins, [](NodeValue v) { return v.getType()->size() == 0; }))
    return emptyResult(ctx, node, kind, ins, attrs, resNo);
  auto n = ctx.fn().tryCreateNode(kind, nameOf(node), ins, std::move(attrs));
  if (!n)
    return fail(node, errorToString(n.takeError()));
  return NodeValue(*n, resNo);
}

NodeValue onnximport::constantOf(ImportContext &ctx,
                                 const onnx::NodeProto &node, ElemKind kind,
                                 llvm::ArrayRef<dim_t> dims, double v) {
  // A constant of one value over a huge shape (a loss target declared with
  // 2^31 elements, say) would hold the whole tensor in the module: above
  // the fold limit it is a Splat, which constant folding never expands,
  // where float holds the value exactly, else one value broadcast in the
  // graph (constant folding leaves a broadcast that grows its data).
  dim_t count = 1;
  for (dim_t d : dims)
    count = d != 0 && count > kMaxFoldElements / d ? kMaxFoldElements + 1
                                                   : count * d;
  if (count > kMaxFoldElements) {
    if (double(float(v)) == v && holdsExactly(kind, v))
      return ctx.fn().createSplat(nameOf(node) + ".splat", dims, kind,
                                  float(v));
    std::vector<dim_t> ones(dims.size(), 1);
    NodeValue one = constantOf(ctx, node, kind, ones, v);
    return NodeValue(llvm::cantFail(
        ctx.fn().tryCreateBroadcast(nameOf(node) + ".fill", one, dims)));
  }
  Tensor t(kind, dims);
  for (dim_t i = 0, e = t.size(); i < e; ++i)
    storeElement(t.data(), kind, i, v);
  return ctx.module().createConstant(nameOf(node) + ".const", std::move(t));
}

llvm::Expected<NodeValue>
onnximport::iotaConstant(ImportContext &ctx, const onnx::NodeProto &node,
                         int64_t n, llvm::ArrayRef<dim_t> dims, ElemKind kind) {
  if (n > kMaxFoldElements)
    return fail(node, "needs the positions 0 .. " + llvm::Twine(n - 1) +
                          " along one dim; the limit is " +
                          llvm::Twine(kMaxFoldElements) + " positions");
  Tensor t(kind, dims);
  for (int64_t i = 0; i < n; ++i)
    storeElement(t.data(), kind, i, double(i));
  return NodeValue(
      ctx.module().createConstant(nameOf(node) + ".iota", std::move(t)));
}

NodeValue onnximport::int64Constant(ImportContext &ctx,
                                    const onnx::NodeProto &node,
                                    const char *what,
                                    llvm::ArrayRef<int64_t> dims,
                                    llvm::ArrayRef<int64_t> v) {
  Tensor t(ElemKind::Int64, std::vector<dim_t>(dims.begin(), dims.end()));
  CHECK_EQ(size_t(t.size()), v.size());
  std::copy(v.begin(), v.end(), t.getHandle<int64_t>().begin());
  return ctx.module().createConstant(nameOf(node) + what, std::move(t));
}

llvm::Expected<NodeValue> onnximport::wrapNegative(ImportContext &ctx,
                                                   const onnx::NodeProto &node,
                                                   NodeValue v, int64_t n) {
  EMBER_ASSIGN_OR_RETURN(
      NodeValue neg,
      make(ctx, node, OpKind::Less, {v, constantLike(ctx, node, v, 0)}));
  EMBER_ASSIGN_OR_RETURN(
      NodeValue wrapped,
      make(ctx, node, OpKind::Add, {v, constantLike(ctx, node, v, double(n))}));
  return make(ctx, node, OpKind::Where, {neg, wrapped, v});
}

llvm::Expected<ElemKind> onnximport::dtypeOr(const onnx::NodeProto &node,
                                             ElemKind dflt) {
  AttrReader attrs(node);
  if (!attrs.has("dtype"))
    return dflt;
  EMBER_ASSIGN_OR_RETURN(int64_t dtype, attrs.getInt("dtype", std::nullopt));
  return elemKindFromONNX(int32_t(dtype), ImportContext::describe(node));
}

NodeValue onnximport::constantLike(ImportContext &ctx,
                                   const onnx::NodeProto &node, NodeValue like,
                                   double v) {
  return constantOf(ctx, node, like.getElemKind(), like.dims(), v);
}

llvm::Expected<NodeValue> onnximport::binary(ImportContext &ctx,
                                             const onnx::NodeProto &node,
                                             OpKind kind, NodeValue a,
                                             NodeValue b) {
  if (!a || !b)
    return fail(node, "missing operand of a binary op");
  if (a.getElemKind() != b.getElemKind())
    return fail(node,
                "operand element types differ: " + a.getType()->toString() +
                    " and " + b.getType()->toString());
  EMBER_ASSIGN_OR_RETURN(auto ab, ctx.broadcastPair(node, a, b));
  return make(ctx, node, kind, {ab.first, ab.second});
}

llvm::Expected<NodeValue> onnximport::unary(ImportContext &ctx,
                                            const onnx::NodeProto &node,
                                            OpKind kind, NodeValue x) {
  return make(ctx, node, kind, {x});
}

llvm::Expected<NodeValue> onnximport::plainMatMul(ImportContext &ctx,
                                                  const onnx::NodeProto &node,
                                                  NodeValue a, NodeValue b) {
  return make(ctx, node, OpKind::MatMul, {a, b},
              {Attr::makeInt(0), Attr::makeInt(int64_t(FusedActivation::None)),
               Attr::makeFloat(0.f), Attr::makeFloat(0.f)});
}

llvm::Expected<NodeValue> onnximport::reshapeTo(ImportContext &ctx,
                                                const onnx::NodeProto &node,
                                                NodeValue x,
                                                llvm::ArrayRef<int64_t> dims) {
  if (x.dims() == dims)
    return x;
  if (x.getType()->size() == 0 && llvm::is_contained(dims, 0) &&
      llvm::all_of(dims, [](int64_t d) { return d >= 0; }))
    return emptyConstant(ctx, node, x.getElemKind(), Ints(dims));
  auto r = ctx.fn().tryCreateReshape(nameOf(node), x, dims);
  if (!r)
    return fail(node, errorToString(r.takeError()));
  return NodeValue(*r);
}

llvm::Expected<NodeValue> onnximport::castTo(ImportContext &ctx,
                                             const onnx::NodeProto &node,
                                             NodeValue x, ElemKind kind) {
  if (x.getElemKind() == kind)
    return x;
  AttrList attrs;
  attrs.push_back(Attr::makeElemKind(kind));
  return make(ctx, node, OpKind::Cast, {x}, attrs);
}

llvm::Expected<int64_t> onnximport::normAxis(const onnx::NodeProto &node,
                                             int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank)
    return fail(node, "axis " + llvm::Twine(axis) +
                          " is out of range for rank " + llvm::Twine(rank));
  return axis < 0 ? axis + rank : axis;
}

llvm::Expected<NodeValue> onnximport::reduce(ImportContext &ctx,
                                             const onnx::NodeProto &node,
                                             OpKind kind, NodeValue x,
                                             Ints axes, bool keepDims) {
  int64_t rank = x.dims().size();
  for (int64_t &a : axes) {
    EMBER_ASSIGN_OR_RETURN(a, normAxis(node, a, rank));
  }
  std::sort(axes.begin(), axes.end());
  axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
  if (axes.empty())
    return x;
  if (!keepDims && int64_t(axes.size()) == rank) {
    // A rank-0 result: reduce with kept dims, then reshape to a scalar.
    EMBER_ASSIGN_OR_RETURN(NodeValue r, reduce(ctx, node, kind, x, axes, true));
    return reshapeTo(ctx, node, r, {});
  }
  AttrList attrs;
  attrs.push_back(Attr::makeInts(axes));
  attrs.push_back(Attr::makeInt(keepDims));
  return make(ctx, node, kind, {x}, attrs);
}

llvm::Expected<Ints> onnximport::optionalInts(ImportContext &ctx,
                                              const onnx::NodeProto &node,
                                              int i, std::optional<Ints> dflt) {
  if (!ImportContext::hasInput(node, i)) {
    if (dflt)
      return *dflt;
    return fail(node, "missing input " + llvm::Twine(i));
  }
  return ctx.constantInts(node, i);
}

llvm::Expected<double> onnximport::constantScalar(ImportContext &ctx,
                                                  const onnx::NodeProto &node,
                                                  int i) {
  EMBER_ASSIGN_OR_RETURN(const Tensor *t, ctx.constantInput(node, i));
  if (t->size() != 1)
    return fail(node, "input " + llvm::Twine(i) + " must be a scalar");
  return t->elementAsDouble(0);
}

llvm::Expected<int64_t>
onnximport::constantScalarInt(ImportContext &ctx, const onnx::NodeProto &node,
                              int i) {
  EMBER_ASSIGN_OR_RETURN(double v, constantScalar(ctx, node, i));
  if (std::isnan(v))
    return fail(node, "input " + llvm::Twine(i) + " is NaN");
  constexpr double kLimit = double(int64_t(1) << 62);
  return int64_t(std::clamp(v, -kLimit, kLimit));
}

void onnximport::bindOutput(ImportContext &ctx, const onnx::NodeProto &node,
                            int i, NodeValue v) {
  if (i < node.output_size() && !node.output(i).empty())
    ctx.bind(node.output(i), v);
}

NodeValue onnximport::emptyConstant(ImportContext &ctx,
                                    const onnx::NodeProto &node, ElemKind kind,
                                    Ints dims) {
  for (int64_t &d : dims)
    d = std::max<int64_t>(d, 0);
  return ctx.module().createConstant(nameOf(node), Tensor(kind, dims));
}

llvm::Expected<NodeValue> onnximport::sliceNode(ImportContext &ctx,
                                                const onnx::NodeProto &node,
                                                NodeValue x, const Ints &starts,
                                                const Ints &steps,
                                                const Ints &counts) {
  if (counts == dimsOf(x) &&
      std::all_of(steps.begin(), steps.end(), [](int64_t s) { return s == 1; }))
    return x;
  for (int64_t c : counts)
    if (c <= 0)
      return emptyConstant(ctx, node, x.getElemKind(), counts);
  return make(
      ctx, node, OpKind::Slice, {x},
      {Attr::makeInts(starts), Attr::makeInts(steps), Attr::makeInts(counts)});
}

Ints onnximport::dimsOf(NodeValue v) {
  return Ints(v.dims().begin(), v.dims().end());
}
