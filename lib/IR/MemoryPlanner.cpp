//===- MemoryPlanner.cpp - Offsets for every buffer -----------------------===//
#include "ember/IR/MemoryPlanner.h"

#include "ember/Base/Error.h"

#include <algorithm>

using namespace ember;

llvm::StringRef ember::regionName(Region r) {
  switch (r) {
  case Region::Constant:
    return "constant";
  case Region::Mutable:
    return "mutable";
  case Region::Activation:
    return "activations";
  }
  return "?";
}

Placement MemoryPlan::locate(Value *v) const {
  Placement p = placements.lookup(getOrigin(v));
  p.offset += getOriginOffset(v) * elemSize(v->getType()->getElemKind());
  p.size = v->getType()->sizeInBytes();
  return p;
}

namespace {
/// An activation with its live interval [start, end] in instruction indices.
struct Interval {
  const AllocActivationInst *alloc;
  size_t start, end, size;
};
} // namespace

static std::vector<Interval> liveIntervals(const IRFunction &F) {
  std::vector<Interval> intervals;
  llvm::DenseMap<const Value *, size_t> index;
  size_t i = 0;
  for (auto &I : F.getInstrs()) {
    if (auto *a = llvm::dyn_cast<AllocActivationInst>(I.get())) {
      index[a] = intervals.size();
      intervals.push_back({a, i, i,
                           alignTo(std::max<size_t>(a->getType()->sizeInBytes(),
                                                    1),
                                   kTensorAlignment)});
    } else if (auto *d = llvm::dyn_cast<DeallocActivationInst>(I.get())) {
      intervals[index[d->getAlloc()]].end = i;
    }
    ++i;
  }
  return intervals;
}

static bool overlaps(const Interval &a, const Interval &b) {
  return a.start <= b.end && b.start <= a.end;
}

MemoryPlan ember::planMemory(const IRFunction &F) {
  MemoryPlan plan;
  for (auto &w : F.getWeights()) {
    size_t size = alignTo(std::max<size_t>(w->getType()->sizeInBytes(), 1),
                          kTensorAlignment);
    size_t &regionSize = w->isConstant() ? plan.constantSize : plan.mutableSize;
    plan.placements[w.get()] = {
        w->isConstant() ? Region::Constant : Region::Mutable, regionSize, size};
    regionSize += size;
  }

  std::vector<Interval> intervals = liveIntervals(F);
  // Lower bound: the largest live total at any instruction.
  size_t numInstrs = F.getInstrs().size();
  std::vector<size_t> live(numInstrs + 1, 0);
  for (const Interval &iv : intervals) {
    plan.activationNaiveSize += iv.size;
    for (size_t k = iv.start; k <= iv.end; ++k)
      live[k] += iv.size;
  }
  plan.activationLowerBound = *std::max_element(live.begin(), live.end());

  // Best fit, largest buffers first (ties in program order).
  std::vector<size_t> order(intervals.size());
  for (size_t k = 0; k < order.size(); ++k)
    order[k] = k;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return intervals[a].size > intervals[b].size;
  });
  std::vector<std::pair<size_t, size_t>> offsets(intervals.size()); // off,end
  std::vector<size_t> placed;
  for (size_t idx : order) {
    const Interval &iv = intervals[idx];
    std::vector<std::pair<size_t, size_t>> busy;
    for (size_t p : placed)
      if (overlaps(iv, intervals[p]))
        busy.push_back(offsets[p]);
    std::sort(busy.begin(), busy.end());
    size_t bestOff = SIZE_MAX, bestGap = SIZE_MAX, cursor = 0;
    for (auto [off, end] : busy) {
      if (off > cursor && off - cursor >= iv.size && off - cursor < bestGap) {
        bestGap = off - cursor;
        bestOff = cursor;
      }
      cursor = std::max(cursor, end);
    }
    if (bestOff == SIZE_MAX)
      bestOff = cursor;
    offsets[idx] = {bestOff, bestOff + iv.size};
    placed.push_back(idx);
    plan.activationSize = std::max(plan.activationSize, bestOff + iv.size);
    plan.placements[iv.alloc] = {Region::Activation, bestOff, iv.size};
  }
  return plan;
}

llvm::Error ember::verifyMemoryPlan(const IRFunction &F,
                                    const MemoryPlan &plan) {
  auto regionSize = [&](Region r) {
    return r == Region::Constant  ? plan.constantSize
           : r == Region::Mutable ? plan.mutableSize
                                  : plan.activationSize;
  };
  for (auto &[v, p] : plan.placements) {
    if (p.offset % kTensorAlignment)
      return makeErrorF("buffer {0} at offset {1} is not {2}-byte aligned",
                        v->getName(), p.offset, kTensorAlignment);
    if (p.offset + p.size > regionSize(p.region))
      return makeErrorF("buffer {0} [{1}, {2}) exceeds the {3} region of {4} "
                        "bytes",
                        v->getName(), p.offset, p.offset + p.size,
                        regionName(p.region), regionSize(p.region));
  }
  std::vector<Interval> intervals = liveIntervals(F);
  for (const Interval &iv : intervals)
    if (!plan.placements.count(iv.alloc))
      return makeErrorF("activation {0} has no placement",
                        iv.alloc->getName());
  for (size_t a = 0; a < intervals.size(); ++a)
    for (size_t b = a + 1; b < intervals.size(); ++b) {
      if (!overlaps(intervals[a], intervals[b]))
        continue;
      Placement pa = plan.placements.lookup(intervals[a].alloc);
      Placement pb = plan.placements.lookup(intervals[b].alloc);
      if (pa.offset < pb.offset + pb.size && pb.offset < pa.offset + pa.size)
        return makeErrorF("live activations {0} [{1}, {2}) and {3} [{4}, {5}) "
                          "overlap",
                          intervals[a].alloc->getName(), pa.offset,
                          pa.offset + pa.size, intervals[b].alloc->getName(),
                          pb.offset, pb.offset + pb.size);
    }
  // Weights must not overlap within their regions.
  std::vector<std::pair<size_t, const Value *>> starts[2];
  for (auto &w : F.getWeights()) {
    Placement p = plan.placements.lookup(w.get());
    starts[w->isConstant() ? 0 : 1].push_back({p.offset, w.get()});
  }
  for (auto &list : starts) {
    std::sort(list.begin(), list.end());
    for (size_t k = 1; k < list.size(); ++k) {
      Placement prev = plan.placements.lookup(list[k - 1].second);
      if (prev.offset + prev.size > list[k].first)
        return makeErrorF("weights {0} and {1} overlap",
                          list[k - 1].second->getName(),
                          list[k].second->getName());
    }
  }
  return llvm::Error::success();
}
