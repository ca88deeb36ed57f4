//===- Error.h - Error helpers for recoverable failures --------*- C++ -*-===//
//
// Anything user input can trigger returns llvm::Error / llvm::Expected<T>.
// These helpers make such errors terse to create and to propagate.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_BASE_ERROR_H
#define EMBER_BASE_ERROR_H

#include "llvm/Support/Error.h"
#include "llvm/Support/FormatVariadic.h"

#include <string>

namespace ember {

/// Creates an error carrying \p msg.
inline llvm::Error makeError(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

/// Creates an error from a llvm::formatv format string and arguments.
template <typename... Ts>
llvm::Error makeErrorF(const char *fmt, Ts &&...args) {
  return makeError(llvm::formatv(fmt, std::forward<Ts>(args)...).str());
}

/// Returns the message of \p err (consuming it) as one string.
std::string errorToString(llvm::Error err);

} // namespace ember

/// Returns from the enclosing function if \p expr yields an error. The
/// error is returned as a new temporary so that the same text works in
/// functions returning llvm::Error (where `return std::move(local)` would
/// defeat copy elision) and in those returning llvm::Expected<T> (where a
/// plain `return local` would need a copy of the move-only llvm::Error).
#define EMBER_RETURN_IF_ERR(expr)                                              \
  do {                                                                         \
    if (llvm::Error emberErr_ = (expr))                                        \
      return llvm::Error(std::move(emberErr_));                                \
  } while (0)

#define EMBER_CONCAT_IMPL(a, b) a##b
#define EMBER_CONCAT(a, b) EMBER_CONCAT_IMPL(a, b)

/// Declares \p lhs from an Expected, returning its error on failure.
#define EMBER_ASSIGN_OR_RETURN(lhs, expr)                                      \
  EMBER_ASSIGN_OR_RETURN_IMPL(EMBER_CONCAT(emberExp_, __LINE__), lhs, expr)
#define EMBER_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr)                            \
  auto tmp = (expr);                                                           \
  if (!tmp)                                                                    \
    return tmp.takeError();                                                    \
  lhs = std::move(*tmp)

#endif // EMBER_BASE_ERROR_H
