//===- Type.h - Tensor types -----------------------------------*- C++ -*-===//
#ifndef EMBER_BASE_TYPE_H
#define EMBER_BASE_TYPE_H

#include "ember/Base/ElemKind.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <string>

namespace ember {

/// The largest rank a tensor may have.
constexpr unsigned kMaxRank = 8;

/// How the integers of a quantized tensor stand for real numbers:
/// real = (q - zero) * scale, with one scale and zero point for the whole
/// tensor (Axis == kPerTensor) or one per index of dim Axis.
struct TypeQuant {
  static constexpr int32_t kPerTensor = -1;
  int32_t axis = kPerTensor;
  llvm::SmallVector<float, 1> scales;
  llvm::SmallVector<int32_t, 1> zeros;

  bool isPerTensor() const { return axis == kPerTensor; }
  bool operator==(const TypeQuant &o) const;
  bool operator!=(const TypeQuant &o) const { return !(*this == o); }
};

/// The type of a tensor: element kind, dimensions and, for Int8, UInt8 and
/// Int32 tensors whose quantization is known, its TypeQuant (see
/// docs/Quantization.md "Types"). Types are uniqued per Module (see TypeRef).
class Type {
public:
  Type() = default;
  Type(ElemKind kind, llvm::ArrayRef<dim_t> dims)
      : kind_(kind), dims_(dims.begin(), dims.end()) {}
  Type(ElemKind kind, llvm::ArrayRef<dim_t> dims, TypeQuant quant)
      : kind_(kind), dims_(dims.begin(), dims.end()), quant_(std::move(quant)) {
  }

  ElemKind getElemKind() const { return kind_; }
  llvm::ArrayRef<dim_t> dims() const { return dims_; }
  unsigned rank() const { return dims_.size(); }
  /// The quantization parameters, or null for a plain tensor.
  const TypeQuant *getQuant() const { return quant_ ? &*quant_ : nullptr; }
  bool isQuantized() const { return quant_.has_value(); }

  /// The number of elements (1 for a scalar of rank 0).
  dim_t size() const;
  /// The size of the payload in bytes.
  size_t sizeInBytes() const { return size() * elemSize(kind_); }
  /// Row-major strides in elements.
  llvm::SmallVector<dim_t, kMaxRank> strides() const;

  bool isEqual(const Type &other) const;
  bool operator==(const Type &other) const { return isEqual(other); }
  bool operator!=(const Type &other) const { return !isEqual(other); }
  bool isSameShape(const Type &other) const { return dims_ == other.dims_; }
  /// Same element kind and dims: the same bytes, whatever the quantization.
  bool isSameStorage(const Type &other) const {
    return kind_ == other.kind_ && dims_ == other.dims_;
  }

  /// Renders as "float<1 x 3 x 224 x 224>", a quantized tensor with its
  /// parameters after it: "u8<1 x 8>{scale=0.5,zero=3}" or
  /// "i8<4 x 3>{axis=0,scale=[0.5, 0.25, 1, 2],zero=[0, 0, 0, 0]}".
  /// Scales print with 9 significant digits, so they parse back exactly.
  std::string toString() const;

  /// A copy of this type with other dimensions. Quantization parameters do
  /// not carry over: what they mean depends on the op that gave the dims.
  Type withDims(llvm::ArrayRef<dim_t> dims) const { return Type(kind_, dims); }
  /// A copy of this type without quantization parameters.
  Type withoutQuant() const { return Type(kind_, dims_); }

private:
  ElemKind kind_ = ElemKind::Float32;
  llvm::SmallVector<dim_t, kMaxRank> dims_;
  std::optional<TypeQuant> quant_;
};

/// A uniqued type owned by a Module: equal types are the same pointer.
using TypeRef = const Type *;

/// Renders \p q as Type::toString() writes it after the dims.
std::string quantToString(const TypeQuant &q);

/// Parses a quantization suffix as quantToString() writes it; false when
/// \p text is not one.
bool parseQuantSuffix(llvm::StringRef text, TypeQuant &out);

/// Checks that \p ty's quantization (if any) is well formed: an Int8,
/// UInt8 or Int32 kind, one scale per zero point, one of each per tensor or
/// one per index of an axis within the rank.
llvm::Error checkQuantType(const Type &ty);

/// Formats dims as "[1, 2, 3]".
std::string dimsToString(llvm::ArrayRef<dim_t> dims);

} // namespace ember

#endif // EMBER_BASE_TYPE_H
