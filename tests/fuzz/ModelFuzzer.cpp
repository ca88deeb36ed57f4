//===- ModelFuzzer.cpp - libFuzzer target: mutated valid models, compiled -===//
//
// The graph-level fuzzer (scripts/fuzz.sh model). It starts from valid
// models (tests/fuzz/model-seeds and the ONNX test data's node models) and
// mutates them structurally with GraphMutator (attributes, dimensions,
// element types, op types, wiring, initializers, opsets), so that most
// inputs get past the protobuf and the validator and reach the importer's
// per-op checks, the optimizer and the compiler. Each input is imported
// and taken through the Interpreter's pipeline (optimizer, lowering, IR,
// memory plan) and, when its plan is small, compiled and run on inputs in
// [0, 1). The outcome must be a value or an llvm::Error with a message: a
// crash, a sanitizer report, a leak, a timeout, an invalid memory plan or
// an empty error is a finding.
//
//===----------------------------------------------------------------------===//
#include "GraphMutator.h"
#include "RunSmall.h"

#include "ember/Backend/Pipeline.h"
#include "ember/Importer/ONNXImporter.h"

#include "glog/logging.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>

using namespace ember;

extern "C" size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t maxSize);

namespace {

/// An error must say something (the tools print it as their one line).
void expectMessage(llvm::Error err) {
  std::string msg = errorToString(std::move(err));
  if (msg.empty()) {
    llvm::errs() << "an error without a message\n";
    std::abort();
  }
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  google::InitGoogleLogging("ember-fuzz-model");
  FLAGS_minloglevel = 2;
  registerAllBackends();
  return 0;
}

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size,
                                          size_t maxSize, unsigned int seed) {
  // One input in eight gets byte mutations instead (they also reach the
  // parse and validator errors); so does anything that is not a model.
  if (seed % 8 != 0) {
    std::string out = fuzz::mutateModel(
        std::string(reinterpret_cast<const char *>(data), size), seed);
    if (!out.empty() && out.size() <= maxSize) {
      std::memcpy(data, out.data(), out.size());
      return out.size();
    }
  }
  return LLVMFuzzerMutate(data, size, maxSize);
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef bytes(reinterpret_cast<const char *>(data), size);
  Module M;
  ImportOptions opts;
  opts.symbols = {{"N", 1}, {"batch", 1}, {"batch_size", 1}};
  auto F = importONNXBuffer(bytes, "fuzz-input", M, opts);
  if (!F) {
    expectMessage(F.takeError());
    return 0;
  }
  auto B = getBackend("Interpreter");
  if (!B)
    std::abort(); // The backend is built in; not finding it is a bug.
  auto ir = optimizeAndGenerateIR(**F, **B, CompileOptions());
  if (!ir) {
    expectMessage(ir.takeError());
    return 0;
  }
  MemoryPlan plan = planMemory(**ir);
  if (llvm::Error err = verifyMemoryPlan(**ir, plan)) {
    llvm::errs() << "invalid memory plan: " << errorToString(std::move(err))
                 << "\n";
    std::abort();
  }
  if (llvm::Error err = fuzz::runSmall(M, **B, std::move(*ir), plan))
    expectMessage(std::move(err));
  return 0;
}
