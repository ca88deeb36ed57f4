//===- ZooIRTest.cpp - IR round trip and memory on exported zoo models ----===//
//
// Reads the models named by EMBER_ZOO_MODELS (comma-separated) from
// EMBER_ZOO_DIR (NAME.onnx, as models/zoo/export.py writes them); run by
// tests/zoo/run_zoo_tests.sh. A model the importer cannot read yet is
// reported and skipped; every other model must
//  - round-trip through the textual IR, before and after the IR optimizer;
//  - get an activation arena within 1.10 x the lower bound, with a plan the
//    overlap verifier accepts;
//  - (googlenet, densenet121, squeezenet1_1, inception_v3) have no concat
//    and no copy left after the IR optimizer.
//
//===----------------------------------------------------------------------===//
#include "ember/Backend/Pipeline.h"
#include "ember/Graph/Verifier.h"
#include "ember/IR/IRGen.h"
#include "ember/IR/IRParser.h"
#include "ember/IR/IRPrinter.h"
#include "ember/Importer/ONNXImporter.h"

#include "gtest/gtest.h"

#include "llvm/ADT/StringExtras.h"

#include <cstdlib>

using namespace ember;

namespace {
std::vector<std::string> zooModels() {
  const char *list = std::getenv("EMBER_ZOO_MODELS");
  llvm::SmallVector<llvm::StringRef, 9> names;
  llvm::StringRef(list ? list : "").split(names, ',', -1, false);
  return {names.begin(), names.end()};
}

std::string zooPath(const std::string &name) {
  const char *dir = std::getenv("EMBER_ZOO_DIR");
  return std::string(dir ? dir : ".") + "/" + name + ".onnx";
}

/// The model's IR for the Interpreter, with or without IR optimization;
/// null (and a note on stdout) when the model does not import yet.
struct ZooIR {
  Module M;
  Function *F = nullptr;
  std::unique_ptr<IRFunction> ir;
  ZooIR(const std::string &name, bool optimize) {
    auto F = importONNXFile(zooPath(name), M);
    if (!F) {
      std::string msg = llvm::toString(F.takeError());
      std::printf("%s: not importable yet: %s\n", name.c_str(),
                  msg.substr(0, msg.find('\n')).c_str());
      return;
    }
    this->F = *F;
    registerAllBackends();
    CompileOptions opts;
    opts.optimizeIR = optimize;
    auto r = optimizeAndGenerateIR(
        **F, *llvm::cantFail(getBackend("Interpreter")), opts);
    if (!r) {
      ADD_FAILURE() << name << ": " << llvm::toString(r.takeError());
      return;
    }
    ir = std::move(*r);
  }
};
} // namespace

TEST(Zoo, IRRoundTrips) {
  for (const std::string &name : zooModels())
    for (bool optimize : {false, true}) {
      SCOPED_TRACE(name + (optimize ? " optimized" : " unoptimized"));
      ZooIR z(name, optimize);
      if (!z.ir)
        continue;
      std::string text = irToString(*z.ir);
      auto parsed = parseIR(text, name, &z.M);
      ASSERT_TRUE(bool(parsed)) << llvm::toString(parsed.takeError());
      EXPECT_TRUE(irToString(*parsed->function) == text);
    }
}

TEST(Zoo, ArenaWithinTenPercentOfLowerBound) {
  for (const std::string &name : zooModels()) {
    SCOPED_TRACE(name);
    ZooIR z(name, true);
    if (!z.ir)
      continue;
    MemoryPlan plan = planMemory(*z.ir);
    EXPECT_FALSE(bool(verifyMemoryPlan(*z.ir, plan)));
    EXPECT_LE(double(plan.activationSize),
              1.10 * double(plan.activationLowerBound));
    std::printf("%s: arena %zu, lower bound %zu, no reuse %zu\n", name.c_str(),
                plan.activationSize, plan.activationLowerBound,
                plan.activationNaiveSize);
    // The scheduler never does worse than the plain depth-first order.
    size_t chosen = schedulePeakBytes(*z.F, scheduleFunction(*z.F));
    size_t plain = schedulePeakBytes(*z.F, topologicalOrder(*z.F));
    EXPECT_LE(chosen, plain);
    std::printf("%s: schedule peak %zu, plain depth-first %zu\n", name.c_str(),
                chosen, plain);
  }
}

TEST(Zoo, ConcatCostsNoCopy) {
  for (const std::string &name : zooModels()) {
    // By prefix, so that variants of these models (re-exported ones, say)
    // are checked too.
    static const char *const concatNets[] = {"googlenet", "densenet121",
                                             "squeezenet1_1", "inception_v3"};
    if (llvm::none_of(concatNets, [&](const char *p) {
          return llvm::StringRef(name).starts_with(p);
        }))
      continue;
    SCOPED_TRACE(name);
    ZooIR plain(name, false), z(name, true);
    if (!z.ir)
      continue;
    auto count = [](const IRFunction &F, ValueKind kind) {
      unsigned n = 0;
      for (auto &I : F.getInstrs())
        n += I->getKind() == kind;
      return n;
    };
    EXPECT_GT(count(*plain.ir, ValueKind::ConcatInst), 0u);
    EXPECT_EQ(count(*z.ir, ValueKind::ConcatInst), 0u);
    EXPECT_EQ(count(*z.ir, ValueKind::CopyInst), 0u);
    std::printf("%s: %u concats before the IR optimizer, none after\n",
                name.c_str(), count(*plain.ir, ValueKind::ConcatInst));
  }
}
