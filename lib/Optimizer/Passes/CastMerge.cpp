//===- CastMerge.cpp - Merge chains of Casts ------------------------------===//
//
// Cast(Cast(x, A), B) -> Cast(x, B) when A holds every value of x's kind
// exactly (a widening: i8 -> i32, f16 -> f32, bool -> anything, ...): the
// inner Cast then changes no value, so converting directly gives the same
// result. A Cast back to x's own kind then disappears in remove-noops.
// Narrowing chains (f32 -> i32 -> f32 truncates) are kept.
//
//===----------------------------------------------------------------------===//
#include "PassUtils.h"
#include "Passes.h"

using namespace ember;

/// True if every value of \p from is exactly representable in \p to.
static bool widens(ElemKind from, ElemKind to) {
  using K = ElemKind;
  if (from == to)
    return true;
  auto in = [to](std::initializer_list<K> ks) {
    return std::find(ks.begin(), ks.end(), to) != ks.end();
  };
  switch (from) {
  case K::Bool:
    return !isQuantizedKind(to);
  case K::Int8:
    return in(
        {K::Int16, K::Int32, K::Int64, K::Float16, K::Float32, K::Float64});
  case K::UInt8:
    return in({K::Int16, K::UInt16, K::Int32, K::UInt32, K::Int64, K::UInt64,
               K::Float16, K::Float32, K::Float64});
  case K::Int16:
    return in({K::Int32, K::Int64, K::Float32, K::Float64});
  case K::UInt16:
    return in(
        {K::Int32, K::UInt32, K::Int64, K::UInt64, K::Float32, K::Float64});
  case K::Int32:
    return in({K::Int64, K::Float64});
  case K::UInt32:
    return in({K::Int64, K::UInt64, K::Float64});
  case K::Float16:
  case K::BFloat16:
    return in({K::Float32, K::Float64});
  case K::Float32:
    return to == K::Float64;
  default:
    return false;
  }
}

bool CastMergePass::run(Function &F, PassContext &ctx) {
  bool changed = false;
  for (Node *n : nodesInOrder(F)) {
    auto *outer = llvm::dyn_cast<CastNode>(n);
    if (!outer)
      continue;
    auto *inner = llvm::dyn_cast<CastNode>(outer->getInput().getNode());
    if (!inner)
      continue;
    NodeValue x = inner->getInput();
    if (isQuantizedKind(x.getElemKind()) ||
        isQuantizedKind(outer->getType()->getElemKind()) ||
        !widens(x.getElemKind(), inner->getType()->getElemKind()))
      continue;
    Node *merged = createLike(F, *outer, {x}, outer->getAttrs());
    replaceNode(outer, merged);
    F.eraseNode(outer);
    if (!inner->hasUsers())
      F.eraseNode(inner);
    ++ctx.counters["cast-merge.merged"];
    changed = true;
  }
  return changed;
}
