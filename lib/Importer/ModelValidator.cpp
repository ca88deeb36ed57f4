//===- ModelValidator.cpp - Structural checks of an ONNX model ------------===//
#include "ModelValidator.h"
#include "OpsetHistory.h"

#include "ImportContext.h"
#include "ProtoTensor.h"

#include "ember/Base/Error.h"

#include <map>
#include <set>

using namespace ember;

namespace {

std::string canonicalDomain(const std::string &d) {
  return d == "ai.onnx" ? "" : d;
}

llvm::Error checkOpsets(const onnx::ModelProto &model) {
  std::set<std::string> imported;
  for (const auto &o : model.opset_import()) {
    if (o.version() < 1)
      return makeErrorF("opset version {0} of domain '{1}' is not positive",
                        o.version(), o.domain());
    if (!imported.insert(canonicalDomain(o.domain())).second)
      return makeErrorF("opset domain '{0}' is imported twice", o.domain());
    // A later opset may change any op: no version of it is assumed.
    if (canonicalDomain(o.domain()).empty() &&
        o.version() > onnximport::kNewestKnownOpset)
      return makeErrorF("opset {0} of the default ONNX domain is newer than "
                        "the newest Ember knows ({1})",
                        o.version(), onnximport::kNewestKnownOpset);
  }
  // Any domain may be imported: the nodes of domains other than the
  // default one are listed, with every other op Ember lacks, by the
  // importer's support check (one error for all of them).
  return llvm::Error::success();
}

/// Checks one declared shape: never an element count over the limit.
/// \p strict (graph inputs, which Ember allocates as declared) also refuses
/// negative and zero dims and ranks over kMaxRank; outputs and value_info
/// are only hints (the importer computes their real types), so there
/// non-positive dims are skipped.
llvm::Error checkDeclaredShape(const onnx::ValueInfoProto &vi,
                               llvm::StringRef role, bool strict) {
  std::string what = (role + " '" + vi.name() + "'").str();
  if (!vi.type().has_tensor_type())
    return llvm::Error::success(); // The importer reports non-tensors.
  const auto &tt = vi.type().tensor_type();
  if (!tt.has_shape())
    return llvm::Error::success();
  if (strict && unsigned(tt.shape().dim_size()) > kMaxRank)
    return makeErrorF("{0}: rank {1} exceeds the maximum {2}", what,
                      tt.shape().dim_size(), kMaxRank);
  int64_t count = 1;
  for (const auto &d : tt.shape().dim()) {
    if (!d.has_dim_value())
      continue; // Symbolic: checked once the user gives its value.
    int64_t v = d.dim_value();
    if (v <= 0 && !strict)
      continue; // A hint Ember does not use; some exporters write -1.
    if (v < 0)
      return makeErrorF("{0}: negative dimension {1}", what, v);
    if (v == 0)
      return llvm::Error::success(); // Empty: its value is its type.
    if (count > kMaxTensorElements / v)
      return makeErrorF("{0}: declared shape has more than {1} elements", what,
                        kMaxTensorElements);
    count *= v;
  }
  return llvm::Error::success();
}

llvm::Error checkDeclaredShapes(const onnx::GraphProto &g) {
  for (const auto &vi : g.input()) {
    EMBER_RETURN_IF_ERR(checkDeclaredShape(vi, "graph input", true));
    if (!vi.type().has_tensor_type())
      continue;
    int32_t et = vi.type().tensor_type().elem_type();
    if (auto k = elemKindFromONNX(et, "graph input '" + vi.name() + "'"); !k)
      return k.takeError();
  }
  for (const auto &vi : g.output())
    EMBER_RETURN_IF_ERR(checkDeclaredShape(vi, "graph output", false));
  for (const auto &vi : g.value_info())
    EMBER_RETURN_IF_ERR(checkDeclaredShape(vi, "value_info", false));
  return llvm::Error::success();
}

/// The depth of subgraphs below \p g (0 when it has none).
llvm::Error checkNesting(const onnx::GraphProto &g, unsigned depth) {
  for (const auto &node : g.node())
    for (const auto &a : node.attribute()) {
      std::vector<const onnx::GraphProto *> subs;
      if (a.has_g())
        subs.push_back(&a.g());
      for (const auto &sg : a.graphs())
        subs.push_back(&sg);
      if (!subs.empty() && depth + 1 > kMaxSubgraphDepth)
        return ImportContext::nodeError(
            node, "subgraphs are nested deeper than " +
                      llvm::Twine(kMaxSubgraphDepth) + " levels");
      for (const auto *sg : subs)
        EMBER_RETURN_IF_ERR(checkNesting(*sg, depth + 1));
    }
  return llvm::Error::success();
}

/// Index of the node producing each value, or -1 for graph inputs and
/// initializers. Fails on a value produced twice.
llvm::Expected<std::map<std::string, int>>
collectProducers(const onnx::GraphProto &g) {
  std::map<std::string, int> producer;
  for (const auto &init : g.initializer())
    if (!producer.emplace(init.name(), -1).second)
      return makeErrorF("initializer '{0}' is defined twice", init.name());
  std::set<std::string> inputs;
  for (const auto &in : g.input()) {
    if (!inputs.insert(in.name()).second)
      return makeErrorF("graph input '{0}' is declared twice", in.name());
    producer.emplace(in.name(), -1);
  }
  for (int i = 0; i < g.node_size(); ++i)
    for (const std::string &out : g.node(i).output()) {
      if (out.empty())
        continue;
      auto [it, fresh] = producer.emplace(out, i);
      if (fresh)
        continue;
      std::string first = it->second < 0
                              ? std::string("a graph input or initializer")
                              : ImportContext::describe(g.node(it->second));
      return ImportContext::nodeError(g.node(i), "output '" + out +
                                                     "' is already produced "
                                                     "by " +
                                                     first);
    }
  return producer;
}

/// True if the node at \p start can reach itself through its inputs.
bool onCycle(const onnx::GraphProto &g,
             const std::map<std::string, int> &producer, int start) {
  std::vector<int> stack = {start};
  std::vector<bool> seen(g.node_size(), false);
  while (!stack.empty()) {
    int n = stack.back();
    stack.pop_back();
    for (const std::string &in : g.node(n).input()) {
      auto it = producer.find(in);
      if (in.empty() || it == producer.end() || it->second < 0)
        continue;
      if (it->second == start)
        return true;
      if (!seen[it->second]) {
        seen[it->second] = true;
        stack.push_back(it->second);
      }
    }
  }
  return false;
}

/// Every input is produced, and produced by an earlier node.
llvm::Error checkDataflow(const onnx::GraphProto &g) {
  if (g.node_size() > kMaxGraphNodes)
    return makeErrorF("the graph has {0} nodes, more than the maximum {1}",
                      g.node_size(), kMaxGraphNodes);
  EMBER_ASSIGN_OR_RETURN(auto producer, collectProducers(g));
  for (int i = 0; i < g.node_size(); ++i) {
    const onnx::NodeProto &node = g.node(i);
    for (const std::string &in : node.input()) {
      if (in.empty())
        continue;
      auto it = producer.find(in);
      if (it == producer.end())
        return ImportContext::nodeError(
            node, "input '" + in +
                      "' is not produced by any node, initializer or graph "
                      "input");
      if (it->second < i)
        continue;
      if (onCycle(g, producer, i))
        return ImportContext::nodeError(
            node, "is on a node cycle (through input '" + in + "')");
      return ImportContext::nodeError(
          node, "input '" + in +
                    "' is produced by a later node (nodes must be in "
                    "topological order)");
    }
  }
  for (const auto &out : g.output())
    if (!producer.count(out.name()))
      return makeErrorF("graph output '{0}' is not produced by any node, "
                        "initializer or graph input",
                        out.name());
  return llvm::Error::success();
}

} // namespace

llvm::Error ember::validateModel(const onnx::ModelProto &model) {
  const onnx::GraphProto &g = model.graph();
  if (g.node_size() == 0 && g.output_size() == 0)
    return makeError("the graph is empty (no nodes and no outputs)");
  if (g.output_size() == 0)
    return makeError("the graph has no outputs");
  EMBER_RETURN_IF_ERR(checkOpsets(model));
  EMBER_RETURN_IF_ERR(checkNesting(g, 0));
  EMBER_RETURN_IF_ERR(checkDataflow(g));
  return checkDeclaredShapes(g);
}

llvm::Error ember::checkFunctionLimits(const Function &F) {
  for (const auto &n : F.getNodes())
    for (unsigned r = 0; r < n->getNumResults(); ++r) {
      int64_t count = 1;
      for (dim_t d : n->getType(r)->dims()) {
        if (d == 0) // empty results get their own message
          break;
        if (d > 0 && count <= kMaxTensorElements / d) {
          count *= d;
          continue;
        }
        return makeErrorF("node '{0}' ({1}) would compute {2}, more than the "
                          "maximum of {3} elements per tensor",
                          n->getName(), n->getKindName(),
                          dimsToString(n->getType(r)->dims()),
                          kMaxTensorElements);
      }
    }
  return llvm::Error::success();
}
