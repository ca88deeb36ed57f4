//===- IRGen.h - From a scheduled graph to IR ------------------*- C++ -*-===//
#ifndef EMBER_IR_IRGEN_H
#define EMBER_IR_IRGEN_H

#include "ember/IR/IR.h"
#include "ember/IR/Scheduler.h"

#include <vector>

namespace ember {

/// Generates IR for \p F in the order \p schedule: a WeightVar per Constant
/// and Placeholder, an AllocActivation per op result, a TensorView per
/// Reshape, a Copy per Save, one table instruction per other node, and a
/// DeallocActivation after each buffer's last use. Fails, naming the node,
/// when a node kind has no instruction (it should have been lowered).
llvm::Expected<std::unique_ptr<IRFunction>>
generateIR(const Function &F, const std::vector<Node *> &schedule);

/// Verifies \p F: operands defined before use, allocations freed exactly
/// once and not used afterwards, views inside their source, table
/// instructions type-correct, copies between equal types.
llvm::Error verifyIR(const IRFunction &F);

} // namespace ember

#endif // EMBER_IR_IRGEN_H
