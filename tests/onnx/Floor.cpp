//===- Floor.cpp - The recorded pass counts a run may not fall below ------===//
//
// The record is the Markdown report itself (docs/onnx-support.md), read
// back: its "All sets" table gives the counts and its "Tests that did not
// pass" list the tests, so that one generated file is both what users read
// and what CI holds.
//
//===----------------------------------------------------------------------===//
#include "Floor.h"

#include "ember/Base/Error.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MemoryBuffer.h"

using namespace ember;
using namespace ember::conformance;

namespace {

/// Reads one "| set | backend | tests | pass | fail | unsupported |" row.
void readCountRow(llvm::StringRef line, Record &rec) {
  llvm::SmallVector<llvm::StringRef, 8> cells;
  line.trim().trim('|').split(cells, '|');
  unsigned pass = 0;
  if (cells.size() < 4 || cells[3].trim().getAsInteger(10, pass))
    return; // The header or the separator row.
  rec.passCount[{cells[0].trim().str(), cells[1].trim().str()}] = pass;
}

/// Reads one "- backend `set/name` **verdict**: why" line.
void readNotPassing(llvm::StringRef line, Record &rec) {
  llvm::StringRef rest = line.drop_front(2);
  auto [backend, tail] = rest.split(' ');
  if (!tail.consume_front("`"))
    return;
  llvm::StringRef test = tail.split('`').first;
  rec.notPassing.insert(backend.str() + " " + test.str());
}

} // namespace

llvm::Expected<Record> conformance::readRecord(const std::string &path) {
  auto buf = llvm::MemoryBuffer::getFile(path);
  if (!buf)
    return makeError("cannot read the record " + path + ": " +
                     buf.getError().message());
  Record rec;
  llvm::SmallVector<llvm::StringRef, 2048> lines;
  (*buf)->getBuffer().split(lines, '\n');
  llvm::StringRef section;
  for (llvm::StringRef l : lines) {
    if (l.starts_with("## ")) {
      section = l.drop_front(3).trim();
      continue;
    }
    if (section == "All sets" && l.starts_with("| "))
      readCountRow(l, rec);
    else if (section == "Tests that did not pass" && l.starts_with("- "))
      readNotPassing(l, rec);
  }
  if (rec.passCount.empty())
    return makeError("the record " + path +
                     " has no \"All sets\" table of pass counts");
  return rec;
}

bool conformance::holdsFloor(const Record &record,
                             llvm::ArrayRef<TestResult> results, bool wholeSets,
                             llvm::raw_ostream &log) {
  bool held = true;
  std::map<std::pair<std::string, std::string>, unsigned> now;
  for (const TestResult &r : results) {
    unsigned &n = now[{r.set, r.backend}];
    if (r.verdict == Verdict::Pass) {
      ++n;
      continue;
    }
    if (record.notPassing.count(r.backend + " " + r.set + "/" + r.name) ||
        !record.passCount.count({r.set, r.backend}))
      continue;
    held = false;
    log << "moved from pass: " << r.backend << " " << r.set << "/" << r.name
        << " is " << verdictName(r.verdict) << ": " << r.reason << "\n";
  }
  if (!wholeSets)
    return held;
  for (auto &[key, count] : now) {
    auto it = record.passCount.find(key);
    if (it == record.passCount.end()) {
      log << "floor: " << key.first << " on " << key.second
          << " has no recorded count (" << count << " pass now)\n";
      continue;
    }
    if (count < it->second) {
      held = false;
      log << "floor: " << key.first << " on " << key.second << ": " << count
          << " pass, below the recorded " << it->second << "\n";
    } else if (count > it->second) {
      log << "floor: " << key.first << " on " << key.second << ": " << count
          << " pass, above the recorded " << it->second
          << "; scripts/onnx-support.sh raises the record\n";
    }
  }
  return held;
}
