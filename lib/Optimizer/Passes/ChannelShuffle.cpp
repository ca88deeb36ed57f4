//===- ChannelShuffle.cpp - Recognize Reshape-Transpose-Reshape shuffles --===//
//
// x [N, C, rest...] -> Reshape [N, g, C/g, rest...] -> Transpose swapping
// axes 1 and 2 -> Reshape [N, C, rest...] is ChannelShuffle(x, Group = g).
//
//===----------------------------------------------------------------------===//
#include "PassUtils.h"
#include "Passes.h"

using namespace ember;

/// The group count if \p tr transposes a grouped reshape of a tensor of
/// dims \p x the channel-shuffle way.
static std::optional<int64_t> shuffleGroups(TransposeNode *tr,
                                            llvm::ArrayRef<dim_t> x) {
  llvm::ArrayRef<dim_t> g = tr->getInput().dims();
  llvm::ArrayRef<int64_t> s = tr->getShuffle();
  if (x.size() < 2 || g.size() != x.size() + 1 || g[0] != x[0] ||
      g[1] * g[2] != x[1] || g.drop_front(3) != x.drop_front(2))
    return std::nullopt;
  if (s[0] != 0 || s[1] != 2 || s[2] != 1)
    return std::nullopt;
  for (size_t i = 3; i < s.size(); ++i)
    if (s[i] != int64_t(i))
      return std::nullopt;
  return g[1];
}

bool ChannelShufflePass::run(Function &F, PassContext &ctx) {
  bool changed = false;
  for (Node *n : nodesInOrder(F)) {
    auto *out = llvm::dyn_cast<ReshapeNode>(n);
    if (!out)
      continue;
    auto *tr = llvm::dyn_cast<TransposeNode>(out->getInput().getNode());
    auto *in =
        tr ? llvm::dyn_cast<ReshapeNode>(tr->getInput().getNode()) : nullptr;
    if (!in || in->getInput().getType() != out->getType())
      continue;
    std::optional<int64_t> groups = shuffleGroups(tr, in->getInput().dims());
    if (!groups)
      continue;
    NodeValue s =
        F.createChannelShuffle(out->getName(), in->getInput(), *groups);
    out->getResult().replaceAllUsesWith(s);
    F.eraseNode(out);
    ++ctx.counters["channel-shuffle.recognized"];
    changed = true;
  }
  return changed;
}
