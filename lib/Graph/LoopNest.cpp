//===- LoopNest.cpp - Which loops kept as loops a node runs in ------------===//
//
// The dependence sets behind LoopNest (include/ember/Graph/LoopNest.h):
// the scheduler places loops by them, and verifyFunction refuses a graph
// whose loops do not nest.
//
//===----------------------------------------------------------------------===//
#include "ember/Graph/LoopNest.h"

#include "ember/Base/Error.h"

#include "llvm/ADT/BitVector.h"

#include <algorithm>

using namespace ember;

namespace {
/// For each node the set of loops it depends on, grown to a fixed point.
class LoopDeps {
public:
  LoopDeps(const std::vector<Node *> &begins, const std::vector<Node *> &ends,
           const llvm::DenseMap<const Node *, unsigned> &index)
      : begins_(begins), ends_(ends), index_(index) {
    for (size_t l = 0; l < ends.size(); ++l)
      for (Node *m : {begins[l], ends[l]})
        for (NodeValue v : m->getInputs())
          if (llvm::isa<LoopCarryNode>(v.getNode()))
            carryOf_.try_emplace(v.getNode(), unsigned(l));
  }

  llvm::BitVector of(const Node *n) const {
    auto it = deps_.find(n);
    return it == deps_.end() ? llvm::BitVector(begins_.size()) : it->second;
  }

  /// One pass in topological order; true if a set grew. A carry learns
  /// its loop's enclosing loops only after the loop's end, so the caller
  /// repeats until stable (one pass per nesting level).
  bool propagate(llvm::ArrayRef<Node *> order) {
    bool grew = false;
    for (Node *n : order) {
      llvm::BitVector d = of(n);
      for (NodeValue v : n->getInputs()) {
        Node *p = v.getNode();
        llvm::BitVector in = of(p);
        if (llvm::isa<LoopBeginNode>(p))
          in.set(index_.lookup(p));
        else if (llvm::isa<LoopEndNode>(p))
          in.reset(index_.lookup(p));
        d |= in;
      }
      auto c = carryOf_.find(n);
      if (c != carryOf_.end()) {
        llvm::BitVector g = of(ends_[c->second]);
        g.reset(c->second);
        d |= g;
      }
      if (d != of(n)) {
        deps_[n] = std::move(d);
        grew = true;
      }
    }
    return grew;
  }

private:
  const std::vector<Node *> &begins_, &ends_;
  const llvm::DenseMap<const Node *, unsigned> &index_;
  llvm::DenseMap<const Node *, unsigned> carryOf_;
  llvm::DenseMap<const Node *, llvm::BitVector> deps_;
};
} // namespace

llvm::Expected<LoopNest> LoopNest::compute(llvm::ArrayRef<Node *> order) {
  LoopNest nest;
  llvm::DenseMap<const Node *, unsigned> index;
  for (Node *n : order)
    if (llvm::isa<LoopBeginNode>(n)) {
      index[n] = unsigned(nest.begins_.size());
      nest.begins_.push_back(n);
    }
  if (nest.empty())
    return nest;
  nest.ends_.assign(nest.begins_.size(), nullptr);
  for (Node *n : order)
    if (auto *e = llvm::dyn_cast<LoopEndNode>(n)) {
      Node *b = e->getCounter().getNode();
      auto it = index.find(b);
      if (it == index.end())
        return makeErrorF("LoopEnd {0}: its counter is not a LoopBegin's",
                          n->getName());
      if (nest.ends_[it->second])
        return makeErrorF("LoopBegin {0} has two LoopEnds", b->getName());
      nest.ends_[it->second] = n;
      index[n] = it->second;
    }
  for (size_t l = 0; l < nest.begins_.size(); ++l)
    if (!nest.ends_[l])
      return makeErrorF("LoopBegin {0} has no LoopEnd",
                        nest.begins_[l]->getName());
  LoopDeps deps(nest.begins_, nest.ends_, index);
  while (deps.propagate(order)) {
  }
  auto depth = [&](unsigned l) { return deps.of(nest.begins_[l]).count(); };
  for (Node *n : order) {
    llvm::BitVector d = deps.of(n);
    if (llvm::isa<LoopBeginNode>(n))
      d.set(index.lookup(n));
    llvm::SmallVector<unsigned, 4> c(d.set_bits_begin(), d.set_bits_end());
    std::sort(c.begin(), c.end(),
              [&](unsigned a, unsigned b) { return depth(a) < depth(b); });
    llvm::BitVector outer(nest.begins_.size());
    for (unsigned l : c) {
      if (deps.of(nest.begins_[l]) != outer)
        return makeErrorF("node {0} is inside loops that do not nest "
                          "(LoopBegin {1})",
                          n->getName(), nest.begins_[l]->getName());
      outer.set(l);
    }
    nest.chains_[n] = std::move(c);
  }
  return nest;
}
