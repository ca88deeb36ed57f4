//===- GraphMutator.cpp - Structural mutations of ONNX models -------------===//
//
// Byte mutations of a serialized model mostly break the protobuf or a name,
// so the importer's later checks (schemas, type inference, shapes, constant
// operands) and the compiler behind it see few of them. These mutations edit
// the parsed model instead, one field at a time, so that every result is a
// well-formed protobuf that is wrong, if at all, in one place.
//
//===----------------------------------------------------------------------===//
#include "GraphMutator.h"

#include <onnx/onnx_pb.h>

#include <limits>
#include <random>
#include <vector>

namespace ember {
namespace fuzz {
namespace {

/// Ops a node may be swapped to: the importer's common ones, with their
/// arities mixed, so that a swap often keeps a node's wiring plausible.
const char *const kOps[] = {
    "Add",
    "Sub",
    "Mul",
    "Div",
    "Relu",
    "Sigmoid",
    "Tanh",
    "Exp",
    "Log",
    "Sqrt",
    "Abs",
    "Neg",
    "Conv",
    "ConvTranspose",
    "MaxPool",
    "AveragePool",
    "GlobalAveragePool",
    "BatchNormalization",
    "MatMul",
    "Gemm",
    "Softmax",
    "LogSoftmax",
    "Transpose",
    "Reshape",
    "Flatten",
    "Squeeze",
    "Unsqueeze",
    "Concat",
    "Split",
    "Slice",
    "Gather",
    "GatherElements",
    "Pad",
    "Resize",
    "ReduceMean",
    "ReduceSum",
    "ReduceMax",
    "Cast",
    "Clip",
    "Pow",
    "Where",
    "Equal",
    "Less",
    "Not",
    "Expand",
    "Tile",
    "Shape",
    "Identity",
    "LayerNormalization",
    "InstanceNormalization",
    "Erf",
    "Gelu",
    "QuantizeLinear",
    "DequantizeLinear",
    "QLinearConv",
    "MatMulInteger",
    "Einsum",
    "TopK",
    "ArgMax",
    "CumSum",
    "LSTM",
    "GRU",
    "DepthToSpace",
    "SpaceToDepth",
    "Range",
    "ConstantOfShape",
    "ScatterND",
    "NonZero",
    "LRN",
    "PRelu",
    "LeakyRelu",
    "HardSigmoid",
    "Min",
    "Max",
    "Sum",
    "Mean",
};

/// Attribute names the importers read, for added attributes.
const char *const kAttrNames[] = {
    "axis",
    "axes",
    "perm",
    "keepdims",
    "kernel_shape",
    "pads",
    "strides",
    "dilations",
    "group",
    "auto_pad",
    "transA",
    "transB",
    "alpha",
    "beta",
    "epsilon",
    "mode",
    "to",
    "split",
    "starts",
    "ends",
    "ceil_mode",
    "output_padding",
    "output_shape",
    "hidden_size",
    "direction",
    "blocksize",
    "largest",
    "sorted",
    "exclusive",
    "reverse",
    "coordinate_transformation_mode",
    "value",
    "equation",
    "select_last_index",
    "allowzero",
    "batch_dims",
    "count_include_pad",
    "storage_order",
    "size",
    "bias",
    "stash_type",
    "approximate",
};

const char *const kStrings[] = {
    "NOTSET",  "SAME_UPPER", "SAME_LOWER", "VALID",   "linear",
    "nearest", "cubic",      "DCR",        "CRD",     "constant",
    "reflect", "edge",       "forward",    "reverse", "bidirectional",
    "tanh",    "none",       "ij,jk->ik",  ""};

/// Element types worth choosing: the common ones, an unsupported one, an
/// undefined one and one out of the enum's range.
const int kElemTypes[] = {1, 1, 1, 7, 7, 6, 2, 3, 9, 10, 16, 11, 0, 8, 4, 99};

class Mutator {
public:
  Mutator(onnx::ModelProto &m, uint32_t seed) : m_(m), rng_(seed) {}

  void mutateOnce() {
    switch (pick(9)) {
    case 0:
    case 1:
      return attribute();
    case 2:
      return dims();
    case 3:
      return elemType();
    case 4:
      return opType();
    case 5:
    case 6:
      return wiring();
    case 7:
      return initializer();
    default:
      return structure();
    }
  }

private:
  onnx::ModelProto &m_;
  std::mt19937 rng_;

  uint32_t pick(uint32_t n) { return n ? rng_() % n : 0; }
  bool chance(uint32_t n) { return pick(n) == 0; }
  onnx::GraphProto &graph() { return *m_.mutable_graph(); }

  onnx::NodeProto *anyNode() {
    int n = graph().node_size();
    return n ? graph().mutable_node(pick(n)) : nullptr;
  }

  /// An integer near \p v or at an edge: off by one, negated, doubled,
  /// zero, the limits of int32 and int64.
  int64_t interesting(int64_t v) {
    // Wrapping arithmetic: near the limits, +1, -v and 2v wrap around.
    uint64_t u = uint64_t(v);
    switch (pick(12)) {
    case 0:
      return int64_t(u + 1);
    case 1:
      return int64_t(u - 1);
    case 2:
      return int64_t(0 - u);
    case 3:
      return int64_t(u * 2);
    case 4:
      return 0;
    case 5:
      return 1;
    case 6:
      return -1;
    case 7:
      return int64_t(pick(8));
    case 8:
      return std::numeric_limits<int32_t>::max();
    case 9:
      return std::numeric_limits<int64_t>::max();
    case 10:
      return std::numeric_limits<int64_t>::min();
    default:
      return int64_t(1) << pick(40);
    }
  }

  float interestingFloat(float v) {
    const float edges[] = {0.f,
                           -0.f,
                           1.f,
                           -1.f,
                           1e-30f,
                           1e30f,
                           std::numeric_limits<float>::infinity(),
                           std::numeric_limits<float>::quiet_NaN(),
                           0.5f};
    return chance(3) ? v * -2.f : edges[pick(sizeof edges / sizeof *edges)];
  }

  void ints(google::protobuf::RepeatedField<int64_t> &f) {
    if (f.empty() || chance(4)) {
      f.Add(interesting(f.empty() ? 1 : f[f.size() - 1]));
      return;
    }
    if (chance(4)) {
      f.RemoveLast();
      return;
    }
    int64_t &v = f[pick(f.size())];
    v = interesting(v);
  }

  void attributeValue(onnx::AttributeProto &a) {
    switch (a.type()) {
    case onnx::AttributeProto::INT:
      a.set_i(interesting(a.i()));
      break;
    case onnx::AttributeProto::INTS:
      ints(*a.mutable_ints());
      break;
    case onnx::AttributeProto::FLOAT:
      a.set_f(interestingFloat(a.f()));
      break;
    case onnx::AttributeProto::FLOATS:
      if (a.floats_size() && !chance(4))
        a.set_floats(pick(a.floats_size()), interestingFloat(1.f));
      else
        a.add_floats(interestingFloat(1.f));
      break;
    case onnx::AttributeProto::STRING:
      a.set_s(kStrings[pick(sizeof kStrings / sizeof *kStrings)]);
      break;
    case onnx::AttributeProto::TENSOR:
      tensor(*a.mutable_t());
      break;
    case onnx::AttributeProto::GRAPH:
      subgraph(*a.mutable_g());
      break;
    default:
      a.set_type(onnx::AttributeProto::INT);
      break;
    }
  }

  void attribute() {
    onnx::NodeProto *n = anyNode();
    if (!n)
      return;
    if (n->attribute_size() == 0 || chance(5)) {
      onnx::AttributeProto *a = n->add_attribute();
      a->set_name(kAttrNames[pick(sizeof kAttrNames / sizeof *kAttrNames)]);
      const onnx::AttributeProto::AttributeType types[] = {
          onnx::AttributeProto::INT, onnx::AttributeProto::INTS,
          onnx::AttributeProto::FLOAT, onnx::AttributeProto::STRING};
      a->set_type(types[pick(4)]);
      attributeValue(*a);
      return;
    }
    int i = pick(n->attribute_size());
    onnx::AttributeProto &a = *n->mutable_attribute(i);
    switch (pick(8)) {
    case 0: // drop it
      n->mutable_attribute()->DeleteSubrange(i, 1);
      return;
    case 1: // the same value read as another type
      a.set_type(onnx::AttributeProto::AttributeType(1 + pick(10)));
      return;
    default:
      attributeValue(a);
      return;
    }
  }

  void dim(onnx::TensorShapeProto &s) {
    if (s.dim_size() == 0 || chance(6)) {
      s.add_dim()->set_dim_value(interesting(1));
      return;
    }
    if (chance(6)) {
      s.mutable_dim()->RemoveLast();
      return;
    }
    onnx::TensorShapeProto::Dimension &d = *s.mutable_dim(pick(s.dim_size()));
    if (chance(5))
      d.set_dim_param(chance(2) ? "N" : "unknown_dim");
    else
      d.set_dim_value(interesting(d.dim_value()));
  }

  onnx::ValueInfoProto *anyValueInfo() {
    auto &g = graph();
    int total = g.input_size() + g.output_size() + g.value_info_size();
    if (!total)
      return nullptr;
    int i = pick(total);
    if (i < g.input_size())
      return g.mutable_input(i);
    i -= g.input_size();
    if (i < g.output_size())
      return g.mutable_output(i);
    return g.mutable_value_info(i - g.output_size());
  }

  void dims() {
    onnx::ValueInfoProto *v = anyValueInfo();
    if (!v)
      return;
    onnx::TypeProto::Tensor &t = *v->mutable_type()->mutable_tensor_type();
    if (chance(10))
      t.clear_shape();
    else
      dim(*t.mutable_shape());
  }

  int anyElemType() {
    return kElemTypes[pick(sizeof kElemTypes / sizeof *kElemTypes)];
  }

  void elemType() {
    auto &g = graph();
    if (g.initializer_size() && chance(2)) {
      g.mutable_initializer(pick(g.initializer_size()))
          ->set_data_type(anyElemType());
      return;
    }
    if (onnx::ValueInfoProto *v = anyValueInfo())
      v->mutable_type()->mutable_tensor_type()->set_elem_type(anyElemType());
  }

  void opType() {
    onnx::NodeProto *n = anyNode();
    if (!n)
      return;
    if (chance(20))
      n->set_domain(chance(2) ? "com.microsoft" : "ai.onnx");
    else
      n->set_op_type(kOps[pick(sizeof kOps / sizeof *kOps)]);
  }

  /// A value name of the graph: an input, an initializer or a node output,
  /// sometimes one that does not exist or the empty (omitted) one.
  std::string anyValueName() {
    auto &g = graph();
    std::vector<const std::string *> names;
    for (const auto &v : g.input())
      names.push_back(&v.name());
    for (const auto &t : g.initializer())
      names.push_back(&t.name());
    for (const auto &n : g.node())
      for (const auto &o : n.output())
        names.push_back(&o);
    if (names.empty() || chance(12))
      return chance(2) ? "" : "no_such_value";
    return *names[pick(names.size())];
  }

  void wiring() {
    onnx::NodeProto *n = anyNode();
    if (!n)
      return;
    switch (pick(6)) {
    case 0:
      n->add_input(anyValueName());
      return;
    case 1:
      if (n->input_size())
        n->mutable_input()->RemoveLast();
      return;
    case 2: // an output that another value already has
      if (n->output_size())
        n->set_output(pick(n->output_size()), anyValueName());
      return;
    default:
      if (n->input_size())
        n->set_input(pick(n->input_size()), anyValueName());
      return;
    }
  }

  void payload(onnx::TensorProto &t) {
    if (t.has_raw_data()) {
      std::string &raw = *t.mutable_raw_data();
      if (chance(2) && !raw.empty())
        raw.resize(pick(raw.size()));
      else
        raw.append(size_t(1) << pick(6), char(pick(256)));
      return;
    }
    if (t.float_data_size())
      chance(2) ? t.mutable_float_data()->RemoveLast()
                : t.add_float_data(interestingFloat(1.f));
    else if (t.int64_data_size())
      chance(2) ? t.mutable_int64_data()->RemoveLast()
                : t.add_int64_data(interesting(1));
    else if (t.int32_data_size())
      chance(2) ? t.mutable_int32_data()->RemoveLast()
                : t.add_int32_data(int32_t(interesting(1)));
    else
      t.add_int64_data(interesting(0));
  }

  /// An initializer's or tensor attribute's shape, type or payload; the
  /// value of a payload element (indices, shapes, axes read as constants).
  void tensor(onnx::TensorProto &t) {
    switch (pick(5)) {
    case 0:
      ints(*t.mutable_dims());
      return;
    case 1:
      t.set_data_type(anyElemType());
      return;
    case 2:
      payload(t);
      return;
    default:
      if (t.int64_data_size())
        t.set_int64_data(pick(t.int64_data_size()), interesting(1));
      else if (t.raw_data().size() >= 8 && t.data_type() == 7) {
        int64_t v = interesting(1);
        size_t at = pick(t.raw_data().size() / 8) * 8;
        t.mutable_raw_data()->replace(at, 8, reinterpret_cast<char *>(&v), 8);
      } else
        payload(t);
      return;
    }
  }

  void initializer() {
    auto &g = graph();
    if (!g.initializer_size())
      return attribute();
    tensor(*g.mutable_initializer(pick(g.initializer_size())));
  }

  void subgraph(onnx::GraphProto &g) {
    if (g.node_size() && chance(2))
      g.mutable_node(pick(g.node_size()))
          ->set_op_type(kOps[pick(sizeof kOps / sizeof *kOps)]);
    else if (g.output_size())
      g.mutable_output()->RemoveLast();
  }

  /// Whole nodes and outputs: delete a node, duplicate one, swap two (out
  /// of topological order), drop or add a graph output, change the opset.
  void structure() {
    auto &g = graph();
    int n = g.node_size();
    switch (pick(6)) {
    case 0:
      if (n > 1)
        g.mutable_node()->DeleteSubrange(pick(n), 1);
      return;
    case 1:
      if (n)
        *g.add_node() = g.node(pick(n));
      return;
    case 2:
      if (n > 1)
        g.mutable_node()->SwapElements(pick(n), pick(n));
      return;
    case 3:
      if (g.output_size() > 1)
        g.mutable_output()->RemoveLast();
      else
        g.add_output()->set_name(anyValueName());
      return;
    case 4:
      if (m_.opset_import_size())
        m_.mutable_opset_import(0)->set_version(1 + pick(23));
      return;
    default:
      if (g.input_size())
        g.mutable_input()->SwapElements(0, pick(g.input_size()));
      return;
    }
  }
};

} // namespace

std::string mutateModel(const std::string &bytes, uint32_t seed) {
  onnx::ModelProto m;
  if (!m.ParseFromString(bytes) || !m.has_graph())
    return std::string();
  Mutator mut(m, seed);
  int count = 1 + seed % 3;
  for (int i = 0; i < count; ++i)
    mut.mutateOnce();
  std::string out;
  if (!m.SerializeToString(&out))
    return std::string();
  return out;
}

} // namespace fuzz
} // namespace ember
