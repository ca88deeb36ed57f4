//===- Scheduler.cpp - A memory-aware node order --------------------------===//
#include "ember/IR/Scheduler.h"

#include "ember/Graph/Verifier.h"

#include "glog/logging.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

#include <algorithm>

using namespace ember;

/// Bytes IRGen allocates for \p n's results (views and Saves allocate none).
static size_t resultBytes(const Node *n) {
  if (llvm::isa<ReshapeNode>(n) || llvm::isa<SaveNode>(n))
    return 0;
  size_t bytes = 0;
  for (unsigned i = 0; i < n->getNumResults(); ++i)
    bytes += alignTo(std::max<size_t>(n->getType(i)->sizeInBytes(), 1),
                     kTensorAlignment);
  return bytes;
}

/// The buffer that \p v occupies: a Reshape shares its input's.
static NodeValue bufferOf(NodeValue v) {
  while (auto *r = llvm::dyn_cast<ReshapeNode>(v.getNode()))
    v = r->getInput();
  return v;
}

size_t ember::schedulePeakBytes(const Function & /*F*/,
                                const std::vector<Node *> &order) {
  // Remaining reads of every buffer; a Reshape hands its readers over to its
  // input's buffer.
  std::map<NodeValue, unsigned> pending;
  size_t live = 0, peak = 0;
  auto release = [&](NodeValue buf) {
    if (--pending[buf] == 0)
      live -= resultBytes(buf.getNode());
  };
  for (Node *n : order) {
    if (auto *r = llvm::dyn_cast<ReshapeNode>(n)) {
      NodeValue buf = bufferOf(r->getInput());
      if (!isStorage(buf.getNode())) {
        pending[buf] += r->getNumUsesOf(0);
        release(buf);
      }
      continue;
    }
    for (unsigned i = 0; i < n->getNumResults(); ++i)
      pending[n->getNthResult(i)] = n->getNumUsesOf(i) + 1;
    live += resultBytes(n);
    peak = std::max(peak, live);
    for (NodeValue in : n->getInputs())
      if (!isStorage(bufferOf(in).getNode()))
        release(bufferOf(in));
    // The extra count taken above keeps unused results alive through n.
    for (unsigned i = 0; i < n->getNumResults(); ++i)
      if (pending[n->getNthResult(i)] == 1) {
        pending[n->getNthResult(i)] = 0;
        live -= alignTo(std::max<size_t>(n->getType(i)->sizeInBytes(), 1),
                        kTensorAlignment);
      } else {
        --pending[n->getNthResult(i)];
      }
  }
  return peak;
}

namespace {
/// Per-node estimates for ordering operands, computed as if the graph were
/// a tree: `need` is the peak a node's subgraph reaches when evaluated
/// alone, `held` what stays allocated once it is done.
struct Estimate {
  size_t need = 0, held = 0;
};
} // namespace

/// The operands of \p n that are computed, ordered so that the one with the
/// largest need - held goes first (the Sethi-Ullman rule for trees).
static llvm::SmallVector<Node *, 4>
sortedOperands(const Node *n, const llvm::DenseMap<const Node *, Estimate> &e) {
  llvm::SmallVector<Node *, 4> ops;
  for (NodeValue in : n->getInputs())
    if (!isStorage(in.getNode()) &&
        std::find(ops.begin(), ops.end(), in.getNode()) == ops.end())
      ops.push_back(in.getNode());
  std::stable_sort(ops.begin(), ops.end(), [&](Node *a, Node *b) {
    const Estimate &ea = e.lookup(a), &eb = e.lookup(b);
    return ea.need - ea.held > eb.need - eb.held;
  });
  return ops;
}

static llvm::DenseMap<const Node *, Estimate>
estimate(const std::vector<Node *> &topo) {
  llvm::DenseMap<const Node *, Estimate> e;
  for (Node *n : topo) {
    llvm::SmallVector<Node *, 4> ops = sortedOperands(n, e);
    Estimate &mine = e[n];
    size_t prefix = 0;
    for (Node *op : ops) {
      const Estimate &eo = e.lookup(op);
      mine.need = std::max(mine.need, prefix + eo.need);
      prefix += eo.held;
    }
    if (llvm::isa<ReshapeNode>(n)) {
      mine.held = prefix;
      mine.need = std::max(mine.need, prefix);
    } else {
      mine.held = resultBytes(n);
      mine.need = std::max(mine.need, prefix + mine.held);
    }
  }
  return e;
}

/// Depth-first post-order from the Saves, operands in sortedOperands order.
static std::vector<Node *>
sortedDepthFirst(const Function &F,
                 const llvm::DenseMap<const Node *, Estimate> &e) {
  std::vector<Node *> order;
  llvm::DenseSet<Node *> done;
  auto visit = [&](Node *root) {
    if (done.count(root) || isStorage(root))
      return;
    struct Frame {
      Node *n;
      llvm::SmallVector<Node *, 4> ops;
      unsigned next;
    };
    std::vector<Frame> stack{{root, sortedOperands(root, e), 0}};
    while (!stack.empty()) {
      Frame &f = stack.back();
      if (f.next < f.ops.size()) {
        Node *in = f.ops[f.next++];
        if (!done.count(in))
          stack.push_back({in, sortedOperands(in, e), 0});
        continue;
      }
      if (done.insert(f.n).second)
        order.push_back(f.n);
      stack.pop_back();
    }
  };
  for (SaveNode *s : F.getSaves())
    visit(s);
  for (auto &n : F.getNodes())
    visit(n.get());
  return order;
}

/// Keeps every loop body one contiguous run between its LoopBegin and
/// LoopEnd, holding only the nodes that depend on the LoopBegin (through
/// its Counter): a node the order put there that does not is hoisted
/// before the LoopBegin, so that it runs once instead of every iteration.
/// Hoisting is legal because such a node's operands do not depend on the
/// LoopBegin either. Nested loops are refused at import.
static void hoistOutOfLoops(std::vector<Node *> &order) {
  for (size_t b = 0; b < order.size(); ++b) {
    if (!llvm::isa<LoopBeginNode>(order[b]))
      continue;
    Node *begin = order[b];
    llvm::DenseSet<const Node *> inBody{begin};
    std::vector<Node *> hoisted, body;
    size_t e = b + 1;
    for (; e < order.size(); ++e) {
      Node *n = order[e];
      auto *end = llvm::dyn_cast<LoopEndNode>(n);
      if (end && end->getCounter().getNode() == begin)
        break;
      bool dep = llvm::any_of(n->getInputs(), [&](NodeValue v) {
        return inBody.count(v.getNode());
      });
      (dep ? body : hoisted).push_back(n);
      if (dep)
        inBody.insert(n);
    }
    CHECK(e < order.size())
        << "LoopBegin " << begin->getName().str() << " has no LoopEnd after it";
    size_t at = b;
    for (Node *n : hoisted)
      order[at++] = n;
    order[at++] = begin;
    for (Node *n : body)
      order[at++] = n;
    b = e;
  }
}

std::vector<Node *> ember::scheduleFunction(const Function &F) {
  std::vector<Node *> plain = topologicalOrder(F);
  std::vector<Node *> sorted = sortedDepthFirst(F, estimate(plain));
  std::vector<Node *> &best =
      schedulePeakBytes(F, sorted) <= schedulePeakBytes(F, plain) ? sorted
                                                                  : plain;
  hoistOutOfLoops(best);
  return best;
}
