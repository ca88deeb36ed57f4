//===- TensorFuzzer.cpp - libFuzzer target: input tensor files ------------===//
//
// model-runner reads input tensors from user files, as ONNX TensorProto
// (.pb) or NumPy (.npy). The first input byte picks the parser, the rest is
// the file. A clean llvm::Error, or a tensor whose every byte can be read,
// are the only accepted outcomes.
//
//===----------------------------------------------------------------------===//
#include "ember/Importer/TensorIO.h"

#include <cstdint>

using namespace ember;

/// Where the checksum of each tensor goes, so the reads are not optimized
/// away (a global: clang warns about a local that is only ever set).
volatile uint8_t emberFuzzSink;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0)
    return 0;
  llvm::StringRef bytes(reinterpret_cast<const char *>(data) + 1, size - 1);
  auto t = (data[0] & 1) ? parseNpy(bytes, "fuzz.npy")
                         : parseTensorProto(bytes, "fuzz.pb");
  if (!t) {
    llvm::consumeError(t.takeError());
    return 0;
  }
  // Read every byte, so that ASan checks the whole buffer was allocated.
  const auto *p = reinterpret_cast<const uint8_t *>(t->tensor.data());
  uint8_t sum = 0;
  for (size_t i = 0, e = t->tensor.sizeInBytes(); i < e; ++i)
    sum ^= p[i];
  emberFuzzSink = sum;
  return 0;
}
