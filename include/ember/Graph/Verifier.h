//===- Verifier.h - Graph verification and traversal -----------*- C++ -*-===//
#ifndef EMBER_GRAPH_VERIFIER_H
#define EMBER_GRAPH_VERIFIER_H

#include "ember/Graph/Graph.h"

#include <vector>

namespace ember {

/// Checks every node of \p F: operand counts, the table's rules, result
/// types equal to what inference gives, Saves writing output placeholders,
/// operands defined in \p F or the Module, and no cycles.
llvm::Error verifyFunction(const Function &F);

/// The op nodes of \p F in a topological order (operands first): a
/// depth-first post-order from the Saves, then any node not reached.
std::vector<Node *> topologicalOrder(const Function &F);

} // namespace ember

#endif // EMBER_GRAPH_VERIFIER_H
