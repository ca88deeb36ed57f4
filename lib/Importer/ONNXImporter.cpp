//===- ONNXImporter.cpp - ONNX models into a Module -----------------------===//
#include "ember/Importer/ONNXImporter.h"

#include "ImportContext.h"
#include "ModelValidator.h"
#include "ProtoTensor.h"

#include "ember/Graph/Verifier.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <google/protobuf/io/coded_stream.h>

#include <set>

using namespace ember;

namespace {

/// The default-domain opset the model imports.
llvm::Expected<int64_t> defaultOpset(const onnx::ModelProto &model) {
  for (const auto &o : model.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx")
      return o.version();
  if (model.opset_import_size() == 0)
    return 1; // Models from before opset_import existed.
  return makeError("the model imports no opset of the default ONNX domain");
}

const ImportRule *findRule(llvm::StringRef opType, int64_t opset) {
  for (const ImportRule &r : getImportRules())
    if (opType == r.opType && opset >= r.minOpset && opset <= r.maxOpset)
      return &r;
  return nullptr;
}

/// One error listing every node Ember cannot import, or success.
llvm::Error checkAllSupported(const onnx::GraphProto &g, int64_t opset) {
  std::vector<std::string> missing;
  std::set<std::string> types;
  for (const auto &node : g.node()) {
    bool defaultDomain = node.domain().empty() || node.domain() == "ai.onnx";
    if (defaultDomain && findRule(node.op_type(), opset))
      continue;
    std::string what = node.op_type();
    if (!defaultDomain)
      what = node.domain() + "::" + what;
    types.insert(what);
    missing.push_back(what + " (node '" + node.name() + "', opset " +
                      std::to_string(opset) + ")");
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

/// The tensor type of a graph input or output, with symbols resolved.
llvm::Expected<Type> valueType(const onnx::ValueInfoProto &vi,
                               const ImportOptions &opts) {
  std::string what = "graph value '" + vi.name() + "'";
  if (!vi.type().has_tensor_type())
    return makeErrorF("{0} is not a tensor", what);
  const auto &tt = vi.type().tensor_type();
  EMBER_ASSIGN_OR_RETURN(ElemKind kind, elemKindFromONNX(tt.elem_type(), what));
  if (!tt.has_shape())
    return makeErrorF("{0} has no shape", what);
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
                      "with -onnx-define-symbol={1},VALUE",
                      what, d.dim_param());
  }
  return makeCheckedType(kind, dims, what);
}

llvm::Expected<Function *> importModel(const onnx::ModelProto &model, Module &M,
                                       const ImportOptions &opts) {
  EMBER_ASSIGN_OR_RETURN(int64_t opset, defaultOpset(model));
  const onnx::GraphProto &g = model.graph();
  EMBER_RETURN_IF_ERR(checkAllSupported(g, opset));
  Function *F = M.createFunction(g.name().empty() ? "main" : g.name());
  ImportContext ctx(M, *F, opset);

  std::set<std::string> initNames;
  for (const auto &init : g.initializer()) {
    if (initNames.count(init.name()))
      return makeErrorF("initializer '{0}' is defined twice", init.name());
    auto t = tensorFromProto(init);
    if (!t)
      return t.takeError();
    initNames.insert(init.name());
    ctx.bind(init.name(), M.createConstant(init.name(), std::move(*t)));
  }
  for (const auto &in : g.input()) {
    if (initNames.count(in.name()))
      continue; // An initializer listed as input (older exporters).
    if (ctx.isBound(in.name()))
      return makeErrorF("graph input '{0}' is declared twice", in.name());
    EMBER_ASSIGN_OR_RETURN(Type ty, valueType(in, opts));
    ctx.bind(in.name(), M.createPlaceholder(in.name(), ty, false));
  }
  for (const auto &node : g.node()) {
    for (const std::string &out : node.output())
      if (!out.empty() && ctx.isBound(out))
        return ImportContext::nodeError(node, "output '" + out +
                                                  "' is already defined");
    const ImportRule *rule = findRule(node.op_type(), opset);
    EMBER_RETURN_IF_ERR(rule->fn(ctx, node));
  }
  if (g.output_size() == 0)
    return makeError("the graph has no outputs");
  std::set<std::string> outNames;
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
    Placeholder *p = M.createPlaceholder(out.name(), *v->getType(), true);
    F->createSave("save." + out.name(), *v, p);
  }
  EMBER_RETURN_IF_ERR(checkFunctionLimits(*F));
  if (llvm::Error err = verifyFunction(*F))
    return makeErrorF("internal error: imported graph is invalid: {0}",
                      errorToString(std::move(err)));
  return F;
}

} // namespace

/// Parses, validates and imports \p bytes; external data is read from
/// files under \p baseDir (none when empty).
static llvm::Expected<Function *>
importBytes(llvm::StringRef bytes, llvm::StringRef name,
            llvm::StringRef baseDir, Module &M, const ImportOptions &opts) {
  onnx::ModelProto model;
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
  return importBytes(bytes, name, "", M, opts);
}

llvm::Expected<Function *> ember::importONNXFile(llvm::StringRef path,
                                                 Module &M,
                                                 const ImportOptions &opts) {
  auto buf = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                         /*RequiresNullTerminator=*/false);
  if (!buf)
    return makeErrorF("cannot read model '{0}': {1}", path,
                      buf.getError().message());
  llvm::StringRef dir = llvm::sys::path::parent_path(path);
  return importBytes((*buf)->getBuffer(), path, dir.empty() ? "." : dir, M,
                     opts);
}
