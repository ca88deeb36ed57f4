//===- ONNXBuilder.h - Small ONNX models built in tests --------*- C++ -*-===//
#ifndef EMBER_TESTS_ONNXBUILDER_H
#define EMBER_TESTS_ONNXBUILDER_H

#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

namespace ember {
namespace test {

/// Builds a ModelProto node by node; serialize() gives the bytes.
class ONNXBuilder {
public:
  explicit ONNXBuilder(int64_t opset = 13) {
    model_.set_ir_version(7);
    auto *o = model_.add_opset_import();
    o->set_domain("");
    o->set_version(opset);
    model_.mutable_graph()->set_name("test");
  }
  onnx::GraphProto &graph() { return *model_.mutable_graph(); }

  void input(const std::string &name, std::vector<int64_t> dims,
             int elemType = onnx::TensorProto::FLOAT) {
    valueInfo(graph().add_input(), name, dims, elemType);
  }
  /// Makes dim \p dim of graph input \p index the symbol \p param.
  void symbolicInputDim(int index, int dim, const std::string &param) {
    graph()
        .mutable_input(index)
        ->mutable_type()
        ->mutable_tensor_type()
        ->mutable_shape()
        ->mutable_dim(dim)
        ->set_dim_param(param);
  }
  void output(const std::string &name, std::vector<int64_t> dims = {},
              int elemType = onnx::TensorProto::FLOAT) {
    auto *vi = graph().add_output();
    vi->set_name(name);
    vi->mutable_type()->mutable_tensor_type()->set_elem_type(elemType);
    for (int64_t d : dims)
      vi->mutable_type()
          ->mutable_tensor_type()
          ->mutable_shape()
          ->add_dim()
          ->set_dim_value(d);
  }
  void initializer(const std::string &name, std::vector<int64_t> dims,
                   const std::vector<float> &values) {
    auto *t = graph().add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t d : dims)
      t->add_dims(d);
    for (float v : values)
      t->add_float_data(v);
  }
  void initializerInts(const std::string &name, std::vector<int64_t> values) {
    auto *t = graph().add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::INT64);
    t->add_dims(values.size());
    for (int64_t v : values)
      t->add_int64_data(v);
  }
  onnx::NodeProto &node(const std::string &op, std::vector<std::string> inputs,
                        std::vector<std::string> outputs,
                        const std::string &name = "") {
    auto *n = graph().add_node();
    n->set_op_type(op);
    n->set_name(name.empty() ? op + std::to_string(graph().node_size()) : name);
    for (auto &i : inputs)
      n->add_input(i);
    for (auto &o : outputs)
      n->add_output(o);
    return *n;
  }
  static void attrInt(onnx::NodeProto &n, const std::string &name, int64_t v) {
    auto *a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  }
  static void attrFloat(onnx::NodeProto &n, const std::string &name, float v) {
    auto *a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::FLOAT);
    a->set_f(v);
  }
  static void attrInts(onnx::NodeProto &n, const std::string &name,
                       std::vector<int64_t> v) {
    auto *a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t x : v)
      a->add_ints(x);
  }
  /// Adds an opset_import of \p domain (the default one is in from the
  /// constructor).
  void opsetImport(const std::string &domain, int64_t version) {
    auto *o = model_.add_opset_import();
    o->set_domain(domain);
    o->set_version(version);
  }
  std::string serialize() const { return model_.SerializeAsString(); }

private:
  static void valueInfo(onnx::ValueInfoProto *vi, const std::string &name,
                        const std::vector<int64_t> &dims, int elemType) {
    vi->set_name(name);
    auto *tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(elemType);
    auto *shape = tt->mutable_shape();
    for (int64_t d : dims)
      shape->add_dim()->set_dim_value(d);
  }
  onnx::ModelProto model_;
};

/// y = Relu(x), x of type float<batch x 4> with the symbol "batch".
inline std::string reluWithBatchSymbol() {
  ONNXBuilder b;
  b.input("x", {1, 4});
  b.symbolicInputDim(0, 0, "batch");
  b.node("Relu", {"x"}, {"y"});
  b.output("y");
  return b.serialize();
}

} // namespace test
} // namespace ember

#endif
