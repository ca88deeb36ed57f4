//===- FoldQDQ.h - Shared pieces of the fold-qdq pass -----------*- C++ -*-===//
#ifndef EMBER_LIB_OPTIMIZER_PASSES_FOLDQDQ_H
#define EMBER_LIB_OPTIMIZER_PASSES_FOLDQDQ_H

#include "ember/Graph/Graph.h"

#include <optional>
#include <vector>

namespace ember {
namespace qdq {

/// The constant values behind \p v (a Constant or Splat), looking through
/// Reshape and Cast (how the importer shapes scales and zero points).
std::optional<std::vector<double>> constantValues(NodeValue v);

/// True for Int8 and UInt8 values.
bool isByte(NodeValue v);

/// The replacement of \p q's result when \p q quantizes a MaxPool,
/// Reshape or Transpose, or a ReduceMean, of a per-tensor Dequantize of
/// bytes: the same movement on the bytes (then, unless \p q has the
/// Dequantize's scale, zero point and type, a Dequantize/Quantize pair
/// around it), or the mean as an Int32 sum and one requantize. Null when
/// \p q quantizes none of those.
NodeValue foldQuantizedMovement(Function &F, QuantizeNode *q);

/// The replacement of \p q's result when \p q quantizes an elementwise
/// expression of one per-tensor byte tensor (through Dequantizes, inner
/// Quantizes and constant TableLookups): a TableLookup in the 256-entry
/// table of the expression's values. Null otherwise.
NodeValue foldQuantizedTable(Function &F, QuantizeNode *q);

} // namespace qdq
} // namespace ember

#endif
