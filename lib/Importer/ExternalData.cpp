//===- ExternalData.cpp - Initializers stored in files beside the model ---===//
#include "ProtoTensor.h"

#include "ember/Base/Error.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

using namespace ember;

namespace {
struct ExternalRef {
  std::string location;
  uint64_t offset = 0;
  std::optional<uint64_t> length;
};

llvm::Expected<ExternalRef> readRef(const onnx::TensorProto &p,
                                    llvm::StringRef what) {
  ExternalRef r;
  for (const auto &kv : p.external_data()) {
    uint64_t v = 0;
    if (kv.key() == "location") {
      r.location = kv.value();
    } else if (kv.key() == "offset" || kv.key() == "length") {
      if (llvm::StringRef(kv.value()).getAsInteger(10, v))
        return makeErrorF("{0}: external data {1} '{2}' is not a number", what,
                          kv.key(), kv.value());
      if (kv.key() == "offset")
        r.offset = v;
      else
        r.length = v;
    }
  }
  if (r.location.empty())
    return makeErrorF("{0}: external data has no location", what);
  return r;
}
} // namespace

llvm::Error ember::readExternalData(const onnx::TensorProto &p,
                                    llvm::StringRef baseDir, char *dst,
                                    size_t bytes) {
  std::string what = "tensor '" + p.name() + "'";
  EMBER_ASSIGN_OR_RETURN(ExternalRef ref, readRef(p, what));
  if (llvm::sys::path::is_absolute(ref.location))
    return makeErrorF("{0}: external data location '{1}' must be relative to "
                      "the model's directory",
                      what, ref.location);
  llvm::SmallString<256> base, path;
  if (llvm::sys::fs::real_path(baseDir, base))
    return makeErrorF("{0}: cannot resolve the model directory '{1}'", what,
                      baseDir);
  llvm::SmallString<256> joined(base);
  llvm::sys::path::append(joined, ref.location);
  if (llvm::sys::fs::real_path(joined, path))
    return makeErrorF("{0}: external data file '{1}' does not exist", what,
                      ref.location);
  // The resolved file (symbolic links followed) must lie inside base.
  llvm::StringRef resolved = path;
  if (!resolved.starts_with(base) || resolved.size() <= base.size() ||
      !llvm::sys::path::is_separator(resolved[base.size()]))
    return makeErrorF("{0}: external data location '{1}' escapes the model's "
                      "directory",
                      what, ref.location);
  auto buf = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                         /*RequiresNullTerminator=*/false);
  if (!buf)
    return makeErrorF("{0}: cannot read external data '{1}': {2}", what,
                      ref.location, buf.getError().message());
  uint64_t size = (*buf)->getBufferSize();
  uint64_t length = ref.length.value_or(bytes);
  if (length != bytes)
    return makeErrorF("{0}: external data length {1} does not match the {2} "
                      "bytes its shape needs",
                      what, length, bytes);
  if (ref.offset > size || size - ref.offset < bytes)
    return makeErrorF("{0}: external data file '{1}' has {2} bytes, too "
                      "short for {3} bytes at offset {4}",
                      what, ref.location, size, bytes, ref.offset);
  std::memcpy(dst, (*buf)->getBufferStart() + ref.offset, bytes);
  return llvm::Error::success();
}
