//===- Quantize.h - Profile-guided quantization of a float graph -*- C++
//-*-===//
//
// -load-profile: the Conv, Gemm and MatMul nodes of an imported float
// function become Quantize -> Dequantize -> product -> Quantize ->
// Dequantize chains with 8-bit weights and Int32 biases, scales taken from
// a Profile (docs/Quantization.md gives the formulas). The fold-qdq pass
// then turns each chain into the integer product and requantize it makes
// of onnxruntime's QDQ models.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_QUANTIZATION_QUANTIZE_H
#define EMBER_QUANTIZATION_QUANTIZE_H

#include "ember/Quantization/Profiler.h"

#include "ember/Base/ElemKind.h"

namespace ember {

/// How a range becomes a scale and a zero point (Glow's schema names).
enum class QuantSchema { Asymmetric, Symmetric, SymmetricUInt8, Power2 };
/// How a value's range is chosen from its profile.
enum class Calibration { None, KL };

/// What -quantization-* and -enable-channelwise ask for.
struct QuantizationOptions {
  QuantSchema schema = QuantSchema::Asymmetric;
  Calibration calibration = Calibration::None;
  /// One weight scale per output channel instead of one per tensor.
  bool channelwise = false;
  /// Op kinds left in float ("Conv", "MatMul"; MatMul also names Gemm, as
  /// for -precision).
  std::vector<std::string> keepKinds;
};

/// Parses -quantization-schema and -quantization-calibration.
llvm::Expected<QuantSchema> parseQuantSchema(llvm::StringRef s);
llvm::Expected<Calibration> parseCalibration(llvm::StringRef s);

/// The scale, zero point and element kind of one quantized activation.
struct QuantParams {
  float scale = 1;
  int32_t zero = 0;
  ElemKind kind = ElemKind::Int8;
};

/// The range [lo, hi] that KL calibration keeps of \p v: the clipping that
/// minimizes the Kullback-Leibler divergence between the histogram and its
/// quantization to \p levels levels.
std::pair<float, float> calibrateKL(const ValueProfile &v, unsigned levels);

/// The parameters of an activation with profile \p v.
QuantParams activationParams(const ValueProfile &v,
                             const QuantizationOptions &opts);

/// The scale of symmetric Int8 weights whose largest magnitude is \p absMax.
float weightScale(float absMax, QuantSchema schema);

/// One product the quantizer rewrote.
struct QuantizedLayer {
  std::string kind;   ///< Conv, Gemm or MatMul
  std::string output; ///< the ONNX name of the value it quantizes
  NodeValue value;    ///< the Dequantize that now computes that value
};

/// Quantizes the products of \p F (see the file comment). \p names are the
/// import's ONNX names; a profile value the model does not have, or a
/// product input/output the profile lacks, is an error naming it (\p path
/// in the message).
llvm::Expected<std::vector<QuantizedLayer>>
quantizeFunction(Function &F, ValueNames &names, const QuantProfile &profile,
                 const QuantizationOptions &opts, llvm::StringRef path);

} // namespace ember

#endif // EMBER_QUANTIZATION_QUANTIZE_H
