//===- Scheduler.cpp - A memory-aware node order --------------------------===//
#include "ember/IR/Scheduler.h"

#include "ember/Graph/LoopNest.h"
#include "ember/Graph/Verifier.h"

#include "glog/logging.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

#include <algorithm>
#include <map>

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

namespace {
/// Appends \p members (nodes inside the same \p depth loops, in the
/// order's sequence) to \p out, each loop nested in them as one run from
/// its LoopBegin to its LoopEnd, placed where its LoopEnd was: what a
/// node depends on precedes that LoopEnd, and only the loop's LoopFinals
/// read it.
void placeNested(const LoopNest &nest, size_t depth,
                 llvm::ArrayRef<Node *> members, std::vector<Node *> &out) {
  std::map<unsigned, std::vector<Node *>> inner;
  for (Node *n : members) {
    llvm::ArrayRef<unsigned> c = nest.chain(n);
    if (c.size() > depth && n != nest.begin(c[depth]) &&
        n != nest.end(c[depth]))
      inner[c[depth]].push_back(n);
  }
  for (Node *n : members) {
    llvm::ArrayRef<unsigned> c = nest.chain(n);
    if (c.size() == depth) {
      out.push_back(n);
    } else if (n == nest.end(c[depth])) {
      out.push_back(nest.begin(c[depth]));
      placeNested(nest, depth + 1, inner[c[depth]], out);
      out.push_back(n);
    }
  }
}
} // namespace

/// Keeps every loop body one contiguous run between its LoopBegin and
/// LoopEnd, properly nested, holding only the nodes inside that loop
/// (ember/Graph/LoopNest.h): a node the order put there that is not is hoisted
/// out, as far as the loops it depends on allow, so that it runs once per
/// iteration of the innermost loop it is inside instead of every
/// iteration of the loops nested in it. Otherwise the order is kept.
static void hoistOutOfLoops(std::vector<Node *> &order) {
  auto nest = LoopNest::compute(order);
  if (!nest) // verifyFunction refuses such a graph
    LOG(FATAL) << llvm::toString(nest.takeError());
  if (nest->empty())
    return;
  std::vector<Node *> out;
  out.reserve(order.size());
  placeNested(*nest, 0, order, out);
  CHECK_EQ(out.size(), order.size()) << "a loop's nodes were lost";
  order = std::move(out);
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
