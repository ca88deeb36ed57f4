//===- Report.h - Conformance results and their Markdown report -*- C++ -*-===//
#ifndef EMBER_TESTS_ONNX_REPORT_H
#define EMBER_TESTS_ONNX_REPORT_H

#include "RunTest.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

namespace ember {
namespace conformance {

/// What the report needs to know about a test's model.
struct ModelInfo {
  std::vector<std::string> opTypes; ///< distinct, Constant excluded
  long opset = 0;
};

/// One test on one backend.
struct TestResult {
  std::string set, name, dir, backend;
  ModelInfo info;
  Verdict verdict;
  std::string reason;
};

/// Reads op types and opset of \p modelPath (empty info if unreadable).
ModelInfo describeModel(const std::string &modelPath);

/// "pass", "fail" or "unsupported".
const char *verdictName(Verdict v);

/// One line: per set and backend, passed/failed/unsupported counts.
std::string summarize(llvm::ArrayRef<TestResult> results);

/// The group a non-pass reason belongs to, with node names, values and
/// test-specific names removed ("op not imported: Det", "run-time operand:
/// Pad 'pads'", "element type BFLOAT16", ...), so that tests that stop for
/// the same general cause count together.
std::string reasonGroup(llvm::StringRef reason);

/// Non-pass results of set \p set on backend \p backend by reason group,
/// largest first, one "- N: group" line each.
void writeReasonHistogram(llvm::raw_ostream &os,
                          llvm::ArrayRef<TestResult> results,
                          llvm::StringRef set, llvm::StringRef backend);

/// Writes docs/onnx-support.md: summary, a table per op type for the node
/// tests, a table for the other sets, and every test that did not pass.
void writeReport(llvm::raw_ostream &os, llvm::ArrayRef<TestResult> results,
                 llvm::ArrayRef<llvm::StringRef> backends);

} // namespace conformance
} // namespace ember

#endif
