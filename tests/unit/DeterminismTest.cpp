//===- DeterminismTest.cpp - Same model, same artifacts, same outputs -----===//
//
// Compiling a model twice, each time into a fresh Module, must give
// byte-identical artifacts (the lowered graph text, the IR text with every
// buffer's planned offset, the plan's sizes), and running twice on the same
// input must give bit-identical outputs. The two compiles live in one
// process at different heap addresses, so anything ordered by pointer shows
// up here. tests/determinism/run.sh repeats the check across processes.
//
//===----------------------------------------------------------------------===//
#include "ember/Graph/Printer.h"
#include "ember/IR/IRPrinter.h"
#include "ember/Importer/ONNXImporter.h"

#include "TestUtils.h"

#include <cstring>
#include <map>
#include <random>

using namespace ember;
using namespace ember::test;

namespace {

/// Everything one compile produces that must not vary, by name. When a
/// backend writes bundles, add each bundle file here as "bundle/NAME".
using Artifacts = std::map<std::string, std::string>;

struct Compiled {
  Module M;
  CompiledNetwork net;
  Artifacts artifacts;
};

void compileModel(const std::string &path, const std::string &backend,
                  Compiled &c) {
  registerAllBackends();
  auto F = importONNXFile(path, c.M);
  ASSERT_TRUE(bool(F)) << llvm::toString(F.takeError());
  auto B = getBackend(backend);
  ASSERT_TRUE(bool(B)) << llvm::toString(B.takeError());
  std::string graph;
  llvm::raw_string_ostream graphOS(graph);
  CompileOptions opts;
  opts.dumpGraph = &graphOS;
  auto net = compileFunction(**F, **B, opts);
  ASSERT_TRUE(bool(net)) << llvm::toString(net.takeError());
  c.net = std::move(*net);
  const MemoryPlan &p = c.net.plan;
  c.artifacts["graph"] = graph;
  c.artifacts["ir"] = irToString(*c.net.ir, &p);
  c.artifacts["plan"] =
      llvm::formatv("{0} {1} {2} {3} {4}", p.constantSize, p.mutableSize,
                    p.activationSize, p.activationLowerBound,
                    p.activationNaiveSize)
          .str();
}

/// Runs \p c once on inputs drawn from \p seed; returns the outputs.
std::vector<Tensor> runOnce(Compiled &c, unsigned seed) {
  Bindings b;
  std::mt19937 gen(seed);
  for (Placeholder *p : c.M.getInputPlaceholders()) {
    Tensor t(*p->getType());
    t.randomize(-1.f, 1.f, gen);
    b.insert(p, std::move(t));
  }
  if (llvm::Error err = c.net.function->run(b)) {
    ADD_FAILURE() << llvm::toString(std::move(err));
    return {};
  }
  std::vector<Tensor> outs;
  for (Placeholder *p : c.M.getOutputPlaceholders())
    outs.push_back(b.get(p)->clone());
  return outs;
}

void expectBitIdentical(const std::vector<Tensor> &a,
                        const std::vector<Tensor> &b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(a[i].getType(), b[i].getType());
    EXPECT_EQ(0, std::memcmp(a[i].data(), b[i].data(), a[i].sizeInBytes()))
        << "output " << i << " differs between runs";
  }
}

class DeterminismTest
    : public ::testing::TestWithParam<std::pair<std::string, std::string>> {
protected:
  std::string modelPath() const { return sourceDir() + GetParam().second; }
};

} // namespace

TEST_P(DeterminismTest, CompilingTwiceGivesIdenticalArtifacts) {
  Compiled a, b;
  ASSERT_NO_FATAL_FAILURE(compileModel(modelPath(), GetParam().first, a));
  ASSERT_NO_FATAL_FAILURE(compileModel(modelPath(), GetParam().first, b));
  ASSERT_EQ(a.artifacts.size(), b.artifacts.size());
  for (const auto &[name, bytes] : a.artifacts) {
    EXPECT_FALSE(bytes.empty()) << name;
    EXPECT_EQ(bytes, b.artifacts[name]) << name << " differs between compiles";
  }
}

TEST_P(DeterminismTest, RunningTwiceGivesBitIdenticalOutputs) {
  Compiled a, b;
  ASSERT_NO_FATAL_FAILURE(compileModel(modelPath(), GetParam().first, a));
  ASSERT_NO_FATAL_FAILURE(compileModel(modelPath(), GetParam().first, b));
  std::vector<Tensor> first = runOnce(a, 7);
  ASSERT_FALSE(first.empty());
  // The same compiled function again, then a second compile of the model.
  expectBitIdentical(first, runOnce(a, 7));
  expectBitIdentical(first, runOnce(b, 7));
  // And the check can fail: other inputs give other outputs.
  std::vector<Tensor> other = runOnce(a, 8);
  EXPECT_NE(
      0, std::memcmp(first[0].data(), other[0].data(), first[0].sizeInBytes()));
}

INSTANTIATE_TEST_SUITE_P(
    Models, DeterminismTest,
    ::testing::Values(std::make_pair("Interpreter",
                                     "/models/digits/digits.onnx")),
    [](const auto &info) { return info.param.first + "_digits"; });
