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
/// copies), appending kernels to \p out; false if there is no rule. The
/// function of each op is named by Ops.py's lowering entries.
bool lowerStructured(const Instruction &I, const MemoryPlan &plan,
                     std::vector<Kernel> &out);

// Each structured op's lowering (declared from Ops.py's lowering entries).
#include "ember/Generated/KernelLowerings.h"

/// Appends \p k to \p out and returns true (the lowering had a rule).
inline bool appendKernel(std::vector<Kernel> &out, Kernel k) {
  out.push_back(std::move(k));
  return true;
}

/// Pad's reflect and edge modes (Indexing.cpp; lowerPad picks it).
Kernel mirrorPadKernel(const PadInst &I, const MemoryPlan &plan);

/// Builds a loop nest over \p dims, every loop parallel, whose innermost
/// body \p inner makes from the loop variables.
std::vector<Stmt>
loopNest(Kernel &k, llvm::ArrayRef<dim_t> dims,
         llvm::function_ref<std::vector<Stmt>(llvm::ArrayRef<ExprRef>)> inner);

/// The kind a rule computes values of \p kind in (Float32 for Float16).
inline ScalarKind computeKind(ScalarKind kind) {
  return kind == ScalarKind::Float16 ? ScalarKind::Float32 : kind;
}

/// The constant \p v of kind \p t (a float constant for float kinds).
inline ExprRef constOf(Kernel &k, double v, ScalarKind t) {
  bool isF = t == ScalarKind::Float32 || t == ScalarKind::Float16 ||
             t == ScalarKind::Float64;
  return isF ? k.constFloat(v, t) : k.constInt(int64_t(v), t);
}

} // namespace kir
} // namespace ember

#endif
