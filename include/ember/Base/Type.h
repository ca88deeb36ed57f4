//===- Type.h - Tensor types -----------------------------------*- C++ -*-===//
#ifndef EMBER_BASE_TYPE_H
#define EMBER_BASE_TYPE_H

#include "ember/Base/ElemKind.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <string>

namespace ember {

/// The largest rank a tensor may have.
constexpr unsigned kMaxRank = 8;

/// The type of a tensor: element kind, dimensions and, for quantized kinds,
/// scale and offset. Types are uniqued per Module (see TypeRef).
class Type {
public:
  Type() = default;
  Type(ElemKind kind, llvm::ArrayRef<dim_t> dims, float scale = 0.f,
       int32_t offset = 0)
      : kind_(kind), dims_(dims.begin(), dims.end()), scale_(scale),
        offset_(offset) {}

  ElemKind getElemKind() const { return kind_; }
  llvm::ArrayRef<dim_t> dims() const { return dims_; }
  unsigned rank() const { return dims_.size(); }
  float getScale() const { return scale_; }
  int32_t getOffset() const { return offset_; }

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

  /// Renders as "float<1 x 3 x 224 x 224>".
  std::string toString() const;

  /// A copy of this type with other dimensions.
  Type withDims(llvm::ArrayRef<dim_t> dims) const {
    return Type(kind_, dims, scale_, offset_);
  }

private:
  ElemKind kind_ = ElemKind::Float32;
  llvm::SmallVector<dim_t, kMaxRank> dims_;
  float scale_ = 0.f;
  int32_t offset_ = 0;
};

/// A uniqued type owned by a Module: equal types are the same pointer.
using TypeRef = const Type *;

/// Formats dims as "[1, 2, 3]".
std::string dimsToString(llvm::ArrayRef<dim_t> dims);

} // namespace ember

#endif // EMBER_BASE_TYPE_H
