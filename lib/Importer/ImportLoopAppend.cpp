//===- ImportLoopAppend.cpp - Carried values that only grow ---------------===//
//
// Scripted exports write a Python list append in a loop as a carried value
// that starts empty and grows by a Concat each iteration (torchvision's
// Mask R-CNN pastes each detection's mask: `res = torch.cat((res, m))`).
// A loop kept as a loop holds one type per carried value, but such a value
// is a scan output in disguise: the rows appended in iteration i are row i
// of a scan, and the value after the loop is that scan with its first two
// axes merged. The Loop is rewritten that way before it is imported
// (docs/ControlFlow.md "Carried values that only grow").
//
//===----------------------------------------------------------------------===//
#include "ImportControlFlow.h"

#include "ImportHelpers.h"

using namespace ember;
using namespace ember::onnximport;

#define TRY EMBER_ASSIGN_OR_RETURN

namespace {

/// How often \p name is read in \p g, its subgraphs included.
int readsOf(const onnx::GraphProto &g, const std::string &name) {
  int reads = 0;
  for (const onnx::NodeProto &n : g.node()) {
    for (const std::string &in : n.input())
      reads += in == name;
    for (const onnx::AttributeProto &a : n.attribute()) {
      if (a.has_g())
        reads += readsOf(a.g(), name);
      for (const onnx::GraphProto &sub : a.graphs())
        reads += readsOf(sub, name);
    }
  }
  for (const onnx::ValueInfoProto &o : g.output())
    reads += o.name() == name;
  return reads;
}

/// The Concat node of \p body that gives output \p out as the carried
/// value \p param followed by another value along axis 0, or -1.
int appendingConcat(const onnx::GraphProto &body, const std::string &param,
                    const std::string &out, int64_t rank) {
  for (int i = 0; i < body.node_size(); ++i) {
    const onnx::NodeProto &n = body.node(i);
    if (n.op_type() != "Concat" || n.output_size() != 1 || n.output(0) != out)
      continue;
    auto axis = AttrReader(n).getInt("axis", 0);
    if (!axis) {
      llvm::consumeError(axis.takeError());
      return -1;
    }
    bool first = *axis == 0 || *axis == -rank;
    return first && n.input_size() == 2 && n.input(0) == param &&
                   n.input(1) != param
               ? i
               : -1;
  }
  return -1;
}

} // namespace

llvm::Expected<std::optional<LoopAppends>>
ember::findLoopAppends(ImportContext &ctx, const onnx::NodeProto &node,
                       const onnx::GraphProto &body) {
  int n = std::max(0, node.input_size() - 2);
  if (body.input_size() != 2 + n || body.output_size() < 1 + n)
    return std::nullopt; // the import reports it
  LoopAppends r;
  std::vector<int> carried, concats;
  for (int j = 0; j < n; ++j) {
    if (!ImportContext::hasInput(node, 2 + j) || j >= node.output_size())
      continue;
    TRY(NodeValue init, ctx.input(node, 2 + j));
    if (init.dims().empty() || init.dims()[0] != 0)
      continue;
    const std::string &param = body.input(2 + j).name();
    const std::string &out = body.output(1 + j).name();
    int at = appendingConcat(body, param, out, int64_t(init.dims().size()));
    // The concatenation must be the only reader of the carried value and
    // the only use of the result, so that no iteration sees the rows.
    if (at < 0 || readsOf(body, param) != 1 || readsOf(body, out) != 1)
      continue;
    carried.push_back(j);
    concats.push_back(at);
  }
  if (carried.empty())
    return std::nullopt;
  // The rewritten node: the growing values leave the carried list and
  // their appended rows become scan outputs after the existing ones.
  r.node = node;
  r.body = body;
  r.node.clear_input();
  r.node.clear_output();
  r.body.clear_input();
  r.body.clear_output();
  r.body.clear_node();
  auto isCarried = [&](int j) {
    return std::find(carried.begin(), carried.end(), j) != carried.end();
  };
  for (int i = 0; i < node.input_size(); ++i)
    if (i < 2 || !isCarried(i - 2))
      r.node.add_input(node.input(i));
  for (int i = 0; i < body.input_size(); ++i)
    if (i < 2 || !isCarried(i - 2))
      *r.body.add_input() = body.input(i);
  for (int i = 0; i < body.output_size(); ++i)
    if (i < 1 || i > n || !isCarried(i - 1))
      *r.body.add_output() = body.output(i);
  for (int i = 0; i < node.output_size(); ++i)
    if (i >= n || !isCarried(i))
      r.node.add_output(node.output(i));
  for (int i = 0; i < body.node_size(); ++i)
    if (std::find(concats.begin(), concats.end(), i) == concats.end())
      *r.body.add_node() = body.node(i);
  for (size_t c = 0; c < carried.size(); ++c) {
    const onnx::NodeProto &cat = body.node(concats[c]);
    r.body.add_output()->set_name(cat.input(1));
    std::string rows = node.output(carried[c]) + ".appended";
    r.node.add_output(rows);
    r.moved.push_back({node.output(carried[c]), rows});
  }
  return std::optional<LoopAppends>(std::move(r));
}

llvm::Error ember::bindLoopAppends(ImportContext &ctx,
                                   const onnx::NodeProto &node,
                                   const LoopAppends &a) {
  for (const LoopAppends::Moved &m : a.moved) {
    if (m.output.empty())
      continue;
    TRY(NodeValue rows, ctx.get(m.rows));
    // [iterations, k, ...] -> [iterations * k, ...]
    llvm::ArrayRef<dim_t> d = rows.dims();
    if (d.size() < 2)
      return fail(node,
                  "the rows appended to '" + m.output + "' must keep its rank");
    Ints shape = {int64_t(d[0] * d[1])};
    shape.insert(shape.end(), d.begin() + 2, d.end());
    TRY(NodeValue y, reshapeTo(ctx, node, rows, shape));
    ctx.bind(m.output, y);
    const ImportContext::Extent *e = ctx.extentOf(m.rows);
    if (!e)
      continue;
    NodeValue count = e->count;
    if (d[1] != 1) {
      NodeValue k = constantOf(ctx, node, ElemKind::Int64, {1}, double(d[1]));
      TRY(count, binary(ctx, node, OpKind::Mul, count, k));
    }
    ctx.setExtent(m.output, {0, count});
  }
  return llvm::Error::success();
}
