//===- QuantizationFlags.cpp - Profile-guided quantization flags ----------===//
#include "QuantizationFlags.h"

#include "ember/Base/Error.h"

using namespace ember;
namespace cl = llvm::cl;

cl::OptionCategory &tools::quantizationFlagsCategory() {
  static cl::OptionCategory category("Quantization options");
  return category;
}

static cl::opt<std::string> dumpProfile(
    "dump-profile",
    cl::desc("Run the float model over every input and write each float "
             "value's range and histogram to FILE (YAML)"),
    cl::value_desc("FILE.yaml"), cl::cat(tools::quantizationFlagsCategory()));
static cl::opt<std::string> loadProfile(
    "load-profile",
    cl::desc("Quantize Conv, Gemm and MatMul to Int8 with the ranges of "
             "this -dump-profile file"),
    cl::value_desc("FILE.yaml"), cl::cat(tools::quantizationFlagsCategory()));
static cl::opt<std::string> schema(
    "quantization-schema",
    cl::desc("How a range becomes scale and zero point: asymmetric, "
             "symmetric, symmetric_with_uint8, symmetric_with_power2_scale"),
    cl::init("asymmetric"), cl::cat(tools::quantizationFlagsCategory()));
static cl::opt<std::string>
    precision("quantization-precision",
              cl::desc("Element type of quantized values (Int8)"),
              cl::init("Int8"), cl::cat(tools::quantizationFlagsCategory()));
static cl::opt<std::string>
    biasPrecision("quantization-precision-bias",
                  cl::desc("Element type of quantized biases (Int32)"),
                  cl::init("Int32"),
                  cl::cat(tools::quantizationFlagsCategory()));
static cl::opt<std::string> calibration(
    "quantization-calibration",
    cl::desc("Range of each value: None (the profiled min and max) or KL "
             "(the clipping of least KL divergence)"),
    cl::init("None"), cl::cat(tools::quantizationFlagsCategory()));
static cl::opt<bool> channelwise(
    "enable-channelwise",
    cl::desc("One weight scale per output channel (default: per tensor)"),
    cl::cat(tools::quantizationFlagsCategory()));
static cl::opt<bool>
    report("dump-quantization-report",
           cl::desc("Print each quantized layer's signal-to-quantization-noise "
                    "ratio against the float model on the given inputs"),
           cl::cat(tools::quantizationFlagsCategory()));

llvm::Expected<tools::QuantizationRequest>
tools::getQuantizationRequest(const std::vector<std::string> &keepKinds) {
  QuantizationRequest r;
  r.dumpProfile = dumpProfile;
  r.loadProfile = loadProfile;
  r.report = report;
  if (!r.dumpProfile.empty() && !r.loadProfile.empty())
    return makeError("-dump-profile records the float model; it cannot be "
                     "combined with -load-profile");
  if (r.report && r.loadProfile.empty())
    return makeError("-dump-quantization-report needs -load-profile");
  EMBER_ASSIGN_OR_RETURN(r.options.schema, parseQuantSchema(schema));
  EMBER_ASSIGN_OR_RETURN(r.options.calibration, parseCalibration(calibration));
  if (precision != "Int8")
    return makeErrorF("-quantization-precision: only Int8 is supported, got "
                      "'{0}'",
                      precision.getValue());
  if (biasPrecision != "Int32")
    return makeErrorF("-quantization-precision-bias: only Int32 is "
                      "supported, got '{0}'",
                      biasPrecision.getValue());
  r.options.channelwise = channelwise;
  r.options.keepKinds = keepKinds;
  return r;
}

llvm::Expected<std::vector<QuantizedLayer>>
tools::applyLoadProfile(const QuantizationRequest &req, Function &F,
                        ValueNames &names, CompileOptions &opts) {
  if (req.loadProfile.empty())
    return std::vector<QuantizedLayer>();
  EMBER_ASSIGN_OR_RETURN(QuantProfile p, readProfile(req.loadProfile));
  EMBER_ASSIGN_OR_RETURN(
      std::vector<QuantizedLayer> layers,
      quantizeFunction(F, names, p, req.options, req.loadProfile));
  // The products were quantized to run as integer products: fold them on
  // every backend unless the user chose otherwise.
  if (!opts.integerProducts)
    opts.integerProducts = true;
  return layers;
}
