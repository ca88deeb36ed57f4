//===- ConstantCompaction.cpp - Drop constants no kernel reads ----------===//
//
// The memory plan places every constant weight of the IR in the constant
// image, and lowering appends what it derives from them at compile time:
// packed GEMM panels, Winograd-transformed filters, depthwise taps, folded
// transposes. The originals those replace are never read again, yet they
// would ship in NAME.weights.bin (a Gemm's weight twice, say). After
// lowering, the image keeps only the 64-byte blocks some kernel buffer
// covers, in their old order, and every constant buffer moves with its
// block, so its offset keeps its alignment.
//
//===----------------------------------------------------------------------===//

#include "ember/Kernel/ConstantImage.h"

#include <glog/logging.h>

#include <algorithm>
#include <cstring>

#include <sys/mman.h>
#include <unistd.h>

using namespace ember;
using namespace ember::kir;

namespace {
/// Bytes [begin, end) of the old image, placed at \p to in the new one.
struct Span {
  uint64_t begin, end, to;
};

/// Returns the pages wholly inside [begin, end) to the system; they read
/// as zeros afterwards.
void releasePages(const uint8_t *begin, const uint8_t *end) {
  uintptr_t page = uintptr_t(sysconf(_SC_PAGESIZE));
  uintptr_t first = (uintptr_t(begin) + page - 1) / page * page;
  uintptr_t last = uintptr_t(end) / page * page;
  if (last > first)
    madvise(reinterpret_cast<void *>(first), last - first, MADV_DONTNEED);
}

/// Returns the pages of \p v's storage past its size to the system: they
/// held the image before compaction, and the vector's capacity is never
/// read. Reallocating instead would copy the image beside the old one.
void releaseCapacity(std::vector<uint8_t> &v) {
  releasePages(v.data() + v.size(), v.data() + v.capacity());
}
} // namespace

void kir::releaseConstantBytes(std::vector<uint8_t> &constants, uint64_t offset,
                               uint64_t size) {
  CHECK_LE(offset + size, constants.size());
  releasePages(constants.data() + offset, constants.data() + offset + size);
}

void kir::compactConstants(std::vector<uint8_t> &constants,
                           std::vector<Kernel> &kernels) {
  constexpr uint64_t kBlock = 64;
  uint64_t size = constants.size();
  std::vector<Span> spans;
  for (const Kernel &k : kernels)
    for (const Buffer &b : k.getBuffers()) {
      if (b.region != Region::Constant)
        continue;
      uint64_t begin = b.offset / kBlock * kBlock;
      // A whole block at least, so that a read up to the end of the block
      // (a vector over a buffer's tail) stays inside the image as before.
      uint64_t end = std::max(begin + kBlock, (b.offset + b.size + kBlock - 1) /
                                                  kBlock * kBlock);
      spans.push_back({begin, std::max(begin, std::min(end, size)), 0});
    }
  std::sort(spans.begin(), spans.end(),
            [](const Span &a, const Span &b) { return a.begin < b.begin; });
  std::vector<Span> merged;
  for (const Span &s : spans) {
    if (!merged.empty() && s.begin <= merged.back().end)
      merged.back().end = std::max(merged.back().end, s.end);
    else
      merged.push_back(s);
  }
  // In place: a span only moves down (its new start is at most the old
  // end of the span before it), so a second image is never needed beside
  // the first at the compile's peak.
  constants.resize((size + kBlock - 1) / kBlock * kBlock, 0);
  uint8_t *data = constants.data();
  uint64_t to = 0;
  for (Span &s : merged) {
    s.to = to;
    uint64_t len = s.end - s.begin;
    std::memmove(data + to, data + s.begin, len);
    uint64_t next = (to + len + kBlock - 1) / kBlock * kBlock;
    std::memset(data + to + len, 0, next - to - len);
    to = next;
  }
  for (Kernel &k : kernels)
    for (Buffer &b : k.buffers()) {
      if (b.region != Region::Constant)
        continue;
      auto it = std::upper_bound(
          merged.begin(), merged.end(), b.offset,
          [](uint64_t off, const Span &s) { return off < s.begin; });
      CHECK(it != merged.begin()) << "constant buffer outside every span";
      --it;
      b.offset = it->to + (b.offset - it->begin);
    }
  constants.resize(to);
  releaseCapacity(constants);
}
