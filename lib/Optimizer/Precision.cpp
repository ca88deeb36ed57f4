//===- Precision.cpp - Parsing the precision options ----------------------===//
#include "ember/Optimizer/Precision.h"

#include "ember/Base/Error.h"
#include "ember/Graph/OpInfo.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"

using namespace ember;

bool PrecisionOptions::keeps(llvm::StringRef kind) const {
  return llvm::is_contained(keepKinds, kind);
}

llvm::Expected<FloatPrecision> ember::parseFloatPrecision(llvm::StringRef s) {
  if (s == "fp32")
    return FloatPrecision::FP32;
  if (s == "bf16")
    return FloatPrecision::BF16;
  if (s == "fp16")
    return makeError("-precision=fp16 is not implemented yet (fp32 or bf16)");
  return makeErrorF("-precision '{0}' is not fp32 or bf16", s);
}

llvm::Expected<std::vector<std::string>>
ember::parseKeepPrecisionKinds(llvm::StringRef list) {
  std::vector<std::string> kinds;
  llvm::SmallVector<llvm::StringRef, 8> names;
  list.split(names, ',', -1, /*KeepEmpty=*/false);
  for (llvm::StringRef name : names) {
    name = name.trim();
    if (name == "Gemm")
      return makeError("-keep-original-precision-for-nodes: Gemm is lowered "
                       "to MatMul before precision conversion; name MatMul");
    if (!lookupOpKind(name))
      return makeErrorF("-keep-original-precision-for-nodes: '{0}' is not an "
                        "op kind",
                        name);
    kinds.push_back(name.str());
  }
  return kinds;
}
