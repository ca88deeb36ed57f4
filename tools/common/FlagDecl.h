//===- FlagDecl.h - One-expression declarations of tool flags ---*- C++ -*-===//
//
// The tools declare most of their flags as strings naming a choice or a
// file; stringFlag states such a flag's name, values, default and help in
// one call, so each declaration reads as one line of a table.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_TOOLS_COMMON_FLAGDECL_H
#define EMBER_TOOLS_COMMON_FLAGDECL_H

#include "llvm/Support/CommandLine.h"

#include <string>

namespace ember {
namespace tools {

/// The flag -NAME=VALUE of \p cat: \p valueDesc names its values in -help,
/// \p init is its default. The option is constructed in place (C++17's
/// guaranteed elision; cl::opt is neither copied nor moved), so declare it
/// as `static llvm::cl::opt<std::string> x = stringFlag(...);`.
inline llvm::cl::opt<std::string>
stringFlag(llvm::cl::OptionCategory &cat, const char *name,
           const char *valueDesc, const char *init, const char *desc) {
  return llvm::cl::opt<std::string>(llvm::StringRef(name), llvm::cl::desc(desc),
                                    llvm::cl::value_desc(valueDesc),
                                    llvm::cl::init(init), llvm::cl::cat(cat));
}

} // namespace tools
} // namespace ember

#endif // EMBER_TOOLS_COMMON_FLAGDECL_H
