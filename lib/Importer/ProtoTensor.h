//===- ProtoTensor.h - ONNX TensorProto <-> Tensor -------------*- C++ -*-===//
#ifndef EMBER_LIB_IMPORTER_PROTOTENSOR_H
#define EMBER_LIB_IMPORTER_PROTOTENSOR_H

#include "ember/Base/Tensor.h"

#include "llvm/Support/Error.h"

#include <onnx/onnx_pb.h>

namespace ember {

/// The largest element count a tensor in a model may declare (2^31); larger
/// ones are refused before anything is allocated.
constexpr int64_t kMaxTensorElements = int64_t(1) << 31;

/// Maps an ONNX element type to ours, or fails naming \p what.
llvm::Expected<ElemKind> elemKindFromONNX(int32_t dataType,
                                          llvm::StringRef what);
/// The ONNX data type of \p kind.
int32_t elemKindToONNX(ElemKind kind);

/// Checks dims (non-negative, product within limits) and builds a Type.
/// Empty (zero-size) types are allowed here: constants may be empty, and
/// the importer refuses empty graph inputs and op results itself.
llvm::Expected<Type> makeCheckedType(ElemKind kind,
                                     llvm::ArrayRef<int64_t> dims,
                                     llvm::StringRef what);

/// Converts \p proto to a tensor, checking that its data matches its shape.
/// External data must have been read into raw_data already
/// (resolveExternalData); a tensor still pointing at a file is an error.
llvm::Expected<Tensor> tensorFromProto(const onnx::TensorProto &proto);

/// Fills \p proto from \p t (raw_data).
void tensorToProto(const Tensor &t, llvm::StringRef name,
                   onnx::TensorProto &proto);

} // namespace ember

#endif
