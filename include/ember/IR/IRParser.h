//===- IRParser.h - Reads the textual IR back ------------------*- C++ -*-===//
//
// The parser accepts exactly what printIR writes (see docs/IR.md), so that
// print(parse(print(F))) == print(F). Comments ("// ...") and the memory
// section are informational and skipped.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_IR_IRPARSER_H
#define EMBER_IR_IRPARSER_H

#include "ember/IR/IR.h"

namespace ember {

/// A parsed IRFunction with the Module that owns its types and the zero
/// payloads of its constant weights.
struct ParsedIR {
  std::unique_ptr<Module> module;
  std::unique_ptr<IRFunction> function;
};

/// Parses \p text. Constant weights get a zero-filled payload unless
/// \p constants (if given) holds a Constant of the same name and type, whose
/// payload is then used. Errors name \p bufferName and the line.
llvm::Expected<ParsedIR> parseIR(llvm::StringRef text,
                                 llvm::StringRef bufferName = "<ir>",
                                 const Module *constants = nullptr);

} // namespace ember

#endif // EMBER_IR_IRPARSER_H
