//===- ConstantImage.h - Building a backend's constant image ---*- C++ -*-===//
//
// A backend that renders kernels ships one constant image: the planned
// constant weights (makeConstantImage, fillConstantImage), then what its
// lowering derives from them at compile time. These helpers append to that
// image, fold work on constants into it, and drop what no kernel reads;
// none of them depends on a target.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_KERNEL_CONSTANTIMAGE_H
#define EMBER_KERNEL_CONSTANTIMAGE_H

#include "ember/Kernel/Kernel.h"

#include <optional>

namespace ember {
namespace kir {

/// Appends \p bytes of \p data to the constant image \p constants, 64-byte
/// aligned, as a buffer of \p kind named \p name.
Buffer appendConstant(std::vector<uint8_t> &constants, const void *data,
                      size_t bytes, std::string name,
                      ElemKind kind = ElemKind::Float32);

/// Appends \p bytes of zeros to \p constants, 64-byte aligned, as a buffer
/// of \p kind named \p name, for a lowering that writes the values in
/// place (pointers into \p constants taken before may move).
Buffer appendZeros(std::vector<uint8_t> &constants, size_t bytes,
                   std::string name, ElemKind kind = ElemKind::Float32);

/// A Transpose \p I of constant weights done at compile time: the result is
/// appended to \p constants, and the kernel returned only copies it into
/// the destination; none when \p I's input is not a constant weight.
std::optional<Kernel> foldConstantTranspose(const TransposeInst &I,
                                            const MemoryPlan &plan,
                                            std::vector<uint8_t> &constants);

/// Returns to the system the memory of bytes [offset, offset + size) of
/// the constant image \p constants (the pages wholly inside them), which
/// read as zeros afterwards: for a weight that lowering replaced by a
/// derived copy before the image is compacted, so that the original and
/// its copy do not both stay resident (the compile's memory peak).
void releaseConstantBytes(std::vector<uint8_t> &constants, uint64_t offset,
                          uint64_t size);

/// Drops from the constant image \p constants every byte no kernel of
/// \p kernels reads (weights that lowering repacked or transformed into a
/// new constant leave their original behind) and moves the buffers that
/// remain to their new offsets, keeping each one's offset modulo 64
/// (ConstantCompaction.cpp).
void compactConstants(std::vector<uint8_t> &constants,
                      std::vector<Kernel> &kernels);

} // namespace kir
} // namespace ember

#endif // EMBER_KERNEL_CONSTANTIMAGE_H
