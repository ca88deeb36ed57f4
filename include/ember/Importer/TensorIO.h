//===- TensorIO.h - Tensors to and from files ------------------*- C++ -*-===//
#ifndef EMBER_IMPORTER_TENSORIO_H
#define EMBER_IMPORTER_TENSORIO_H

#include "ember/Base/Tensor.h"

#include "llvm/Support/Error.h"

#include <string>

namespace ember {

/// A tensor together with the name stored in its file (may be empty).
struct NamedTensor {
  std::string name;
  Tensor tensor;
};

/// Reads an ONNX TensorProto file (.pb).
llvm::Expected<NamedTensor> loadTensorProtoFile(llvm::StringRef path);
/// Reads a NumPy .npy file (little-endian float32/int64/int32/bool, C order).
llvm::Expected<NamedTensor> loadNpyFile(llvm::StringRef path);
/// Like loadTensorProtoFile and loadNpyFile, from the bytes of such a file;
/// \p path names it in messages.
llvm::Expected<NamedTensor> parseTensorProto(llvm::StringRef data,
                                             llvm::StringRef path);
llvm::Expected<NamedTensor> parseNpy(llvm::StringRef data,
                                     llvm::StringRef path);
/// Dispatches on the extension: .npy, otherwise TensorProto.
llvm::Expected<NamedTensor> loadTensorFile(llvm::StringRef path);
/// Writes \p t as an ONNX TensorProto named \p name.
llvm::Error saveTensorProtoFile(const Tensor &t, llvm::StringRef name,
                                llvm::StringRef path);

} // namespace ember

#endif // EMBER_IMPORTER_TENSORIO_H
