//===- SchemaCheck.cpp - Nodes against ONNX's operator schemas ------------===//
#include "SchemaCheck.h"

#include "ImportContext.h"

#include <onnx/defs/data_type_utils.h>
#include <onnx/defs/schema.h>

#include <algorithm>
#include <limits>
#include <map>
#include <string>

using namespace ember;

namespace {

/// Element types known before import: graph inputs, initializers and
/// value_info of the main graph, as libonnx's interned type strings.
using KnownTypes = std::map<std::string, onnx::DataType>;

bool isDefaultDomain(const std::string &domain) {
  return domain.empty() || domain == "ai.onnx";
}

/// libonnx's type string for \p elemType, or null for an element type it
/// cannot name (left to the importer's own element-type checks).
onnx::DataType typeOfElem(int32_t elemType) {
  if (elemType == 0)
    return nullptr;
  onnx::TypeProto tp;
  tp.mutable_tensor_type()->set_elem_type(elemType);
  try {
    return onnx::Utils::DataTypeUtils::ToType(tp);
  } catch (const std::exception &) {
    return nullptr;
  }
}

KnownTypes collectTypes(const onnx::GraphProto &g) {
  KnownTypes types;
  auto addValue = [&](const onnx::ValueInfoProto &vi) {
    if (vi.type().has_tensor_type())
      if (onnx::DataType t = typeOfElem(vi.type().tensor_type().elem_type()))
        types[vi.name()] = t;
  };
  for (const auto &vi : g.value_info())
    addValue(vi);
  for (const auto &vi : g.input())
    addValue(vi);
  for (const auto &init : g.initializer())
    if (onnx::DataType t = typeOfElem(init.data_type()))
      types[init.name()] = t;
  return types;
}

/// One line: libonnx's messages may span several.
std::string oneLine(std::string s) {
  std::replace(s.begin(), s.end(), '\n', ' ');
  while (!s.empty() && (s.back() == ' ' || s.back() == '.'))
    s.pop_back();
  return s;
}

/// Formal \p i of \p formals must be bound: a single parameter, or the
/// last one when it is variadic and needs at least one value.
bool isRequired(const std::vector<onnx::OpSchema::FormalParameter> &formals,
                size_t i) {
  const auto &f = formals[i];
  return f.GetOption() == onnx::OpSchema::Single ||
         (f.GetOption() == onnx::OpSchema::Variadic && f.GetMinArity() > 0 &&
          i + 1 == formals.size());
}

/// Required inputs (or outputs, \p what) present and non-empty: the check
/// that holds for every opset, since later versions of an op only add
/// optional ones. \p names are the node's actual inputs (outputs) and
/// \p minCount the schema's least count of them.
llvm::Error
checkRequired(const onnx::NodeProto &node,
              const std::vector<onnx::OpSchema::FormalParameter> &formals,
              const google::protobuf::RepeatedPtrField<std::string> &names,
              llvm::StringRef what, int minCount) {
  for (size_t i = 0; i < formals.size(); ++i) {
    if (!isRequired(formals, i))
      continue;
    const std::string &name = formals[i].GetName();
    if (int(i) >= names.size())
      return ImportContext::nodeError(
          node, llvm::formatv("missing required {0} {1} '{2}' (the ONNX "
                              "schema needs at least {3} {0}s, the node "
                              "has {4})",
                              what, i, name, minCount, names.size())
                    .str());
    if (names.Get(int(i)).empty())
      return ImportContext::nodeError(
          node, llvm::formatv("required {0} {1} '{2}' is empty", what, i, name)
                    .str());
  }
  return llvm::Error::success();
}

/// The formal parameter that actual input \p i binds to, or null.
const onnx::OpSchema::FormalParameter *
formalOf(const std::vector<onnx::OpSchema::FormalParameter> &formals,
         size_t i) {
  if (i < formals.size())
    return &formals[i];
  if (!formals.empty() &&
      formals.back().GetOption() == onnx::OpSchema::Variadic)
    return &formals.back();
  return nullptr;
}

/// Inputs of known element type against the schema's type constraints:
/// each type allowed, and one type per type parameter (T) where the
/// schema binds several inputs to it.
llvm::Error checkInputTypes(const onnx::NodeProto &node,
                            const onnx::OpSchema &schema,
                            const KnownTypes &types) {
  std::map<std::string, std::pair<onnx::DataType, int>> bound;
  for (int i = 0; i < node.input_size(); ++i) {
    auto known = types.find(node.input(i));
    const auto *f = formalOf(schema.inputs(), size_t(i));
    if (known == types.end() || !f)
      continue;
    onnx::DataType t = known->second;
    if (!f->GetTypes().count(t))
      return ImportContext::nodeError(
          node,
          llvm::formatv("input {0} '{1}' has type {2}, which the ONNX "
                        "schema does not allow for '{3}' ({4})",
                        i, node.input(i), *t, f->GetName(), f->GetTypeStr())
              .str());
    bool homogeneous =
        f->GetOption() != onnx::OpSchema::Variadic || f->GetIsHomogeneous();
    if (!homogeneous)
      continue;
    auto [it, fresh] = bound.emplace(f->GetTypeStr(), std::make_pair(t, i));
    if (!fresh && it->second.first != t)
      return ImportContext::nodeError(
          node,
          llvm::formatv("inputs {0} and {1} must have the same type ({2}), "
                        "but are {3} and {4}",
                        it->second.second, i, f->GetTypeStr(),
                        *it->second.first, *t)
              .str());
  }
  return llvm::Error::success();
}

struct Checker {
  int64_t opset;
  bool strict; ///< libonnx knows this opset: check everything.
  KnownTypes types;

  /// The registry takes an int; absurd opsets were refused earlier, but
  /// clamp so that none wraps.
  int schemaVersion() const {
    return int(std::min<int64_t>(opset, std::numeric_limits<int>::max()));
  }

  llvm::Error checkNode(const onnx::NodeProto &node, bool mainGraph) const {
    if (!isDefaultDomain(node.domain()))
      return llvm::Error::success();
    const onnx::OpSchema *schema =
        onnx::OpSchemaRegistry::Schema(node.op_type(), schemaVersion());
    if (!schema)
      return checkIntroduced(node);
    if (llvm::Error err = checkRequired(node, schema->inputs(), node.input(),
                                        "input", schema->min_input()))
      return err;
    if (llvm::Error err = checkRequired(node, schema->outputs(), node.output(),
                                        "output", schema->min_output()))
      return err;
    // A deprecated op's schema is the stub of its removal; importers that
    // still accept the op check it themselves.
    if (!strict || schema->Deprecated())
      return llvm::Error::success();
    try {
      schema->Verify(node);
    } catch (const std::exception &e) {
      return ImportContext::nodeError(
          node, "invalid per the ONNX schema (opset " + llvm::Twine(opset) +
                    "): " + oneLine(e.what()));
    }
    return mainGraph ? checkInputTypes(node, *schema, types)
                     : llvm::Error::success();
  }

  /// An op with no schema at the model's opset but one at a later opset
  /// did not exist yet: its meaning is undefined there (onnxruntime refuses
  /// such a node too). Ops libonnx does not know at all pass on to the
  /// importer's support check.
  llvm::Error checkIntroduced(const onnx::NodeProto &node) const {
    const onnx::OpSchema *newest =
        onnx::OpSchemaRegistry::Schema(node.op_type());
    if (!newest)
      return llvm::Error::success();
    int first = newest->SinceVersion();
    for (int v = schemaVersion() + 1; v < first; ++v)
      if (const auto *s = onnx::OpSchemaRegistry::Schema(node.op_type(), v)) {
        first = s->SinceVersion();
        break;
      }
    return ImportContext::nodeError(
        node, llvm::formatv("{0} does not exist at opset {1}; ONNX "
                            "introduced it at opset {2}",
                            node.op_type(), opset, first)
                  .str());
  }

  llvm::Error checkGraph(const onnx::GraphProto &g, bool mainGraph) const {
    for (const auto &node : g.node()) {
      if (llvm::Error err = checkNode(node, mainGraph))
        return err;
      for (const auto &a : node.attribute()) {
        if (a.has_g())
          if (llvm::Error err = checkGraph(a.g(), false))
            return err;
        for (const auto &sub : a.graphs())
          if (llvm::Error err = checkGraph(sub, false))
            return err;
      }
    }
    return llvm::Error::success();
  }
};

} // namespace

llvm::Error ember::checkNodeSchemas(const onnx::ModelProto &model,
                                    int64_t opset) {
  const auto &ranges =
      onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  auto known = ranges.find(onnx::ONNX_DOMAIN);
  Checker c{opset, known != ranges.end() && opset <= known->second.second,
            collectTypes(model.graph())};
  return c.checkGraph(model.graph(), true);
}
