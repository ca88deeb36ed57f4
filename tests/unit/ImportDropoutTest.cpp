//===- ImportDropoutTest.cpp - Dropout in training mode -------------------===//
//
// Dropout with a constant ratio of 0, or out of training, is the identity
// (its mask is all true). In training mode with another ratio, element i
// is kept where a uniform draw from Ember's generator seeded by `seed` is
// >= the ratio: y = x / (1 - ratio) there and 0 elsewhere, the mask says
// which. The oracle is that property (another runtime's generator draws
// other masks) plus the drop count: on 4096 elements it must lie within 6
// binomial standard deviations of ratio * 4096, which a correct draw
// misses with negligible probability (the seed is fixed, so the check is
// deterministic anyway). A ratio or training_mode fed at run time is a
// graph value, so one compiled network serves every value.
//
//===----------------------------------------------------------------------===//
#include "ember/Importer/ONNXImporter.h"

#include "ONNXBuilder.h"
#include "TestUtils.h"

#include <algorithm>
#include <cmath>

using namespace ember;
using namespace ember::test;

namespace {
constexpr dim_t kN = 4096;

/// A Dropout model: y (and mask when \p withMask) from x [n], with
/// training_mode = \p training, a ratio initializer unless \p ratio is
/// negative, and the `seed` attribute \p seed.
std::string dropoutModel(float ratio, bool training, bool withMask, dim_t n = 6,
                         int64_t seed = 0) {
  ONNXBuilder b(13);
  b.input("x", {n});
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
  auto &node = b.node("Dropout", in, out, "drop");
  ONNXBuilder::attrInt(node, "seed", seed);
  b.output("y");
  if (withMask)
    b.output("mask", {}, onnx::TensorProto::BOOL);
  return b.serialize();
}

/// x [n] = 1, 2, ..., n (no zeros, so a dropped element is told apart).
Tensor ramp(dim_t n) {
  Tensor t(ElemKind::Float32, {n});
  for (dim_t i = 0; i < n; ++i)
    t.getHandle<float>().raw(i) = float(i + 1);
  return t;
}

/// Checks y (and the mask when given) against x with ratio \p r as the
/// header says; returns the mask (all true when no mask is given and no
/// element is 0).
std::vector<bool> expectDropout(const Tensor &x, const Tensor &y,
                                const Tensor *mask, double r) {
  std::vector<bool> keep;
  for (dim_t i = 0; i < y.size(); ++i) {
    double a = y.elementAsDouble(i), kept = x.elementAsDouble(i) / (1 - r);
    keep.push_back(mask ? mask->elementAsDouble(i) != 0 : a != 0);
    // 1 - r and x / (1 - r) are rounded to float once each: 2 ulp.
    EXPECT_NEAR(a, keep.back() ? kept : 0.0, 2.5e-7 * std::fabs(kept))
        << "element " << i;
  }
  if (y.size() == kN) {
    double dropped = std::count(keep.begin(), keep.end(), false);
    double sd = std::sqrt(kN * r * (1 - r));
    EXPECT_NEAR(dropped, r * kN, 6 * sd + 0.5);
  }
  return keep;
}

/// y and mask of the constant-ratio model run with x = ramp(kN).
std::vector<bool> runTraining(float ratio, int64_t seed, const char *backend,
                              double expectRatio) {
  Module M;
  auto F =
      importONNXBuffer(dropoutModel(ratio, true, true, kN, seed), "m.onnx", M);
  EXPECT_TRUE(bool(F)) << llvm::toString(F.takeError());
  if (!F)
    return {};
  auto out = compileAndRun(M, **F, backend, tensors(ramp(kN)));
  EXPECT_EQ(out.size(), 2u);
  if (out.size() != 2)
    return {};
  EXPECT_EQ(out[1].getElemKind(), ElemKind::Bool);
  return expectDropout(ramp(kN), out[0], &out[1], expectRatio);
}

} // namespace

TEST(ImportDropout, ZeroRatioInTrainingModeIsIdentity) {
  Module M;
  auto F = importONNXBuffer(dropoutModel(0.f, true, true), "m.onnx", M);
  ASSERT_TRUE(bool(F)) << llvm::toString(F.takeError());
  auto out = compileAndRun(M, **F, "Interpreter",
                           tensors(makeTensor({6}, {1, -2, 3, 4, 5, -6})));
  ASSERT_EQ(out.size(), 2u);
  expectNear(out[0], makeTensor({6}, {1, -2, 3, 4, 5, -6}), 0);
  ASSERT_EQ(out[1].getElemKind(), ElemKind::Bool);
  ASSERT_EQ(out[1].size(), 6);
  for (dim_t i = 0; i < out[1].size(); ++i)
    EXPECT_EQ(out[1].elementAsDouble(i), 1.0) << "mask element " << i;
}

TEST(ImportDropout, NonZeroRatioInTrainingModeDrops) {
  for (const std::string &backend : testBackends()) {
    SCOPED_TRACE(backend);
    runTraining(0.25f, 0, backend.c_str(), 0.25);
  }
}

TEST(ImportDropout, DefaultRatioInTrainingModeIsOneHalf) {
  Module M;
  auto F = importONNXBuffer(dropoutModel(-1.f, true, false, kN), "m.onnx", M);
  ASSERT_TRUE(bool(F)) << llvm::toString(F.takeError());
  auto out = compileAndRun(M, **F, "Interpreter", tensors(ramp(kN)));
  ASSERT_EQ(out.size(), 1u);
  expectDropout(ramp(kN), out[0], nullptr, 0.5);
}

TEST(ImportDropout, MaskIsDeterministicPerSeed) {
  // The same seed draws the same mask on every compile and backend;
  // another seed draws another.
  std::vector<bool> first = runTraining(0.5f, 7, "Interpreter", 0.5);
  for (const std::string &backend : testBackends()) {
    SCOPED_TRACE(backend);
    EXPECT_EQ(runTraining(0.5f, 7, backend.c_str(), 0.5), first);
  }
  EXPECT_NE(runTraining(0.5f, 8, "Interpreter", 0.5), first);
}

TEST(ImportDropout, NonZeroRatioOutOfTrainingIsIdentity) {
  Module M;
  auto F = importONNXBuffer(dropoutModel(0.3f, false, false), "m.onnx", M);
  ASSERT_TRUE(bool(F)) << llvm::toString(F.takeError());
  auto out = compileAndRun(M, **F, "Interpreter",
                           tensors(makeTensor({6}, {1, 2, 3, 4, 5, 6})));
  ASSERT_EQ(out.size(), 1u);
  expectNear(out[0], makeTensor({6}, {1, 2, 3, 4, 5, 6}), 0);
}

TEST(ImportDropout, RunTimeRatioAndTrainingModeAreGraphValues) {
  // ratio and training_mode fed at run time (ONNX's test_training_dropout*
  // models): one compiled network for every value, no run-time check.
  ONNXBuilder b(13);
  b.input("x", {kN});
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
    for (Case c : {Case{0.f, true}, Case{0.75f, false}, Case{0.75f, true},
                   Case{0.5f, true}}) {
      SCOPED_TRACE(std::to_string(c.ratio) + (c.training ? " train" : ""));
      Bindings bind;
      auto phs = M.getInputPlaceholders();
      ASSERT_EQ(phs.size(), 3u);
      bind.insert(phs[0], ramp(kN));
      bind.insert(phs[1], makeTensor({}, {c.ratio}));
      bind.insert(phs[2], boolScalar(c.training));
      llvm::Error err = net->function->run(bind);
      ASSERT_FALSE(bool(err)) << llvm::toString(std::move(err));
      auto outs = M.getOutputPlaceholders();
      expectDropout(ramp(kN), *bind.get(outs[0]), bind.get(outs[1]),
                    c.training ? c.ratio : 0.0);
    }
  }
}
