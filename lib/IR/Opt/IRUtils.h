//===- IRUtils.h - Use queries and edits shared by the IR passes -*- C++ -*-=//
#ifndef EMBER_LIB_IR_OPT_IRUTILS_H
#define EMBER_LIB_IR_OPT_IRUTILS_H

#include "ember/IR/IR.h"

#include "llvm/ADT/DenseMap.h"

#include <vector>

namespace ember {
namespace iropt {

/// True for instructions that do not compute: alloc, dealloc, view.
bool isMemoryMarker(const Instruction *I);

/// True if \p role writes its operand.
inline bool isWrite(OperandRole role) { return role != OperandRole::In; }
/// True if \p role reads its operand.
inline bool isRead(OperandRole role) { return role != OperandRole::Out; }

/// True for table instructions that compute element i of their result from
/// element i of each input only (so the result may overwrite an input).
bool isElementwise(const Instruction *I);

/// A snapshot of the instruction order with, per buffer (AllocActivation or
/// WeightVar), the instructions that touch it through any view. Markers
/// (alloc/dealloc/view) are not recorded as uses.
struct UseMap {
  /// One touch of a buffer: the instruction position and the role.
  struct Use {
    size_t pos;
    const Instruction *instr;
    OperandRole role;
  };
  std::vector<Instruction *> order;
  llvm::DenseMap<const Instruction *, size_t> position;
  llvm::DenseMap<const Value *, std::vector<Use>> uses;
  /// Every tensorview whose origin is the key.
  llvm::DenseMap<const Value *, std::vector<TensorViewInst *>> views;

  explicit UseMap(const IRFunction &F);
  llvm::ArrayRef<Use> usesOf(const Value *buffer) const;
  /// True if \p buffer is read at a position after \p pos.
  bool readAfter(const Value *buffer, size_t pos) const;
  /// True if \p buffer is written at a position after \p pos.
  bool writtenAfter(const Value *buffer, size_t pos) const;
  /// The number of instructions that write \p buffer.
  unsigned numWriters(const Value *buffer) const;
  /// The position of the first / last instruction touching \p buffer.
  std::optional<size_t> firstUse(const Value *buffer) const;
  std::optional<size_t> lastUse(const Value *buffer) const;
  /// Records that every use of buffer \p from is now a use of \p to (after
  /// the caller renamed the operands and before it erases \p from). The
  /// entry of \p from in `order` becomes null; its deallocation's entry is
  /// left dangling, so callers must not walk `order` afterwards.
  void mergeInto(const AllocActivationInst *from, const Value *to);
};

/// Replaces every operand that is \p from by \p to, except in \p from's
/// own deallocation.
void replaceAllUses(IRFunction &F, Value *from, Value *to);

/// Erases \p alloc's deallocation (if any) and then \p alloc itself.
void eraseAlloc(IRFunction &F, AllocActivationInst *alloc);

/// Erases every deallocation in \p F.
void eraseDeallocs(IRFunction &F);

/// The iterator of \p I in \p F's list.
IRFunction::InstrList::iterator findInstr(IRFunction &F, const Instruction *I);

} // namespace iropt
} // namespace ember

#endif // EMBER_LIB_IR_OPT_IRUTILS_H
