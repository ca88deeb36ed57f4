//===- Schema.cpp - Scales and zero points from value ranges --------------===//
#include "ember/Quantization/Quantize.h"

#include "ember/Base/Error.h"

#include <algorithm>
#include <cmath>

using namespace ember;

llvm::Expected<QuantSchema> ember::parseQuantSchema(llvm::StringRef s) {
  if (s == "asymmetric")
    return QuantSchema::Asymmetric;
  if (s == "symmetric")
    return QuantSchema::Symmetric;
  if (s == "symmetric_with_uint8")
    return QuantSchema::SymmetricUInt8;
  if (s == "symmetric_with_power2_scale")
    return QuantSchema::Power2;
  return makeErrorF("-quantization-schema: expected asymmetric, symmetric, "
                    "symmetric_with_uint8 or symmetric_with_power2_scale, got "
                    "'{0}'",
                    s);
}

llvm::Expected<Calibration> ember::parseCalibration(llvm::StringRef s) {
  if (s == "None")
    return Calibration::None;
  if (s == "KL")
    return Calibration::KL;
  return makeErrorF("-quantization-calibration: expected None or KL, got "
                    "'{0}'",
                    s);
}

/// \p s rounded up to a power of two.
static float power2(float s) { return std::exp2(std::ceil(std::log2(s))); }

/// A scale for the range width \p width over \p steps steps; a value that
/// is always zero gets scale 1 (any scale represents it).
static float stepScale(double width, double steps) {
  float s = float(width / steps);
  return s > 0 && std::isfinite(s) ? s : 1.f;
}

float ember::weightScale(float absMax, QuantSchema schema) {
  float s = stepScale(absMax, 127);
  return schema == QuantSchema::Power2 ? power2(s) : s;
}

QuantParams ember::activationParams(const ValueProfile &v,
                                    const QuantizationOptions &opts) {
  float lo = v.min, hi = v.max;
  if (opts.calibration == Calibration::KL)
    std::tie(lo, hi) = calibrateKL(v, 256);
  // Zero must be exact: it is the padding of convolutions and the output
  // of Relu.
  lo = std::min(lo, 0.f);
  hi = std::max(hi, 0.f);
  QuantParams p;
  double absMax = std::max(-double(lo), double(hi));
  switch (opts.schema) {
  case QuantSchema::Asymmetric:
    p.scale = stepScale(double(hi) - lo, 255);
    p.zero = int32_t(
        std::clamp(std::nearbyint(-128.0 - lo / p.scale), -128.0, 127.0));
    return p;
  case QuantSchema::SymmetricUInt8:
    if (lo >= 0) {
      p.kind = ElemKind::UInt8;
      p.scale = stepScale(hi, 255);
      return p;
    }
    [[fallthrough]];
  case QuantSchema::Symmetric:
    p.scale = stepScale(absMax, 127);
    return p;
  case QuantSchema::Power2:
    p.scale = power2(stepScale(absMax, 127));
    return p;
  }
  return p;
}
