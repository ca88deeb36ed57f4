//===- ExternalDataTest.cpp - Initializers read from beside the model -----===//
//
// The bad-model catalog (tests/bad-models) covers the refused references;
// these tests cover the accepted ones, checked against hand-computed sums.
//
//===----------------------------------------------------------------------===//
#include "ember/Importer/ONNXImporter.h"

#include "ONNXBuilder.h"
#include "TestUtils.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

using namespace ember;
using namespace ember::test;

namespace {

/// y = x + w, with w (float<1 x 4>) stored externally at \p offset.
std::string externalAddModel(const std::string &location, int64_t offset) {
  ONNXBuilder b;
  b.input("x", {1, 4});
  b.output("y", {1, 4});
  b.node("Add", {"x", "w"}, {"y"}, "add");
  auto *w = b.graph().add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(1);
  w->add_dims(4);
  w->set_data_location(onnx::TensorProto::EXTERNAL);
  auto *kv = w->add_external_data();
  kv->set_key("location");
  kv->set_value(location);
  kv = w->add_external_data();
  kv->set_key("offset");
  kv->set_value(std::to_string(offset));
  kv = w->add_external_data();
  kv->set_key("length");
  kv->set_value("16");
  return b.serialize();
}

void writeFile(const std::string &path, llvm::StringRef bytes) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  ASSERT_FALSE(ec) << ec.message();
  os << bytes;
}

class ExternalDataTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("ember-ext", dir_));
    ASSERT_FALSE(llvm::sys::fs::create_directory(dir_ + "/sub"));
  }
  void TearDown() override { llvm::sys::fs::remove_directories(dir_); }
  std::string path(llvm::StringRef name) { return (dir_ + "/" + name).str(); }
  llvm::SmallString<128> dir_;
};

} // namespace

TEST_F(ExternalDataTest, ReadsTheRangeAtItsOffsetInASubdirectory) {
  float w[6] = {99.f, 99.f, 1.f, 2.f, 3.f, 4.f}; // 8 bytes of padding first
  writeFile(path("sub/weights.bin"),
            llvm::StringRef(reinterpret_cast<const char *>(w), sizeof(w)));
  writeFile(path("model.onnx"), externalAddModel("sub/weights.bin", 8));
  Module M;
  auto F = importONNXFile(path("model.onnx"), M);
  ASSERT_TRUE(bool(F)) << llvm::toString(F.takeError());
  auto out = compileAndRun(M, **F, "Interpreter",
                           tensors(makeTensor({1, 4}, {10, 20, 30, 40})));
  ASSERT_EQ(out.size(), 1u);
  // Exact: small integers add exactly in float32.
  expectNear(out[0], makeTensor({1, 4}, {11, 22, 33, 44}), 0.f);
}

TEST_F(ExternalDataTest, AModelFromMemoryCannotReferToFiles) {
  Module M;
  auto F = importONNXBuffer(externalAddModel("weights.bin", 0), "buf", M);
  ASSERT_FALSE(bool(F));
  EXPECT_NE(llvm::toString(F.takeError()).find("needs a model file"),
            std::string::npos);
}

TEST_F(ExternalDataTest, ADirectoryIsNotAFile) {
  writeFile(path("model.onnx"), externalAddModel("sub", 0));
  Module M;
  auto F = importONNXFile(path("model.onnx"), M);
  ASSERT_FALSE(bool(F));
  EXPECT_NE(llvm::toString(F.takeError()).find("not a regular file"),
            std::string::npos);
}
