//===- Type.cpp - ElemKind and Type ---------------------------------------===//
#include "ember/Base/Type.h"

#include "llvm/ADT/StringSwitch.h"

#include <limits>

using namespace ember;

size_t ember::elemSize(ElemKind kind) {
  switch (kind) {
  case ElemKind::Float32:
  case ElemKind::Int32:
  case ElemKind::Int32Q:
    return 4;
  case ElemKind::Float16:
  case ElemKind::BFloat16:
    return 2;
  case ElemKind::Int8Q:
  case ElemKind::UInt8Q:
  case ElemKind::Bool:
  case ElemKind::Int8:
  case ElemKind::UInt8:
    return 1;
  case ElemKind::Int16:
  case ElemKind::UInt16:
    return 2;
  case ElemKind::UInt32:
    return 4;
  case ElemKind::Int64:
  case ElemKind::UInt64:
  case ElemKind::Float64:
    return 8;
  }
  return 0;
}

llvm::StringRef ember::elemKindName(ElemKind kind) {
  switch (kind) {
  case ElemKind::Float32:
    return "float";
  case ElemKind::Float16:
    return "float16";
  case ElemKind::BFloat16:
    return "bfloat16";
  case ElemKind::Int8Q:
    return "i8q";
  case ElemKind::UInt8Q:
    return "u8q";
  case ElemKind::Int32Q:
    return "i32q";
  case ElemKind::Int32:
    return "i32";
  case ElemKind::Int64:
    return "i64";
  case ElemKind::Bool:
    return "bool";
  case ElemKind::Int8:
    return "i8";
  case ElemKind::UInt8:
    return "u8";
  case ElemKind::Int16:
    return "i16";
  case ElemKind::UInt16:
    return "u16";
  case ElemKind::UInt32:
    return "u32";
  case ElemKind::UInt64:
    return "u64";
  case ElemKind::Float64:
    return "double";
  }
  return "?";
}

std::optional<ElemKind> ember::parseElemKind(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<ElemKind>>(name)
      .Case("float", ElemKind::Float32)
      .Case("float16", ElemKind::Float16)
      .Case("bfloat16", ElemKind::BFloat16)
      .Case("i8q", ElemKind::Int8Q)
      .Case("u8q", ElemKind::UInt8Q)
      .Case("i32q", ElemKind::Int32Q)
      .Case("i32", ElemKind::Int32)
      .Case("i64", ElemKind::Int64)
      .Case("bool", ElemKind::Bool)
      .Case("i8", ElemKind::Int8)
      .Case("u8", ElemKind::UInt8)
      .Case("i16", ElemKind::Int16)
      .Case("u16", ElemKind::UInt16)
      .Case("u32", ElemKind::UInt32)
      .Case("u64", ElemKind::UInt64)
      .Case("double", ElemKind::Float64)
      .Default(std::nullopt);
}

bool ember::isFloatKind(ElemKind kind) {
  return kind == ElemKind::Float32 || kind == ElemKind::Float16 ||
         kind == ElemKind::BFloat16 || kind == ElemKind::Float64;
}

bool ember::isIntegerKind(ElemKind kind) {
  switch (kind) {
  case ElemKind::Int32:
  case ElemKind::Int64:
  case ElemKind::Int8:
  case ElemKind::UInt8:
  case ElemKind::Int16:
  case ElemKind::UInt16:
  case ElemKind::UInt32:
  case ElemKind::UInt64:
    return true;
  default:
    return false;
  }
}

bool ember::isQuantizedKind(ElemKind kind) {
  return kind == ElemKind::Int8Q || kind == ElemKind::UInt8Q ||
         kind == ElemKind::Int32Q;
}

dim_t Type::size() const {
  // Saturates instead of overflowing, so that a type computed from hostile
  // dims still compares as "too large" in the limit checks.
  dim_t n = 1;
  for (dim_t d : dims_)
    if (__builtin_mul_overflow(n, d, &n))
      return std::numeric_limits<dim_t>::max();
  return n;
}

llvm::SmallVector<dim_t, kMaxRank> Type::strides() const {
  llvm::SmallVector<dim_t, kMaxRank> s(dims_.size(), 1);
  for (int i = int(dims_.size()) - 2; i >= 0; --i)
    s[i] = s[i + 1] * dims_[i + 1];
  return s;
}

bool Type::isEqual(const Type &other) const {
  if (kind_ != other.kind_ || dims_ != other.dims_)
    return false;
  if (isQuantizedKind(kind_))
    return scale_ == other.scale_ && offset_ == other.offset_;
  return true;
}

std::string ember::dimsToString(llvm::ArrayRef<dim_t> dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i)
      s += ", ";
    s += std::to_string(dims[i]);
  }
  return s + "]";
}

std::string Type::toString() const {
  std::string s = elemKindName(kind_).str() + "<";
  for (size_t i = 0; i < dims_.size(); ++i) {
    if (i)
      s += " x ";
    s += std::to_string(dims_[i]);
  }
  s += ">";
  if (isQuantizedKind(kind_))
    s += "{scale=" + std::to_string(scale_) +
         ",offset=" + std::to_string(offset_) + "}";
  return s;
}
