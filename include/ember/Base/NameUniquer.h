//===- NameUniquer.h - Unique names within a scope -------------*- C++ -*-===//
#ifndef EMBER_BASE_NAMEUNIQUER_H
#define EMBER_BASE_NAMEUNIQUER_H

#include "llvm/ADT/StringRef.h"

#include <string>
#include <unordered_map>
#include <unordered_set>

namespace ember {

/// Hands out names that are unique within one scope: the requested name if
/// it is free, else the name with the smallest free "_N" suffix.
class NameUniquer {
public:
  std::string get(llvm::StringRef name) {
    std::string base = name.empty() ? std::string("v") : name.str();
    if (used_.insert(base).second)
      return base;
    unsigned &n = next_[base];
    std::string candidate;
    do
      candidate = base + "_" + std::to_string(++n);
    while (!used_.insert(candidate).second);
    return candidate;
  }
  /// Returns \p name to the pool (after the thing it named is deleted).
  void release(llvm::StringRef name) { used_.erase(name.str()); }

private:
  std::unordered_set<std::string> used_;
  std::unordered_map<std::string, unsigned> next_;
};

} // namespace ember

#endif // EMBER_BASE_NAMEUNIQUER_H
