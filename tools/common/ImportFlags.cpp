//===- ImportFlags.cpp - Import options from command-line flags -----------===//
#include "ImportFlags.h"

#include "ember/Base/Error.h"

#include "llvm/ADT/StringSwitch.h"

using namespace ember;
using namespace ember::tools;

llvm::Expected<std::pair<std::string, int64_t>>
tools::parseSymbolFlag(llvm::StringRef spec) {
  auto [name, value] = spec.split(',');
  int64_t v;
  if (name.trim().empty() || value.trim().getAsInteger(10, v) || v <= 0)
    return makeErrorF("-onnx-define-symbol expects NAME,POSITIVE_INT, got "
                      "'{0}'",
                      spec);
  return std::make_pair(name.trim().str(), v);
}

std::optional<ElemKind> tools::parseTypeName(llvm::StringRef name) {
  auto k = llvm::StringSwitch<std::optional<ElemKind>>(name.lower())
               .Cases("float", "float32", "f32", ElemKind::Float32)
               .Cases("float16", "half", "f16", ElemKind::Float16)
               .Cases("double", "float64", "f64", ElemKind::Float64)
               .Cases("int8", "i8", ElemKind::Int8)
               .Cases("uint8", "u8", ElemKind::UInt8)
               .Cases("int16", "i16", ElemKind::Int16)
               .Cases("uint16", "u16", ElemKind::UInt16)
               .Cases("int32", "i32", ElemKind::Int32)
               .Cases("uint32", "u32", ElemKind::UInt32)
               .Cases("int64", "i64", ElemKind::Int64)
               .Cases("uint64", "u64", ElemKind::UInt64)
               .Case("bool", ElemKind::Bool)
               .Default(std::nullopt);
  return k;
}

llvm::Expected<std::pair<std::string, Type>>
tools::parseModelInputFlag(llvm::StringRef spec) {
  auto bad = [&](const llvm::Twine &why) {
    return makeErrorF("-model-input expects NAME,TYPE,[D0,D1,...], got "
                      "'{0}': {1}",
                      spec, why.str());
  };
  auto [name, rest] = spec.split(',');
  auto [typeName, shape] = rest.split(',');
  name = name.trim();
  shape = shape.trim();
  if (name.empty())
    return bad("the name is empty");
  std::optional<ElemKind> kind = parseTypeName(typeName.trim());
  if (!kind)
    return bad("unknown type '" + typeName.trim() + "'");
  if (!shape.consume_front("[") || !shape.consume_back("]"))
    return bad("the shape must be in brackets");
  std::vector<dim_t> dims;
  llvm::SmallVector<llvm::StringRef, 6> parts;
  shape.split(parts, ',', -1, false);
  for (llvm::StringRef p : parts) {
    dim_t d;
    if (p.trim().getAsInteger(10, d) || d <= 0)
      return bad("dimension '" + p.trim() + "' is not a positive integer");
    dims.push_back(d);
  }
  if (dims.size() > kMaxRank)
    return bad("rank exceeds " + llvm::Twine(kMaxRank));
  return std::make_pair(name.str(), Type(*kind, dims));
}

llvm::Expected<ImportOptions>
tools::makeImportOptions(llvm::ArrayRef<std::string> symbols,
                         llvm::ArrayRef<std::string> modelInputs) {
  ImportOptions opts;
  opts.requireSymbolsUsed = true;
  for (const std::string &s : symbols) {
    EMBER_ASSIGN_OR_RETURN(auto sym, parseSymbolFlag(s));
    for (auto &[n, v] : opts.symbols)
      if (n == sym.first)
        return makeErrorF("symbol '{0}' is defined twice", n);
    opts.symbols.push_back(sym);
  }
  for (const std::string &s : modelInputs) {
    EMBER_ASSIGN_OR_RETURN(auto in, parseModelInputFlag(s));
    if (!opts.inputTypes.emplace(in.first, in.second).second)
      return makeErrorF("-model-input gives '{0}' twice", in.first);
  }
  return opts;
}
