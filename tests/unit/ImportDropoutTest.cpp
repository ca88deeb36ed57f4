//===- ImportDropoutTest.cpp - Dropout in training mode -------------------===//
//
// Dropout with a constant ratio of 0 is the identity whatever training_mode
// says (its mask is all true); a non-zero ratio with training_mode = true,
// or no ratio (the ONNX default is 0.5), is a clear import error.
//
//===----------------------------------------------------------------------===//
#include "ember/Importer/ONNXImporter.h"

#include "ONNXBuilder.h"
#include "TestUtils.h"

using namespace ember;
using namespace ember::test;

namespace {
/// A Dropout model: y (and mask when \p withMask) from x [2, 3], with
/// training_mode = \p training and a ratio initializer unless \p ratio is
/// negative.
std::string dropoutModel(float ratio, bool training, bool withMask) {
  ONNXBuilder b(13);
  b.input("x", {2, 3});
  std::vector<std::string> in = {"x", "", "training"};
  if (ratio >= 0) {
    auto *t = b.graph().add_initializer();
    t->set_name("ratio");
    t->set_data_type(onnx::TensorProto::FLOAT);
    t->add_float_data(ratio);
    in[1] = "ratio";
  }
  auto *t = b.graph().add_initializer();
  t->set_name("training");
  t->set_data_type(onnx::TensorProto::BOOL);
  t->add_int32_data(training);
  std::vector<std::string> out = {"y"};
  if (withMask)
    out.push_back("mask");
  b.node("Dropout", in, out, "drop");
  b.output("y");
  if (withMask)
    b.output("mask", {}, onnx::TensorProto::BOOL);
  return b.serialize();
}

std::string importError(const std::string &model) {
  Module M;
  auto F = importONNXBuffer(model, "m.onnx", M);
  return F ? "" : llvm::toString(F.takeError());
}
} // namespace

TEST(ImportDropout, ZeroRatioInTrainingModeIsIdentity) {
  Module M;
  auto F = importONNXBuffer(dropoutModel(0.f, true, true), "m.onnx", M);
  ASSERT_TRUE(bool(F)) << llvm::toString(F.takeError());
  auto out = compileAndRun(M, **F, "Interpreter",
                           tensors(makeTensor({2, 3}, {1, -2, 3, 4, 5, -6})));
  ASSERT_EQ(out.size(), 2u);
  expectNear(out[0], makeTensor({2, 3}, {1, -2, 3, 4, 5, -6}), 0);
  ASSERT_EQ(out[1].getElemKind(), ElemKind::Bool);
  ASSERT_EQ(out[1].size(), 6);
  for (dim_t i = 0; i < out[1].size(); ++i)
    EXPECT_EQ(out[1].elementAsDouble(i), 1.0) << "mask element " << i;
}

TEST(ImportDropout, NonZeroRatioInTrainingModeIsAnError) {
  std::string msg = importError(dropoutModel(0.1f, true, false));
  EXPECT_NE(msg.find("training_mode=true with ratio 0.1"), std::string::npos)
      << msg;
  EXPECT_NE(msg.find("drop"), std::string::npos) << msg;
}

TEST(ImportDropout, DefaultRatioInTrainingModeIsAnError) {
  std::string msg = importError(dropoutModel(-1.f, true, false));
  EXPECT_NE(msg.find("training_mode=true with ratio 0.5"), std::string::npos)
      << msg;
}

TEST(ImportDropout, NonZeroRatioOutOfTrainingIsIdentity) {
  Module M;
  auto F = importONNXBuffer(dropoutModel(0.3f, false, false), "m.onnx", M);
  ASSERT_TRUE(bool(F)) << llvm::toString(F.takeError());
  auto out = compileAndRun(M, **F, "Interpreter",
                           tensors(makeTensor({2, 3}, {1, 2, 3, 4, 5, 6})));
  ASSERT_EQ(out.size(), 1u);
  expectNear(out[0], makeTensor({2, 3}, {1, 2, 3, 4, 5, 6}), 0);
}
