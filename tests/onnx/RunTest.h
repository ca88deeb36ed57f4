//===- RunTest.h - Run one ONNX backend test in this process ---*- C++ -*-===//
#ifndef EMBER_TESTS_ONNX_RUNTEST_H
#define EMBER_TESTS_ONNX_RUNTEST_H

#include <string>

namespace ember {
namespace conformance {

/// How one test ended. FrozenPass: the outputs matched only after the
/// runner turned run-time inputs into constants (the -freeze-inputs mode);
/// it is not a pass, since a user feeding those inputs at run time gets an
/// error.
enum class Verdict { Pass, Fail, Unsupported, FrozenPass };

/// A verdict with a one-line reason.
struct Outcome {
  Verdict verdict;
  std::string reason;
};

/// Compiles the model of test directory \p dir for backend \p backend and
/// runs every test_data_set_* in it, comparing each output with
/// output_N.pb. A clean import or compile error, or a run-time input check
/// refusing the data set's values, is Unsupported; wrong
/// numbers, types or shapes, and run-time errors are Fail. Every input is
/// fed at run time unless \p freezeInputs: then an input that the importer
/// needs as a constant is frozen to each data set's value (FrozenPass).
/// A file under \p errata (model.onnx, test_data_set_N/input_M.pb, ...)
/// replaces the file of the same relative path under \p dir: ONNX's
/// corrected data for tests whose stored files are wrong.
Outcome runTest(const std::string &dir, const std::string &backend,
                bool freezeInputs, const std::string &errata);

} // namespace conformance
} // namespace ember

#endif
