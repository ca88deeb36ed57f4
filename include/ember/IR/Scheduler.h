//===- Scheduler.h - A memory-aware node order -----------------*- C++ -*-===//
//
// The order in which IRGen emits nodes fixes which activations are alive
// together, so it bounds what the memory planner can achieve. The scheduler
// picks an order (operands before users) that keeps the peak of live
// activation bytes low.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_IR_SCHEDULER_H
#define EMBER_IR_SCHEDULER_H

#include "ember/Graph/Graph.h"

#include <vector>

namespace ember {

/// The largest total of activation bytes (each result rounded up to 64
/// bytes) alive at once when \p F runs in \p order, counting a node's inputs
/// and results as alive while it runs. Reshapes share their input's buffer.
/// This is the lower bound IRGen's allocations will show before IR
/// optimization.
size_t schedulePeakBytes(const Function &F, const std::vector<Node *> &order);

/// A node order for \p F that IRGen follows (operands before users), chosen
/// for a low schedulePeakBytes: a depth-first walk from the outputs that
/// visits, at every node, first the operands whose subgraphs need the most
/// memory beyond what they leave behind (so branches are finished one at a
/// time), compared with the plain depth-first order; the lower peak wins.
std::vector<Node *> scheduleFunction(const Function &F);

} // namespace ember

#endif // EMBER_IR_SCHEDULER_H
