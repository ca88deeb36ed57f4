//===- CSE.cpp - Common-subexpression elimination -------------------------===//
//
// Two op nodes compute the same value when they have the same kind,
// operands, attributes and result types. Visiting in topological order
// makes operands canonical before their users are hashed, so one sweep
// merges whole equal chains.
//
//===----------------------------------------------------------------------===//
#include "PassUtils.h"
#include "Passes.h"

#include "llvm/ADT/Hashing.h"

#include <unordered_map>

using namespace ember;

static size_t hashNode(const Node &n) {
  llvm::hash_code h = llvm::hash_value(unsigned(n.getKind()));
  for (NodeValue v : n.getInputs())
    h = llvm::hash_combine(h, v.getNode(), v.getResNo());
  for (const Attr &a : n.getAttrs())
    h = llvm::hash_combine(h, a.hash());
  for (unsigned i = 0; i < n.getNumResults(); ++i)
    h = llvm::hash_combine(h, n.getType(i));
  return h;
}

static bool sameNode(const Node &a, const Node &b) {
  if (a.getKind() != b.getKind() || a.getInputs() != b.getInputs() ||
      a.getNumResults() != b.getNumResults() ||
      a.getAttrs().size() != b.getAttrs().size())
    return false;
  for (unsigned i = 0; i < a.getAttrs().size(); ++i)
    if (a.attr(i) != b.attr(i))
      return false;
  for (unsigned i = 0; i < a.getNumResults(); ++i)
    if (a.getType(i) != b.getType(i)) // uniqued: pointer equality
      return false;
  return true;
}

bool CSEPass::run(Function &F, PassContext &ctx) {
  std::unordered_multimap<size_t, Node *> seen;
  bool changed = false;
  for (Node *n : nodesInOrder(F)) {
    if (llvm::isa<SaveNode>(n) || isLoopOp(toOpKind(n->getKind())))
      continue; // each loop op owns its buffer
    size_t h = hashNode(*n);
    Node *same = nullptr;
    auto range = seen.equal_range(h);
    for (auto it = range.first; it != range.second && !same; ++it)
      if (sameNode(*it->second, *n))
        same = it->second;
    if (!same) {
      seen.emplace(h, n);
      continue;
    }
    replaceNode(n, same);
    F.eraseNode(n);
    ++ctx.counters["cse.merged"];
    changed = true;
  }
  return changed;
}
