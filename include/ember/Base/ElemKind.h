//===- ElemKind.h - Tensor element kinds ------------------------*- C++ -*-===//
#ifndef EMBER_BASE_ELEMKIND_H
#define EMBER_BASE_ELEMKIND_H

#include "llvm/ADT/StringRef.h"

#include <cstddef>
#include <cstdint>
#include <optional>

namespace ember {

/// Dimension sizes and element counts.
using dim_t = int64_t;

/// The element kinds a tensor can hold. Quantized kinds carry a scale and
/// offset in their Type.
enum class ElemKind : uint8_t {
  Float32,
  Float16,
  BFloat16,
  Int8Q,
  UInt8Q,
  Int32Q,
  Int32,
  Int64,
  Bool,
  // Plain integer and double kinds (ONNX tensors of these types).
  Int8,
  UInt8,
  Int16,
  UInt16,
  UInt32,
  UInt64,
  Float64,
};

/// The size of one element of \p kind in bytes.
size_t elemSize(ElemKind kind);

/// The short name used in dumps ("float", "i64", ...).
llvm::StringRef elemKindName(ElemKind kind);

/// Parses a name written by elemKindName().
std::optional<ElemKind> parseElemKind(llvm::StringRef name);

/// True for the plain (non-quantized) integer kinds, Bool excluded.
bool isIntegerKind(ElemKind kind);

/// True for floating-point kinds.
bool isFloatKind(ElemKind kind);

/// True for quantized kinds (Int8Q, UInt8Q, Int32Q).
bool isQuantizedKind(ElemKind kind);

} // namespace ember

#endif // EMBER_BASE_ELEMKIND_H
