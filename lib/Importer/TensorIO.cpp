//===- TensorIO.cpp - Tensors to and from files ---------------------------===//
#include "ember/Importer/TensorIO.h"

#include "ProtoTensor.h"

#include "ember/Base/Error.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MemoryBuffer.h"

#include <fstream>

using namespace ember;

static llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
readFile(llvm::StringRef path) {
  auto buf = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                         /*RequiresNullTerminator=*/false);
  if (!buf)
    return makeErrorF("cannot read '{0}': {1}", path, buf.getError().message());
  return std::move(*buf);
}

llvm::Expected<NamedTensor> ember::loadTensorProtoFile(llvm::StringRef path) {
  EMBER_ASSIGN_OR_RETURN(auto buf, readFile(path));
  return parseTensorProto(buf->getBuffer(), path);
}

llvm::Expected<NamedTensor> ember::parseTensorProto(llvm::StringRef data,
                                                    llvm::StringRef path) {
  onnx::TensorProto proto;
  if (data.size() > size_t(INT32_MAX) ||
      !proto.ParseFromArray(data.data(), int(data.size())))
    return makeErrorF("'{0}' is not a valid ONNX TensorProto file", path);
  auto t = tensorFromProto(proto);
  if (!t)
    return makeErrorF("'{0}': {1}", path, errorToString(t.takeError()));
  return NamedTensor{proto.name(), std::move(*t)};
}

llvm::Expected<NamedTensor> ember::loadNpyFile(llvm::StringRef path) {
  EMBER_ASSIGN_OR_RETURN(auto buf, readFile(path));
  return parseNpy(buf->getBuffer(), path);
}

llvm::Expected<NamedTensor> ember::parseNpy(llvm::StringRef data,
                                            llvm::StringRef path) {
  auto bad = [&](const char *why) {
    return makeErrorF("'{0}' is not a supported .npy file: {1}", path, why);
  };
  if (data.size() < 10 || !data.starts_with("\x93NUMPY"))
    return bad("missing magic");
  unsigned major = uint8_t(data[6]);
  size_t hlen, hstart;
  if (major == 1) {
    hlen = uint8_t(data[8]) | (uint8_t(data[9]) << 8);
    hstart = 10;
  } else {
    if (data.size() < 12)
      return bad("truncated header");
    hlen = uint32_t(uint8_t(data[8])) | (uint32_t(uint8_t(data[9])) << 8) |
           (uint32_t(uint8_t(data[10])) << 16) |
           (uint32_t(uint8_t(data[11])) << 24);
    hstart = 12;
  }
  if (hstart + hlen > data.size())
    return bad("truncated header");
  // Real headers are under 200 bytes.
  if (hlen > 4096)
    return bad("header longer than 4096 bytes");
  llvm::StringRef header = data.substr(hstart, hlen);
  // The header is a Python dict literal; only three keys matter. A value is
  // found after "'key':" and optional spaces.
  auto valueOf = [&](llvm::StringRef key) -> std::optional<llvm::StringRef> {
    size_t at = header.find(("'" + key + "':").str());
    if (at == llvm::StringRef::npos)
      return std::nullopt;
    return header.drop_front(at + key.size() + 3).ltrim(" \t");
  };
  // 'descr': '<f4' (byte order, kind letter, byte size).
  std::optional<llvm::StringRef> descr = valueOf("descr");
  if (!descr || !descr->consume_front("'") || descr->empty() ||
      !llvm::StringRef("<|=").contains(descr->front()))
    return bad("unknown dtype");
  llvm::StringRef code =
      descr->drop_front().take_until([](char c) { return c == '\''; });
  ElemKind kind;
  if (code == "f4")
    kind = ElemKind::Float32;
  else if (code == "i8")
    kind = ElemKind::Int64;
  else if (code == "i4")
    kind = ElemKind::Int32;
  else if (code == "b1")
    kind = ElemKind::Bool;
  else
    return bad("dtype must be float32, int64, int32 or bool");
  if (header.contains("'fortran_order': True"))
    return bad("Fortran order");
  // 'shape': (2, 3) or () or (5,).
  std::optional<llvm::StringRef> shape = valueOf("shape");
  if (!shape || !shape->consume_front("(") ||
      shape->find(')') == llvm::StringRef::npos)
    return bad("no shape");
  llvm::SmallVector<llvm::StringRef, 6> parts;
  shape->take_until([](char c) { return c == ')'; }).split(parts, ',');
  std::vector<int64_t> dims;
  for (size_t i = 0; i < parts.size(); ++i) {
    llvm::StringRef p = parts[i].trim(" \t");
    if (p.empty() && i + 1 == parts.size() && (i > 0 || parts.size() == 1))
      continue; // "(5,)" and "()"
    if (p.empty() || !llvm::all_of(p, llvm::isDigit))
      return bad("a dimension is not a non-negative integer");
    int64_t d;
    if (p.getAsInteger(10, d))
      return bad("a dimension does not fit in 64 bits");
    dims.push_back(d);
  }
  auto ty = makeCheckedType(kind, dims, path);
  if (!ty)
    return ty.takeError();
  size_t bytes = ty->sizeInBytes();
  if (data.size() - hstart - hlen < bytes)
    return bad("data is shorter than the shape");
  Tensor t(*ty);
  std::memcpy(t.data(), data.data() + hstart + hlen, bytes);
  return NamedTensor{"", std::move(t)};
}

llvm::Expected<NamedTensor> ember::loadTensorFile(llvm::StringRef path) {
  if (path.ends_with(".npy"))
    return loadNpyFile(path);
  return loadTensorProtoFile(path);
}

llvm::Error ember::saveTensorProtoFile(const Tensor &t, llvm::StringRef name,
                                       llvm::StringRef path) {
  onnx::TensorProto proto;
  tensorToProto(t, name, proto);
  std::ofstream os(path.str(), std::ios::binary);
  if (!os || !proto.SerializeToOstream(&os))
    return makeErrorF("cannot write '{0}'", path);
  return llvm::Error::success();
}
