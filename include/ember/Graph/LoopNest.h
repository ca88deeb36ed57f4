//===- LoopNest.h - Which loops kept as loops a node runs in ----*- C++ -*-===//
#ifndef EMBER_GRAPH_LOOPNEST_H
#define EMBER_GRAPH_LOOPNEST_H

#include "ember/Graph/Graph.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

#include <vector>

namespace ember {

/// The loops kept as loops of a function and the loops each node runs
/// inside (docs/ControlFlow.md "Nested loops"). A node is inside loop L
/// when it depends on L's Counter; a LoopEnd's Count leaves L again (a
/// LoopFinal is outside). A loop's LoopCarry nodes (re)start its state, so
/// they run inside every loop that any node of their loop runs inside,
/// even when their own operands are outer-scope values.
class LoopNest {
public:
  /// The nest over \p order, a topological order of a function's nodes. An
  /// error when a LoopEnd's counter is not a LoopBegin's, a LoopBegin has
  /// not exactly one LoopEnd, or a node is inside loops that do not nest.
  static llvm::Expected<LoopNest> compute(llvm::ArrayRef<Node *> order);

  bool empty() const { return begins_.empty(); }
  Node *begin(unsigned l) const { return begins_[l]; }
  Node *end(unsigned l) const { return ends_[l]; }

  /// The loops \p n runs inside, outermost first; a LoopBegin is inside
  /// its own loop.
  llvm::ArrayRef<unsigned> chain(const Node *n) const {
    auto it = chains_.find(n);
    return it == chains_.end() ? llvm::ArrayRef<unsigned>() : it->second;
  }

private:
  std::vector<Node *> begins_, ends_;
  llvm::DenseMap<const Node *, llvm::SmallVector<unsigned, 4>> chains_;
};

} // namespace ember

#endif // EMBER_GRAPH_LOOPNEST_H
