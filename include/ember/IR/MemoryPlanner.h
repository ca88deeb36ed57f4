//===- MemoryPlanner.h - Offsets for every buffer --------------*- C++ -*-===//
#ifndef EMBER_IR_MEMORYPLANNER_H
#define EMBER_IR_MEMORYPLANNER_H

#include "ember/IR/IR.h"

#include "llvm/ADT/DenseMap.h"

namespace ember {

/// The three memory regions of a compiled network.
enum class Region : uint8_t { Constant, Mutable, Activation };
llvm::StringRef regionName(Region r);

/// Where a buffer lives: its region and byte offset there.
struct Placement {
  Region region;
  size_t offset;
  size_t size; ///< Bytes reserved (aligned).
};

/// The result of memory planning for one IRFunction.
struct MemoryPlan {
  size_t constantSize = 0;
  size_t mutableSize = 0;
  size_t activationSize = 0;
  /// The largest total size of simultaneously live activations.
  size_t activationLowerBound = 0;
  /// The sum of all activation sizes (what no reuse would need).
  size_t activationNaiveSize = 0;
  /// Placement of every WeightVar and AllocActivation.
  llvm::DenseMap<const Value *, Placement> placements;

  /// The placement of \p v's origin buffer plus the view offset in bytes.
  Placement locate(Value *v) const;
};

/// Lays out constants and mutable weights in order, and gives each
/// activation the best-fitting free offset over its live interval
/// (allocation to deallocation), all at 64-byte alignment.
MemoryPlan planMemory(const IRFunction &F);

/// Proves that no two activations live at the same time overlap, that every
/// buffer fits in its region and that every placement is aligned.
llvm::Error verifyMemoryPlan(const IRFunction &F, const MemoryPlan &plan);

} // namespace ember

#endif // EMBER_IR_MEMORYPLANNER_H
