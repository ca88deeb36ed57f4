//===- Profile.h - Value ranges and histograms of a float model -*- C++ -*-===//
//
// What -dump-profile records and -load-profile reads (docs/Quantization.md):
// for each float value of a model, named by its ONNX value name, the
// smallest and largest element seen over every profiled input and a
// histogram of kProfileBins equal bins over [min, max].
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_QUANTIZATION_PROFILE_H
#define EMBER_QUANTIZATION_PROFILE_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ember {

/// Bins of every histogram: enough for KL calibration to try clipping
/// thresholds finer than the 256 levels it quantizes to.
constexpr unsigned kProfileBins = 2048;

/// The range and histogram of one value.
struct ValueProfile {
  float min = 0, max = 0;
  /// kProfileBins counts over [min, max]; empty until a value was seen.
  std::vector<uint64_t> histogram;

  /// Adds \p n elements. A range that grows re-bins the counts so far: each
  /// old bin's count moves to the new bin holding the old bin's centre.
  void add(const float *data, size_t n);
};

/// A model's profile: values by ONNX name.
struct QuantProfile {
  /// Inputs (runs of the network) merged into the profile.
  uint64_t inputs = 0;
  std::map<std::string, ValueProfile> values;
};

/// Writes \p p to \p path as YAML.
llvm::Error writeProfile(const QuantProfile &p, llvm::StringRef path);

/// Reads a profile; a one-line error for an unreadable file, bad YAML, a
/// wrong bin count or a range that is not finite.
llvm::Expected<QuantProfile> readProfile(llvm::StringRef path);

} // namespace ember

#endif // EMBER_QUANTIZATION_PROFILE_H
