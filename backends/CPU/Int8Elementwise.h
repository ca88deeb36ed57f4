//===- Int8Elementwise.h - Quantized elementwise ops on the CPU -*- C++ -*-===//
//
// RequantAdd (fold-qdq's residual Add of two quantized tensors), RequantMul
// (its quantized products, such as squeeze-and-excitation gating) and
// TableLookup (its tables of elementwise functions of bytes) as one pass of
// a libjit kernel over the bytes (libjit/Int8Elementwise.inc).
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_BACKENDS_CPU_INT8ELEMENTWISE_H
#define EMBER_BACKENDS_CPU_INT8ELEMENTWISE_H

#include "ember/IR/MemoryPlanner.h"
#include "ember/Kernel/Kernel.h"

#include <optional>

namespace ember {
struct TargetDesc;
class Instruction;
class Node;

namespace cpu {

/// True when the CPU keeps \p n whole for lowerInt8Elementwise: a
/// RequantAdd, a RequantMul whose RHS is one byte per row of its LHS (or
/// of its shape) and a TableLookup in a table of bytes.
bool keepsInt8Elementwise(const Node &n);

/// The kernel of RequantAdd, RequantMul or TableLookup instruction \p I, or
/// nothing when \p I is none of those.
std::optional<kir::Kernel> lowerInt8Elementwise(const Instruction &I,
                                                const MemoryPlan &plan,
                                                const TargetDesc &target);

} // namespace cpu
} // namespace ember

#endif // EMBER_BACKENDS_CPU_INT8ELEMENTWISE_H
