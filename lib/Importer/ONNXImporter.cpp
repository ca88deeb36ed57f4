//===- ONNXImporter.cpp - ONNX models into a Module -----------------------===//
#include "ember/Importer/ONNXImporter.h"

#include "ImportContext.h"
#include "ImportControlFlow.h"
#include "ImportHelpers.h"
#include "ModelValidator.h"
#include "OpsetHistory.h"
#include "ProtoTensor.h"
#include "SchemaCheck.h"

#include "ember/Graph/QuantTypes.h"
#include "ember/Graph/Verifier.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <google/protobuf/io/coded_stream.h>

#include <set>

using namespace ember;

namespace {

bool isDefaultDomain(const std::string &domain) {
  return domain.empty() || domain == "ai.onnx";
}

/// The rule of a default-domain op at \p opset; past opset 17, the rule of
/// the op version that opset runs (OpsetHistory.h).
const ImportRule *findRule(llvm::StringRef opType, int64_t opset) {
  int64_t at = onnximport::ruleOpset(opType, opset);
  for (const ImportRule &r : getImportRules())
    if (opType == r.opType && at >= r.minOpset && at <= r.maxOpset)
      return &r;
  return nullptr;
}

/// The opset \p model imports for \p domain, or 0.
int64_t domainOpset(const onnx::ModelProto &model, llvm::StringRef domain) {
  for (const auto &o : model.opset_import())
    if (o.domain() == domain)
      return o.version();
  return 0;
}

/// The importer of \p node: a default-domain op at \p opset, or an op of
/// another domain Ember imports at the opset \p model imports for it.
const ImportRule *findNodeRule(const onnx::NodeProto &node, int64_t opset,
                               const onnx::ModelProto *model) {
  if (isDefaultDomain(node.domain()))
    return findRule(node.op_type(), opset);
  onnximport::RuleList rules;
  if (node.domain() == onnximport::kTrainingDomain)
    rules = onnximport::getTrainingImportRules();
  else if (node.domain() == onnximport::kMicrosoftDomain)
    rules = onnximport::getMicrosoftImportRules();
  else
    return nullptr;
  int64_t v = model ? domainOpset(*model, node.domain()) : 1;
  for (const ImportRule &r : rules)
    if (node.op_type() == r.opType && v >= r.minOpset && v <= r.maxOpset)
      return &r;
  return nullptr;
}

/// \p g's nodes and, through If, Loop and Scan, their subgraphs' nodes, in
/// order.
void collectNodes(const onnx::GraphProto &g,
                  std::vector<const onnx::NodeProto *> &out) {
  for (const auto &node : g.node()) {
    out.push_back(&node);
    if (isControlFlow(node.op_type()))
      for (const auto &a : node.attribute())
        if (a.type() == onnx::AttributeProto::GRAPH)
          collectNodes(a.g(), out);
  }
}

/// The default-domain opset the model imports. A model of other domains
/// only (the optimizer steps of ai.onnx.preview.training) needs none.
llvm::Expected<int64_t> defaultOpset(const onnx::ModelProto &model) {
  for (const auto &o : model.opset_import())
    if (isDefaultDomain(o.domain()))
      return o.version();
  if (model.opset_import_size() == 0)
    return 1; // Models from before opset_import existed.
  std::vector<const onnx::NodeProto *> nodes;
  collectNodes(model.graph(), nodes);
  for (const onnx::NodeProto *n : nodes)
    if (isDefaultDomain(n->domain()))
      return makeError("the model imports no opset of the default ONNX "
                       "domain");
  return 1;
}

/// How an unsupported node is listed: op type, node name and, for another
/// domain than the default, the domain and the opset the model imports for
/// it (or that it imports none).
std::string describeUnsupported(const onnx::NodeProto &node,
                                const onnx::ModelProto &model, int64_t opset) {
  std::string where = "node '" + node.name() + "'";
  if (isDefaultDomain(node.domain()))
    return node.op_type() + " (" + where + ", opset " + std::to_string(opset) +
           ")";
  std::string version = "opset not imported";
  for (const auto &o : model.opset_import())
    if (o.domain() == node.domain())
      version = "opset " + std::to_string(o.version());
  return node.op_type() + " (" + where + ", domain '" + node.domain() + "', " +
         version + ")";
}

/// One error listing every node Ember cannot import, or success. Ember
/// imports ops of the default domain only; a node of any other domain
/// (ai.onnx.ml, com.microsoft, a custom one) is listed here.
llvm::Error checkAllSupported(const onnx::ModelProto &model, int64_t opset) {
  std::vector<std::string> missing;
  std::set<std::string> types;
  std::vector<const onnx::NodeProto *> nodes;
  collectNodes(model.graph(), nodes);
  for (const onnx::NodeProto *np : nodes) {
    const onnx::NodeProto &node = *np;
    bool defaultDomain = isDefaultDomain(node.domain());
    if ((defaultDomain && isControlFlow(node.op_type())) ||
        findNodeRule(node, opset, &model))
      continue;
    types.insert(defaultDomain ? node.op_type()
                               : node.domain() + "::" + node.op_type());
    missing.push_back(describeUnsupported(node, model, opset));
  }
  if (missing.empty())
    return llvm::Error::success();
  std::string list;
  for (const std::string &t : types)
    list += (list.empty() ? "" : ", ") + t;
  std::string msg = std::to_string(missing.size()) +
                    " unsupported node(s) of " + std::to_string(types.size()) +
                    " op type(s) [" + list + "]:";
  for (const std::string &m : missing)
    msg += "\n  " + m;
  return makeError(msg);
}

/// The tensor type of a graph input, with symbols resolved or replaced by
/// a -model-input type.
llvm::Expected<Type> valueType(const onnx::ValueInfoProto &vi,
                               const ImportOptions &opts) {
  std::string what = "graph value '" + vi.name() + "'";
  if (!vi.type().has_tensor_type())
    return makeErrorF("{0} is not a tensor", what);
  const auto &tt = vi.type().tensor_type();
  EMBER_ASSIGN_OR_RETURN(ElemKind kind, elemKindFromONNX(tt.elem_type(), what));
  auto given = opts.inputTypes.find(vi.name());
  if (given != opts.inputTypes.end()) {
    const Type &t = given->second;
    if (t.getElemKind() != kind ||
        (tt.has_shape() && int(t.rank()) != tt.shape().dim_size()))
      return makeErrorF("{0} is declared {1} of rank {2}; -model-input gives "
                        "{3}",
                        what, elemKindName(kind), tt.shape().dim_size(),
                        t.toString());
    for (int i = 0; tt.has_shape() && i < tt.shape().dim_size(); ++i)
      if (tt.shape().dim(i).has_dim_value() &&
          tt.shape().dim(i).dim_value() != t.dims()[i])
        return makeErrorF("{0}: dim {1} is fixed to {2}; -model-input gives "
                          "{3}",
                          what, i, tt.shape().dim(i).dim_value(), t.toString());
    return makeCheckedType(kind, t.dims(), what);
  }
  if (!tt.has_shape())
    return makeErrorF("{0} has no shape; give one with "
                      "-model-input={1},TYPE,[D0,...]",
                      what, vi.name());
  std::vector<int64_t> dims;
  for (const auto &d : tt.shape().dim()) {
    if (d.has_dim_value()) {
      dims.push_back(d.dim_value());
      continue;
    }
    auto it = std::find_if(opts.symbols.begin(), opts.symbols.end(),
                           [&](auto &s) { return s.first == d.dim_param(); });
    if (d.has_dim_param() && it != opts.symbols.end()) {
      dims.push_back(it->second);
      continue;
    }
    return makeErrorF("{0} has symbolic dimension '{1}'; give it a value "
                      "with -onnx-define-symbol={1},VALUE or the whole type "
                      "with -model-input={2},TYPE,[D0,...]",
                      what, d.dim_param(), vi.name());
  }
  return makeCheckedType(kind, dims, what);
}

/// "'a', 'b'" for a message, or \p none when \p names is empty.
std::string quotedList(const std::set<std::string> &names,
                       llvm::StringRef none) {
  std::string list;
  for (const std::string &n : names)
    list += (list.empty() ? "'" : ", '") + n + "'";
  return list.empty() ? none.str() : list;
}

/// A -model-input type or (when asked) a symbol that names no graph input or
/// input dim_param would be ignored without a word; it is an error instead,
/// so that a typo does not go unnoticed.
llvm::Error checkOptionNames(const onnx::GraphProto &g,
                             const std::set<std::string> &initNames,
                             const ImportOptions &opts) {
  std::set<std::string> inputs, symbols;
  for (const auto &in : g.input()) {
    if (initNames.count(in.name()))
      continue;
    inputs.insert(in.name());
    if (in.type().has_tensor_type() && in.type().tensor_type().has_shape())
      for (const auto &d : in.type().tensor_type().shape().dim())
        if (d.has_dim_param())
          symbols.insert(d.dim_param());
  }
  for (const auto &given : opts.inputTypes)
    if (!inputs.count(given.first))
      return makeErrorF("-model-input names '{0}', which is not an input of "
                        "the graph (inputs: {1})",
                        given.first, quotedList(inputs, "none"));
  for (const auto &sym : opts.symbols)
    if (opts.requireSymbolsUsed && !symbols.count(sym.first))
      return makeErrorF("-onnx-define-symbol names '{0}', which is not a "
                        "symbolic dimension of any graph input (symbols: {1})",
                        sym.first, quotedList(symbols, "none"));
  return llvm::Error::success();
}

/// Empty tensors (only ever constants) may feed parameter inputs (axes,
/// shapes, roi, ...), the shape ops, and the ops that move or relabel data
/// (an empty input gives them an empty result, which
/// bindEmptyResults makes a constant); as data of any other op they are a
/// clean error rather than a node with an empty type. ConstantOfShape's
/// input 0 is a shape: empty, it makes a scalar (torch writes this for
/// every `torch.tensor(python_number)`, e.g. in torchvision's detectors).
llvm::Error checkEmptyInputs(ImportContext &ctx, const onnx::NodeProto &node) {
  static const std::set<std::string> kEmptyInputOps = {
      "Shape",   "Size",    "Concat",  "Identity",  "ConstantOfShape",
      "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Transpose",
      "Slice",   "Split",   "Trilu",   "Cast",      "CastLike",
      "Neg",     "Abs",     "Relu",    "Sigmoid",   "Tanh"};
  if (kEmptyInputOps.count(node.op_type()) || node.input_size() == 0 ||
      node.input(0).empty() || !ctx.isBound(node.input(0)))
    return llvm::Error::success();
  NodeValue v = llvm::cantFail(ctx.get(node.input(0)));
  if (v.getType()->size() != 0)
    return llvm::Error::success();
  return ImportContext::nodeError(node, "input '" + node.input(0) +
                                            "' is empty " +
                                            v.getType()->toString() +
                                            "; empty tensors are supported "
                                            "only in shape arithmetic and "
                                            "the ops that move data");
}

/// A result with no elements has one possible value: each output of
/// \p node that holds none becomes an empty Constant, so no kernel ever
/// runs on an empty buffer (an empty graph output is a buffer of 0 bytes).
void bindEmptyResults(ImportContext &ctx, const onnx::NodeProto &node) {
  for (const std::string &out : node.output()) {
    if (out.empty() || !ctx.isBound(out))
      continue;
    NodeValue v = llvm::cantFail(ctx.get(out));
    if (v.getType()->size() != 0 || llvm::isa<Constant>(v.getNode()))
      continue;
    ctx.bind(out, ctx.module().createConstant(out, Tensor(*v.getType())));
  }
}

/// Replaces the outputs of \p node by Constants when all its inputs are
/// constant (shape arithmetic), using the caller's evaluator.
void foldNode(ImportContext &ctx, const onnx::NodeProto &node,
              const ImportOptions &opts) {
  if (!opts.evaluator || node.input_size() == 0)
    return;
  // Dequantized weights stay 8-bit for the fold-qdq pass (which folds what
  // it does not use later).
  if (node.op_type() == "DequantizeLinear")
    return;
  for (const std::string &in : node.input()) {
    if (in.empty())
      continue;
    auto v = ctx.get(in);
    if (!v) {
      llvm::consumeError(v.takeError());
      return;
    }
    if (!llvm::isa<Constant>(v->getNode()))
      return;
  }
  for (const std::string &out : node.output()) {
    if (out.empty() || !ctx.isBound(out))
      continue;
    NodeValue v = llvm::cantFail(ctx.get(out));
    // Shape arithmetic is small; leave big constant computations (and
    // absurd declared sizes, reported later) to the compiled graph.
    if (llvm::isa<Constant>(v.getNode()) ||
        v.getType()->size() > onnximport::kMaxFoldElements)
      continue;
    auto t = opts.evaluator(v);
    if (!t) { // Leave it to the compiled graph.
      llvm::consumeError(t.takeError());
      continue;
    }
    ctx.bind(out, ctx.module().createConstant(out, std::move(*t)));
  }
}

/// Walking back from the declared shapes, suggests each input of an
/// elementwise node the dims of its output (Range's length inside an
/// expanded window function, whose output alone is declared). An input
/// broadcast to the output has other dims, so a suggestion is only a guess
/// that the run-time check of the operand relying on it confirms.
void suggestElementwiseShapes(ImportContext &ctx, const onnx::GraphProto &g) {
  static const llvm::StringSet<> kElementwise = {
      "Add", "Sub", "Mul", "Div",  "Pow",   "Neg",  "Abs",  "Cast",
      "Cos", "Sin", "Exp", "Sqrt", "Floor", "Ceil", "Relu", "Identity"};
  for (int k = g.node_size() - 1; k >= 0; --k) {
    const onnx::NodeProto &n = g.node(k);
    if (n.output_size() != 1 || !kElementwise.contains(n.op_type()))
      continue;
    const std::vector<int64_t> *d = ctx.declaredOrSuggestedDims(n.output(0));
    if (!d)
      continue;
    for (const std::string &in : n.input())
      if (!in.empty() && !ctx.declaredOrSuggestedDims(in))
        ctx.suggest(in, *d);
  }
}

} // namespace

/// Records the fully static shapes \p g declares for its outputs and
/// value_info: they imply shape operands fed at run time.
void ember::declareStaticShapes(ImportContext &ctx, const onnx::GraphProto &g) {
  auto declare = [&](const onnx::ValueInfoProto &vi) {
    if (!vi.type().has_tensor_type() || !vi.type().tensor_type().has_shape())
      return;
    std::vector<int64_t> dims;
    for (const auto &d : vi.type().tensor_type().shape().dim()) {
      if (!d.has_dim_value())
        return;
      dims.push_back(d.dim_value());
    }
    ctx.declare(vi.name(), std::move(dims));
  };
  for (const auto &vi : g.value_info())
    declare(vi);
  for (const auto &vi : g.output())
    declare(vi);
  suggestElementwiseShapes(ctx, g);
}

/// Imports \p g's nodes in order (the main graph or an If branch).
llvm::Error ember::importNodes(ImportContext &ctx, const onnx::GraphProto &g,
                               const ImportOptions &opts) {
  for (const auto &node : g.node()) {
    // Whatever the op (custom domains and opsets newer than libonnx's
    // included), its import names its results.
    if (llvm::all_of(node.output(), [](const auto &o) { return o.empty(); }))
      return ImportContext::nodeError(node, "has no outputs");
    for (const std::string &out : node.output())
      if (!out.empty() && (ctx.isBound(out) || ctx.isSequence(out)))
        return ImportContext::nodeError(node, "output '" + out +
                                                  "' is already defined");
    if (isControlFlow(node.op_type())) {
      EMBER_RETURN_IF_ERR(propagateExtents(ctx, node));
      EMBER_RETURN_IF_ERR(importControlFlow(ctx, node, opts));
      continue;
    }
    const ImportRule *rule = findNodeRule(node, ctx.opset(), nullptr);
    EMBER_RETURN_IF_ERR(checkEmptyInputs(ctx, node));
    EMBER_RETURN_IF_ERR(rule->fn(ctx, node));
    EMBER_RETURN_IF_ERR(finishRuntimeInputs(ctx, node, rule->fn));
    bindEmptyResults(ctx, node);
    EMBER_RETURN_IF_ERR(propagateExtents(ctx, node));
    foldNode(ctx, node, opts);
  }
  return llvm::Error::success();
}

namespace {

/// Frees \p init's payload once it is a Constant, so that the weights are
/// not held twice (proto and Tensor) while the rest imports. A cleared
/// protobuf field keeps its capacity; swapping with an empty message
/// releases it.
void releasePayload(onnx::TensorProto &init) {
  onnx::TensorProto husk;
  husk.set_name(init.name());
  init.Swap(&husk);
}

llvm::Expected<Function *> importModel(onnx::ModelProto &model, Module &M,
                                       const ImportOptions &opts) {
  EMBER_ASSIGN_OR_RETURN(int64_t opset, defaultOpset(model));
  const onnx::GraphProto &g = model.graph();
  EMBER_RETURN_IF_ERR(checkNodeSchemas(model, opset));
  EMBER_RETURN_IF_ERR(checkAllSupported(model, opset));
  Function *F = M.createFunction(g.name().empty() ? "main" : g.name());
  ImportContext ctx(M, *F, opset);

  std::set<std::string> initNames;
  for (auto &init : *model.mutable_graph()->mutable_initializer()) {
    if (initNames.count(init.name()))
      return makeErrorF("initializer '{0}' is defined twice", init.name());
    auto t = tensorFromProto(init);
    if (!t)
      return t.takeError();
    initNames.insert(init.name());
    ctx.bind(init.name(), M.createConstant(init.name(), std::move(*t)));
    releasePayload(init);
  }
  EMBER_RETURN_IF_ERR(checkOptionNames(g, initNames, opts));
  for (const auto &in : g.input()) {
    if (initNames.count(in.name()))
      continue; // An initializer listed as input (older exporters).
    if (ctx.isBound(in.name()))
      return makeErrorF("graph input '{0}' is declared twice", in.name());
    auto frozen = opts.frozenInputs.find(in.name());
    if (frozen != opts.frozenInputs.end()) {
      ctx.bind(in.name(), M.createConstant(in.name(), frozen->second->clone()));
      continue;
    }
    EMBER_ASSIGN_OR_RETURN(Type ty, valueType(in, opts));
    Placeholder *p = M.createPlaceholder(in.name(), ty, false);
    // An empty input has one possible value, so it is a constant; the
    // placeholder stays so that the inputs keep their order and names.
    if (ty.size() == 0)
      ctx.bind(in.name(), M.createConstant(in.name() + ".empty", Tensor(ty)));
    else
      ctx.bind(in.name(), p);
  }
  declareStaticShapes(ctx, g);
  EMBER_RETURN_IF_ERR(importNodes(ctx, g, opts));
  if (g.output_size() == 0)
    return makeError("the graph has no outputs");
  std::set<std::string> outNames;
  std::vector<Placeholder *> outPhs;
  for (const auto &out : g.output()) {
    if (!outNames.insert(out.name()).second)
      return makeErrorF("graph output '{0}' is listed twice", out.name());
    auto v = ctx.get(out.name());
    if (!v)
      return makeErrorF("graph output '{0}': {1}", out.name(),
                        errorToString(v.takeError()));
    if (out.type().has_tensor_type() &&
        out.type().tensor_type().elem_type() != 0) {
      auto kind = elemKindFromONNX(out.type().tensor_type().elem_type(),
                                   "graph output '" + out.name() + "'");
      if (!kind)
        return kind.takeError();
      if (*kind != v->getElemKind())
        return makeErrorF("graph output '{0}' is declared {1} but computed "
                          "as {2}",
                          out.name(), elemKindName(*kind),
                          v->getType()->toString());
    }
    EMBER_ASSIGN_OR_RETURN(NodeValue y,
                           finishDynamicOutput(ctx, out.name(), *v));
    Placeholder *p = M.createPlaceholder(out.name(), *v->getType(), true);
    F->createSave("save." + out.name(), y, p);
    outPhs.push_back(p);
  }
  // The hidden counts follow every ONNX output, so that those keep their
  // positions.
  for (int i = 0; i < g.output_size(); ++i)
    linkDynamicOutput(ctx, g.output(i).name(), outPhs[i]);
  EMBER_RETURN_IF_ERR(onnximport::finishRuntimeChecks(ctx));
  EMBER_RETURN_IF_ERR(checkFunctionLimits(*F));
  for (const auto &n : F->getNodes())
    for (unsigned i = 0; i < n->getNumResults(); ++i)
      if (n->getType(i)->size() == 0)
        return makeErrorF("node '{0}' computes an empty tensor {1}; empty "
                          "tensors are supported only as constants",
                          n->getName(), n->getType(i)->toString());
  annotateQuantizedIO(*F);
  if (llvm::Error err = verifyFunction(*F))
    return makeErrorF("internal error: imported graph is invalid: {0}",
                      errorToString(std::move(err)));
  if (opts.valueNames)
    *opts.valueNames = ctx.saveScope();
  return F;
}

} // namespace

/// Parses \p bytes into \p model.
static llvm::Error parseModel(llvm::StringRef bytes, llvm::StringRef name,
                              onnx::ModelProto &model) {
  if (bytes.size() > kMaxModelBytes)
    return makeErrorF("{0}: models over 2 GiB must use external data", name);
  google::protobuf::io::CodedInputStream cis(
      reinterpret_cast<const uint8_t *>(bytes.data()), int(bytes.size()));
  cis.SetRecursionLimit(64);
  if (!model.ParseFromCodedStream(&cis) || !cis.ConsumedEntireMessage())
    return makeErrorF("{0}: not a valid ONNX model (protobuf parse failed: "
                      "truncated, not ONNX, or nested deeper than 64 levels)",
                      name);
  if (!model.has_graph())
    return makeErrorF("{0}: the model has no graph", name);
  return llvm::Error::success();
}

/// Validates and imports a parsed model; \p baseDir locates external data
/// ("" for none).
static llvm::Expected<Function *> importParsed(onnx::ModelProto &model,
                                               llvm::StringRef name, Module &M,
                                               const ImportOptions &opts,
                                               llvm::StringRef baseDir) {
  llvm::Error err = validateModel(model);
  if (!err)
    err = resolveExternalData(model, baseDir);
  if (err)
    return makeErrorF("{0}: {1}", name, errorToString(std::move(err)));
  auto F = importModel(model, M, opts);
  if (!F)
    return makeErrorF("{0}: {1}", name, errorToString(F.takeError()));
  return F;
}

llvm::Expected<Function *> ember::importONNXBuffer(llvm::StringRef bytes,
                                                   llvm::StringRef name,
                                                   Module &M,
                                                   const ImportOptions &opts) {
  onnx::ModelProto model;
  EMBER_RETURN_IF_ERR(parseModel(bytes, name, model));
  return importParsed(model, name, M, opts, "");
}

llvm::Expected<Function *> ember::importONNXFile(llvm::StringRef path,
                                                 Module &M,
                                                 const ImportOptions &opts) {
  onnx::ModelProto model;
  {
    // The file's bytes are needed only while parsing: unmapped before the
    // import, so that the weights are not held three times at its peak.
    auto buf = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                           /*RequiresNullTerminator=*/false);
    if (!buf)
      return makeErrorF("cannot read model '{0}': {1}", path,
                        buf.getError().message());
    EMBER_RETURN_IF_ERR(parseModel((*buf)->getBuffer(), path, model));
  }
  llvm::SmallString<256> dir(path);
  llvm::sys::path::remove_filename(dir);
  if (dir.empty())
    dir = ".";
  return importParsed(model, path, M, opts, dir);
}
