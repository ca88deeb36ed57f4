//===- Int8Elementwise.h - Quantized elementwise ops on the CPU -*- C++ -*-===//
//
// RequantAdd (fold-qdq's residual Add of two quantized tensors) as one pass
// of libjit's ember_qadd_u8 over the bytes (libjit/Int8Elementwise.inc).
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
/// RequantAdd (its kernel takes every form the node allows).
bool keepsInt8Elementwise(const Node &n);

/// The kernel of RequantAdd instruction \p I, or nothing when \p I is none.
std::optional<kir::Kernel> lowerInt8Elementwise(const Instruction &I,
                                                const MemoryPlan &plan,
                                                const TargetDesc &target);

} // namespace cpu
} // namespace ember

#endif // EMBER_BACKENDS_CPU_INT8ELEMENTWISE_H
