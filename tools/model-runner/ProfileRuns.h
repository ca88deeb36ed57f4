//===- ProfileRuns.h - model-runner's profile and report modes -*- C++ -*-===//
//
// With -dump-profile or -dump-quantization-report, model-runner runs the
// model once per input set: each -input value is a file or a directory of
// files (sorted by name); the values fill the model's inputs in order (or
// by NAME=), and a set is complete when every input has a value.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_TOOLS_MODELRUNNER_PROFILERUNS_H
#define EMBER_TOOLS_MODELRUNNER_PROFILERUNS_H

#include "QuantizationFlags.h"

#include "ember/Importer/ONNXImporter.h"

#include "llvm/Support/raw_ostream.h"

namespace ember {
namespace tools {

/// How the runs are made.
struct ProfileRunSetup {
  std::string modelPath;
  ImportOptions importOptions;
  const Backend *backend = nullptr;
  std::vector<std::string> inputSpecs;
  /// The compile of the (quantized) model: flags, codegen.
  CompileOptions compile;
};

/// -dump-profile: runs the float model over every input set and writes the
/// profile.
llvm::Error runDumpProfile(const ProfileRunSetup &s,
                           const QuantizationRequest &req,
                           llvm::raw_ostream &os);

/// -dump-quantization-report: runs the float and the quantized model over
/// every input set and prints each quantized layer's SQNR.
llvm::Error runQuantizationReport(ProfileRunSetup s,
                                  const QuantizationRequest &req,
                                  llvm::raw_ostream &os);

} // namespace tools
} // namespace ember

#endif // EMBER_TOOLS_MODELRUNNER_PROFILERUNS_H
