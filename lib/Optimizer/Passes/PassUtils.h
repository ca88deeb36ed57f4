//===- PassUtils.h - Small helpers shared by the graph passes ---*- C++ -*-===//
#ifndef EMBER_LIB_OPTIMIZER_PASSES_PASSUTILS_H
#define EMBER_LIB_OPTIMIZER_PASSES_PASSUTILS_H

#include "ember/Graph/Graph.h"

#include "glog/logging.h"

#include <optional>

namespace ember {

/// The value every element of \p v has, if \p v is a Splat or a Constant
/// whose elements are all equal.
std::optional<double> getUniformValue(NodeValue v);

/// True if \p v is a Splat or uniform Constant equal to \p x.
inline bool isUniform(NodeValue v, double x) {
  auto u = getUniformValue(v);
  return u && *u == x;
}

/// True when \p v depends on no run-time value (Constants and Splats only),
/// looking at no more than \p budget nodes (decremented as it walks).
bool isConstantExpr(NodeValue v, unsigned &budget);

/// A copy of \p n with other operands and attributes and the same result
/// types (the caller keeps the types valid; the verifier checks).
Node *cloneNode(Function &F, const Node &n, llvm::ArrayRef<NodeValue> inputs,
                AttrList attrs);

/// A new node of \p n's kind and name over \p inputs with \p attrs, its
/// result types inferred; the caller guarantees the operands are valid.
Node *createLike(Function &F, const Node &n, llvm::ArrayRef<NodeValue> inputs,
                 AttrList attrs);

/// Makes every user of \p from's results use \p to's results (same count).
void replaceNode(Node *from, Node *to);

/// The index of attribute \p name of op \p kind (it must exist).
unsigned attrIndex(OpKind kind, llvm::StringRef name);

/// True if \p n has exactly one use, of its result 0.
inline bool hasOneUse(const Node *n) { return n->getUsers().size() == 1; }

/// The Pad producing \p v if it pads only H and W (4-D, ONNX order: begins
/// of N, C, H, W, then ends) by non-negative amounts with constant zeros;
/// else null. What a Conv or AvgPool of it can take as its own padding.
inline PadNode *spatialZeroPad(NodeValue v) {
  auto *pad = llvm::dyn_cast<PadNode>(v.getNode());
  if (!pad || pad->getMode() != 0 || pad->getValue() != 0.f)
    return nullptr;
  llvm::ArrayRef<int64_t> p = pad->getPads();
  if (p.size() != 8 || p[0] || p[1] || p[4] || p[5] ||
      llvm::any_of(p, [](int64_t x) { return x < 0; }))
    return nullptr;
  return pad;
}

/// \p own (top, left, bottom, right) plus the H and W amounts of the
/// spatialZeroPad \p pad.
inline llvm::SmallVector<int64_t, 4> addSpatialPads(llvm::ArrayRef<int64_t> own,
                                                    const PadNode &pad) {
  llvm::ArrayRef<int64_t> p = pad.getPads();
  return {own[0] + p[2], own[1] + p[3], own[2] + p[6], own[3] + p[7]};
}

/// The Conv behind \p v if it is used once and has no epilogue yet.
ConvNode *plainSingleUseConv(NodeValue v);

/// A Function's nodes in topological order, as a stable snapshot.
std::vector<Node *> nodesInOrder(const Function &F);

} // namespace ember

#endif
