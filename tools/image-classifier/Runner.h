//===- Runner.h - What image-classifier runs: a model or a bundle -*- C++
//-*-===//
//
// The classifier needs one float32 input it fills and one float32 output it
// reads. Two implementations provide that: an ONNX model compiled in-process
// for a registered backend, and a pre-compiled bundle loaded with dlopen.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_TOOLS_IMAGECLASSIFIER_RUNNER_H
#define EMBER_TOOLS_IMAGECLASSIFIER_RUNNER_H

#include "QuantizationFlags.h"

#include "ember/Optimizer/PassManager.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ember {

/// A named float32 tensor of a network.
struct TensorDesc {
  std::string name;
  std::vector<int64_t> dims;
};

/// A network with one input to fill and one output to read, run in place.
class NetworkRunner {
public:
  virtual ~NetworkRunner() = default;
  /// The input image batch tensor.
  const TensorDesc &getInput() const { return input_; }
  /// The classifier output; dims[0] is the batch.
  const TensorDesc &getOutput() const { return output_; }
  /// Where to write the input values before run().
  virtual float *inputData() = 0;
  /// The output values after run().
  virtual const float *outputData() const = 0;
  /// Runs the network once.
  virtual llvm::Error run() = 0;
  /// Called after the last run (writes -dump-profile's file).
  virtual llvm::Error finish() { return llvm::Error::success(); }

protected:
  TensorDesc input_, output_;
};

/// What to load and how to bind it.
struct RunnerOptions {
  /// The graph input to feed images to; empty: the only input.
  std::string inputName;
  /// Images per run; unset: 1, or the batch a model fixes.
  std::optional<unsigned> minibatch;
  /// Values of other symbolic dims (-onnx-define-symbol), by name.
  std::vector<std::pair<std::string, int64_t>> symbols;
  /// Pass-manager instruments for compiling a model (tools/common flags).
  PassInstrumentOptions passes;
  /// -precision choices for compiling a model.
  PrecisionOptions precision;
  /// -dump-profile / -load-profile and the quantization flags.
  tools::QuantizationRequest quant;
};

/// Imports the ONNX model at \p path and compiles it for \p backend. A
/// symbolic batch dimension of the input is set to the minibatch size; a
/// fixed one must equal it.
llvm::Expected<std::unique_ptr<NetworkRunner>>
createModelRunner(llvm::StringRef path, llvm::StringRef backend,
                  const RunnerOptions &opts);

/// Loads the bundle \p prefix (DIR/NAME): dlopens DIR/NAME.so, reads
/// NAME_info, loads DIR/NAME.weights.bin unless the weights are embedded,
/// and allocates the three regions 64-byte aligned.
llvm::Expected<std::unique_ptr<NetworkRunner>>
createBundleRunner(llvm::StringRef prefix, const RunnerOptions &opts);

} // namespace ember

#endif // EMBER_TOOLS_IMAGECLASSIFIER_RUNNER_H
