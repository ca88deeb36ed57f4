//===- DigitsTest.cpp - The shipped digits model against onnxruntime ------===//
//
// The reference outputs in models/digits/test_data were produced by
// onnxruntime (models/digits/make_reference.py). Tolerance 1e-4 absolute:
// logits are O(10) and float32 summation order differs between the two
// implementations, which moves results by a few ulps (observed < 5e-6).
//
//===----------------------------------------------------------------------===//
#include "ember/Importer/ONNXImporter.h"
#include "ember/Importer/TensorIO.h"

#include "../unit/TestUtils.h"

using namespace ember;
using namespace ember::test;

class DigitsTest : public ::testing::TestWithParam<std::string> {};

TEST_P(DigitsTest, MatchesOnnxruntimeOnAllTestInputs) {
  std::string dir = sourceDir() + "/models/digits/";
  unsigned correct = 0;
  for (int label = 0; label < 10; ++label) {
    Module M;
    auto F = importONNXFile(dir + "digits.onnx", M);
    ASSERT_TRUE(bool(F)) << llvm::toString(F.takeError());
    std::string base = dir + "test_data/digit-" + std::to_string(label);
    auto in = loadTensorFile(base + ".input.pb");
    auto ref = loadTensorFile(base + ".output.pb");
    ASSERT_TRUE(bool(in)) << llvm::toString(in.takeError());
    ASSERT_TRUE(bool(ref)) << llvm::toString(ref.takeError());
    std::vector<Tensor> ins;
    ins.push_back(std::move(in->tensor));
    auto out = compileAndRun(M, **F, GetParam(), std::move(ins));
    ASSERT_EQ(out.size(), 1u);
    expectNear(out[0], ref->tensor, 1e-4f);
    auto h = out[0].getHandle<float>();
    correct += std::max_element(h.begin(), h.end()) - h.begin() == label;
  }
  EXPECT_GE(correct, 9u);
}

INSTANTIATE_TEST_SUITE_P(Backends, DigitsTest,
                         ::testing::Values("Interpreter", "CPU"));
#ifdef EMBER_WITH_CUDA
// The CUDA renderer's kernels, run on the host (tests/cuda).
INSTANTIATE_TEST_SUITE_P(CUDA, DigitsTest,
                         ::testing::Values("CUDAHostEmu", "CUDAHostEmuGen"));
#endif
