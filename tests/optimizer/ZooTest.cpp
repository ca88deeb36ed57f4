//===- ZooTest.cpp - The pipeline keeps torchvision models' outputs -------===//
//
// Every pass runs (the default pipeline, with -verify-each) on torchvision
// models exported by models/zoo/export.py, and the Interpreter's outputs
// must stay within 1e-5 (relative to the largest output magnitude) of the
// same model compiled with lowering only. The models come from
// $EMBER_ZOO_DIR, or from the build tree's zoo/ that the ctest fixture
// optimizer.zoo-export fills.
//
//===----------------------------------------------------------------------===//
#include "OptTestUtils.h"

#include "ember/Graph/Printer.h"
#include "ember/Importer/ONNXImporter.h"
#include "ember/Importer/TensorIO.h"

#include "llvm/Support/FileSystem.h"

#include <cstdlib>
#include <map>
#include <optional>

using namespace ember;
using namespace ember::test;

static std::string zooDir() {
  const char *env = std::getenv("EMBER_ZOO_DIR");
  return env && *env ? env : EMBER_ZOO_DIR;
}

class Zoo : public ::testing::TestWithParam<const char *> {};
class ZooNHWC : public ::testing::TestWithParam<const char *> {};

/// Node counts of a zoo model before and after the default pipeline.
struct PipelineCounts {
  std::map<std::string, unsigned> before, after;
};

/// Runs zoo model \p name on the Interpreter twice, lowering only and the
/// default pipeline (with -verify-each and an optional Conv layout), expects
/// the outputs within 1e-5 of each other and fills \p counts.
static void checkPipelineKeepsOutputs(const char *name,
                                      std::optional<ConvLayout> layout,
                                      PipelineCounts &counts) {
  std::string base = zooDir() + "/" + name;
  ASSERT_TRUE(llvm::sys::fs::exists(base + ".onnx"))
      << base << ".onnx is missing: run models/zoo/export.py";
  auto input = loadTensorFile(base + ".input.pb");
  ASSERT_TRUE(bool(input)) << llvm::toString(input.takeError());
  Module refM, optM;
  auto refF = importONNXFile(base + ".onnx", refM, ImportOptions());
  auto optF = importONNXFile(base + ".onnx", optM, ImportOptions());
  ASSERT_TRUE(refF && optF);
  counts.before = countNodeKinds(**optF);
  auto ref =
      runOnInterpreter(refM, **refF, getMinimalPipeline(), {&input->tensor});
  ASSERT_TRUE(bool(ref)) << llvm::toString(ref.takeError());
  auto got = runOnInterpreter(optM, **optF, getDefaultPipeline(),
                              {&input->tensor}, /*verifyEach=*/true, layout);
  ASSERT_TRUE(bool(got)) << llvm::toString(got.takeError());
  ASSERT_EQ(ref->size(), got->size());
  for (size_t i = 0; i < ref->size(); ++i)
    expectRelClose((*got)[i], (*ref)[i], 1e-5, name);
  counts.after = countNodeKinds(**optF);
}

TEST_P(Zoo, PipelineKeepsOutputs) {
  PipelineCounts c;
  ASSERT_NO_FATAL_FAILURE(
      checkPipelineKeepsOutputs(GetParam(), std::nullopt, c));
  // The pipeline did its job: no BatchNorm or stand-alone Relu is left.
  EXPECT_GT(c.before["BatchNorm"], 0u);
  EXPECT_EQ(c.after.count("BatchNorm"), 0u);
  EXPECT_EQ(c.after.count("Relu"), 0u);
  EXPECT_LT(c.after["Conv"] + c.after["Add"],
            c.before["Conv"] + c.before["Add"]);
}

// The conv-layout pass on a backend that prefers NHWC (the Interpreter,
// told so through CompileOptions::convLayout): every Conv becomes a
// ConvNHWC, transpose-opt cancels the transposes between them, and the
// outputs do not change.
TEST_P(ZooNHWC, NHWCConvKeepsOutputs) {
  PipelineCounts c;
  ASSERT_NO_FATAL_FAILURE(
      checkPipelineKeepsOutputs(GetParam(), ConvLayout::NHWC, c));
  EXPECT_EQ(c.after.count("Conv"), 0u);
  EXPECT_EQ(c.after["ConvNHWC"], c.before["Conv"]);
  // Only the edges keep a transpose: the network's input, around a
  // channels-first pooling, and before the classifier.
  EXPECT_LE(c.after["Transpose"], 4u);
}

INSTANTIATE_TEST_SUITE_P(Torchvision, Zoo,
                         ::testing::Values("resnet18", "mobilenet_v2"));

// googlenet's inception branches exercise merge-parallel (1x1 Convs over
// one input become one Conv and Slices). On the Interpreter each output
// channel is summed in the same order either way, so the outputs must be
// equal to those of the same pipeline without merge-parallel. (Against the
// lowering-only compile googlenet differs by 1.9e-5 of max|y| from folding
// 57 BatchNorms, above this suite's 1e-5; that is not what this checks.)
TEST(ZooGooglenet, MergeParallelKeepsOutputsExactly) {
  std::string base = zooDir() + "/googlenet";
  ASSERT_TRUE(llvm::sys::fs::exists(base + ".onnx"))
      << base << ".onnx is missing: run models/zoo/export.py";
  auto input = loadTensorFile(base + ".input.pb");
  ASSERT_TRUE(bool(input)) << llvm::toString(input.takeError());
  std::vector<Tensor> outs[2];
  for (int merged = 0; merged < 2; ++merged) {
    Module M;
    auto F = importONNXFile(base + ".onnx", M, ImportOptions());
    ASSERT_TRUE(bool(F)) << llvm::toString(F.takeError());
    auto before = countNodeKinds(**F);
    CompileOptions opts;
    opts.passes.verifyEach = true;
    if (!merged)
      opts.passes.disabled.insert("merge-parallel");
    auto got = runOnInterpreter(M, **F, opts, {&input->tensor});
    ASSERT_TRUE(bool(got)) << llvm::toString(got.takeError());
    outs[merged] = std::move(*got);
    auto after = countNodeKinds(**F);
    if (merged) {
      EXPECT_EQ(before["Conv"] - after["Conv"], 18u); // 27 Convs into 9
      EXPECT_EQ(after["Slice"], 27u);
    }
  }
  ASSERT_EQ(outs[0].size(), outs[1].size());
  for (size_t i = 0; i < outs[0].size(); ++i)
    expectRelClose(outs[1][i], outs[0][i], 0.0, "googlenet");
}
INSTANTIATE_TEST_SUITE_P(Torchvision, ZooNHWC,
                         ::testing::Values("resnet18", "mobilenet_v2"));
