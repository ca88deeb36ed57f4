//===- ImportDropoutTest.cpp - Dropout in training mode -------------------===//
//
// Dropout with a constant ratio of 0 is the identity whatever training_mode
// says (its mask is all true); a non-zero ratio with training_mode = true,
// or no ratio (the ONNX default is 0.5), is a clear import error; fed at
// run time, the same rule is checked before each call.
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

TEST(ImportDropout, RunTimeTrainingModeIsCheckedAtRunTime) {
  // ratio and training_mode fed at run time (ONNX's test_training_dropout*
  // models): compiled as the identity, and every call checks that the
  // values give it (docs/RuntimeInputs.md, path 3).
  ONNXBuilder b(13);
  b.input("x", {2, 3});
  b.input("r", {});
  b.input("t", {}, onnx::TensorProto::BOOL);
  b.node("Dropout", {"x", "r", "t"}, {"y", "mask"}, "drop");
  b.output("y");
  b.output("mask", {}, onnx::TensorProto::BOOL);
  auto boolScalar = [](bool v) {
    Tensor t(ElemKind::Bool, {});
    *t.getHandle<bool>().begin() = v;
    return t;
  };
  registerAllBackends();
#ifdef EMBER_WITH_CUDA
  registerCUDAHostEmulation();
#endif
  for (const std::string &backend : testBackends()) {
    SCOPED_TRACE(backend);
    Module M;
    auto F = importONNXBuffer(b.serialize(), "m.onnx", M);
    ASSERT_TRUE(bool(F)) << llvm::toString(F.takeError());
    auto net = compileFunction(**F, *llvm::cantFail(getBackend(backend)),
                               CompileOptions());
    ASSERT_TRUE(bool(net)) << llvm::toString(net.takeError());
    struct Case {
      float ratio;
      bool training;
    };
    for (Case c : {Case{0.f, true}, Case{0.75f, false}, Case{0.75f, true}}) {
      Bindings bind;
      auto phs = M.getInputPlaceholders();
      ASSERT_EQ(phs.size(), 3u);
      bind.insert(phs[0], makeTensor({2, 3}, {1, -2, 3, 4, 5, -6}));
      bind.insert(phs[1], makeTensor({}, {c.ratio}));
      bind.insert(phs[2], boolScalar(c.training));
      llvm::Error err = net->function->run(bind);
      if (c.training && c.ratio != 0) {
        std::string msg = llvm::toString(std::move(err));
        EXPECT_NE(msg.find("run-time input check: node 'drop' (Dropout): "),
                  std::string::npos)
            << msg;
        EXPECT_NE(msg.find("training_mode=true with ratio 0.75 is not "
                           "supported"),
                  std::string::npos)
            << msg;
        continue;
      }
      ASSERT_FALSE(bool(err)) << llvm::toString(std::move(err));
      auto outs = M.getOutputPlaceholders();
      expectNear(*bind.get(outs[0]), makeTensor({2, 3}, {1, -2, 3, 4, 5, -6}),
                 0);
      for (dim_t i = 0; i < 6; ++i)
        EXPECT_EQ(bind.get(outs[1])->elementAsDouble(i), 1.0) << i;
    }
  }
}
