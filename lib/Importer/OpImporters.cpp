//===- OpImporters.cpp - One import function per ONNX op ------------------===//
//
// The import table at the bottom maps op_type and opset range to these
// functions. Ops that existing nodes express are composed here.
//
//===----------------------------------------------------------------------===//
#include "ImportContext.h"
#include "ImportHelpers.h"
#include "ProtoTensor.h"

#include <numeric>

using namespace ember;

#define ASSIGN_OR_RETURN EMBER_ASSIGN_OR_RETURN

namespace {

/// The node's name for the nodes it creates.
std::string nameOf(const onnx::NodeProto &node) {
  if (!node.name().empty())
    return node.name();
  return node.output_size() ? node.output(0) : node.op_type();
}

/// Wraps a builder error with the node description.
template <typename T>
llvm::Expected<T> wrap(const onnx::NodeProto &node, llvm::Expected<T> v) {
  if (!v)
    return ImportContext::nodeError(node, errorToString(v.takeError()));
  return v;
}

/// Normalizes a possibly negative axis for rank \p rank.
llvm::Expected<int64_t> normAxis(const onnx::NodeProto &node, int64_t axis,
                                 int64_t rank) {
  if (axis < -rank || axis >= rank)
    return ImportContext::nodeError(node, "axis " + llvm::Twine(axis) +
                                              " is out of range for rank " +
                                              llvm::Twine(rank));
  return axis < 0 ? axis + rank : axis;
}

llvm::Error importIdentity(ImportContext &ctx, const onnx::NodeProto &node) {
  ASSIGN_OR_RETURN(NodeValue x, ctx.input(node, 0));
  return ctx.setOutput(node, x);
}

template <NodeValue (*Make)(Function &, const std::string &, NodeValue,
                            NodeValue)>
llvm::Error importBinary(ImportContext &ctx, const onnx::NodeProto &node) {
  ASSIGN_OR_RETURN(NodeValue a, ctx.input(node, 0));
  ASSIGN_OR_RETURN(NodeValue b, ctx.input(node, 1));
  if (a.getElemKind() != b.getElemKind())
    return ImportContext::nodeError(
        node, "operand element types differ: " + a.getType()->toString() +
                  " and " + b.getType()->toString());
  ASSIGN_OR_RETURN(auto ab, ctx.broadcastPair(node, a, b));
  return ctx.setOutput(node, Make(ctx.fn(), nameOf(node), ab.first, ab.second));
}

#define BINARY_MAKER(N)                                                        \
  NodeValue make##N(Function &F, const std::string &n, NodeValue a,            \
                    NodeValue b) {                                             \
    return F.create##N(n, a, b);                                               \
  }
BINARY_MAKER(Add)
BINARY_MAKER(Sub)
BINARY_MAKER(Mul)
BINARY_MAKER(Div)
#undef BINARY_MAKER

template <OpKind K>
llvm::Error importUnary(ImportContext &ctx, const onnx::NodeProto &node) {
  ASSIGN_OR_RETURN(NodeValue x, ctx.input(node, 0));
  ASSIGN_OR_RETURN(
      Node * n, wrap(node, ctx.fn().tryCreateNode(K, nameOf(node), {x}, {})));
  return ctx.setOutput(node, n);
}

llvm::Error importClip(ImportContext &ctx, const onnx::NodeProto &node) {
  ASSIGN_OR_RETURN(NodeValue x, ctx.input(node, 0));
  AttrReader attrs(node);
  float lo = -std::numeric_limits<float>::infinity();
  float hi = std::numeric_limits<float>::infinity();
  if (ctx.opset() < 11) {
    ASSIGN_OR_RETURN(lo, attrs.getFloat("min", lo));
    ASSIGN_OR_RETURN(hi, attrs.getFloat("max", hi));
  } else {
    for (int i = 1; i <= 2; ++i) {
      if (!ImportContext::hasInput(node, i))
        continue;
      ASSIGN_OR_RETURN(const Tensor *t, ctx.constantInput(node, i));
      if (t->size() != 1 || t->getElemKind() != ElemKind::Float32)
        return ImportContext::nodeError(node, "min/max must be float scalars");
      (i == 1 ? lo : hi) = t->getHandle<float>().raw(0);
    }
  }
  ASSIGN_OR_RETURN(auto *n,
                   wrap(node, ctx.fn().tryCreateClip(nameOf(node), x, lo, hi)));
  return ctx.setOutput(node, n);
}

/// Window attributes of Conv and the pools, with auto_pad resolved.
struct Window {
  std::vector<int64_t> kernel, strides, pads, dilations;
};

llvm::Expected<Window> readWindow(const onnx::NodeProto &node, NodeValue x,
                                  std::vector<int64_t> kernel) {
  AttrReader attrs(node);
  Window w;
  if (x.dims().size() != 4)
    return ImportContext::nodeError(
        node,
        "only 2-D (NCHW) inputs are supported, got " + x.getType()->toString());
  ASSIGN_OR_RETURN(w.kernel, attrs.getInts("kernel_shape", kernel));
  ASSIGN_OR_RETURN(w.strides, attrs.getInts("strides", {{1, 1}}));
  ASSIGN_OR_RETURN(w.dilations, attrs.getInts("dilations", {{1, 1}}));
  ASSIGN_OR_RETURN(w.pads, attrs.getInts("pads", {{0, 0, 0, 0}}));
  ASSIGN_OR_RETURN(std::string autoPad, attrs.getString("auto_pad", "NOTSET"));
  if (w.kernel.size() != 2 || w.strides.size() != 2 ||
      w.dilations.size() != 2 || w.pads.size() != 4)
    return ImportContext::nodeError(
        node, "kernel_shape, strides, dilations need 2 values and pads 4");
  for (int i = 0; i < 2; ++i)
    if (w.kernel[i] <= 0 || w.strides[i] <= 0 || w.dilations[i] <= 0)
      return ImportContext::nodeError(
          node, "kernel_shape, strides and dilations must be positive");
  for (int64_t p : w.pads)
    if (p < 0)
      return ImportContext::nodeError(node, "pads must not be negative");
  if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
    for (int i = 0; i < 2; ++i) {
      int64_t in = x.dims()[2 + i], s = w.strides[i];
      int64_t out = (in + s - 1) / s;
      int64_t span = (w.kernel[i] - 1) * w.dilations[i] + 1;
      int64_t total = std::max<int64_t>((out - 1) * s + span - in, 0);
      int64_t small = total / 2, big = total - small;
      w.pads[i] = autoPad == "SAME_UPPER" ? small : big;
      w.pads[i + 2] = autoPad == "SAME_UPPER" ? big : small;
    }
  } else if (autoPad == "VALID") {
    w.pads = {0, 0, 0, 0};
  } else if (autoPad != "NOTSET") {
    return ImportContext::nodeError(node, "unknown auto_pad '" + autoPad + "'");
  }
  return w;
}

llvm::Error importConv(ImportContext &ctx, const onnx::NodeProto &node) {
  ASSIGN_OR_RETURN(NodeValue x, ctx.input(node, 0));
  ASSIGN_OR_RETURN(NodeValue w, ctx.input(node, 1));
  if (w.dims().size() != 4)
    return ImportContext::nodeError(node, "filter must be 4-D, got " +
                                              w.getType()->toString());
  ASSIGN_OR_RETURN(Window win, readWindow(node, x, {w.dims()[2], w.dims()[3]}));
  if (win.kernel[0] != w.dims()[2] || win.kernel[1] != w.dims()[3])
    return ImportContext::nodeError(node, "kernel_shape does not match the "
                                          "filter " +
                                              w.getType()->toString());
  ASSIGN_OR_RETURN(int64_t group, AttrReader(node).getInt("group", 1));
  NodeValue bias;
  if (ImportContext::hasInput(node, 2)) {
    ASSIGN_OR_RETURN(bias, ctx.input(node, 2));
  } else {
    bias = ctx.splatConstant(nameOf(node) + ".bias", {w.dims()[0]}, 0.f);
  }
  ASSIGN_OR_RETURN(auto *n,
                   wrap(node, ctx.fn().tryCreateConv(
                                  nameOf(node), x, w, bias, {}, win.strides,
                                  win.pads, win.dilations, group,
                                  int64_t(FusedActivation::None), 0.f, 0.f)));
  return ctx.setOutput(node, n);
}

llvm::Error importGlobalAveragePool(ImportContext &ctx,
                                    const onnx::NodeProto &node) {
  ASSIGN_OR_RETURN(NodeValue x, ctx.input(node, 0));
  if (x.dims().size() != 4)
    return ImportContext::nodeError(node, "only 4-D inputs are supported");
  ASSIGN_OR_RETURN(
      auto *n, wrap(node, ctx.fn().tryCreateAvgPool(nameOf(node), x,
                                                    {x.dims()[2], x.dims()[3]},
                                                    {1, 1}, {0, 0, 0, 0}, 0)));
  return ctx.setOutput(node, n);
}

llvm::Error importBatchNorm(ImportContext &ctx, const onnx::NodeProto &node) {
  NodeValue in[5];
  for (int i = 0; i < 5; ++i) {
    ASSIGN_OR_RETURN(in[i], ctx.input(node, i));
  }
  AttrReader attrs(node);
  ASSIGN_OR_RETURN(int64_t training, attrs.getInt("training_mode", 0));
  if (training)
    return ImportContext::nodeError(node, "training_mode=1 is not supported");
  ASSIGN_OR_RETURN(float eps, attrs.getFloat("epsilon", 1e-5f));
  ASSIGN_OR_RETURN(auto *n, wrap(node, ctx.fn().tryCreateBatchNorm(
                                           nameOf(node), in[0], in[1], in[2],
                                           in[3], in[4], eps)));
  return ctx.setOutput(node, n);
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
    c = ctx.splatConstant(nameOf(node) + ".c", {m, n}, 0.f);
    beta = 0.f;
  }
  ASSIGN_OR_RETURN(
      auto *g, wrap(node, ctx.fn().tryCreateGemm(nameOf(node), a, b, c, alpha,
                                                 beta, transA, transB)));
  return ctx.setOutput(node, g);
}

/// Reshape that reports shape errors against the node.
llvm::Expected<NodeValue> reshape(ImportContext &ctx,
                                  const onnx::NodeProto &node, NodeValue x,
                                  llvm::ArrayRef<int64_t> dims) {
  if (x.dims() == dims)
    return x;
  ASSIGN_OR_RETURN(
      auto *r, wrap(node, ctx.fn().tryCreateReshape(nameOf(node), x, dims)));
  return NodeValue(r);
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
  ASSIGN_OR_RETURN(a, reshape(ctx, node, a, ad));
  ASSIGN_OR_RETURN(b, reshape(ctx, node, b, bd));
  ASSIGN_OR_RETURN(auto *mm,
                   wrap(node, ctx.fn().tryCreateMatMul(nameOf(node), a, b, 0)));
  std::vector<int64_t> out(mm->getResult().dims().begin(),
                           mm->getResult().dims().end());
  if (vecB)
    out.pop_back();
  if (vecA)
    out.erase(out.end() - (vecB ? 1 : 2));
  ASSIGN_OR_RETURN(NodeValue y, reshape(ctx, node, mm->getResult(), out));
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
  ASSIGN_OR_RETURN(NodeValue y, reshape(ctx, node, x, {outer, inner}));
  return ctx.setOutput(node, y);
}

llvm::Error importReshape(ImportContext &ctx, const onnx::NodeProto &node) {
  ASSIGN_OR_RETURN(NodeValue x, ctx.input(node, 0));
  std::vector<int64_t> shape;
  AttrReader attrs(node);
  if (ctx.opset() < 5) {
    ASSIGN_OR_RETURN(shape, attrs.getInts("shape", std::nullopt));
  } else {
    ASSIGN_OR_RETURN(shape, ctx.constantInts(node, 1));
  }
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
    } else if (shape[i] <= 0 || known > kMaxTensorElements / shape[i]) {
      return ImportContext::nodeError(node,
                                      "invalid shape " + dimsToString(shape));
    } else {
      known *= shape[i];
    }
  }
  if (inferAt >= 0) {
    if (x.getType()->size() % known)
      return ImportContext::nodeError(node, "cannot infer -1 in shape " +
                                                dimsToString(shape));
    shape[inferAt] = x.getType()->size() / known;
  }
  ASSIGN_OR_RETURN(NodeValue y, reshape(ctx, node, x, shape));
  return ctx.setOutput(node, y);
}

llvm::Error importTranspose(ImportContext &ctx, const onnx::NodeProto &node) {
  ASSIGN_OR_RETURN(NodeValue x, ctx.input(node, 0));
  std::vector<int64_t> rev(x.dims().size());
  std::iota(rev.rbegin(), rev.rend(), 0);
  ASSIGN_OR_RETURN(std::vector<int64_t> perm,
                   AttrReader(node).getInts("perm", rev));
  ASSIGN_OR_RETURN(
      auto *t, wrap(node, ctx.fn().tryCreateTranspose(nameOf(node), x, perm)));
  return ctx.setOutput(node, t);
}

llvm::Error importConcat(ImportContext &ctx, const onnx::NodeProto &node) {
  std::vector<NodeValue> ins;
  for (int i = 0; i < node.input_size(); ++i) {
    ASSIGN_OR_RETURN(NodeValue v, ctx.input(node, i));
    ins.push_back(v);
  }
  if (ins.empty())
    return ImportContext::nodeError(node, "needs at least one input");
  ASSIGN_OR_RETURN(int64_t axis, AttrReader(node).getInt("axis", std::nullopt));
  ASSIGN_OR_RETURN(axis, normAxis(node, axis, ins[0].dims().size()));
  if (ins.size() == 1)
    return ctx.setOutput(node, ins[0]);
  ASSIGN_OR_RETURN(
      auto *c, wrap(node, ctx.fn().tryCreateConcat(nameOf(node), ins, axis)));
  return ctx.setOutput(node, c);
}

llvm::Error importSoftmax(ImportContext &ctx, const onnx::NodeProto &node) {
  ASSIGN_OR_RETURN(NodeValue x, ctx.input(node, 0));
  int64_t rank = x.dims().size();
  bool coerce2D = ctx.opset() < 13;
  ASSIGN_OR_RETURN(int64_t axis,
                   AttrReader(node).getInt("axis", coerce2D ? 1 : -1));
  ASSIGN_OR_RETURN(axis, normAxis(node, axis, rank));
  if (!coerce2D) {
    ASSIGN_OR_RETURN(
        auto *s, wrap(node, ctx.fn().tryCreateSoftmax(nameOf(node), x, axis)));
    return ctx.setOutput(node, s);
  }
  // Before opset 13 the input is treated as 2-D [outer, inner] at axis.
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < rank; ++i)
    (i < axis ? outer : inner) *= x.dims()[i];
  ASSIGN_OR_RETURN(NodeValue flat, reshape(ctx, node, x, {outer, inner}));
  ASSIGN_OR_RETURN(
      auto *s, wrap(node, ctx.fn().tryCreateSoftmax(nameOf(node), flat, 1)));
  std::vector<int64_t> dims(x.dims().begin(), x.dims().end());
  ASSIGN_OR_RETURN(NodeValue y, reshape(ctx, node, s->getResult(), dims));
  return ctx.setOutput(node, y);
}

llvm::Error importDropout(ImportContext &ctx, const onnx::NodeProto &node) {
  // Inference: Dropout is the identity; its mask output is not computed.
  ASSIGN_OR_RETURN(NodeValue x, ctx.input(node, 0));
  return ctx.setOutput(node, x);
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
    {"Add", 7, 17, importBinary<makeAdd>},
    {"Sub", 7, 17, importBinary<makeSub>},
    {"Mul", 7, 17, importBinary<makeMul>},
    {"Div", 7, 17, importBinary<makeDiv>},
    {"Relu", 6, 17, importUnary<OpKind::Relu>},
    {"Sigmoid", 6, 17, importUnary<OpKind::Sigmoid>},
    {"Tanh", 6, 17, importUnary<OpKind::Tanh>},
    {"Clip", 6, 17, importClip},
    {"Conv", 1, 17, importConv},
    {"GlobalAveragePool", 1, 17, importGlobalAveragePool},
    {"BatchNormalization", 6, 17, importBatchNorm},
    {"Gemm", 6, 17, importGemm},
    {"MatMul", 1, 17, importMatMul},
    {"Flatten", 1, 17, importFlatten},
    {"Reshape", 1, 17, importReshape},
    {"Transpose", 1, 17, importTranspose},
    {"Concat", 4, 17, importConcat},
    {"Softmax", 1, 17, importSoftmax},
    {"Identity", 1, 17, importIdentity},
    {"Dropout", 1, 17, importDropout},
    {"Constant", 1, 17, importConstant},
};

} // namespace

llvm::ArrayRef<ImportRule> ember::getImportRules() {
  // The breadth tables (issue 3) come first, so their entries take
  // precedence over the older ones above for the same op type.
  static const std::vector<ImportRule> all = [] {
    std::vector<ImportRule> v;
    for (auto rules :
         {onnximport::getMathImportRules(), onnximport::getTensorImportRules(),
          onnximport::getReduceImportRules(), onnximport::getNNImportRules(),
          onnximport::getQuantImportRules(), onnximport::getSignalImportRules(),
          onnximport::getLpImportRules(), onnximport::getRNNImportRules(),
          llvm::ArrayRef<ImportRule>(kRules)})
      v.insert(v.end(), rules.begin(), rules.end());
    return v;
  }();
  return all;
}
