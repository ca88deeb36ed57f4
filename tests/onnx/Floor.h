//===- Floor.h - The recorded pass counts a run may not fall below -*- C++
//-*-===//
#ifndef EMBER_TESTS_ONNX_FLOOR_H
#define EMBER_TESTS_ONNX_FLOOR_H

#include "Report.h"

#include "llvm/Support/Error.h"

#include <map>
#include <set>
#include <string>
#include <utility>

namespace ember {
namespace conformance {

/// What docs/onnx-support.md records: the pass count of each (set, backend)
/// and, per backend, the tests that did not pass.
struct Record {
  std::map<std::pair<std::string, std::string>, unsigned> passCount;
  /// "backend set/name" of every test the record lists as not passing.
  std::set<std::string> notPassing;
};

/// Reads a report that writeReport wrote.
llvm::Expected<Record> readRecord(const std::string &path);

/// Compares \p results with \p record and prints to \p log each (set,
/// backend) whose pass count fell or rose and each test that the record
/// has as passing and that did not pass now. Counts are compared only when
/// \p wholeSets (every test of each set ran). Returns true if nothing fell.
bool holdsFloor(const Record &record, llvm::ArrayRef<TestResult> results,
                bool wholeSets, llvm::raw_ostream &log);

} // namespace conformance
} // namespace ember

#endif
