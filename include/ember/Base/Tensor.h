//===- Tensor.h - Owning tensors and typed handles --------------*- C++ -*-===//
#ifndef EMBER_BASE_TENSOR_H
#define EMBER_BASE_TENSOR_H

#include "ember/Base/Type.h"

#include "llvm/Support/ErrorHandling.h"

#include <cassert>
#include <cstring>
#include <memory>
#include <random>

namespace ember {

/// Alignment of every tensor payload and every planned buffer.
constexpr size_t kTensorAlignment = 64;

/// Rounds \p n up to a multiple of \p align.
inline size_t alignTo(size_t n, size_t align) {
  return (n + align - 1) / align * align;
}

template <typename ElemTy> class Handle;

/// A Type plus an owning, 64-byte-aligned, zero-initialized buffer.
class Tensor {
public:
  Tensor() = default;
  explicit Tensor(const Type &ty);
  Tensor(ElemKind kind, llvm::ArrayRef<dim_t> dims) : Tensor(Type(kind, dims)) {}
  Tensor(Tensor &&) = default;
  Tensor &operator=(Tensor &&) = default;

  const Type &getType() const { return type_; }
  ElemKind getElemKind() const { return type_.getElemKind(); }
  llvm::ArrayRef<dim_t> dims() const { return type_.dims(); }
  dim_t size() const { return type_.size(); }
  size_t sizeInBytes() const { return type_.sizeInBytes(); }

  char *data() { return data_.get(); }
  const char *data() const { return data_.get(); }

  /// A deep copy.
  Tensor clone() const;
  /// Reinterprets the payload with other dims (same element count).
  void reshape(llvm::ArrayRef<dim_t> dims);
  /// True if types and bytes are identical.
  bool isBitwiseEqual(const Tensor &other) const;
  /// True if types match and every element is within atol + rtol*|ref|.
  bool isClose(const Tensor &ref, float atol, float rtol) const;
  /// Fills float tensors uniformly in [lo, hi), integer ones in [lo, hi].
  void randomize(float lo, float hi, std::mt19937 &gen);
  /// Element \p i converted to double (any kind).
  double elementAsDouble(dim_t i) const;

  template <typename ElemTy> Handle<ElemTy> getHandle();
  template <typename ElemTy> Handle<const ElemTy> getHandle() const;

private:
  struct FreeDeleter {
    void operator()(char *p) const { std::free(p); }
  };
  Type type_;
  std::unique_ptr<char[], FreeDeleter> data_;
};

/// A typed view of a tensor's payload with (debug-checked) indexing.
template <typename ElemTy> class Handle {
public:
  Handle(ElemTy *data, const Type &ty)
      : data_(data), dims_(ty.dims().begin(), ty.dims().end()),
        strides_(ty.strides()) {}

  dim_t size() const {
    dim_t n = 1;
    for (dim_t d : dims_)
      n *= d;
    return n;
  }
  ElemTy &raw(dim_t i) const {
    assert(i >= 0 && i < size() && "raw index out of bounds");
    return data_[i];
  }
  ElemTy &at(llvm::ArrayRef<dim_t> idx) const {
    assert(idx.size() == dims_.size() && "index rank mismatch");
    dim_t off = 0;
    for (size_t i = 0; i < idx.size(); ++i) {
      assert(idx[i] >= 0 && idx[i] < dims_[i] && "index out of bounds");
      off += idx[i] * strides_[i];
    }
    return data_[off];
  }
  ElemTy *begin() const { return data_; }
  ElemTy *end() const { return data_ + size(); }
  llvm::ArrayRef<dim_t> dims() const { return dims_; }

private:
  ElemTy *data_;
  llvm::SmallVector<dim_t, kMaxRank> dims_;
  llvm::SmallVector<dim_t, kMaxRank> strides_;
};

template <typename ElemTy> Handle<ElemTy> Tensor::getHandle() {
  return Handle<ElemTy>(reinterpret_cast<ElemTy *>(data()), type_);
}
template <typename ElemTy> Handle<const ElemTy> Tensor::getHandle() const {
  return Handle<const ElemTy>(reinterpret_cast<const ElemTy *>(data()), type_);
}

} // namespace ember

#endif // EMBER_BASE_TENSOR_H
