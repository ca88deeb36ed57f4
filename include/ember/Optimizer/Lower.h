//===- Lower.h - Node-by-node lowering -------------------------*- C++ -*-===//
#ifndef EMBER_OPTIMIZER_LOWER_H
#define EMBER_OPTIMIZER_LOWER_H

#include "ember/Graph/Graph.h"

#include <functional>

namespace ember {

/// Decides, per node, whether lowering should replace it (the backend's
/// shouldLower).
using ShouldLowerFn = std::function<bool(const Node &)>;

/// True if a lowering rule exists for nodes of \p kind.
bool hasLowering(NodeKind kind);

/// Replaces every node that has a lowering rule and for which
/// \p shouldLower says yes with simpler nodes; repeats until no such node
/// is left. Returns true if the function changed.
bool lowerFunction(Function &F, const ShouldLowerFn &shouldLower);

/// Removes nodes whose results nobody uses (Saves are roots), then unused
/// constants of the module. Returns true if anything was removed.
bool eliminateDeadCode(Function &F);

} // namespace ember

#endif // EMBER_OPTIMIZER_LOWER_H
