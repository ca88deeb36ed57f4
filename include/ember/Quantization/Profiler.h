//===- Profiler.h - Record a float model's value ranges ---------*- C++ -*-===//
//
// -dump-profile: the imported function is instrumented with a Save of every
// named float value, compiled with the minimal pipeline (so no fusion
// removes a value) and run over the profiling inputs; after each run the
// saved tensors are merged into a QuantProfile.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_QUANTIZATION_PROFILER_H
#define EMBER_QUANTIZATION_PROFILER_H

#include "ember/Backend/Backend.h"
#include "ember/Quantization/Profile.h"

#include <map>
#include <string>
#include <vector>

namespace ember {

/// ONNX value names and the graph values they name (ImportOptions).
using ValueNames = std::map<std::string, NodeValue>;

/// The placeholders that hold the named float values after a run of an
/// instrumented function.
class ProfileRecorder {
public:
  /// Adds a Save for each Float32 value of \p names computed by a node of
  /// \p F (graph inputs are read from their own bindings; constants are
  /// not recorded).
  ProfileRecorder(Function &F, const ValueNames &names);
  /// Merges the values of one run, bound in \p b, into \p p.
  void record(const Bindings &b, QuantProfile &p) const;
  /// The number of values recorded per run.
  size_t size() const { return values_.size(); }

private:
  std::vector<std::pair<std::string, const Placeholder *>> values_;
};

} // namespace ember

#endif // EMBER_QUANTIZATION_PROFILER_H
