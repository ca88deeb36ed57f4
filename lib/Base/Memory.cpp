//===- Memory.cpp - Large zeroed allocations ------------------------------===//
#include "ember/Base/Memory.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#ifdef __linux__
#include <sys/mman.h>
#endif

using namespace ember;

void *ember::allocateZeroed(size_t bytes, size_t align) {
  bytes = std::max<size_t>(bytes, 1);
  bool huge = bytes >= kHugePageBytes;
  if (huge)
    align = std::max(align, kHugePageBytes);
  size_t rounded = (bytes + align - 1) / align * align;
  void *p = std::aligned_alloc(align, rounded);
  if (!p)
    return nullptr;
#ifdef __linux__
  // Advice only: where huge pages are off or exhausted it changes nothing.
  if (huge)
    madvise(p, rounded, MADV_HUGEPAGE);
#endif
  std::memset(p, 0, rounded);
  return p;
}
