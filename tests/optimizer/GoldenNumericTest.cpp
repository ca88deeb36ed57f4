//===- GoldenNumericTest.cpp - Golden graphs keep their outputs -----------===//
//
// The FileCheck tests (run_golden.sh) check what each pass does to the
// structure. This test checks that it does not change the numbers: every
// golden graph is run on the Interpreter as written and after its "//
// PASSES:" pipeline (with the Conv layout of "// FLAGS: -conv-layout=..."),
// after the full default pipeline, and after the full default pipeline
// with NHWC convolutions, on the same random inputs.
//
//===----------------------------------------------------------------------===//
#include "OptTestUtils.h"

#include "ember/Graph/Parser.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <random>

using namespace ember;
using namespace ember::test;

static std::vector<std::string> goldenFiles() {
  std::vector<std::string> files;
  std::error_code ec;
  std::string dir = std::string(EMBER_SOURCE_DIR) + "/tests/optimizer/golden";
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec;
       it.increment(ec))
    if (llvm::StringRef(it->path()).ends_with(".txt"))
      files.push_back(it->path());
  std::sort(files.begin(), files.end());
  return files;
}

class GoldenNumeric : public ::testing::TestWithParam<std::string> {};

TEST_P(GoldenNumeric, PassesKeepOutputs) {
  auto buf = llvm::MemoryBuffer::getFile(GetParam());
  ASSERT_TRUE(bool(buf)) << GetParam();
  llvm::StringRef text = (*buf)->getBuffer();
  llvm::StringRef passes = text.split("// PASSES:").second.split('\n').first;
  llvm::StringRef flags = text.split("// FLAGS:").second.split('\n').first;
  std::optional<ConvLayout> layout;
  if (flags.contains("-conv-layout=nhwc"))
    layout = ConvLayout::NHWC;
  auto P = parsePipeline(passes);
  ASSERT_TRUE(bool(P)) << llvm::toString(P.takeError());

  // Same text, same seed: the three modules hold equal constants.
  Module refM, passM, fullM, nhwcM;
  auto refF = parseFunction(text, refM);
  auto passF = parseFunction(text, passM);
  auto fullF = parseFunction(text, fullM);
  auto nhwcF = parseFunction(text, nhwcM);
  ASSERT_TRUE(refF && passF && fullF && nhwcF);

  std::mt19937 gen(7);
  std::vector<Tensor> inputs;
  std::vector<const Tensor *> inPtrs;
  for (Placeholder *p : refM.getInputPlaceholders()) {
    inputs.emplace_back(*p->getType());
    inputs.back().randomize(-2.f, 2.f, gen);
  }
  for (Tensor &t : inputs)
    inPtrs.push_back(&t);

  auto ref = runOnInterpreter(refM, **refF, getMinimalPipeline(), inPtrs);
  ASSERT_TRUE(bool(ref)) << llvm::toString(ref.takeError());
  Pipeline withLowering = *P;
  for (const PipelineStage &s : getMinimalPipeline())
    withLowering.push_back(s);
  auto got =
      runOnInterpreter(passM, **passF, withLowering, inPtrs, true, layout);
  ASSERT_TRUE(bool(got)) << llvm::toString(got.takeError());
  auto full = runOnInterpreter(fullM, **fullF, getDefaultPipeline(), inPtrs);
  ASSERT_TRUE(bool(full)) << llvm::toString(full.takeError());
  auto nhwc = runOnInterpreter(nhwcM, **nhwcF, getDefaultPipeline(), inPtrs,
                               true, ConvLayout::NHWC);
  ASSERT_TRUE(bool(nhwc)) << llvm::toString(nhwc.takeError());
  ASSERT_EQ(ref->size(), got->size());
  ASSERT_EQ(ref->size(), full->size());
  ASSERT_EQ(ref->size(), nhwc->size());
  // Folding BatchNorm or constants reassociates float arithmetic: a few
  // ulps per element, far below 1e-5 of the output's magnitude.
  for (size_t i = 0; i < ref->size(); ++i) {
    expectRelClose((*got)[i], (*ref)[i], 1e-5, "output " + std::to_string(i));
    expectRelClose((*full)[i], (*ref)[i], 1e-5,
                   "default pipeline, output " + std::to_string(i));
    expectRelClose((*nhwc)[i], (*ref)[i], 1e-5,
                   "default pipeline with NHWC Conv, output " +
                       std::to_string(i));
  }
}

INSTANTIATE_TEST_SUITE_P(Golden, GoldenNumeric,
                         ::testing::ValuesIn(goldenFiles()),
                         [](const ::testing::TestParamInfo<std::string> &info) {
                           std::string name =
                               llvm::sys::path::stem(info.param).str();
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });
