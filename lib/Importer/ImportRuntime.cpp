//===- ImportRuntime.cpp - Shape operands fed at run time -----------------===//
//
// An op whose shape, size or axes operand is a graph input cannot be
// compiled for every value. When the model declares the static shapes of
// the op's outputs and those shapes determine what the operand does
// (docs/RuntimeInputs.md lists the ops), the operand gets the value the
// shapes imply at compile time, and the Module gets an InputCheck: before
// each run the node is imported again with the actual values, and the run
// fails unless that gives the compiled output shapes.
//
//===----------------------------------------------------------------------===//
#include "ImportHelpers.h"

#include "ember/Base/ElemAccess.h"

#include <cmath>

using namespace ember;
using namespace ember::onnximport;

#define TRY EMBER_ASSIGN_OR_RETURN

namespace {

/// The declared static dims of output \p k of \p node.
llvm::Expected<Ints> outDims(ImportContext &ctx, const onnx::NodeProto &node,
                             int k) {
  if (k >= node.output_size() || node.output(k).empty())
    return fail(node, "has no output " + llvm::Twine(k));
  const std::vector<int64_t> *d = ctx.declaredDims(node.output(k));
  if (!d)
    return fail(node,
                "output '" + node.output(k) + "' has no declared static shape");
  return *d;
}

/// Dims of data input \p i.
llvm::Expected<Ints> inDims(ImportContext &ctx, const onnx::NodeProto &node,
                            int i) {
  TRY(NodeValue v, ctx.input(node, i));
  return Ints(v.dims().begin(), v.dims().end());
}

/// The declared output shape itself (Reshape, ConstantOfShape, MaxUnpool's
/// output_shape, Resize's sizes).
llvm::Expected<Ints> outShape(ImportContext &ctx, const onnx::NodeProto &node) {
  return outDims(ctx, node, 0);
}

/// Expand: the trailing dims of the output, as many as the shape holds.
llvm::Expected<Ints> expandShape(ImportContext &ctx,
                                 const onnx::NodeProto &node) {
  TRY(Ints d, outDims(ctx, node, 0));
  TRY(NodeValue s, ctx.input(node, 1));
  size_t n = s.getType()->size();
  if (n > d.size())
    return fail(node, "the shape holds more dims than the declared output");
  return Ints(d.end() - n, d.end());
}

/// Tile: output dim over input dim.
llvm::Expected<Ints> tileRepeats(ImportContext &ctx,
                                 const onnx::NodeProto &node) {
  TRY(Ints d, outDims(ctx, node, 0));
  TRY(Ints x, inDims(ctx, node, 0));
  if (d.size() != x.size())
    return fail(node, "the declared output rank differs from the input's");
  Ints r;
  for (size_t i = 0; i < d.size(); ++i) {
    if (x[i] == 0 || d[i] % x[i])
      return fail(node, "declared dim " + llvm::Twine(d[i]) +
                            " is no multiple of input dim " +
                            llvm::Twine(x[i]));
    r.push_back(d[i] / x[i]);
  }
  return r;
}

/// The output's extent along the "axis" attribute (\p dflt if absent).
llvm::Expected<Ints> axisExtent(ImportContext &ctx, const onnx::NodeProto &node,
                                int64_t dflt) {
  TRY(Ints d, outDims(ctx, node, 0));
  TRY(int64_t axis, AttrReader(node).getInt("axis", dflt));
  TRY(axis, normAxis(node, axis, d.size()));
  return Ints{d[axis]};
}

llvm::Expected<Ints> oneHotDepth(ImportContext &ctx,
                                 const onnx::NodeProto &node) {
  return axisExtent(ctx, node, -1);
}

llvm::Expected<Ints> topKCount(ImportContext &ctx,
                               const onnx::NodeProto &node) {
  return axisExtent(ctx, node, -1);
}

/// Split: each output's extent along the axis.
llvm::Expected<Ints> splitSizes(ImportContext &ctx,
                                const onnx::NodeProto &node) {
  TRY(int64_t axis, AttrReader(node).getInt("axis", 0));
  Ints sizes;
  for (int k = 0; k < node.output_size(); ++k) {
    TRY(Ints d, outDims(ctx, node, k));
    TRY(int64_t a, normAxis(node, axis, d.size()));
    sizes.push_back(d[a]);
  }
  return sizes;
}

/// The positions of \p longer not matched, in order, by \p shorter's dims:
/// the inserted (Unsqueeze) or removed (Squeeze) unit dims.
llvm::Expected<Ints> unitPositions(const onnx::NodeProto &node,
                                   const Ints &longer, const Ints &shorter) {
  Ints axes;
  size_t p = 0;
  for (size_t j = 0; j < longer.size(); ++j) {
    if (p < shorter.size() && longer[j] == shorter[p]) {
      ++p;
      continue;
    }
    if (longer[j] != 1)
      return fail(node, "the declared output shape is no squeeze or "
                        "unsqueeze of the input");
    axes.push_back(j);
  }
  return axes;
}

llvm::Expected<Ints> unsqueezeAxes(ImportContext &ctx,
                                   const onnx::NodeProto &node) {
  TRY(Ints d, outDims(ctx, node, 0));
  TRY(Ints x, inDims(ctx, node, 0));
  return unitPositions(node, d, x);
}

llvm::Expected<Ints> squeezeAxes(ImportContext &ctx,
                                 const onnx::NodeProto &node) {
  TRY(Ints d, outDims(ctx, node, 0));
  TRY(Ints x, inDims(ctx, node, 0));
  return unitPositions(node, x, d);
}

/// Sum, Mean, Max, Min and Prod over a unit dim are the identity, so with
/// keepdims the declared shape fixes the result whichever unit dims the
/// run-time axes name; other reductions (and keepdims=0) it does not.
llvm::Expected<Ints> reduceAxes(ImportContext &ctx,
                                const onnx::NodeProto &node) {
  TRY(int64_t keep, AttrReader(node).getInt("keepdims", 1));
  if (!keep)
    return fail(node, "with keepdims=0 the declared shape does not say "
                      "which axes are reduced");
  TRY(Ints d, outDims(ctx, node, 0));
  TRY(Ints x, inDims(ctx, node, 0));
  if (d.size() != x.size())
    return fail(node, "the declared output rank differs from the input's");
  Ints axes;
  for (size_t i = 0; i < d.size(); ++i)
    if (d[i] != x[i]) {
      if (d[i] != 1)
        return fail(node, "the declared shape is no reduction of the input");
      axes.push_back(i);
    }
  return axes;
}

llvm::Expected<Ints> windowSize(ImportContext &ctx,
                                const onnx::NodeProto &node) {
  TRY(Ints d, outDims(ctx, node, 0));
  if (d.size() != 1)
    return fail(node, "the declared output is not 1-D");
  return d;
}

/// Resize's sizes without the axes attribute and with the default "stretch"
/// policy are the output shape.
llvm::Expected<Ints> resizeSizes(ImportContext &ctx,
                                 const onnx::NodeProto &node) {
  AttrReader attrs(node);
  TRY(std::string policy,
      attrs.getString("keep_aspect_ratio_policy", std::string("stretch")));
  if (attrs.has("axes") || policy != "stretch")
    return fail(node, "with axes or an aspect-ratio policy the sizes are "
                      "not the output shape");
  return outDims(ctx, node, 0);
}

using Implier = llvm::Expected<Ints> (*)(ImportContext &,
                                         const onnx::NodeProto &);

/// The operands whose value the declared output shapes imply.
struct ImpliedRule {
  const char *opType;
  int input;
  Implier fn;
};

const ImpliedRule kImpliedRules[] = {
    {"Reshape", 1, outShape},          {"ConstantOfShape", 0, outShape},
    {"MaxUnpool", 2, outShape},        {"Resize", 3, resizeSizes},
    {"Expand", 1, expandShape},        {"Tile", 1, tileRepeats},
    {"OneHot", 1, oneHotDepth},        {"TopK", 1, topKCount},
    {"Split", 1, splitSizes},          {"Unsqueeze", 1, unsqueezeAxes},
    {"Squeeze", 1, squeezeAxes},       {"ReduceSum", 1, reduceAxes},
    {"ReduceMean", 1, reduceAxes},     {"ReduceMax", 1, reduceAxes},
    {"ReduceMin", 1, reduceAxes},      {"ReduceProd", 1, reduceAxes},
    {"HannWindow", 0, windowSize},     {"HammingWindow", 0, windowSize},
    {"BlackmanWindow", 0, windowSize},
};

/// "[1, 2, 3]" (at most 16 values; integral values without decimals).
std::string valuesString(const Tensor &t) {
  std::string s = "[";
  for (dim_t i = 0; i < t.size() && i < 16; ++i) {
    double v = t.elementAsDouble(i);
    s += i ? ", " : "";
    s += v == std::floor(v) && std::fabs(v) < 1e18
             ? std::to_string(int64_t(v))
             : llvm::formatv("{0}", v).str();
  }
  return s + (t.size() > 16 ? ", ...]" : "]");
}

} // namespace

llvm::Expected<Constant *> ember::impliedInput(ImportContext &ctx,
                                               const onnx::NodeProto &node,
                                               int i, Placeholder *p) {
  std::string notConstant = "input '" + node.input(i) +
                            "' must be a constant (an initializer or a "
                            "Constant node)";
  const ImpliedRule *rule = nullptr;
  for (const ImpliedRule &r : kImpliedRules)
    if (node.op_type() == r.opType && r.input == i)
      rule = &r;
  if (!rule)
    return fail(node, notConstant);
  auto values = rule->fn(ctx, node);
  if (!values)
    return fail(node, notConstant +
                          " or implied by the declared output "
                          "shapes: " +
                          errorToString(values.takeError()));
  const Type &ty = *p->getType();
  if (dim_t(values->size()) != ty.size())
    return fail(node, notConstant +
                          " or implied by the declared output "
                          "shapes: they imply " +
                          llvm::Twine(values->size()) +
                          " values, the input "
                          "is " +
                          ty.toString());
  Tensor t(ty.getElemKind(), ty.dims());
  for (size_t k = 0; k < values->size(); ++k)
    storeElement(t.data(), ty.getElemKind(), k, double((*values)[k]));
  return ctx.module().createConstant(p->getName().str() + ".implied",
                                     std::move(t));
}

namespace {

/// How the run-time check rebuilds one input of the node.
struct InputSpec {
  std::string name;
  int slot = -1;                          ///< a checked input's position
  std::optional<ElemKind> cast;           ///< the checked input cast to
  std::shared_ptr<const Tensor> constant; ///< else a constant's payload
  std::optional<Type> type;               ///< else a data input's type
};

/// The outputs of \p node with their compiled dims, after checking that
/// the declared ones (if any) are those.
llvm::Expected<std::vector<std::pair<std::string, Ints>>>
checkedOutputs(ImportContext &ctx, const onnx::NodeProto &node) {
  std::vector<std::pair<std::string, Ints>> outs;
  for (const std::string &out : node.output()) {
    if (out.empty() || !ctx.isBound(out))
      continue;
    NodeValue v = llvm::cantFail(ctx.get(out));
    Ints dims(v.dims().begin(), v.dims().end());
    const std::vector<int64_t> *d = ctx.declaredDims(out);
    if (d && dims != *d)
      return fail(node, "with the implied run-time operands, output '" + out +
                            "' is " + v.getType()->toString() +
                            ", not the declared " + dimsToString(*d));
    outs.push_back({out, dims});
  }
  if (outs.empty())
    return fail(node, "no output to check");
  return outs;
}

/// \p t converted to \p kind element by element (as a Cast node does), or
/// a copy without one.
Tensor castValue(const Tensor &t, std::optional<ElemKind> kind) {
  if (!kind)
    return t.clone();
  Tensor r(*kind, t.dims());
  for (dim_t i = 0; i < t.size(); ++i)
    storeElement(r.data(), *kind, i, t.elementAsDouble(i));
  return r;
}

/// Re-imports \p node with the checked inputs' values \p vals and compares
/// the output shapes with \p outs.
llvm::Error recheck(const onnx::NodeProto &node, int64_t opset, ImportFn fn,
                    const std::vector<InputSpec> &specs,
                    const std::vector<std::pair<std::string, Ints>> &outs,
                    llvm::ArrayRef<const Tensor *> vals) {
  Module M;
  Function *F = M.createFunction("check");
  ImportContext c(M, *F, opset);
  std::string given;
  for (const InputSpec &s : specs) {
    if (s.name.empty())
      continue;
    if (s.slot >= 0) {
      given += (given.empty() ? "" : ", ") + s.name + " = " +
               valuesString(*vals[s.slot]);
      c.bind(s.name,
             M.createConstant(s.name, castValue(*vals[s.slot], s.cast)));
    } else if (s.constant) {
      c.bind(s.name, M.createConstant(s.name, s.constant->clone()));
    } else {
      c.bind(s.name, M.createPlaceholder(s.name, *s.type, false));
    }
  }
  std::string prefix =
      "run-time input check: " + ImportContext::describe(node) + ": " + given +
      ": ";
  if (llvm::Error err = fn(c, node)) {
    std::string msg = errorToString(std::move(err));
    std::string own = ImportContext::describe(node) + ": ";
    if (llvm::StringRef(msg).starts_with(own))
      msg = msg.substr(own.size());
    return makeError(prefix + msg);
  }
  for (auto &[name, dims] : outs) {
    auto v = c.get(name);
    if (!v)
      return makeError(prefix + errorToString(v.takeError()));
    if (Ints(v->dims().begin(), v->dims().end()) != dims)
      return makeError(prefix + "gives output '" + name + "' " +
                       v->getType()->toString() +
                       "; the network was compiled for " + dimsToString(dims));
  }
  return llvm::Error::success();
}

} // namespace

llvm::Error ember::finishRuntimeInputs(ImportContext &ctx,
                                       const onnx::NodeProto &node,
                                       ImportFn fn) {
  std::vector<ImportContext::RuntimeInput> pending;
  std::swap(pending, ctx.runtimeInputs());
  if (pending.empty())
    return llvm::Error::success();
  TRY(auto outs, checkedOutputs(ctx, node));
  InputCheck check;
  std::vector<InputSpec> specs;
  for (int j = 0; j < node.input_size(); ++j) {
    InputSpec s;
    s.name = node.input(j);
    if (!s.name.empty()) {
      NodeValue v = llvm::cantFail(ctx.get(s.name));
      for (const ImportContext::RuntimeInput &r : pending)
        if (r.index == j) {
          s.slot = check.inputs.size();
          s.cast = r.cast;
          check.inputs.push_back(r.input);
        }
      if (s.slot < 0) {
        if (auto *c = llvm::dyn_cast<Constant>(v.getNode()))
          s.constant = std::make_shared<const Tensor>(c->getPayload().clone());
        else
          s.type = *v.getType();
      }
    }
    specs.push_back(std::move(s));
  }
  check.check = [node, opset = ctx.opset(), fn, specs,
                 outs](llvm::ArrayRef<const Tensor *> vals) {
    return recheck(node, opset, fn, specs, outs, vals);
  };
  ctx.module().addInputCheck(std::move(check));
  return llvm::Error::success();
}
