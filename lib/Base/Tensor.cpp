//===- Tensor.cpp - Owning tensors ----------------------------------------===//
#include "ember/Base/Tensor.h"
#include "ember/Base/ElemAccess.h"
#include "ember/Base/Memory.h"

#include <cmath>
#include <cstdlib>

using namespace ember;

Tensor::Tensor(const Type &ty) : type_(ty) {
  size_t bytes =
      alignTo(std::max<size_t>(ty.sizeInBytes(), 1), kTensorAlignment);
  char *p = static_cast<char *>(allocateZeroed(bytes, kTensorAlignment));
  if (!p)
    llvm::report_bad_alloc_error("tensor allocation failed");
  data_.reset(p);
}

Tensor Tensor::clone() const {
  Tensor t(type_);
  if (data_)
    std::memcpy(t.data(), data(), sizeInBytes());
  return t;
}

void Tensor::reshape(llvm::ArrayRef<dim_t> dims) {
  Type ty = type_.withDims(dims);
  assert(ty.size() == type_.size() && "reshape must keep the element count");
  type_ = ty;
}

bool Tensor::isBitwiseEqual(const Tensor &other) const {
  return type_ == other.type_ &&
         std::memcmp(data(), other.data(), sizeInBytes()) == 0;
}

double Tensor::elementAsDouble(dim_t i) const {
  return loadElement(data(), getElemKind(), i);
}

bool Tensor::isClose(const Tensor &ref, float atol, float rtol) const {
  if (type_ != ref.type_)
    return false;
  for (dim_t i = 0, e = size(); i < e; ++i) {
    double a = elementAsDouble(i), b = ref.elementAsDouble(i);
    if (std::isnan(a) != std::isnan(b))
      return false;
    if (!std::isnan(a) && std::fabs(a - b) > atol + rtol * std::fabs(b))
      return false;
  }
  return true;
}

void Tensor::randomize(float lo, float hi, std::mt19937 &gen) {
  switch (getElemKind()) {
  case ElemKind::Float32: {
    std::uniform_real_distribution<float> dist(lo, hi);
    for (float &v : getHandle<float>())
      v = dist(gen);
    return;
  }
  case ElemKind::Int64: {
    std::uniform_int_distribution<int64_t> dist{int64_t(lo), int64_t(hi)};
    for (int64_t &v : getHandle<int64_t>())
      v = dist(gen);
    return;
  }
  case ElemKind::Int32: {
    std::uniform_int_distribution<int32_t> dist{int32_t(lo), int32_t(hi)};
    for (int32_t &v : getHandle<int32_t>())
      v = dist(gen);
    return;
  }
  case ElemKind::Bool: {
    std::uniform_int_distribution<int> dist(0, 1);
    for (uint8_t &v : getHandle<uint8_t>())
      v = dist(gen);
    return;
  }
  case ElemKind::Float16:
  case ElemKind::BFloat16:
  case ElemKind::Float64: {
    std::uniform_real_distribution<double> dist(lo, hi);
    for (dim_t i = 0; i < size(); ++i)
      storeElement(data(), getElemKind(), int64_t(i), dist(gen));
    return;
  }
  default: {
    // The other integer kinds: whole values in [lo, hi] (storeElement
    // saturates to the kind's range).
    std::uniform_int_distribution<int64_t> dist{int64_t(lo), int64_t(hi)};
    for (dim_t i = 0; i < size(); ++i)
      storeElement(data(), getElemKind(), int64_t(i), double(dist(gen)));
  }
  }
}
