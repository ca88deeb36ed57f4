//===- KernelTypes.h - Element-kind classes of the op table's kernels -*- C++
//-*-===//
//
// The kernel section of the op table (lib/Graph/Ops.py) names, per op, the
// class of element kinds its kernels take; utils/opgen.py turns it into the
// support tables of the shared kernel lowering (lib/Kernel/Support.cpp) and
// the Interpreter. This is the classes' one definition.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_GRAPH_KERNELTYPES_H
#define EMBER_GRAPH_KERNELTYPES_H

#include "ember/Base/ElemKind.h"

#include <cstdint>

namespace ember {

/// A class of element kinds (Ops.py KERNEL_TYPES).
enum class KernelTypes : uint8_t {
  None,          ///< No kernel.
  Any,           ///< Every kind.
  Float,         ///< Float16, Float32, Float64.
  Numeric,       ///< Float or plain integer.
  NumericOrBool, ///< Numeric or Bool.
  IntOrBool,     ///< Plain integer or Bool.
  Unsigned,      ///< UInt8 ... UInt64.
  F32,           ///< Float32 only.
  F32OrBytes,    ///< Float32, Int8, UInt8.
  Plain,         ///< Neither quantized nor BFloat16.
  PlainOrBF16,   ///< Not quantized.
};

/// True if class \p types holds \p kind.
inline bool kernelTypesAccept(KernelTypes types, ElemKind kind) {
  bool isFloat = kind == ElemKind::Float32 || kind == ElemKind::Float16 ||
                 kind == ElemKind::Float64;
  bool numeric = isFloat || isIntegerKind(kind);
  switch (types) {
  case KernelTypes::None:
    return false;
  case KernelTypes::Any:
    return true;
  case KernelTypes::Float:
    return isFloat;
  case KernelTypes::Numeric:
    return numeric;
  case KernelTypes::NumericOrBool:
    return numeric || kind == ElemKind::Bool;
  case KernelTypes::IntOrBool:
    return isIntegerKind(kind) || kind == ElemKind::Bool;
  case KernelTypes::Unsigned:
    return kind == ElemKind::UInt8 || kind == ElemKind::UInt16 ||
           kind == ElemKind::UInt32 || kind == ElemKind::UInt64;
  case KernelTypes::F32:
    return kind == ElemKind::Float32;
  case KernelTypes::F32OrBytes:
    return kind == ElemKind::Float32 || kind == ElemKind::Int8 ||
           kind == ElemKind::UInt8;
  case KernelTypes::Plain:
    return !isQuantizedKind(kind) && kind != ElemKind::BFloat16;
  case KernelTypes::PlainOrBF16:
    return !isQuantizedKind(kind);
  }
  return false;
}

} // namespace ember

#endif // EMBER_GRAPH_KERNELTYPES_H
