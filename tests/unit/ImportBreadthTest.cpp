//===- ImportBreadthTest.cpp - External data, flags, import-time folding --===//
#include "ImportFlags.h"

#include "ember/Backend/ConstantEval.h"
#include "ember/Graph/Graph.h"
#include "ember/Importer/ONNXImporter.h"

#include "ONNXBuilder.h"

#include "llvm/Support/FileSystem.h"

#include <gtest/gtest.h>

#include <fstream>

using namespace ember;
using namespace ember::test;

namespace {

/// A fresh directory under the gtest temp dir.
std::string freshDir(const std::string &name) {
  std::string d = ::testing::TempDir() + "/ember-" + name;
  llvm::sys::fs::remove_directories(d);
  llvm::sys::fs::create_directories(d);
  return d;
}

void writeFile(const std::string &path, const std::string &bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

/// y = x + w where w [4] is stored externally at \p location.
std::string externalModel(const std::string &location, int64_t offset) {
  ONNXBuilder b;
  b.input("x", {4});
  auto *t = b.graph().add_initializer();
  t->set_name("w");
  t->set_data_type(onnx::TensorProto::FLOAT);
  t->add_dims(4);
  t->set_data_location(onnx::TensorProto::EXTERNAL);
  auto *kv = t->add_external_data();
  kv->set_key("location");
  kv->set_value(location);
  kv = t->add_external_data();
  kv->set_key("offset");
  kv->set_value(std::to_string(offset));
  b.node("Add", {"x", "w"}, {"y"});
  b.output("y");
  return b.serialize();
}

std::string importFileError(const std::string &path,
                            const ImportOptions &opts = {}) {
  Module M;
  auto F = importONNXFile(path, M, opts);
  return F ? "" : llvm::toString(F.takeError());
}

} // namespace

TEST(ExternalData, LoadsFromTheModelDirectory) {
  std::string dir = freshDir("ext-ok");
  float w[5] = {99, 1, 2, 3, 4}; // offset 4 skips the first float
  writeFile(dir + "/w.bin", std::string(reinterpret_cast<char *>(w), 20));
  writeFile(dir + "/m.onnx", externalModel("w.bin", 4));
  Module M;
  auto F = importONNXFile(dir + "/m.onnx", M);
  ASSERT_TRUE(bool(F)) << llvm::toString(F.takeError());
  const Constant *c = nullptr;
  for (auto &k : M.getConstants())
    if (k->getName() == "w")
      c = k.get();
  ASSERT_NE(c, nullptr);
  for (int i = 0; i < 4; ++i)
    EXPECT_EQ(c->getPayload().elementAsDouble(i), i + 1);
}

TEST(ExternalData, CleanErrors) {
  std::string dir = freshDir("ext-bad");
  std::string outside = freshDir("ext-outside");
  writeFile(outside + "/secret.bin", std::string(16, 'x'));
  writeFile(dir + "/short.bin", std::string(8, 'x'));
  llvm::sys::fs::create_link(outside + "/secret.bin", dir + "/link.bin");
  struct Case {
    std::string location, expect;
  } cases[] = {
      {"../ember-ext-outside/secret.bin", "outside the model's directory"},
      {"link.bin", "outside the model's directory (through a link)"},
      {outside + "/secret.bin", "outside the model's directory (absolute"},
      {"missing.bin", "is missing"},
      {"short.bin", "past the end"},
  };
  for (const Case &c : cases) {
    writeFile(dir + "/m.onnx", externalModel(c.location, 0));
    std::string msg = importFileError(dir + "/m.onnx");
    EXPECT_NE(msg.find("initializer 'w'"), std::string::npos) << msg;
    EXPECT_NE(msg.find(c.expect), std::string::npos)
        << c.location << ": " << msg;
  }
}

TEST(ImportFlags, ModelInputSyntax) {
  auto ok = tools::parseModelInputFlag("input,float,[1,3,224,224]");
  ASSERT_TRUE(bool(ok)) << llvm::toString(ok.takeError());
  EXPECT_EQ(ok->first, "input");
  EXPECT_EQ(ok->second.toString(), "float<1 x 3 x 224 x 224>");
  auto i64 = tools::parseModelInputFlag("ids,int64,[7]");
  ASSERT_TRUE(bool(i64));
  EXPECT_EQ(i64->second.getElemKind(), ElemKind::Int64);
  for (const char *bad :
       {"input,float", "input,complex,[1]", "input,float,1,2",
        "input,float,[1,0]", ",float,[1]", "x,float,[1,2,3,4,5,6,7,8,9]"}) {
    auto r = tools::parseModelInputFlag(bad);
    ASSERT_FALSE(bool(r)) << bad;
    EXPECT_NE(llvm::toString(r.takeError()).find("-model-input expects"),
              std::string::npos);
  }
  auto dup = tools::makeImportOptions({}, {"a,float,[1]", "a,float,[2]"});
  ASSERT_FALSE(bool(dup));
  EXPECT_NE(llvm::toString(dup.takeError()).find("twice"), std::string::npos);
  auto sym = tools::makeImportOptions({"N,0"}, {});
  ASSERT_FALSE(bool(sym));
  llvm::consumeError(sym.takeError());
}

TEST(ImportFlags, ModelInputReplacesSymbolicDims) {
  const std::string model = reluWithBatchSymbol();
  auto opts = tools::makeImportOptions({}, {"x,float,[5,4]"});
  ASSERT_TRUE(bool(opts));
  Module M;
  auto F = importONNXBuffer(model, "m", M, *opts);
  ASSERT_TRUE(bool(F)) << llvm::toString(F.takeError());
  EXPECT_EQ(M.getInputPlaceholders()[0]->getType()->toString(), "float<5 x 4>");
  // A fixed dim or the element type may not change.
  for (const char *spec : {"x,float,[5,3]", "x,int64,[5,4]", "x,float,[5]"}) {
    auto o = tools::makeImportOptions({}, {spec});
    Module M2;
    auto G = importONNXBuffer(model, "m", M2, *o);
    ASSERT_FALSE(bool(G)) << spec;
    EXPECT_NE(llvm::toString(G.takeError()).find("-model-input gives"),
              std::string::npos);
  }
}

// Shape -> Gather -> Unsqueeze -> Concat -> Reshape, as exporters write
// x.view(x.size(0), -1): the shape operand folds to a Constant at import.
TEST(ImportFolding, ShapeArithmeticBecomesConstant) {
  ONNXBuilder b;
  b.input("x", {2, 3, 4});
  b.initializerInts("zero", {0});
  b.initializerInts("minus1", {-1});
  b.node("Shape", {"x"}, {"s"});
  b.node("Gather", {"s", "zero"}, {"n"});
  b.node("Concat", {"n", "minus1"}, {"shape"}).add_attribute()->CopyFrom([] {
    onnx::AttributeProto a;
    a.set_name("axis");
    a.set_type(onnx::AttributeProto::INT);
    a.set_i(0);
    return a;
  }());
  b.node("Reshape", {"x", "shape"}, {"y"}, "flatten");
  b.output("y");
  {
    Module M; // Without an evaluator, Reshape cannot read its shape.
    auto F = importONNXBuffer(b.serialize(), "m", M);
    ASSERT_FALSE(bool(F));
    EXPECT_NE(llvm::toString(F.takeError()).find("must be a constant"),
              std::string::npos);
  }
  ImportOptions opts;
  opts.evaluator = makeConstantEvaluator();
  Module M;
  auto F = importONNXBuffer(b.serialize(), "m", M, opts);
  ASSERT_TRUE(bool(F)) << llvm::toString(F.takeError());
  EXPECT_EQ(M.getOutputPlaceholders()[0]->getType()->toString(),
            "float<2 x 12>");
}
