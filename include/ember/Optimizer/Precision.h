//===- Precision.h - Which float precision compute runs in -----*- C++ -*-===//
//
// The -precision, -weights-precision and -keep-original-precision-for-nodes
// choices: the graph pass convert-precision reads them (through
// PassContext) to make the ops of docs/Precision.md's table read
// reduced-precision operands, or store their weights in half size.
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
enum class FloatPrecision { FP32, BF16, FP16 };

/// What -precision, -weights-precision and
/// -keep-original-precision-for-nodes ask for.
struct PrecisionOptions {
  FloatPrecision precision = FloatPrecision::FP32;
  /// -weights-precision: the type the constant weights of MatMul and Conv
  /// are stored in, computing in Float32 (FP32: as the model has them).
  FloatPrecision weights = FloatPrecision::FP32;
  /// Op kind names ("MatMul") whose nodes keep their original precision.
  std::vector<std::string> keepKinds;

  /// True if nodes of kind \p kind are to keep their precision.
  bool keeps(llvm::StringRef kind) const;
  /// True if some weights are stored in a 16-bit type and widened to
  /// Float32 at run time (-weights-precision): constant-fold then keeps
  /// those widening Casts. -precision=fp16 alone does not: its products
  /// run in Float32 on the CPU, so its weights are widened at compile time
  /// (their values rounded to fp16) and packed as fp32 weights are.
  bool storesNarrowWeights() const { return weights != FloatPrecision::FP32; }
};

/// Parses -precision ("fp32", "bf16" or "fp16").
llvm::Expected<FloatPrecision> parseFloatPrecision(llvm::StringRef s);

/// Parses -weights-precision ("fp32", "fp16" or "bf16") and checks that it
/// combines with \p precision: a 16-bit type other than the one -precision
/// reads is an error (the converted ops would read their weights in two
/// roundings).
llvm::Expected<FloatPrecision> parseWeightsPrecision(llvm::StringRef s,
                                                     FloatPrecision precision);

/// Parses -keep-original-precision-for-nodes: a comma-separated list of op
/// kind names. Unknown names are errors; so is Gemm, which is lowered to
/// MatMul before precision conversion (name MatMul).
llvm::Expected<std::vector<std::string>>
parseKeepPrecisionKinds(llvm::StringRef list);

} // namespace ember

#endif // EMBER_OPTIMIZER_PRECISION_H
