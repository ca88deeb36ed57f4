//===- RegionPoison.h - Exact buffer bounds under AddressSanitizer -*- C++ -*-//
//
// The planner pads every buffer to 64 bytes and packs them into three
// regions, so a kernel that overruns its buffer usually lands in padding or
// in a neighbour, where ASan's heap checks cannot see it. In ASan builds the
// Interpreter marks every byte of a region unaddressable except the live
// buffers, each at exactly its type's size: activations from their
// allocactivation to their deallocactivation, weights for the whole run.
// In other builds these functions do nothing.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_BACKENDS_INTERPRETER_REGIONPOISON_H
#define EMBER_BACKENDS_INTERPRETER_REGIONPOISON_H

#include <cstddef>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define EMBER_INTERP_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define EMBER_INTERP_ASAN 1
#endif

#ifdef EMBER_INTERP_ASAN
#include <sanitizer/asan_interface.h>
#endif

namespace ember {
namespace interp {

/// Makes [p, p + n) unaddressable (ASan builds only).
inline void poisonBytes(const void *p, size_t n) {
#ifdef EMBER_INTERP_ASAN
  ASAN_POISON_MEMORY_REGION(p, n);
#else
  (void)p;
  (void)n;
#endif
}

/// Makes [p, p + n) addressable again (ASan builds only).
inline void unpoisonBytes(const void *p, size_t n) {
#ifdef EMBER_INTERP_ASAN
  ASAN_UNPOISON_MEMORY_REGION(p, n);
#else
  (void)p;
  (void)n;
#endif
}

} // namespace interp
} // namespace ember

#endif
