//===- Type.cpp - ElemKind and Type ---------------------------------------===//
#include "ember/Base/Type.h"

#include <iterator>
#include <limits>

using namespace ember;

namespace {
/// The families of element kinds the predicates below answer for.
enum class KindClass : uint8_t { Float, Quantized, Integer, Bool };

/// What one element kind is: its dump name, size and family.
struct ElemKindInfo {
  const char *name;
  uint8_t size;
  KindClass cls;
};
} // namespace

/// One entry per ElemKind, in its order.
static const ElemKindInfo kElemKinds[] = {
    {"float", 4, KindClass::Float},    {"float16", 2, KindClass::Float},
    {"bfloat16", 2, KindClass::Float}, {"i8q", 1, KindClass::Quantized},
    {"u8q", 1, KindClass::Quantized},  {"i32q", 4, KindClass::Quantized},
    {"i32", 4, KindClass::Integer},    {"i64", 8, KindClass::Integer},
    {"bool", 1, KindClass::Bool},      {"i8", 1, KindClass::Integer},
    {"u8", 1, KindClass::Integer},     {"i16", 2, KindClass::Integer},
    {"u16", 2, KindClass::Integer},    {"u32", 4, KindClass::Integer},
    {"u64", 8, KindClass::Integer},    {"double", 8, KindClass::Float}};
static_assert(std::size(kElemKinds) == unsigned(ElemKind::Float64) + 1,
              "one entry per ElemKind");

static const ElemKindInfo *infoOf(ElemKind kind) {
  return unsigned(kind) < std::size(kElemKinds) ? &kElemKinds[unsigned(kind)]
                                                : nullptr;
}

size_t ember::elemSize(ElemKind kind) {
  const ElemKindInfo *info = infoOf(kind);
  return info ? info->size : 0;
}

llvm::StringRef ember::elemKindName(ElemKind kind) {
  const ElemKindInfo *info = infoOf(kind);
  return info ? info->name : "?";
}

std::optional<ElemKind> ember::parseElemKind(llvm::StringRef name) {
  for (unsigned i = 0; i < std::size(kElemKinds); ++i)
    if (name == kElemKinds[i].name)
      return ElemKind(i);
  return std::nullopt;
}

static bool isOfClass(ElemKind kind, KindClass cls) {
  const ElemKindInfo *info = infoOf(kind);
  return info && info->cls == cls;
}

bool ember::isFloatKind(ElemKind kind) {
  return isOfClass(kind, KindClass::Float);
}

bool ember::isIntegerKind(ElemKind kind) {
  return isOfClass(kind, KindClass::Integer);
}

bool ember::isQuantizedKind(ElemKind kind) {
  return isOfClass(kind, KindClass::Quantized);
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
  return kind_ == other.kind_ && dims_ == other.dims_ && quant_ == other.quant_;
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
  if (quant_)
    s += quantToString(*quant_);
  return s;
}
