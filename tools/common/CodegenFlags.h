//===- CodegenFlags.h - Code generation flags shared by the tools -*- C++ -*-//
//
// -target, -mcpu, -mattr, -print-target, -cpu-* and -cuda-*, for
// model-compiler and model-runner: declared once here and turned into the
// CodegenOptions the backends take (ember/Backend/CodegenOptions.h).
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_TOOLS_COMMON_CODEGENFLAGS_H
#define EMBER_TOOLS_COMMON_CODEGENFLAGS_H

#include "ember/Backend/CodegenOptions.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

namespace ember {
namespace tools {

/// The category of the code generation flags (pass it to
/// HideUnrelatedOptions).
llvm::cl::OptionCategory &codegenFlagsCategory();

/// The options the parsed flags name; the error names a bad value. Call it
/// after cl::ParseCommandLineOptions.
llvm::Expected<CodegenOptions> getCodegenOptions();

/// True if -print-target was given; then the target description of
/// \p opts has been printed to \p os (or the error that it has none).
llvm::Expected<bool> printTargetIfAsked(const CodegenOptions &opts,
                                        llvm::raw_ostream &os);

/// The stream -print-conv-plans sends the backend's convolution plans to
/// (null without the flag).
llvm::raw_ostream *convPlansStream();

} // namespace tools
} // namespace ember

#endif
