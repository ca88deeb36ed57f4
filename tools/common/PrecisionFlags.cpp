//===- PrecisionFlags.cpp - -precision and its node list ------------------===//
#include "PrecisionFlags.h"
#include "FlagDecl.h"

#include "ember/Base/Error.h"

using namespace ember;
namespace cl = llvm::cl;

cl::OptionCategory &tools::precisionFlagsCategory() {
  static cl::OptionCategory category("Precision options");
  return category;
}

static cl::opt<std::string> precision = tools::stringFlag(
    tools::precisionFlagsCategory(), "precision", "fp32|bf16|fp16", "fp32",
    "Float precision of MatMul and Conv operands "
    "(docs/Precision.md): fp32, bf16 or fp16 (16-bit operands, fp32 "
    "accumulation and results); the network's inputs and outputs "
    "keep their types");
static cl::opt<std::string> weightsPrecision = tools::stringFlag(
    tools::precisionFlagsCategory(), "weights-precision", "fp32|fp16|bf16",
    "fp32",
    "Store the constant weights of MatMul and Conv in fp16 or bf16 "
    "(half the bytes) and compute in fp32 (docs/Precision.md)");
static cl::opt<std::string> keepNodes = tools::stringFlag(
    tools::precisionFlagsCategory(), "keep-original-precision-for-nodes",
    "KIND,...", "",
    "Op kinds that keep their original precision under -precision "
    "(comma-separated, e.g. MatMul)");

llvm::Expected<PrecisionOptions> tools::getPrecisionOptions() {
  PrecisionOptions o;
  EMBER_ASSIGN_OR_RETURN(o.precision, parseFloatPrecision(precision));
  EMBER_ASSIGN_OR_RETURN(o.weights,
                         parseWeightsPrecision(weightsPrecision, o.precision));
  EMBER_ASSIGN_OR_RETURN(o.keepKinds, parseKeepPrecisionKinds(keepNodes));
  return o;
}
