//===- CPUFlags.h - CPU backend flags shared by the tools -------*- C++ -*-===//
//
// -cpu-winograd, for model-compiler and model-runner: declared once here
// and applied to the CPU backend's process-wide settings
// (ember/Backend/CPUOptions.h).
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_TOOLS_COMMON_CPUFLAGS_H
#define EMBER_TOOLS_COMMON_CPUFLAGS_H

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Error.h"

namespace ember {
namespace tools {

/// The category of the CPU flags (pass it to HideUnrelatedOptions).
llvm::cl::OptionCategory &cpuFlagsCategory();

/// Applies the parsed flags to the CPU backend; the error names a bad
/// value. Call it after cl::ParseCommandLineOptions.
llvm::Error applyCPUFlags();

} // namespace tools
} // namespace ember

#endif
