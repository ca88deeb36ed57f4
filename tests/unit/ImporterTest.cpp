//===- ImporterTest.cpp - ONNX import on models built in the test ---------===//
#include "ember/Graph/Printer.h"
#include "ember/Importer/ONNXImporter.h"
#include "ember/Importer/TensorIO.h"

#include "ONNXBuilder.h"
#include "TestUtils.h"

// White-box: the import table itself (a private header of the importer).
#include "../../lib/Importer/ImportContext.h"
#include "../../lib/Importer/ProtoTensor.h"

#include <algorithm>

using namespace ember;
using namespace ember::test;

namespace {
std::string importError(const std::string &bytes,
                        const ImportOptions &opts = {}) {
  Module M;
  auto F = importONNXBuffer(bytes, "model.onnx", M, opts);
  if (F)
    return "";
  return llvm::toString(F.takeError());
}
} // namespace

// Each ONNX data type the importer reads maps to its kind and back; a
// quantized kind is written as its storage type; others are refused by
// name.
TEST(Importer, ONNXDataTypesMapBothWays) {
  using P = onnx::TensorProto;
  const std::pair<int32_t, ElemKind> plain[] = {
      {P::FLOAT, ElemKind::Float32},     {P::FLOAT16, ElemKind::Float16},
      {P::BFLOAT16, ElemKind::BFloat16}, {P::DOUBLE, ElemKind::Float64},
      {P::INT8, ElemKind::Int8},         {P::UINT8, ElemKind::UInt8},
      {P::INT16, ElemKind::Int16},       {P::UINT16, ElemKind::UInt16},
      {P::INT32, ElemKind::Int32},       {P::UINT32, ElemKind::UInt32},
      {P::INT64, ElemKind::Int64},       {P::UINT64, ElemKind::UInt64},
      {P::BOOL, ElemKind::Bool}};
  for (auto [code, kind] : plain) {
    SCOPED_TRACE(elemKindName(kind).str());
    llvm::Expected<ElemKind> k = elemKindFromONNX(code, "t");
    ASSERT_TRUE(bool(k)) << llvm::toString(k.takeError());
    EXPECT_EQ(*k, kind);
    EXPECT_EQ(elemKindToONNX(kind), code);
  }
  EXPECT_EQ(elemKindToONNX(ElemKind::Int8Q), P::INT8);
  EXPECT_EQ(elemKindToONNX(ElemKind::UInt8Q), P::UINT8);
  EXPECT_EQ(elemKindToONNX(ElemKind::Int32Q), P::INT32);
  auto err = elemKindFromONNX(P::COMPLEX64, "w");
  ASSERT_FALSE(bool(err));
  EXPECT_EQ(llvm::toString(err.takeError()),
            "w: unsupported element type COMPLEX64");
}

TEST(Importer, ListsEveryUnsupportedOp) {
  ONNXBuilder b;
  b.input("x", {1, 4});
  b.node("Relu", {"x"}, {"r"}, "relu0");
  b.node("Foo", {"r"}, {"f"}, "foo0");
  b.node("Bar", {"f"}, {"g"}, "bar0");
  b.node("Foo", {"g"}, {"h"}, "foo1");
  auto &custom = b.node("Baz", {"h"}, {"i"}, "baz0");
  custom.set_domain("com.example");
  auto &unimported = b.node("Qux", {"i"}, {"y"}, "qux0");
  unimported.set_domain("org.nowhere");
  b.opsetImport("com.example", 2);
  b.output("y");
  std::string msg = importError(b.serialize());
  EXPECT_NE(msg.find("5 unsupported node(s) of 4 op type(s)"),
            std::string::npos)
      << msg;
  // Nodes of other domains than the default one name their domain and the
  // opset the model imports for it.
  EXPECT_NE(msg.find("Baz (node 'baz0', domain 'com.example', opset 2)"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("Qux (node 'qux0', domain 'org.nowhere', opset not "
                     "imported)"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("Foo (node 'foo0', opset 13)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("Foo (node 'foo1', opset 13)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("Bar (node 'bar0', opset 13)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("com.example::Baz"), std::string::npos) << msg;
  EXPECT_EQ(msg.find("Relu"), std::string::npos) << msg;
}

// The lookup takes the first matching row, so a second row for the same op
// type and opset could never run: every (op type, opset) is in one row.
TEST(Importer, ImportTableHasOneRulePerOpAndOpset) {
  llvm::ArrayRef<ImportRule> rules = getImportRules();
  for (size_t i = 0; i < rules.size(); ++i)
    for (size_t j = i + 1; j < rules.size(); ++j) {
      const ImportRule &a = rules[i], &b = rules[j];
      if (llvm::StringRef(a.opType) != b.opType)
        continue;
      EXPECT_TRUE(a.maxOpset < b.minOpset || b.maxOpset < a.minOpset)
          << a.opType << " has rows for opsets " << a.minOpset << "-"
          << a.maxOpset << " and " << b.minOpset << "-" << b.maxOpset;
    }
}

TEST(Importer, BroadcastingAddRunsCorrectly) {
  ONNXBuilder b;
  b.input("x", {2, 3});
  b.initializer("bias", {3}, {10, 20, 30});
  b.node("Add", {"x", "bias"}, {"y"});
  b.output("y");
  Module M;
  auto F = importONNXBuffer(b.serialize(), "m", M);
  ASSERT_TRUE(bool(F)) << llvm::toString(F.takeError());
  auto out = compileAndRun(M, **F, "Interpreter",
                           tensors(makeTensor({2, 3}, {1, 2, 3, 4, 5, 6})));
  ASSERT_EQ(out.size(), 1u);
  expectNear(out[0], makeTensor({2, 3}, {11, 22, 33, 14, 25, 36}), 0);
}

TEST(Importer, ReshapeFlattenTransposeAndConstant) {
  ONNXBuilder b;
  b.input("x", {2, 3, 2});
  b.initializerInts("shape", {0, -1});
  b.node("Reshape", {"x", "shape"}, {"r"});
  auto &t = b.node("Transpose", {"r"}, {"t"});
  ONNXBuilder::attrInts(t, "perm", {1, 0});
  auto &c = b.node("Constant", {}, {"k"});
  auto *a = c.add_attribute();
  a->set_name("value_float");
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(2.f);
  b.node("Mul", {"t", "k"}, {"m"});
  auto &fl = b.node("Flatten", {"m"}, {"y"});
  ONNXBuilder::attrInt(fl, "axis", 0);
  b.output("y");
  Module M;
  auto F = importONNXBuffer(b.serialize(), "m", M);
  ASSERT_TRUE(bool(F)) << llvm::toString(F.takeError());
  auto out = compileAndRun(
      M, **F, "Interpreter",
      tensors(makeTensor({2, 3, 2}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12})));
  ASSERT_EQ(out.size(), 1u);
  expectNear(out[0],
             makeTensor({1, 12}, {2, 14, 4, 16, 6, 18, 8, 20, 10, 22, 12, 24}),
             0);
}

// ConstantOfShape of an empty shape is a scalar (ONNX); torch writes it for
// `torch.tensor(number)`, as torchvision's anchor generator does, from a
// Constant node of an empty int64 tensor, and feeds its Shape (empty again)
// to a second ConstantOfShape. Both were refused as empty data.
TEST(Importer, ConstantOfShapeOfEmptyShapeIsScalar) {
  ONNXBuilder b;
  b.input("x", {2, 3});
  auto &k = b.node("Constant", {}, {"k"});
  auto *kv = k.add_attribute();
  kv->set_name("value");
  kv->set_type(onnx::AttributeProto::TENSOR);
  kv->mutable_t()->set_data_type(onnx::TensorProto::INT64);
  kv->mutable_t()->add_dims(0);
  auto valued = [&](const std::string &shape, const std::string &out, float v) {
    auto &n = b.node("ConstantOfShape", {shape}, {out});
    auto *a = n.add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto::TENSOR);
    a->mutable_t()->set_data_type(onnx::TensorProto::FLOAT);
    a->mutable_t()->add_dims(1);
    a->mutable_t()->add_float_data(v);
  };
  valued("k", "s", 2.5f);
  b.node("Shape", {"s"}, {"e"});
  valued("e", "s2", 1.5f);
  b.node("Add", {"x", "s"}, {"a"});
  b.node("Add", {"a", "s2"}, {"y"});
  b.output("y");
  for (const char *backend : {"Interpreter", "CPU"}) {
    Module M;
    auto F = importONNXBuffer(b.serialize(), "m", M);
    ASSERT_TRUE(bool(F)) << llvm::toString(F.takeError());
    auto out = compileAndRun(M, **F, backend,
                             tensors(makeTensor({2, 3}, {1, 2, 3, 4, 5, 6})));
    ASSERT_EQ(out.size(), 1u);
    expectNear(out[0], makeTensor({2, 3}, {5, 6, 7, 8, 9, 10}), 0);
  }
}

TEST(Importer, SoftmaxBeforeOpset13CoercesTo2D) {
  ONNXBuilder b(11);
  b.input("x", {1, 2, 2});
  auto &s = b.node("Softmax", {"x"}, {"y"});
  ONNXBuilder::attrInt(s, "axis", 1);
  b.output("y");
  Module M;
  auto F = importONNXBuffer(b.serialize(), "m", M);
  ASSERT_TRUE(bool(F)) << llvm::toString(F.takeError());
  auto out = compileAndRun(M, **F, "Interpreter",
                           tensors(makeTensor({1, 2, 2}, {0, 0, 0, 0})));
  ASSERT_EQ(out.size(), 1u);
  expectNear(out[0], makeTensor({1, 2, 2}, {0.25f, 0.25f, 0.25f, 0.25f}),
             1e-6f);
}

// AveragePool with ceil_mode and count_include_pad: a window that passes the
// explicit end padding divides by the taps inside the explicitly padded
// input only (onnxruntime's rule; the oracle below computes it the way
// onnxruntime's pooling does), on both backends.
TEST(Importer, AveragePoolCeilCountsOnlyExplicitPadding) {
  const int64_t H = 6, W = 7, K = 3, S = 2, P = 1;
  ONNXBuilder b(17);
  b.input("x", {1, 2, H, W});
  auto &n = b.node("AveragePool", {"x"}, {"y"});
  ONNXBuilder::attrInts(n, "kernel_shape", {K, K});
  ONNXBuilder::attrInts(n, "strides", {S, S});
  ONNXBuilder::attrInts(n, "pads", {P, P, P, P});
  ONNXBuilder::attrInt(n, "ceil_mode", 1);
  ONNXBuilder::attrInt(n, "count_include_pad", 1);
  b.output("y");
  // Ceil: (6 + 2 - 3) / 2 rounded up + 1 = 4 rows, (7 + 2 - 3) / 2 + 1 = 4
  // columns; the last row's windows pass the end padding by one.
  const int64_t OH = 4, OW = 4;
  std::vector<float> xs(2 * H * W);
  for (size_t i = 0; i < xs.size(); ++i)
    xs[i] = float(i % 11) - 4.f;
  std::vector<float> want;
  for (int64_t c = 0; c < 2; ++c)
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow) {
        int64_t h0 = oh * S - P, w0 = ow * S - P;
        int64_t h1 = std::min(h0 + K, H + P), w1 = std::min(w0 + K, W + P);
        double count = double((h1 - h0) * (w1 - w0)), sum = 0;
        for (int64_t h = std::max<int64_t>(h0, 0); h < std::min(h1, H); ++h)
          for (int64_t w = std::max<int64_t>(w0, 0); w < std::min(w1, W); ++w)
            sum += xs[size_t((c * H + h) * W + w)];
        want.push_back(float(sum / count));
      }
  auto fill = [](llvm::ArrayRef<dim_t> dims, const std::vector<float> &v) {
    Tensor t(ElemKind::Float32, dims);
    std::copy(v.begin(), v.end(), t.getHandle<float>().begin());
    return t;
  };
  for (const char *backend : {"Interpreter", "CPU"}) {
    SCOPED_TRACE(backend);
    Module M;
    auto F = importONNXBuffer(b.serialize(), "m", M);
    ASSERT_TRUE(bool(F)) << llvm::toString(F.takeError());
    auto out = compileAndRun(M, **F, backend, tensors(fill({1, 2, H, W}, xs)));
    ASSERT_EQ(out.size(), 1u);
    expectNear(out[0], fill({1, 2, OH, OW}, want), 1e-6f);
  }
}

TEST(Importer, CleanErrors) {
  EXPECT_NE(importError("this is not a protobuf").find("not a valid ONNX"),
            std::string::npos);
  {
    ONNXBuilder b;
    b.input("x", {1, 4});
    b.node("Relu", {"nothing"}, {"y"}, "r");
    b.output("y");
    std::string msg = importError(b.serialize());
    EXPECT_NE(msg.find("node 'r' (Relu): input 'nothing' is not produced"),
              std::string::npos)
        << msg;
  }
  {
    ONNXBuilder b;
    b.input("x", {1, 4});
    b.initializer("w", {3, 3}, {1, 2});
    b.node("Add", {"x", "w"}, {"y"});
    b.output("y");
    std::string msg = importError(b.serialize());
    EXPECT_NE(msg.find("tensor 'w': has 2 values, shape [3, 3] needs 9"),
              std::string::npos)
        << msg;
  }
  {
    ONNXBuilder b;
    b.input("x", {1, 4});
    b.input("z", {1, 5});
    b.node("Add", {"x", "z"}, {"y"}, "add");
    b.output("y");
    std::string msg = importError(b.serialize());
    EXPECT_NE(msg.find("node 'add' (Add): operands float<1 x 4> and float<1 x "
                       "5> are not broadcastable"),
              std::string::npos)
        << msg;
  }
  {
    ONNXBuilder b;
    b.input("x", {1, 3, 4, 4});
    b.initializer("w", {2, 3, 5, 5}, std::vector<float>(150, 1.f));
    b.node("Conv", {"x", "w"}, {"y"}, "conv");
    b.output("y");
    std::string msg = importError(b.serialize());
    EXPECT_NE(msg.find("node 'conv'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("larger than the padded input"), std::string::npos)
        << msg;
  }
  {
    ONNXBuilder b;
    // float64 is supported since issue 3; strings stay a clean error.
    b.input("x", {1, 4}, onnx::TensorProto::STRING);
    b.node("Relu", {"x"}, {"y"});
    b.output("y");
    std::string msg = importError(b.serialize());
    EXPECT_NE(msg.find("unsupported element type STRING"), std::string::npos)
        << msg;
  }
}

TEST(Importer, SymbolicDimsNeedAValue) {
  const std::string model = reluWithBatchSymbol();
  std::string msg = importError(model);
  EXPECT_NE(msg.find("graph value 'x' has symbolic dimension 'batch'"),
            std::string::npos)
      << msg;
  ImportOptions opts;
  opts.symbols.push_back({"batch", 3});
  Module M;
  auto F = importONNXBuffer(model, "m", M, opts);
  ASSERT_TRUE(bool(F)) << llvm::toString(F.takeError());
  EXPECT_EQ(M.getInputPlaceholders()[0]->getType()->dims(),
            (llvm::ArrayRef<dim_t>{3, 4}));
}

TEST(Importer, OptionsNamingNothingAreErrors) {
  const std::string model = reluWithBatchSymbol();
  auto contains = [](const std::string &msg, const std::string &part) {
    return msg.find(part) != std::string::npos;
  };
  ImportOptions typo;
  typo.inputTypes.emplace("X", Type(ElemKind::Float32, {2, 4}));
  std::string msg = importError(model, typo);
  EXPECT_TRUE(contains(msg, "-model-input names 'X', which is not an input "
                            "of the graph (inputs: 'x')"))
      << msg;
  // An unused symbol is an error only where the caller asks (the tools);
  // harnesses pass the same generic symbols to every model.
  ImportOptions extra;
  extra.symbols = {{"batch", 2}, {"seq", 8}};
  EXPECT_EQ(importError(model, extra), "");
  extra.requireSymbolsUsed = true;
  msg = importError(model, extra);
  EXPECT_TRUE(contains(msg, "-onnx-define-symbol names 'seq', which is not a "
                            "symbolic dimension of any graph input (symbols: "
                            "'batch')"))
      << msg;
  extra.symbols.pop_back();
  EXPECT_EQ(importError(model, extra), "");
}

TEST(TensorIO, ProtoRoundTrip) {
  Tensor t = makeTensor({2, 2}, {1, 2, 3, 4});
  std::string path = ::testing::TempDir() + "/t.pb";
  ASSERT_FALSE(bool(saveTensorProtoFile(t, "name", path)));
  auto r = loadTensorFile(path);
  ASSERT_TRUE(bool(r)) << llvm::toString(r.takeError());
  EXPECT_EQ(r->name, "name");
  EXPECT_TRUE(r->tensor.isBitwiseEqual(t));
  auto missing = loadTensorFile("/nonexistent/file.pb");
  ASSERT_FALSE(bool(missing));
  EXPECT_NE(llvm::toString(missing.takeError()).find("cannot read"),
            std::string::npos);
}

TEST(TensorIO, NpyFloat32) {
  std::string path = ::testing::TempDir() + "/t.npy";
  std::string header =
      "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }";
  header.resize(118, ' ');
  header += '\n';
  std::string file = std::string("\x93NUMPY\x01\x00", 8);
  file += char(header.size() & 0xff);
  file += char(header.size() >> 8);
  file += header;
  float vals[4] = {1, 2, 3, 4};
  file.append(reinterpret_cast<char *>(vals), sizeof(vals));
  FILE *f = fopen(path.c_str(), "wb");
  fwrite(file.data(), 1, file.size(), f);
  fclose(f);
  auto r = loadTensorFile(path);
  ASSERT_TRUE(bool(r)) << llvm::toString(r.takeError());
  EXPECT_TRUE(r->tensor.isBitwiseEqual(makeTensor({2, 2}, {1, 2, 3, 4})));
}
