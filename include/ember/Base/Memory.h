//===- Memory.h - Large zeroed allocations ----------------------*- C++ -*-===//
//
// Tensors and bundle regions: zeroed, aligned, and backed by transparent
// huge pages when large.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_BASE_MEMORY_H
#define EMBER_BASE_MEMORY_H

#include <cstddef>

namespace ember {

/// Blocks of at least this many bytes are aligned to it and, on Linux,
/// advised to be backed by transparent huge pages (MADV_HUGEPAGE; the
/// kernel's default "madvise" mode gives them only to advised ranges). A
/// network's weights and activations span thousands of 4 KiB pages, more
/// than the TLB holds; with 2 MiB pages they fit it, and run-to-run
/// differences from where the pages landed go away
/// (docs/PerformanceHistory.md#huge-pages).
constexpr size_t kHugePageBytes = size_t(2) << 20;

/// \p bytes (at least 1) zeroed bytes aligned to \p align (a power of two),
/// or null when out of memory; release with std::free.
void *allocateZeroed(size_t bytes, size_t align);

} // namespace ember

#endif // EMBER_BASE_MEMORY_H
