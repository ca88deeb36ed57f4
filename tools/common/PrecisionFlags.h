//===- PrecisionFlags.h - -precision and its node list ----------*- C++ -*-===//
//
// -precision and -keep-original-precision-for-nodes, for model-compiler,
// model-runner and image-classifier: declared once here and turned into the
// PrecisionOptions of CodegenOptions (ember/Optimizer/Precision.h).
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_TOOLS_COMMON_PRECISIONFLAGS_H
#define EMBER_TOOLS_COMMON_PRECISIONFLAGS_H

#include "ember/Optimizer/Precision.h"

#include "llvm/Support/CommandLine.h"

namespace ember {
namespace tools {

/// The category of the precision flags (pass it to HideUnrelatedOptions).
llvm::cl::OptionCategory &precisionFlagsCategory();

/// The options the parsed flags name; the error names a bad value. Call it
/// after cl::ParseCommandLineOptions.
llvm::Expected<PrecisionOptions> getPrecisionOptions();

} // namespace tools
} // namespace ember

#endif // EMBER_TOOLS_COMMON_PRECISIONFLAGS_H
