//===- Precision.h - Which float precision compute runs in -----*- C++ -*-===//
//
// The -precision and -keep-original-precision-for-nodes choices: the graph
// pass convert-precision reads them (through PassContext) to make the ops
// of docs/Precision.md's table read reduced-precision operands.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_OPTIMIZER_PRECISION_H
#define EMBER_OPTIMIZER_PRECISION_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace ember {

/// The precision the converted ops read their operands in.
enum class FloatPrecision { FP32, BF16 };

/// What -precision and -keep-original-precision-for-nodes ask for.
struct PrecisionOptions {
  FloatPrecision precision = FloatPrecision::FP32;
  /// Op kind names ("MatMul") whose nodes keep their original precision.
  std::vector<std::string> keepKinds;

  /// True if nodes of kind \p kind are to keep their precision.
  bool keeps(llvm::StringRef kind) const;
};

/// Parses -precision ("fp32" or "bf16"; "fp16" is refused as not yet
/// implemented).
llvm::Expected<FloatPrecision> parseFloatPrecision(llvm::StringRef s);

/// Parses -keep-original-precision-for-nodes: a comma-separated list of op
/// kind names. Unknown names are errors; so is Gemm, which is lowered to
/// MatMul before precision conversion (name MatMul).
llvm::Expected<std::vector<std::string>>
parseKeepPrecisionKinds(llvm::StringRef list);

} // namespace ember

#endif // EMBER_OPTIMIZER_PRECISION_H
