//===- QuantizationFlags.h - Profile-guided quantization flags --*- C++ -*-===//
//
// Glow's flag names, declared once for model-compiler, model-runner and
// image-classifier: -dump-profile, -load-profile, -quantization-schema,
// -quantization-precision, -quantization-precision-bias,
// -quantization-calibration, -enable-channelwise and
// -dump-quantization-report (docs/Quantization.md). The op kinds to keep in
// float come from -keep-original-precision-for-nodes (PrecisionFlags.h).
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_TOOLS_COMMON_QUANTIZATIONFLAGS_H
#define EMBER_TOOLS_COMMON_QUANTIZATIONFLAGS_H

#include "ember/Backend/Pipeline.h"
#include "ember/Quantization/Quantize.h"

#include "llvm/Support/CommandLine.h"

namespace ember {
namespace tools {

/// The category of the quantization flags.
llvm::cl::OptionCategory &quantizationFlagsCategory();

/// What the quantization flags ask for.
struct QuantizationRequest {
  std::string dumpProfile, loadProfile;
  bool report = false;
  QuantizationOptions options;
};

/// The parsed flags; an error names a bad value or a conflict. \p keepKinds
/// are -keep-original-precision-for-nodes' kinds.
llvm::Expected<QuantizationRequest>
getQuantizationRequest(const std::vector<std::string> &keepKinds);

/// With -load-profile: reads the profile, quantizes \p F (\p names from the
/// import) and makes the quantized products integer unless
/// -quantized-products said otherwise. Without it: nothing, no layers.
llvm::Expected<std::vector<QuantizedLayer>>
applyLoadProfile(const QuantizationRequest &req, Function &F, ValueNames &names,
                 CompileOptions &opts);

} // namespace tools
} // namespace ember

#endif // EMBER_TOOLS_COMMON_QUANTIZATIONFLAGS_H
