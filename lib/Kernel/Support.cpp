//===- Support.cpp - Which nodes the shared kernel lowering covers --------===//
//
// One table for every backend that renders kernels, generated from the
// kernel section of the op table (lib/Graph/Ops.py): a node is covered when
// its op's kernel types take the element kind of its result (or the named
// operand), its index operand holds indices and its attribute predicate, if
// the entry names one, holds. The family rules (Elementwise.cpp,
// Structured.cpp, Reductions.cpp, Indexing.cpp) lower what it admits.
//
//===----------------------------------------------------------------------===//
#include "ember/Kernel/LowerToKernel.h"

#include "ember/Graph/KernelTypes.h"
#include "ember/Graph/Node.h"

using namespace ember;
using namespace ember::kir;

namespace {

bool isNumeric(ElemKind k) {
  return kernelTypesAccept(KernelTypes::Numeric, k);
}

// The attribute predicates the table's entries name (`when`).

/// A Scatter reduction (add, mul, max, min) needs arithmetic on the
/// elements; plain replacement moves any kind.
bool reductionHasArithmetic(const Node &n) {
  int64_t reduction = 0;
  if (auto *s = llvm::dyn_cast<ScatterElementsNode>(&n))
    reduction = s->getReduction();
  else
    reduction = llvm::cast<ScatterNDNode>(n).getReduction();
  return reduction == 0 || isNumeric(n.getType()->getElemKind());
}

/// Casts between numeric and Bool kinds, and BFloat16 only to and from
/// Float32 (the precision rules).
bool castKindsHaveKernel(const Node &n) {
  ElemKind to = n.getType()->getElemKind();
  ElemKind from = n.getNthInput(0).getType()->getElemKind();
  auto numOrBool = [](ElemKind k) {
    return kernelTypesAccept(KernelTypes::NumericOrBool, k);
  };
  return (numOrBool(to) && numOrBool(from)) ||
         (to == ElemKind::BFloat16 && from == ElemKind::Float32) ||
         (to == ElemKind::Float32 && from == ElemKind::BFloat16);
}

/// Average pooling divides: floats only (max pooling compares any number).
bool averageIsFloat(const Node &n) {
  return !llvm::cast<PoolNDNode>(n).getIsAvg() ||
         kernelTypesAccept(KernelTypes::Float, n.getType()->getElemKind());
}

/// Every coordinate transformation but tf_crop_and_resize (4).
bool resizeCoordModeHasKernel(const Node &n) {
  return llvm::cast<ResizeNode>(n).getCoordMode() != 4;
}

/// One op's entry: see Ops.py's kernel().
struct KernelRule {
  KernelTypes types;
  int8_t of;    ///< The operand whose kind is checked; -1: the result.
  int8_t index; ///< The operand that must hold indices; -1: none.
  bool (*when)(const Node &);
};

#include "ember/Generated/KernelSupport.inc"

static_assert(sizeof(kKernelRules) / sizeof(kKernelRules[0]) == kNumOpKinds,
              "one kernel rule per op");

} // namespace

bool kir::hasKernelLowering(const Node &n) {
  if (!isTableOp(n.getKind()))
    return false;
  const KernelRule &rule = kKernelRules[unsigned(toOpKind(n.getKind()))];
  auto kindOf = [&](int operand) {
    return operand < 0 ? n.getType()->getElemKind()
                       : n.getNthInput(operand).getType()->getElemKind();
  };
  // Kinds are read only where the rule constrains them: a node whose
  // result list is open (Split's) is covered whatever its kinds.
  if (rule.types == KernelTypes::None)
    return false;
  if (rule.types != KernelTypes::Any &&
      !kernelTypesAccept(rule.types, kindOf(rule.of)))
    return false;
  if (rule.index >= 0 && kindOf(rule.index) != ElemKind::Int32 &&
      kindOf(rule.index) != ElemKind::Int64)
    return false;
  return !rule.when || rule.when(n);
}
