//===- ProtoTensor.cpp - ONNX TensorProto <-> Tensor ----------------------===//
#include "ProtoTensor.h"

#include "ember/Base/ElemAccess.h"
#include "ember/Base/Error.h"

#include <algorithm>
#include <cstring>

using namespace ember;

namespace {
/// An ONNX data type and the element kind it imports as.
struct ONNXElemKind {
  int32_t onnx;
  ElemKind kind;
};
} // namespace

/// The ONNX types the importer reads, each with its kind; an ONNX model
/// stores a quantized kind as its plain storage type (storageOf).
static const ONNXElemKind kONNXElemKinds[] = {
    {onnx::TensorProto::FLOAT, ElemKind::Float32},
    {onnx::TensorProto::INT64, ElemKind::Int64},
    {onnx::TensorProto::INT32, ElemKind::Int32},
    {onnx::TensorProto::BOOL, ElemKind::Bool},
    {onnx::TensorProto::FLOAT16, ElemKind::Float16},
    {onnx::TensorProto::BFLOAT16, ElemKind::BFloat16},
    {onnx::TensorProto::DOUBLE, ElemKind::Float64},
    {onnx::TensorProto::INT8, ElemKind::Int8},
    {onnx::TensorProto::UINT8, ElemKind::UInt8},
    {onnx::TensorProto::INT16, ElemKind::Int16},
    {onnx::TensorProto::UINT16, ElemKind::UInt16},
    {onnx::TensorProto::UINT32, ElemKind::UInt32},
    {onnx::TensorProto::UINT64, ElemKind::UInt64},
};

/// The plain kind a quantized \p kind's values are stored as.
static ElemKind storageOf(ElemKind kind) {
  switch (kind) {
  case ElemKind::Int8Q:
    return ElemKind::Int8;
  case ElemKind::UInt8Q:
    return ElemKind::UInt8;
  case ElemKind::Int32Q:
    return ElemKind::Int32;
  default:
    return kind;
  }
}

llvm::Expected<ElemKind> ember::elemKindFromONNX(int32_t dataType,
                                                 llvm::StringRef what) {
  for (const ONNXElemKind &e : kONNXElemKinds)
    if (e.onnx == dataType)
      return e.kind;
  std::string name = onnx::TensorProto::DataType_IsValid(dataType)
                         ? onnx::TensorProto::DataType_Name(
                               onnx::TensorProto::DataType(dataType))
                         : "code " + std::to_string(dataType);
  return makeErrorF("{0}: unsupported element type {1}", what, name);
}

int32_t ember::elemKindToONNX(ElemKind kind) {
  ElemKind plain = storageOf(kind);
  for (const ONNXElemKind &e : kONNXElemKinds)
    if (e.kind == plain)
      return e.onnx;
  return onnx::TensorProto::UNDEFINED;
}

llvm::Expected<Type> ember::makeCheckedType(ElemKind kind,
                                            llvm::ArrayRef<int64_t> dims,
                                            llvm::StringRef what) {
  if (dims.size() > kMaxRank)
    return makeErrorF("{0}: rank {1} exceeds the maximum {2}", what,
                      dims.size(), kMaxRank);
  // Zero dims count as 1: a tensor with a zero dim is empty, but strides
  // and the like still multiply its other dims, which must not overflow.
  int64_t count = 1;
  for (int64_t d : dims) {
    if (d < 0)
      return makeErrorF("{0}: dimension {1} in {2} is negative", what, d,
                        dimsToString(dims));
    int64_t f = std::max<int64_t>(d, 1);
    if (count > kMaxTensorElements / f)
      return makeErrorF("{0}: shape {1} has more than {2} elements", what,
                        dimsToString(dims), kMaxTensorElements);
    count *= f;
  }
  return Type(kind, dims);
}

/// The number of typed (non-raw) values \p p holds for \p kind.
static int64_t typedCount(const onnx::TensorProto &p, ElemKind kind) {
  switch (kind) {
  case ElemKind::Float32:
    return p.float_data_size();
  case ElemKind::Float64:
    return p.double_data_size();
  case ElemKind::Int64:
    return p.int64_data_size();
  case ElemKind::UInt32:
  case ElemKind::UInt64:
    return p.uint64_data_size();
  default: // int32, bool, float16 bits and the small integer kinds
    return p.int32_data_size();
  }
}

/// Element \p i of the typed field that holds \p kind, as a double.
static double typedValue(const onnx::TensorProto &p, ElemKind kind, int i) {
  switch (kind) {
  case ElemKind::Float32:
    return p.float_data(i);
  case ElemKind::Float64:
    return p.double_data(i);
  case ElemKind::Int64:
    return double(p.int64_data(i));
  case ElemKind::UInt32:
  case ElemKind::UInt64:
    return double(p.uint64_data(i));
  case ElemKind::Float16:
    return halfToFloat(uint16_t(p.int32_data(i)));
  default:
    return p.int32_data(i);
  }
}

llvm::Expected<Tensor> ember::tensorFromProto(const onnx::TensorProto &p) {
  std::string what = "tensor '" + p.name() + "'";
  if (p.has_segment())
    return makeErrorF("{0}: segmented tensors are not supported", what);
  EMBER_ASSIGN_OR_RETURN(ElemKind kind, elemKindFromONNX(p.data_type(), what));
  std::vector<int64_t> dims(p.dims().begin(), p.dims().end());
  EMBER_ASSIGN_OR_RETURN(Type ty, makeCheckedType(kind, dims, what));
  size_t expected = ty.sizeInBytes();
  // Initializers' external data is read into raw_data before import
  // (resolveExternalData); anywhere else it is not supported.
  if (p.data_location() == onnx::TensorProto::EXTERNAL)
    return makeErrorF("{0}: external data is only supported for initializers",
                      what);
  if (p.has_raw_data()) {
    if (p.raw_data().size() != expected)
      return makeErrorF("{0}: raw_data has {1} bytes, shape {2} needs {3}",
                        what, p.raw_data().size(), dimsToString(dims),
                        expected);
    Tensor t(ty);
    std::memcpy(t.data(), p.raw_data().data(), expected);
    return t;
  }
  int64_t n = ty.size(), have = typedCount(p, kind);
  if (have != n)
    return makeErrorF("{0}: has {1} values, shape {2} needs {3}", what, have,
                      dimsToString(dims), n);
  Tensor t(ty);
  if (kind == ElemKind::Int64) { // exact beyond 2^53
    std::copy(p.int64_data().begin(), p.int64_data().end(),
              t.getHandle<int64_t>().begin());
    return t;
  }
  if (kind == ElemKind::UInt64) {
    std::copy(p.uint64_data().begin(), p.uint64_data().end(),
              reinterpret_cast<uint64_t *>(t.data()));
    return t;
  }
  if (kind == ElemKind::Float16 || kind == ElemKind::BFloat16) { // the bits
    for (int64_t i = 0; i < n; ++i)
      reinterpret_cast<uint16_t *>(t.data())[i] = uint16_t(p.int32_data(i));
    return t;
  }
  for (int64_t i = 0; i < n; ++i)
    storeElement(t.data(), kind, i, typedValue(p, kind, int(i)));
  return t;
}

void ember::tensorToProto(const Tensor &t, llvm::StringRef name,
                          onnx::TensorProto &proto) {
  proto.set_name(name.str());
  proto.set_data_type(elemKindToONNX(t.getElemKind()));
  for (dim_t d : t.dims())
    proto.add_dims(d);
  proto.set_raw_data(t.data(), t.sizeInBytes());
}
