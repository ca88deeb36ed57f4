//===- ImportFlags.h - Import options from command-line flags ---*- C++ -*-===//
//
// Shared by the tools (model-runner, model-compiler): parses
//   -onnx-define-symbol=NAME,VALUE        a value for a symbolic dim
//   -model-input=NAME,TYPE,[D0,D1,...]    a full input type (Glow syntax)
// into ImportOptions. TYPE is one of float (float32), float16, double
// (float64), int8, uint8, int16, uint16, int32, uint32, int64, uint64, bool,
// or Ember's short names (i64, u8, ...).
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_TOOLS_COMMON_IMPORTFLAGS_H
#define EMBER_TOOLS_COMMON_IMPORTFLAGS_H

#include "ember/Importer/ONNXImporter.h"

#include "llvm/Support/CommandLine.h"

namespace ember {
namespace tools {

/// Parses "NAME,VALUE" (VALUE a positive integer).
llvm::Expected<std::pair<std::string, int64_t>>
parseSymbolFlag(llvm::StringRef spec);

/// Parses "NAME,TYPE,[D0,D1,...]" ("[]" is a scalar).
llvm::Expected<std::pair<std::string, Type>>
parseModelInputFlag(llvm::StringRef spec);

/// The element kind called \p name in a -model-input flag.
std::optional<ElemKind> parseTypeName(llvm::StringRef name);

/// ImportOptions from the values of the two flags; the error names the
/// offending flag value. A name given twice is an error.
llvm::Expected<ImportOptions>
makeImportOptions(llvm::ArrayRef<std::string> symbols,
                  llvm::ArrayRef<std::string> modelInputs);

/// The category of -onnx-define-symbol and -model-input, declared once for
/// model-compiler and model-runner (ImportFlagOptions.cpp, in
/// EmberToolOptions); pass it to HideUnrelatedOptions.
llvm::cl::OptionCategory &importFlagsCategory();

/// ImportOptions from those flags, with the constant evaluator that folds
/// shape arithmetic at import; the error names the offending flag value.
/// Call it after cl::ParseCommandLineOptions.
llvm::Expected<ImportOptions> getImportOptions();

} // namespace tools
} // namespace ember

#endif
