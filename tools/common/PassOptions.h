//===- PassOptions.h - Pass-manager flags shared by the tools ---*- C++ -*-===//
//
// registerPassOptions() adds -print-after, -print-after-all, -verify-each,
// -time-passes, -disable-pass, -dump-graph-dot-after and
// -print-optimization-stats to a tool's command line (llvm::cl, in the
// "pass manager options" category).
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_TOOLS_COMMON_PASSOPTIONS_H
#define EMBER_TOOLS_COMMON_PASSOPTIONS_H

#include "ember/Backend/Pipeline.h"

#include "llvm/Support/CommandLine.h"

namespace ember {
namespace tools {

/// The category of the shared flags (pass it to HideUnrelatedOptions).
llvm::cl::OptionCategory &passOptionsCategory();

/// Adds the flags to the command line; call it before
/// cl::ParseCommandLineOptions.
void registerPassOptions();

/// Fills \p opts.passes from the flags. Errors name the bad flag value
/// (an unknown pass name).
llvm::Error fillPassOptions(CompileOptions &opts);

} // namespace tools
} // namespace ember

#endif
