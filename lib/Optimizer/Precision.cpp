//===- Precision.cpp - Parsing the precision options ----------------------===//
#include "ember/Optimizer/Precision.h"

#include "ember/Base/Error.h"
#include "ember/Graph/OpInfo.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/ErrorHandling.h"

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
    return FloatPrecision::FP16;
  return makeErrorF("-precision '{0}' is not fp32, bf16 or fp16", s);
}

/// The flag value naming \p p.
static llvm::StringRef precisionName(FloatPrecision p) {
  switch (p) {
  case FloatPrecision::FP32:
    return "fp32";
  case FloatPrecision::BF16:
    return "bf16";
  case FloatPrecision::FP16:
    return "fp16";
  }
  llvm_unreachable("unknown precision");
}

llvm::Expected<FloatPrecision>
ember::parseWeightsPrecision(llvm::StringRef s, FloatPrecision precision) {
  FloatPrecision w;
  if (s == "fp32")
    w = FloatPrecision::FP32;
  else if (s == "fp16")
    w = FloatPrecision::FP16;
  else if (s == "bf16")
    w = FloatPrecision::BF16;
  else
    return makeErrorF("-weights-precision '{0}' is not fp32, fp16 or bf16", s);
  if (w != FloatPrecision::FP32 && precision != FloatPrecision::FP32 &&
      w != precision)
    return makeErrorF("-weights-precision={0} does not combine with "
                      "-precision={1} (its ops read {1} weights)",
                      precisionName(w), precisionName(precision));
  return w;
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
