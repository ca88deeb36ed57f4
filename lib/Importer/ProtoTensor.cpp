//===- ProtoTensor.cpp - ONNX TensorProto <-> Tensor ----------------------===//
#include "ProtoTensor.h"

#include "ember/Base/Error.h"

#include <cstring>

using namespace ember;

llvm::Expected<ElemKind> ember::elemKindFromONNX(int32_t dataType,
                                                 llvm::StringRef what) {
  switch (dataType) {
  case onnx::TensorProto::FLOAT:
    return ElemKind::Float32;
  case onnx::TensorProto::INT64:
    return ElemKind::Int64;
  case onnx::TensorProto::INT32:
    return ElemKind::Int32;
  case onnx::TensorProto::BOOL:
    return ElemKind::Bool;
  default:
    break;
  }
  std::string name = onnx::TensorProto::DataType_IsValid(dataType)
                         ? onnx::TensorProto::DataType_Name(
                               onnx::TensorProto::DataType(dataType))
                         : "code " + std::to_string(dataType);
  return makeErrorF("{0}: unsupported element type {1}", what, name);
}

int32_t ember::elemKindToONNX(ElemKind kind) {
  switch (kind) {
  case ElemKind::Float32:
    return onnx::TensorProto::FLOAT;
  case ElemKind::Int64:
    return onnx::TensorProto::INT64;
  case ElemKind::Int32:
    return onnx::TensorProto::INT32;
  case ElemKind::Bool:
    return onnx::TensorProto::BOOL;
  case ElemKind::Float16:
    return onnx::TensorProto::FLOAT16;
  case ElemKind::BFloat16:
    return onnx::TensorProto::BFLOAT16;
  case ElemKind::Int8Q:
    return onnx::TensorProto::INT8;
  case ElemKind::UInt8Q:
    return onnx::TensorProto::UINT8;
  case ElemKind::Int32Q:
    return onnx::TensorProto::INT32;
  }
  return onnx::TensorProto::UNDEFINED;
}

llvm::Expected<Type> ember::makeCheckedType(ElemKind kind,
                                            llvm::ArrayRef<int64_t> dims,
                                            llvm::StringRef what) {
  if (dims.size() > kMaxRank)
    return makeErrorF("{0}: rank {1} exceeds the maximum {2}", what,
                      dims.size(), kMaxRank);
  int64_t count = 1;
  for (int64_t d : dims) {
    if (d <= 0)
      return makeErrorF("{0}: dimension {1} in {2} is not positive", what, d,
                        dimsToString(dims));
    if (count > kMaxTensorElements / d)
      return makeErrorF("{0}: shape {1} has more than {2} elements", what,
                        dimsToString(dims), kMaxTensorElements);
    count *= d;
  }
  return Type(kind, dims);
}

template <typename T, typename Field>
static void copyField(Tensor &t, const Field &field) {
  T *out = reinterpret_cast<T *>(t.data());
  for (int i = 0; i < field.size(); ++i)
    out[i] = T(field.Get(i));
}

llvm::Expected<Tensor> ember::tensorFromProto(const onnx::TensorProto &p) {
  std::string what = "tensor '" + p.name() + "'";
  if (p.data_location() == onnx::TensorProto::EXTERNAL)
    return makeErrorF("{0}: external data is only supported for initializers", what);
  if (p.has_segment())
    return makeErrorF("{0}: segmented tensors are not supported", what);
  EMBER_ASSIGN_OR_RETURN(ElemKind kind, elemKindFromONNX(p.data_type(), what));
  std::vector<int64_t> dims(p.dims().begin(), p.dims().end());
  EMBER_ASSIGN_OR_RETURN(Type ty, makeCheckedType(kind, dims, what));
  size_t expected = ty.sizeInBytes();
  if (p.has_raw_data()) {
    if (p.raw_data().size() != expected)
      return makeErrorF("{0}: raw_data has {1} bytes, shape {2} needs {3}",
                        what, p.raw_data().size(), dimsToString(dims),
                        expected);
    Tensor t(ty);
    std::memcpy(t.data(), p.raw_data().data(), expected);
    return t;
  }
  int64_t n = ty.size(), have = 0;
  switch (kind) {
  case ElemKind::Float32:
    have = p.float_data_size();
    break;
  case ElemKind::Int64:
    have = p.int64_data_size();
    break;
  case ElemKind::Int32:
  case ElemKind::Bool:
    have = p.int32_data_size();
    break;
  default:
    break;
  }
  if (have != n)
    return makeErrorF("{0}: has {1} values, shape {2} needs {3}", what, have,
                      dimsToString(dims), n);
  Tensor t(ty);
  switch (kind) {
  case ElemKind::Float32:
    copyField<float>(t, p.float_data());
    break;
  case ElemKind::Int64:
    copyField<int64_t>(t, p.int64_data());
    break;
  case ElemKind::Int32:
    copyField<int32_t>(t, p.int32_data());
    break;
  case ElemKind::Bool:
    copyField<uint8_t>(t, p.int32_data());
    break;
  default:
    break;
  }
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
