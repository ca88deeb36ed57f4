//===- InputList.h - Which images to classify, and their labels -*- C++ -*-===//
#ifndef EMBER_TOOLS_IMAGECLASSIFIER_INPUTLIST_H
#define EMBER_TOOLS_IMAGECLASSIFIER_INPUTLIST_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <istream>
#include <string>
#include <vector>

namespace ember {

/// Where image paths come from; sources are concatenated in this order.
struct InputSources {
  /// Paths from the command line; "-" reads more paths from \c stdinStream.
  std::vector<std::string> args;
  /// Every .png/.jpg/.jpeg file (any case) directly in this directory,
  /// sorted by name.
  std::string dir;
  /// A file with one path per line (blank lines and '#' lines skipped).
  std::string listFile;
  std::istream *stdinStream = nullptr;
};

/// All image paths, in order. An empty result is an error.
llvm::Expected<std::vector<std::string>>
collectImagePaths(const InputSources &sources);

/// The lines of a labels file (line i = class i).
llvm::Expected<std::vector<std::string>> readLabels(llvm::StringRef path);

/// Parses "i,j,..." of non-negative integers; \p flag names the option.
llvm::Expected<std::vector<unsigned>> parseIndexList(llvm::StringRef text,
                                                     llvm::StringRef flag);

/// Parses "a,b,..." of floats; \p flag names the option.
llvm::Expected<std::vector<float>> parseFloatList(llvm::StringRef text,
                                                  llvm::StringRef flag);

} // namespace ember

#endif // EMBER_TOOLS_IMAGECLASSIFIER_INPUTLIST_H
