//===- ReuseInPlace.cpp - Results over dying inputs -----------------------===//
//
// For `%d = OP @out %dst, @in %a, ...` where OP is elementwise, %dst and %a
// are activations of one type, %dst is first touched here and %a is not
// touched afterwards, %dst is replaced by %a: the instruction reads and
// writes element i of one buffer, and one allocation disappears.
//
// The same for a convolution's residual (reuse-conv-residual, run only for
// backends whose conv epilogues read residual element i before writing
// output element i: Backend::convResidualInPlace): the output takes over
// the residual's buffer where the conv is its last use. The epilogue's read
// of the residual then also brings in the output's line, which a separate
// output buffer fetched on its own (ResNet-50's 56x56 1x1 64 -> 256
// convolutions with their residual Add read and wrote 9.6 MB instead of
// 12.8 MB).
//
//===----------------------------------------------------------------------===//
#include "IRUtils.h"

#include "ember/IR/IROptimizer.h"

#include "llvm/ADT/SmallPtrSet.h"

#include <functional>

using namespace ember;
using namespace ember::iropt;

/// ConvInst's operands: dest, input, filter, bias, then the optional
/// residual.
constexpr unsigned kConvResidualOperand = 4;

/// Which operands of an instruction may give their buffer to its result.
using EligibleFn = std::function<bool(const Instruction *, unsigned)>;

/// The input of \p I (at \p pos) whose buffer the result may take, if any:
/// one of the operands \p eligible says may be taken.
static AllocActivationInst *reusableInput(const Instruction *I, size_t pos,
                                          const UseMap &uses,
                                          const EligibleFn &eligible) {
  auto *dst = llvm::dyn_cast<AllocActivationInst>(I->getOperand(0).value);
  if (!dst || uses.firstUse(dst) != pos || uses.numWriters(dst) != 1)
    return nullptr;
  for (unsigned i = 1; i < I->getNumOperands(); ++i) {
    auto *in = llvm::dyn_cast<AllocActivationInst>(I->getOperand(i).value);
    if (!eligible(I, i) || !in || in == dst ||
        in->getType() != dst->getType() || uses.lastUse(in) != pos)
      continue;
    // Every operand that touches the input must be an eligible operand
    // that is the input itself, so that element i is read before element i
    // is written (a convolution's input read through a view, or as its
    // input as well as its residual, is not).
    bool exact = true;
    for (unsigned j = 0; j < I->getNumOperands(); ++j)
      if (getOrigin(I->getOperand(j).value) == in &&
          (I->getOperand(j).value != in || !eligible(I, j)))
        exact = false;
    if (exact)
      return in;
  }
  return nullptr;
}

/// Rewrites every candidate instruction whose result can take over the
/// buffer of one of its dying inputs (\p eligible(I, i): operand i of I
/// may be taken).
static bool
reuseInputs(IRFunction &F,
            const std::function<bool(const Instruction *)> &isCandidate,
            const EligibleFn &eligible) {
  bool changed = false;
  // One forward scan; after each rewrite the use map is updated in place
  // (the merged buffer's uses are the union of both), so later candidates
  // see exact first and last uses.
  // Only allocations and deallocations are erased, after the scan, so the
  // computing instructions collected up front stay valid.
  UseMap uses(F);
  std::vector<std::pair<size_t, Instruction *>> candidates;
  for (size_t pos = 0; pos < uses.order.size(); ++pos)
    if (isCandidate(uses.order[pos]))
      candidates.push_back({pos, uses.order[pos]});
  // The replaced allocations and their deallocations are erased together
  // at the end, and operands are renamed through the use map: both in one
  // pass over the function each time would make the scan quadratic in the
  // function's length, which unrolled recurrent networks make long
  // (docs/PerformanceHistory.md#ir-passes).
  llvm::SmallPtrSet<const Value *, 16> replaced;
  auto rename = [](const Instruction *user, Value *from, Value *to) {
    auto *I = const_cast<Instruction *>(user);
    for (unsigned i = 0; i < I->getNumOperands(); ++i)
      if (I->getOperand(i).value == from)
        I->setOperand(i, to);
  };
  for (auto [pos, I] : candidates) {
    if (I->getOperand(0).role != OperandRole::Out)
      continue;
    AllocActivationInst *in = reusableInput(I, pos, uses, eligible);
    if (!in)
      continue;
    auto *dst = llvm::cast<AllocActivationInst>(I->getOperand(0).value);
    // Everything that names dst: its users (recorded under their origin,
    // so users of views are included and skipped by rename) and the
    // tensorviews taken of it.
    for (const UseMap::Use &u : uses.usesOf(dst))
      rename(u.instr, dst, in);
    auto vt = uses.views.find(dst);
    if (vt != uses.views.end())
      for (TensorViewInst *tv : vt->second)
        rename(tv, dst, in);
    uses.mergeInto(dst, in);
    replaced.insert(dst);
    changed = true;
  }
  if (!changed)
    return false;
  F.eraseInstrsIf([&](const Instruction *I) {
    // The operand's pointer only: its allocation may be erased already.
    if (llvm::isa<DeallocActivationInst>(I))
      return replaced.count(I->getOperand(0).value) != 0;
    return replaced.count(I) != 0;
  });
  shrinkLiveRanges(F);
  return true;
}

bool ember::reuseInPlace(IRFunction &F) {
  return reuseInputs(F, isElementwise,
                     [](const Instruction *, unsigned i) { return i >= 1; });
}

bool ember::reuseConvResidual(IRFunction &F) {
  return reuseInputs(
      F, [](const Instruction *I) { return llvm::isa<ConvInst>(I); },
      [](const Instruction *, unsigned i) {
        return i == kConvResidualOperand;
      });
}
