//===- ImportFuzzer.cpp - libFuzzer target: ONNX bytes to planned IR ------===//
//
// Feeds arbitrary bytes to the ONNX importer and, when they import, runs the
// compile pipeline for the Interpreter up to memory planning (no code is
// generated or run). Any crash, sanitizer report, leak or error-free return
// of an invalid plan is a finding; a clean llvm::Error is the expected
// outcome for nearly every input.
//
//===----------------------------------------------------------------------===//
#include "ember/Backend/Pipeline.h"
#include "ember/Importer/ONNXImporter.h"

#include "glog/logging.h"

#include <cstdint>
#include <cstdlib>

using namespace ember;

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  google::InitGoogleLogging("ember-fuzz-import");
  FLAGS_minloglevel = 2;
  registerAllBackends();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef bytes(reinterpret_cast<const char *>(data), size);
  Module M;
  ImportOptions opts;
  // Symbolic dims get a small value so that more models reach the pipeline.
  opts.symbols = {{"N", 1}, {"batch", 1}, {"batch_size", 1}};
  auto F = importONNXBuffer(bytes, "fuzz-input", M, opts);
  if (!F) {
    llvm::consumeError(F.takeError());
    return 0;
  }
  auto B = getBackend("Interpreter");
  if (!B) {
    llvm::consumeError(B.takeError());
    std::abort(); // The backend is built in; not finding it is a bug.
  }
  auto ir = optimizeAndGenerateIR(**F, **B, CompileOptions());
  if (!ir) {
    llvm::consumeError(ir.takeError());
    return 0;
  }
  MemoryPlan plan = planMemory(**ir);
  if (llvm::Error err = verifyMemoryPlan(**ir, plan)) {
    llvm::errs() << "invalid memory plan: " << errorToString(std::move(err))
                 << "\n";
    std::abort();
  }
  return 0;
}
