//===- ExternalData.cpp - Initializers stored beside the model ------------===//
//
// ONNX lets a tensor keep its bytes in another file, named by a relative
// "location" with an optional "offset" and "length". A hostile model could
// point anywhere, so every reference is resolved against the model's own
// directory, with symbolic links followed, and read only when the range
// lies inside the file and matches the tensor's shape.
//
//===----------------------------------------------------------------------===//
#include "ModelValidator.h"

#include "ProtoTensor.h"

#include "ember/Base/Error.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

using namespace ember;
namespace fs = llvm::sys::fs;
namespace path = llvm::sys::path;

namespace {

/// Where an external tensor's bytes are.
struct ExternalRef {
  std::string location;
  uint64_t offset = 0;
  std::optional<uint64_t> length;
};

llvm::Expected<ExternalRef> readRef(const onnx::TensorProto &t,
                                    const std::string &what) {
  ExternalRef ref;
  for (const auto &kv : t.external_data()) {
    uint64_t v = 0;
    if (kv.key() == "location") {
      ref.location = kv.value();
    } else if (kv.key() == "offset" || kv.key() == "length") {
      if (llvm::StringRef(kv.value()).getAsInteger(10, v))
        return makeErrorF("{0}: external data {1} '{2}' is not a "
                          "non-negative integer",
                          what, kv.key(), kv.value());
      if (kv.key() == "offset")
        ref.offset = v;
      else
        ref.length = v;
    }
  }
  if (ref.location.empty())
    return makeErrorF("{0}: external data has no location", what);
  return ref;
}

/// The real path of \p ref.location, which must stay under \p baseDir.
llvm::Expected<std::string> resolvePath(const ExternalRef &ref,
                                        llvm::StringRef baseDir,
                                        const std::string &what) {
  llvm::StringRef loc = ref.location;
  if (loc.contains('\0'))
    return makeErrorF("{0}: external data location contains a NUL byte", what);
  if (path::is_absolute(loc))
    return makeErrorF("{0}: external data location '{1}' is outside the "
                      "model's directory (absolute path)",
                      what, loc);
  for (auto it = path::begin(loc), e = path::end(loc); it != e; ++it)
    if (*it == "..")
      return makeErrorF("{0}: external data location '{1}' is outside the "
                        "model's directory ('..')",
                        what, loc);
  llvm::SmallString<256> realDir, realFile, joined(baseDir);
  path::append(joined, loc);
  if (fs::real_path(baseDir, realDir))
    return makeErrorF("{0}: cannot resolve the model's directory '{1}'", what,
                      baseDir);
  if (std::error_code ec = fs::real_path(joined, realFile))
    return makeErrorF("{0}: external data file '{1}' is missing: {2}", what,
                      loc, ec.message());
  llvm::StringRef file = realFile;
  if (!file.starts_with(realDir) || file.size() <= realDir.size() ||
      !path::is_separator(file[realDir.size()]))
    return makeErrorF("{0}: external data location '{1}' is outside the "
                      "model's directory (through a link)",
                      what, loc);
  if (!fs::is_regular_file(realFile))
    return makeErrorF("{0}: external data location '{1}' is not a regular "
                      "file",
                      what, loc);
  return std::string(realFile);
}

/// Reads the bytes of one external tensor into its raw_data.
llvm::Error loadOne(onnx::TensorProto &t, llvm::StringRef baseDir) {
  std::string what = "initializer '" + t.name() + "'";
  if (baseDir.empty())
    return makeErrorF("{0}: external data needs a model file to resolve "
                      "against",
                      what);
  EMBER_ASSIGN_OR_RETURN(ExternalRef ref, readRef(t, what));
  EMBER_ASSIGN_OR_RETURN(ElemKind kind, elemKindFromONNX(t.data_type(), what));
  std::vector<int64_t> dims(t.dims().begin(), t.dims().end());
  EMBER_ASSIGN_OR_RETURN(Type ty, makeCheckedType(kind, dims, what));
  uint64_t need = ty.sizeInBytes();
  if (ref.length && *ref.length != need)
    return makeErrorF("{0}: external data length {1} does not match shape "
                      "{2} ({3} bytes)",
                      what, *ref.length, dimsToString(dims), need);
  EMBER_ASSIGN_OR_RETURN(std::string file, resolvePath(ref, baseDir, what));
  uint64_t fileSize = 0;
  if (std::error_code ec = fs::file_size(file, fileSize))
    return makeErrorF("{0}: cannot stat external data file '{1}': {2}", what,
                      ref.location, ec.message());
  if (ref.offset > fileSize || need > fileSize - ref.offset)
    return makeErrorF("{0}: external data range [{1}, {2}) is past the end "
                      "of '{3}' ({4} bytes)",
                      what, ref.offset, ref.offset + need, ref.location,
                      fileSize);
  auto buf = llvm::MemoryBuffer::getFileSlice(file, need, ref.offset,
                                              /*IsVolatile=*/false);
  if (!buf)
    return makeErrorF("{0}: cannot read external data file '{1}': {2}", what,
                      ref.location, buf.getError().message());
  t.set_raw_data((*buf)->getBufferStart(), (*buf)->getBufferSize());
  t.clear_external_data();
  t.set_data_location(onnx::TensorProto::DEFAULT);
  return llvm::Error::success();
}

} // namespace

llvm::Error ember::resolveExternalData(onnx::ModelProto &model,
                                       llvm::StringRef baseDir) {
  for (auto &t : *model.mutable_graph()->mutable_initializer())
    if (t.data_location() == onnx::TensorProto::EXTERNAL)
      EMBER_RETURN_IF_ERR(loadOne(t, baseDir));
  return llvm::Error::success();
}
