//===- KernelRules.h - Per-family kernel lowerings (private) ---*- C++ -*-===//
#ifndef EMBER_LIB_KERNEL_KERNELRULES_H
#define EMBER_LIB_KERNEL_KERNELRULES_H

#include "ember/Kernel/LowerToKernel.h"

namespace ember {
namespace kir {

/// True for instructions computed element by element at one flat index.
bool isElementwise(const Instruction &I);

/// Builds the value of elementwise instruction \p I at flat index \p idx;
/// \p operand gives the value of input operand number n at that index.
ExprRef elementwiseValue(Kernel &k, const Instruction &I, ExprRef idx,
                         llvm::function_ref<ExprRef(unsigned n)> operand);

/// Lowers a non-elementwise instruction (data movement, pooling, softmax,
/// copies), appending kernels to \p out; false if there is no rule.
bool lowerStructured(const Instruction &I, const MemoryPlan &plan,
                     std::vector<Kernel> &out);

/// Lowers reductions over sorted axes (float32) and ChannelShuffle.
bool lowerReduction(const Instruction &I, const MemoryPlan &plan,
                    std::vector<Kernel> &out);

} // namespace kir
} // namespace ember

#endif
