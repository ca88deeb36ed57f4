//===- PrecisionFlags.cpp - -precision and its node list ------------------===//
#include "PrecisionFlags.h"

#include "ember/Base/Error.h"

using namespace ember;
namespace cl = llvm::cl;

cl::OptionCategory &tools::precisionFlagsCategory() {
  static cl::OptionCategory category("Precision options");
  return category;
}

static cl::opt<std::string> precision(
    "precision",
    cl::desc("Float precision of MatMul and Conv operands "
             "(docs/Precision.md): fp32, bf16 or fp16 (16-bit operands, fp32 "
             "accumulation and results); the network's inputs and outputs "
             "keep their types"),
    cl::init("fp32"), cl::value_desc("fp32|bf16|fp16"),
    cl::cat(tools::precisionFlagsCategory()));
static cl::opt<std::string> weightsPrecision(
    "weights-precision",
    cl::desc("Store the constant weights of MatMul and Conv in fp16 or bf16 "
             "(half the bytes) and compute in fp32 (docs/Precision.md)"),
    cl::init("fp32"), cl::value_desc("fp32|fp16|bf16"),
    cl::cat(tools::precisionFlagsCategory()));
static cl::opt<std::string> keepNodes(
    "keep-original-precision-for-nodes",
    cl::desc("Op kinds that keep their original precision under -precision "
             "(comma-separated, e.g. MatMul)"),
    cl::value_desc("KIND,..."), cl::cat(tools::precisionFlagsCategory()));

llvm::Expected<PrecisionOptions> tools::getPrecisionOptions() {
  PrecisionOptions o;
  EMBER_ASSIGN_OR_RETURN(o.precision, parseFloatPrecision(precision));
  EMBER_ASSIGN_OR_RETURN(o.weights,
                         parseWeightsPrecision(weightsPrecision, o.precision));
  EMBER_ASSIGN_OR_RETURN(o.keepKinds, parseKeepPrecisionKinds(keepNodes));
  return o;
}
