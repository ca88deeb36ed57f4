//===- ImportContext.cpp - State shared by the op importers ---------------===//
#include "ImportContext.h"

using namespace ember;

std::string ImportContext::describe(const onnx::NodeProto &node) {
  return "node '" + node.name() + "' (" + node.op_type() + ")";
}

llvm::Error ImportContext::nodeError(const onnx::NodeProto &node,
                                     const llvm::Twine &msg) {
  return makeError(describe(node) + ": " + msg);
}

llvm::Expected<NodeValue> ImportContext::get(const std::string &name) {
  auto it = values_.find(name);
  if (it == values_.end() && sequences_.count(name))
    return makeErrorF("value '{0}' is a sequence: Ember compiles sequences "
                      "built and consumed inside the graph, not sequence "
                      "graph outputs",
                      name);
  if (it == values_.end())
    return makeErrorF("value '{0}' is not produced by any node, initializer "
                      "or graph input",
                      name);
  return it->second;
}

llvm::Expected<NodeValue> ImportContext::input(const onnx::NodeProto &node,
                                               int i) {
  if (!hasInput(node, i))
    return nodeError(node, "missing input " + llvm::Twine(i));
  auto it = values_.find(node.input(i));
  for (auto &[name, producer] : usedExtraOutputs_)
    if (it == values_.end() && name == node.input(i))
      return nodeError(node, "uses '" + name + "', a secondary output of " +
                                 producer + " that Ember does not compute");
  if (it == values_.end() && sequences_.count(node.input(i)))
    return nodeError(node, "input '" + node.input(i) +
                               "' is a sequence; only the Sequence ops and "
                               "ConcatFromSequence take one");
  if (it == values_.end())
    return nodeError(node, "input '" + node.input(i) +
                               "' is not produced by any node, initializer "
                               "or graph input");
  return it->second;
}

llvm::Expected<std::vector<NodeValue>>
ImportContext::sequenceInput(const onnx::NodeProto &node, int i) const {
  if (!hasInput(node, i))
    return nodeError(node, "missing input " + llvm::Twine(i));
  auto it = sequences_.find(node.input(i));
  if (it == sequences_.end())
    return nodeError(node, "input '" + node.input(i) +
                               "' is not a sequence built in the graph "
                               "(sequence graph inputs are not supported)");
  return it->second;
}

llvm::Expected<const Tensor *>
ImportContext::constantInput(const onnx::NodeProto &node, int i) {
  EMBER_ASSIGN_OR_RETURN(NodeValue v, input(node, i));
  auto *c = llvm::dyn_cast<Constant>(v.getNode());
  auto *p = llvm::dyn_cast<Placeholder>(v.getNode());
  if (!c && p && !p->isOutput()) {
    for (const RuntimeInput &r : runtimeInputs_)
      if (r.index == i && r.implied)
        return &r.implied->getPayload();
    EMBER_ASSIGN_OR_RETURN(c, impliedInput(*this, node, i, p));
    runtimeInputs_.push_back({i, p, c, std::nullopt});
  }
  if (!c)
    return nodeError(node, "input '" + node.input(i) +
                               "' must be a constant (an initializer or a "
                               "Constant node)");
  return &c->getPayload();
}

llvm::Expected<std::vector<int64_t>>
ImportContext::constantInts(const onnx::NodeProto &node, int i) {
  EMBER_ASSIGN_OR_RETURN(const Tensor *t, constantInput(node, i));
  std::vector<int64_t> r;
  if (t->getElemKind() == ElemKind::Int64)
    for (int64_t v : t->getHandle<int64_t>())
      r.push_back(v);
  else if (t->getElemKind() == ElemKind::Int32)
    for (int32_t v : t->getHandle<int32_t>())
      r.push_back(v);
  else
    return nodeError(node, "input '" + node.input(i) + "' must be int64");
  return r;
}

llvm::Error ImportContext::setOutput(const onnx::NodeProto &node, NodeValue v) {
  if (node.output_size() < 1 || node.output(0).empty())
    return nodeError(node, "has no output");
  for (int i = 1; i < node.output_size(); ++i)
    if (!node.output(i).empty())
      usedExtraOutputs_.push_back({node.output(i), describe(node)});
  bind(node.output(0), v);
  return llvm::Error::success();
}

llvm::Expected<NodeValue>
ImportContext::broadcastTo(const onnx::NodeProto &node, NodeValue v,
                           llvm::ArrayRef<dim_t> dims) {
  llvm::ArrayRef<dim_t> vd = v.dims();
  if (vd == dims)
    return v;
  if (vd.size() > dims.size())
    return nodeError(node, "cannot broadcast " + v.getType()->toString() +
                               " to " + dimsToString(dims));
  size_t lead = dims.size() - vd.size();
  for (size_t i = 0; i < vd.size(); ++i)
    if (vd[i] != 1 && vd[i] != dims[lead + i])
      return nodeError(node, "cannot broadcast " + v.getType()->toString() +
                                 " to " + dimsToString(dims));
  std::string name = node.name().empty() ? node.op_type() : node.name();
  if (lead) {
    llvm::SmallVector<int64_t, kMaxRank> padded(lead, 1);
    padded.append(vd.begin(), vd.end());
    auto r = F_.tryCreateReshape(name + ".expand", v, padded);
    if (!r)
      return nodeError(node, errorToString(r.takeError()));
    v = NodeValue(*r);
  }
  auto b = F_.tryCreateBroadcast(name + ".broadcast", v, dims);
  if (!b)
    return nodeError(node, errorToString(b.takeError()));
  return NodeValue(*b);
}

llvm::Expected<std::pair<NodeValue, NodeValue>>
ImportContext::broadcastPair(const onnx::NodeProto &node, NodeValue a,
                             NodeValue b) {
  llvm::ArrayRef<dim_t> ad = a.dims(), bd = b.dims();
  size_t r = std::max(ad.size(), bd.size());
  llvm::SmallVector<dim_t, kMaxRank> out(r);
  for (size_t i = 0; i < r; ++i) {
    dim_t x = i + ad.size() >= r ? ad[i + ad.size() - r] : 1;
    dim_t y = i + bd.size() >= r ? bd[i + bd.size() - r] : 1;
    if (x != y && x != 1 && y != 1)
      return nodeError(node, "operands " + a.getType()->toString() + " and " +
                                 b.getType()->toString() +
                                 " are not broadcastable");
    out[i] = std::max(x, y);
  }
  EMBER_ASSIGN_OR_RETURN(NodeValue ba, broadcastTo(node, a, out));
  EMBER_ASSIGN_OR_RETURN(NodeValue bb, broadcastTo(node, b, out));
  return std::make_pair(ba, bb);
}

//===----------------------------------------------------------------------===//
// AttrReader
//===----------------------------------------------------------------------===//

AttrReader::AttrReader(const onnx::NodeProto &node) : node_(node) {}

const onnx::AttributeProto *AttrReader::find(llvm::StringRef name) const {
  for (const auto &a : node_.attribute())
    if (a.name() == name)
      return &a;
  return nullptr;
}

llvm::Error AttrReader::missing(llvm::StringRef name) const {
  return ImportContext::nodeError(node_, "missing attribute '" + name + "'");
}

llvm::Error AttrReader::wrongType(llvm::StringRef name,
                                  const char *want) const {
  return ImportContext::nodeError(node_,
                                  "attribute '" + name + "' must be " + want);
}

llvm::Expected<int64_t> AttrReader::getInt(llvm::StringRef name,
                                           std::optional<int64_t> dflt) const {
  const auto *a = find(name);
  if (!a)
    return dflt ? llvm::Expected<int64_t>(*dflt) : missing(name);
  if (a->type() != onnx::AttributeProto::INT)
    return wrongType(name, "an int");
  return a->i();
}

llvm::Expected<float> AttrReader::getFloat(llvm::StringRef name,
                                           std::optional<float> dflt) const {
  const auto *a = find(name);
  if (!a)
    return dflt ? llvm::Expected<float>(*dflt) : missing(name);
  if (a->type() != onnx::AttributeProto::FLOAT)
    return wrongType(name, "a float");
  return a->f();
}

llvm::Expected<std::vector<int64_t>>
AttrReader::getInts(llvm::StringRef name,
                    std::optional<std::vector<int64_t>> dflt) const {
  const auto *a = find(name);
  if (!a)
    return dflt ? llvm::Expected<std::vector<int64_t>>(*dflt) : missing(name);
  if (a->type() != onnx::AttributeProto::INTS)
    return wrongType(name, "a list of ints");
  return std::vector<int64_t>(a->ints().begin(), a->ints().end());
}

llvm::Expected<std::string>
AttrReader::getString(llvm::StringRef name,
                      std::optional<std::string> dflt) const {
  const auto *a = find(name);
  if (!a)
    return dflt ? llvm::Expected<std::string>(*dflt) : missing(name);
  if (a->type() != onnx::AttributeProto::STRING)
    return wrongType(name, "a string");
  return a->s();
}
