//===- OpImporters.cpp - The import table and the core-op importers -------===//
//
// getImportRules() joins the per-family tables (ImportMath.cpp,
// ImportTensor.cpp, ...) with the rules below, the first ops Ember took:
// Gemm, MatMul, BatchNormalization, the reshapes, Identity and Constant.
//
//===----------------------------------------------------------------------===//
#include "ImportContext.h"
#include "ImportHelpers.h"
#include "ProtoTensor.h"

#include <numeric>

using namespace ember;
using namespace ember::onnximport;

#define ASSIGN_OR_RETURN EMBER_ASSIGN_OR_RETURN

namespace {

/// Wraps a builder error with the node description.
template <typename T>
llvm::Expected<T> wrap(const onnx::NodeProto &node, llvm::Expected<T> v) {
  if (!v)
    return ImportContext::nodeError(node, errorToString(v.takeError()));
  return v;
}

llvm::Error importIdentity(ImportContext &ctx, const onnx::NodeProto &node) {
  ASSIGN_OR_RETURN(NodeValue x, ctx.input(node, 0));
  return ctx.setOutput(node, x);
}

/// Training mode: the batch's mean and population variance over every axis
/// but 1 replace the inputs' (in[3], in[4]), and outputs 1 and 2 are the
/// running statistics input * momentum + batch * (1 - momentum).
llvm::Error batchStatistics(ImportContext &ctx, const onnx::NodeProto &node,
                            NodeValue (&in)[5]) {
  ASSIGN_OR_RETURN(float momentum, AttrReader(node).getFloat("momentum", 0.9f));
  NodeValue x = in[0];
  Ints axes, keep(x.dims().size(), 1);
  for (size_t a = 0; a < x.dims().size(); ++a)
    if (a != 1)
      axes.push_back(int64_t(a));
  keep[1] = x.dims()[1];
  ASSIGN_OR_RETURN(NodeValue mean,
                   reduce(ctx, node, OpKind::ReduceMean, x, axes, false));
  ASSIGN_OR_RETURN(NodeValue m4, reshapeTo(ctx, node, mean, keep));
  ASSIGN_OR_RETURN(NodeValue dev, binary(ctx, node, OpKind::Sub, x, m4));
  ASSIGN_OR_RETURN(dev, binary(ctx, node, OpKind::Mul, dev, dev));
  ASSIGN_OR_RETURN(NodeValue var,
                   reduce(ctx, node, OpKind::ReduceMean, dev, axes, false));
  for (int k = 1; k <= 2 && k < node.output_size(); ++k) {
    if (node.output(k).empty())
      continue;
    NodeValue batch = k == 1 ? mean : var;
    ASSIGN_OR_RETURN(NodeValue a,
                     binary(ctx, node, OpKind::Mul, in[2 + k],
                            constantLike(ctx, node, in[2 + k], momentum)));
    ASSIGN_OR_RETURN(NodeValue b,
                     binary(ctx, node, OpKind::Mul, batch,
                            constantLike(ctx, node, batch, 1.0 - momentum)));
    ASSIGN_OR_RETURN(NodeValue run, binary(ctx, node, OpKind::Add, a, b));
    ctx.bind(node.output(k), run);
  }
  in[3] = mean;
  in[4] = var;
  return llvm::Error::success();
}

llvm::Error importBatchNorm(ImportContext &ctx, const onnx::NodeProto &node) {
  NodeValue in[5];
  for (int i = 0; i < 5; ++i) {
    ASSIGN_OR_RETURN(in[i], ctx.input(node, i));
  }
  AttrReader attrs(node);
  ASSIGN_OR_RETURN(int64_t training, attrs.getInt("training_mode", 0));
  if (training && in[0].dims().size() < 2)
    return ImportContext::nodeError(node, "needs an input of rank 2 or more");
  if (training)
    EMBER_RETURN_IF_ERR(batchStatistics(ctx, node, in));
  ASSIGN_OR_RETURN(float eps, attrs.getFloat("epsilon", 1e-5f));
  ASSIGN_OR_RETURN(auto *n, wrap(node, ctx.fn().tryCreateBatchNorm(
                                           nameOf(node), in[0], in[1], in[2],
                                           in[3], in[4], eps)));
  if (!training)
    return ctx.setOutput(node, n);
  ctx.bind(node.output(0), n); // outputs 1 and 2 are bound above
  return llvm::Error::success();
}

llvm::Error importGemm(ImportContext &ctx, const onnx::NodeProto &node) {
  ASSIGN_OR_RETURN(NodeValue a, ctx.input(node, 0));
  ASSIGN_OR_RETURN(NodeValue b, ctx.input(node, 1));
  AttrReader attrs(node);
  ASSIGN_OR_RETURN(float alpha, attrs.getFloat("alpha", 1.f));
  ASSIGN_OR_RETURN(float beta, attrs.getFloat("beta", 1.f));
  ASSIGN_OR_RETURN(int64_t transA, attrs.getInt("transA", 0));
  ASSIGN_OR_RETURN(int64_t transB, attrs.getInt("transB", 0));
  if (a.dims().size() != 2 || b.dims().size() != 2)
    return ImportContext::nodeError(node, "A and B must be 2-D");
  dim_t m = transA ? a.dims()[1] : a.dims()[0];
  dim_t n = transB ? b.dims()[0] : b.dims()[1];
  NodeValue c;
  if (ImportContext::hasInput(node, 2)) {
    ASSIGN_OR_RETURN(c, ctx.input(node, 2));
    ASSIGN_OR_RETURN(c, ctx.broadcastTo(node, c, {m, n}));
  } else {
    // The zero C is allocated here: refuse a shape over the limits first.
    ASSIGN_OR_RETURN(Type cType, wrap(node, makeCheckedType(ElemKind::Float32,
                                                            {m, n}, "C")));
    (void)cType;
    c = constantOf(ctx, node, ElemKind::Float32, {m, n}, 0);
    beta = 0.f;
  }
  ASSIGN_OR_RETURN(
      auto *g, wrap(node, ctx.fn().tryCreateGemm(nameOf(node), a, b, c, alpha,
                                                 beta, transA, transB)));
  return ctx.setOutput(node, g);
}

/// ONNX MatMul: 1-D operands become matrices, both operands get the same
/// rank, and batch dims broadcast inside the MatMul node (never copied).
llvm::Error importMatMul(ImportContext &ctx, const onnx::NodeProto &node) {
  ASSIGN_OR_RETURN(NodeValue a, ctx.input(node, 0));
  ASSIGN_OR_RETURN(NodeValue b, ctx.input(node, 1));
  std::vector<int64_t> ad(a.dims().begin(), a.dims().end());
  std::vector<int64_t> bd(b.dims().begin(), b.dims().end());
  if (ad.empty() || bd.empty())
    return ImportContext::nodeError(node, "operands must not be scalars");
  bool vecA = ad.size() == 1, vecB = bd.size() == 1;
  if (vecA)
    ad.insert(ad.begin(), 1);
  if (vecB)
    bd.push_back(1);
  size_t r = std::max(ad.size(), bd.size());
  ad.insert(ad.begin(), r - ad.size(), 1);
  bd.insert(bd.begin(), r - bd.size(), 1);
  ASSIGN_OR_RETURN(a, reshapeTo(ctx, node, a, ad));
  ASSIGN_OR_RETURN(b, reshapeTo(ctx, node, b, bd));
  ASSIGN_OR_RETURN(auto *mm,
                   wrap(node, ctx.fn().tryCreateMatMul(nameOf(node), a, b, 0)));
  std::vector<int64_t> out(mm->getResult().dims().begin(),
                           mm->getResult().dims().end());
  if (vecB)
    out.pop_back();
  if (vecA)
    out.erase(out.end() - (vecB ? 1 : 2));
  ASSIGN_OR_RETURN(NodeValue y, reshapeTo(ctx, node, mm->getResult(), out));
  return ctx.setOutput(node, y);
}

llvm::Error importFlatten(ImportContext &ctx, const onnx::NodeProto &node) {
  ASSIGN_OR_RETURN(NodeValue x, ctx.input(node, 0));
  int64_t rank = x.dims().size();
  ASSIGN_OR_RETURN(int64_t axis, AttrReader(node).getInt("axis", 1));
  if (axis < -rank || axis > rank)
    return ImportContext::nodeError(node, "axis out of range");
  if (axis < 0)
    axis += rank;
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < rank; ++i)
    (i < axis ? outer : inner) *= x.dims()[i];
  ASSIGN_OR_RETURN(NodeValue y, reshapeTo(ctx, node, x, {outer, inner}));
  EMBER_RETURN_IF_ERR(ctx.setOutput(node, y));
  // A counted axis keeps its rows as a Reshape to {-1, -1} would: merged
  // with the dims after it on the side it falls (reshapeExtent).
  return reshapeExtent(ctx, node, x, {-1, -1}, {outer, inner});
}

llvm::Error importReshape(ImportContext &ctx, const onnx::NodeProto &node) {
  ASSIGN_OR_RETURN(NodeValue x, ctx.input(node, 0));
  std::vector<int64_t> shape;
  AttrReader attrs(node);
  if (ctx.opset() < 5) {
    ASSIGN_OR_RETURN(shape, attrs.getInts("shape", std::nullopt));
  } else {
    // A shape computed from a data-dependent count is sized for its bound.
    const ImportContext::ShapeExtent *se = ctx.shapeExtentOf(node.input(1));
    if (se) {
      shape = se->bound;
    } else {
      ASSIGN_OR_RETURN(shape, ctx.constantInts(node, 1));
    }
  }
  std::vector<int64_t> raw = shape;
  ASSIGN_OR_RETURN(int64_t allowZero, attrs.getInt("allowzero", 0));
  int64_t known = 1, inferAt = -1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 0 && !allowZero) {
      if (i >= x.dims().size())
        return ImportContext::nodeError(node, "0 in shape past input rank");
      shape[i] = x.dims()[i];
    }
    if (shape[i] == -1) {
      if (inferAt >= 0)
        return ImportContext::nodeError(node, "more than one -1 in shape");
      inferAt = i;
    } else if (shape[i] < 0 || (shape[i] == 0 && x.getType()->size()) ||
               (shape[i] && known > kMaxTensorElements / shape[i])) {
      return ImportContext::nodeError(node,
                                      "invalid shape " + dimsToString(shape));
    } else {
      known *= shape[i];
    }
  }
  if (inferAt >= 0 && known == 0)
    return ImportContext::nodeError(node, "cannot infer -1 in shape " +
                                              dimsToString(shape) +
                                              " (it holds a 0)");
  if (inferAt >= 0) {
    if (x.getType()->size() % known)
      return ImportContext::nodeError(node, "cannot infer -1 in shape " +
                                                dimsToString(shape));
    shape[inferAt] = x.getType()->size() / known;
  }
  ASSIGN_OR_RETURN(NodeValue y, reshapeTo(ctx, node, x, shape));
  EMBER_RETURN_IF_ERR(ctx.setOutput(node, y));
  return reshapeExtent(ctx, node, x, raw, shape);
}

llvm::Error importTranspose(ImportContext &ctx, const onnx::NodeProto &node) {
  ASSIGN_OR_RETURN(NodeValue x, ctx.input(node, 0));
  std::vector<int64_t> rev(x.dims().size());
  std::iota(rev.rbegin(), rev.rend(), 0);
  ASSIGN_OR_RETURN(std::vector<int64_t> perm,
                   AttrReader(node).getInts("perm", rev));
  if (x.getType()->size() == 0) {
    std::vector<int64_t> sorted = perm, dims;
    std::sort(sorted.begin(), sorted.end());
    std::vector<int64_t> ids(rev.rbegin(), rev.rend());
    if (sorted != ids)
      return ImportContext::nodeError(node, "perm " + dimsToString(perm) +
                                                " is no permutation of the "
                                                "input's dims");
    for (int64_t p : perm)
      dims.push_back(x.dims()[p]);
    return ctx.setOutput(node, emptyConstant(ctx, node, x.getElemKind(), dims));
  }
  ASSIGN_OR_RETURN(
      auto *t, wrap(node, ctx.fn().tryCreateTranspose(nameOf(node), x, perm)));
  return ctx.setOutput(node, t);
}

llvm::Error importConstant(ImportContext &ctx, const onnx::NodeProto &node) {
  AttrReader attrs(node);
  Tensor t;
  if (const auto *a = attrs.find("value")) {
    if (a->type() != onnx::AttributeProto::TENSOR)
      return ImportContext::nodeError(node, "attribute 'value' must be a "
                                            "tensor");
    auto r = tensorFromProto(a->t());
    if (!r)
      return ImportContext::nodeError(node, errorToString(r.takeError()));
    t = std::move(*r);
  } else if (attrs.has("value_float")) {
    ASSIGN_OR_RETURN(float v, attrs.getFloat("value_float", std::nullopt));
    t = Tensor(ElemKind::Float32, {});
    t.getHandle<float>().raw(0) = v;
  } else if (attrs.has("value_int")) {
    ASSIGN_OR_RETURN(int64_t v, attrs.getInt("value_int", std::nullopt));
    t = Tensor(ElemKind::Int64, {});
    t.getHandle<int64_t>().raw(0) = v;
  } else if (attrs.has("value_ints")) {
    ASSIGN_OR_RETURN(auto v, attrs.getInts("value_ints", std::nullopt));
    if (v.empty())
      return ImportContext::nodeError(node, "value_ints is empty");
    t = Tensor(ElemKind::Int64, {dim_t(v.size())});
    std::copy(v.begin(), v.end(), t.getHandle<int64_t>().begin());
  } else {
    return ImportContext::nodeError(node, "has no supported value attribute");
  }
  return ctx.setOutput(node,
                       ctx.module().createConstant(nameOf(node), std::move(t)));
}

const ImportRule kRules[] = {
    {"BatchNormalization", 6, 17, importBatchNorm},
    {"Gemm", 6, 17, importGemm},
    {"MatMul", 1, 17, importMatMul},
    {"Flatten", 1, 17, importFlatten},
    {"Reshape", 1, 17, importReshape},
    {"Transpose", 1, 17, importTranspose},
    {"Identity", 1, 17, importIdentity},
    {"Constant", 1, 17, importConstant},
};

} // namespace

llvm::ArrayRef<ImportRule> ember::getImportRules() {
  // The lookup takes the first row that matches, so an op type and opset
  // must appear in one table only (ImporterTest checks it).
  static const std::vector<ImportRule> all = [] {
    std::vector<ImportRule> v;
    for (auto rules : {onnximport::getMathImportRules(),
                       onnximport::getDirectImportRules(),
                       onnximport::getTensorImportRules(),
                       onnximport::getSplitPadImportRules(),
                       onnximport::getReduceImportRules(),
                       onnximport::getNNImportRules(),
                       onnximport::getQuantImportRules(),
                       onnximport::getSignalImportRules(),
                       onnximport::getLpImportRules(),
                       onnximport::getRNNImportRules(),
                       onnximport::getGridSampleImportRules(),
                       onnximport::getRoiAlignImportRules(),
                       onnximport::getNMSImportRules(),
                       onnximport::getUniqueImportRules(),
                       onnximport::getSequenceImportRules(),
                       onnximport::getEinsumImportRules(),
                       onnximport::getTfIdfImportRules(),
                       onnximport::getNormalizationImportRules(),
                       onnximport::getAttentionImportRules(),
                       onnximport::getRandomImportRules(),
                       llvm::ArrayRef<ImportRule>(kRules)})
      v.insert(v.end(), rules.begin(), rules.end());
    return v;
  }();
  return all;
}
