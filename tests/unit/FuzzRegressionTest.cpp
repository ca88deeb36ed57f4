//===- FuzzRegressionTest.cpp - Inputs the fuzzer found, kept forever -----===//
//
// Every input in tests/fuzz/regressions once crashed ember-fuzz-import or
// made a sanitizer report. Each must now give a clean error containing the
// listed text, through the same steps the fuzz target runs (import, then
// the Interpreter's pipeline up to memory planning). Under
// scripts/test.sh --sanitize these also prove the sanitizers stay quiet.
//
//===----------------------------------------------------------------------===//
#include "ember/Backend/Pipeline.h"
#include "ember/Importer/ONNXImporter.h"

#include "TestUtils.h"

#include "llvm/Support/MemoryBuffer.h"

using namespace ember;
using namespace ember::test;

namespace {

struct Regression {
  const char *file;   ///< In tests/fuzz/regressions.
  const char *expect; ///< Text the error must contain.
};

const Regression kRegressions[] = {
    // Signed overflow multiplying Reshape's target dims (UBSan).
    {"reshape-shape-overflow.onnx", "(Reshape): invalid shape"},
    // Gemm with a bool B imported, then lowering's MatMul builder aborted.
    {"gemm-bool-b.onnx", "element kinds differ: A float<2 x 10>, B bool"},
    // Signed overflow in Type::size() of a huge Tile result (UBSan, CI).
    {"tile-size-overflow.onnx", "more than the maximum"},
    // InstanceNormalization of a rank-1 input wrote past a shape (ASan, CI).
    {"instancenorm-rank1.onnx", "has no channel dimension"},
    // An LSTM whose bias is a scalar indexed a vector of its rank (UBSan).
    {"gru-short-bias.onnx", "too small for the gates it must hold"},
    // A quantization parameter reshaped along an axis past the rank (ASan).
    {"qlinearmatmul-axis.onnx", "is out of range for rank"},
    // Tile repeats whose product overflowed the result dims (UBSan).
    {"tile-repeats-overflow.onnx", "overflow the dims"},
    // NegativeLogLikelihoodLoss with a scalar target (UBSan).
    {"nllloss-scalar-target.onnx", "must have one dim less than the input"},
    // Constant folding added int64 values that overflow (UBSan); valid
    // input: it must compile, with wrapping arithmetic ("" matches success).
    {"int64-add-overflow.onnx", ""},
    // MaxUnpool with fewer strides than kernel dims read past them (ASan).
    {"maxunpool-short-strides.onnx", "strides need one value and pads two"},
};

/// The error of importing and compiling \p bytes, or "" on success.
std::string pipelineError(llvm::StringRef bytes) {
  registerAllBackends();
  Module M;
  auto F = importONNXBuffer(bytes, "regression", M);
  if (!F)
    return llvm::toString(F.takeError());
  auto B = getBackend("Interpreter");
  if (!B)
    return llvm::toString(B.takeError());
  auto ir = optimizeAndGenerateIR(**F, **B, CompileOptions());
  if (!ir)
    return llvm::toString(ir.takeError());
  MemoryPlan plan = planMemory(**ir);
  if (llvm::Error err = verifyMemoryPlan(**ir, plan))
    return llvm::toString(std::move(err));
  return "";
}

class FuzzRegressionTest : public ::testing::TestWithParam<Regression> {};

} // namespace

TEST_P(FuzzRegressionTest, GivesACleanError) {
  std::string path = sourceDir() + "/tests/fuzz/regressions/" + GetParam().file;
  auto buf = llvm::MemoryBuffer::getFile(path);
  ASSERT_TRUE(bool(buf)) << path << ": " << buf.getError().message();
  std::string err = pipelineError((*buf)->getBuffer());
  EXPECT_NE(err.find(GetParam().expect), std::string::npos)
      << "error: '" << err << "'";
}

INSTANTIATE_TEST_SUITE_P(Found, FuzzRegressionTest,
                         ::testing::ValuesIn(kRegressions),
                         [](const auto &info) {
                           std::string n = info.param.file;
                           n = n.substr(0, n.find('.'));
                           for (char &c : n)
                             if (!isalnum(c))
                               c = '_';
                           return n;
                         });
