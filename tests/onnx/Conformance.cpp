//===- Conformance.cpp - The ONNX backend-test conformance runner ---------===//
//
// onnx-conformance [-data=DIR] [-sets=node,...] [-backends=Interpreter,...]
//                  [-report=FILE] [-known-failures=FILE] [-filter=SUBSTR]
//                  [-jobs=N] [-timeout=SECONDS] [-freeze-inputs]
//                  [-floor=FILE [-accept-drop]] [-errata=DIR]
//
// Runs every test directory of the chosen sets on every backend, each in a
// child process with a time limit so that a crash or a hang is recorded as
// a failure instead of ending the run. Writes the Markdown report and exits
// non-zero if a test fails that the known-failures list does not name, or
// if a pass count falls below the one recorded in the -floor report (a
// report this runner wrote earlier; -accept-drop records lower counts).
//
//===----------------------------------------------------------------------===//
#include "Floor.h"
#include "Report.h"
#include "RunTest.h"

#include "ember/Base/Error.h"
#ifdef EMBER_CONFORMANCE_CUDA_EMULATION
#include "../cuda/HostEmulationBackend.h"
#endif

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <set>

using namespace ember;
using namespace ember::conformance;
namespace cl = llvm::cl;

static cl::opt<std::string> dataDir("data", cl::desc("Test data root"),
                                    cl::init("/usr/share/libonnx-testdata/"
                                             "data"));
static cl::opt<std::string>
    setsOpt("sets", cl::desc("Comma-separated test sets"),
            cl::init("node,pytorch-converted,pytorch-operator,simple"));
// The backends to test: adding one is a change of this default (or a flag).
static cl::opt<std::string> backendsOpt("backends",
                                        cl::desc("Comma-separated backends"),
                                        cl::init("Interpreter"));
static cl::opt<std::string> reportPath("report",
                                       cl::desc("Markdown report to write"));
static cl::opt<std::string>
    knownPath("known-failures",
              cl::desc("File of test names expected to fail (# comments)"));
static cl::opt<std::string> filter("filter",
                                   cl::desc("Run tests whose name contains "
                                            "this"));
static cl::opt<unsigned> jobs("jobs", cl::desc("Parallel children"),
                              cl::init(2));
static cl::opt<unsigned> timeoutS("timeout",
                                  cl::desc("Seconds per test before it "
                                           "counts as a hang"),
                                  cl::init(30));
static cl::opt<bool> verbose("v", cl::desc("Print every result"));
static cl::opt<bool> freezeInputs(
    "freeze-inputs",
    cl::desc("Turn inputs that the importer needs at compile time into "
             "constants of each data set's value (such passes do not "
             "count)"));
#ifndef EMBER_CONFORMANCE_ERRATA
#define EMBER_CONFORMANCE_ERRATA ""
#endif
static cl::opt<std::string> errataDir(
    "errata",
    cl::desc("Root of corrected test files (SET/TEST/...) that replace "
             "stale ones of -data (tests/onnx/errata; empty: none)"),
    cl::init(EMBER_CONFORMANCE_ERRATA));
static cl::opt<std::string>
    floorPath("floor", cl::desc("A report whose pass counts this run may not "
                                "fall below"));
static cl::opt<bool>
    acceptDrop("accept-drop",
               cl::desc("Write the report even if counts fell below -floor"));

static cl::opt<bool> requirePass(
    "require-pass",
    cl::desc("Fail unless every test passes (the hand-made sets of "
             "tests/onnx/handmade, where unsupported is a regression too)"));

namespace {

/// A running child.
struct Child {
  pid_t pid;
  int fd;
  size_t job;
  std::chrono::steady_clock::time_point start;
  std::string out;
};

/// Starts a child that runs job \p j and writes "P|F|U reason" to a pipe.
Child spawn(const std::vector<TestResult> &results, size_t j) {
  int fds[2];
  if (pipe(fds) != 0) {
    perror("pipe");
    std::exit(2);
  }
  llvm::outs().flush();
  llvm::errs().flush();
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    const TestResult &r = results[j];
    std::string errata =
        errataDir.empty() ? "" : errataDir + "/" + r.set + "/" + r.name;
    Outcome o = runTest(r.dir, r.backend, freezeInputs, errata);
    std::string line = std::string(1, "PFUZ"[int(o.verdict)]) + o.reason;
    (void)!write(fds[1], line.data(), line.size());
    _exit(0);
  }
  close(fds[1]);
  return {pid, fds[0], j, std::chrono::steady_clock::now(), ""};
}

/// Reads what the child wrote and its exit status into \p r.
void finish(Child &c, TestResult &r, bool timedOut) {
  int status = 0;
  if (timedOut) {
    kill(c.pid, SIGKILL);
    waitpid(c.pid, &status, 0);
    r.verdict = Verdict::Fail;
    r.reason = "hang: no result after " + std::to_string(timeoutS) + " s";
  } else {
    waitpid(c.pid, &status, 0);
    if (WIFSIGNALED(status)) {
      r.verdict = Verdict::Fail;
      r.reason = std::string("crash: ") + strsignal(WTERMSIG(status));
    } else if (c.out.empty()) {
      r.verdict = Verdict::Fail;
      r.reason = "crash: exited with status " +
                 std::to_string(WEXITSTATUS(status)) + " and no result";
    } else {
      r.verdict = c.out[0] == 'P'   ? Verdict::Pass
                  : c.out[0] == 'F' ? Verdict::Fail
                  : c.out[0] == 'Z' ? Verdict::FrozenPass
                                    : Verdict::Unsupported;
      r.reason = c.out.substr(1);
    }
  }
  close(c.fd);
}

/// Runs every job with at most `jobs` children at a time.
void runAll(std::vector<TestResult> &results) {
  std::vector<Child> running;
  size_t next = 0, done = 0;
  while (done < results.size()) {
    while (running.size() < std::max(1u, unsigned(jobs)) &&
           next < results.size())
      running.push_back(spawn(results, next++));
    std::vector<pollfd> pfds;
    for (Child &c : running)
      pfds.push_back({c.fd, POLLIN, 0});
    poll(pfds.data(), pfds.size(), 100);
    auto now = std::chrono::steady_clock::now();
    for (size_t i = 0; i < running.size();) {
      Child &c = running[i];
      bool closed = false;
      if (pfds[i].revents & (POLLIN | POLLHUP)) {
        char buf[4096];
        ssize_t n = read(c.fd, buf, sizeof(buf));
        if (n > 0)
          c.out.append(buf, n);
        else
          closed = true;
      }
      bool late = now - c.start > std::chrono::seconds(timeoutS);
      if (!closed && !late) {
        ++i;
        continue;
      }
      TestResult &r = results[c.job];
      finish(c, r, !closed);
      if (verbose || r.verdict == Verdict::Fail)
        llvm::errs() << verdictName(r.verdict) << " " << r.backend << " "
                     << r.set << "/" << r.name << " " << r.reason << "\n";
      ++done;
      pfds.erase(pfds.begin() + i);
      running.erase(running.begin() + i);
    }
  }
}

/// Names listed in the known-failures file ("name  # why" lines).
std::set<std::string> readKnown(const std::string &path) {
  std::set<std::string> known;
  if (path.empty())
    return known;
  auto buf = llvm::MemoryBuffer::getFile(path);
  if (!buf) {
    llvm::errs() << "onnx-conformance: cannot read " << path << "\n";
    std::exit(2);
  }
  llvm::SmallVector<llvm::StringRef, 64> lines;
  (*buf)->getBuffer().split(lines, '\n');
  for (llvm::StringRef l : lines) {
    l = l.split('#').first.trim();
    if (!l.empty())
      known.insert(l.str());
  }
  return known;
}

/// One result per test directory of \p sets and backend; exits on a set
/// without tests.
std::vector<TestResult> collect(llvm::ArrayRef<llvm::StringRef> sets,
                                llvm::ArrayRef<llvm::StringRef> backends) {
  std::vector<TestResult> results;
  for (llvm::StringRef set : sets) {
    std::vector<std::string> dirs;
    std::error_code ec;
    std::string root = dataDir + "/" + set.str();
    for (llvm::sys::fs::directory_iterator it(root, ec), e; it != e && !ec;
         it.increment(ec))
      dirs.push_back(it->path());
    if (ec || dirs.empty()) {
      llvm::errs() << "onnx-conformance: no tests in " << root << "\n";
      std::exit(2);
    }
    std::sort(dirs.begin(), dirs.end());
    for (const std::string &d : dirs) {
      std::string name = llvm::sys::path::filename(d).str();
      if (!filter.empty() && name.find(filter) == std::string::npos)
        continue;
      ModelInfo info = describeModel(d + "/model.onnx");
      for (llvm::StringRef b : backends)
        results.push_back(
            {set.str(), name, d, b.str(), info, Verdict::Unsupported, ""});
    }
  }
  return results;
}

/// Failures that the known-failures list does not name, printed.
unsigned countUnexpected(llvm::ArrayRef<TestResult> results) {
  std::set<std::string> known = readKnown(knownPath);
  unsigned unexpected = 0;
  for (const TestResult &r : results)
    if (r.verdict == Verdict::Fail && !known.count(r.name)) {
      ++unexpected;
      llvm::errs() << "unexpected failure: " << r.backend << " " << r.set << "/"
                   << r.name << ": " << r.reason << "\n";
    }
  return unexpected;
}

/// Whether the counts hold the -floor record (true without one).
bool checkFloor(llvm::ArrayRef<TestResult> results) {
  if (floorPath.empty())
    return true;
  auto rec = readRecord(floorPath);
  if (!rec) {
    llvm::errs() << "onnx-conformance: " << errorToString(rec.takeError())
                 << "\n";
    std::exit(2);
  }
  if (freezeInputs)
    llvm::errs() << "onnx-conformance: -floor with -freeze-inputs: frozen "
                    "passes do not count\n";
  return holdsFloor(*rec, results, filter.empty(), llvm::errs());
}

} // namespace

int main(int argc, char **argv) {
  cl::ParseCommandLineOptions(argc, argv, "ONNX conformance runner\n");
#ifdef EMBER_CONFORMANCE_CUDA_EMULATION
  // CUDAHostEmu and CUDAHostEmuGen: the CUDA backend's kernels built for
  // the host over stand-ins of its libraries (tests/cuda).
  ember::test::registerCUDAHostEmulation();
#endif
  llvm::SmallVector<llvm::StringRef, 4> sets, backends;
  llvm::StringRef(setsOpt).split(sets, ',', -1, false);
  llvm::StringRef(backendsOpt).split(backends, ',', -1, false);
  if (!floorPath.empty() && !llvm::sys::fs::exists(floorPath)) {
    llvm::errs() << "onnx-conformance: no record " << floorPath << "\n";
    return 2;
  }
  std::vector<TestResult> results = collect(sets, backends);
  auto t0 = std::chrono::steady_clock::now();
  runAll(results);
  double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
          .count();
  unsigned unexpected = countUnexpected(results);
  for (const TestResult &r : results)
    if (requirePass && r.verdict != Verdict::Pass &&
        r.verdict != Verdict::Fail) {
      ++unexpected;
      llvm::errs() << "not a pass (-require-pass): " << r.backend << " "
                   << r.set << "/" << r.name << ": " << r.reason << "\n";
    }
  bool held = checkFloor(results);
  llvm::outs() << summarize(results) << " (" << llvm::format("%.1f", secs)
               << " s)\n";
  for (llvm::StringRef b : backends)
    for (llvm::StringRef set : sets) {
      llvm::outs() << "not passing, " << set << " on " << b << ":\n";
      writeReasonHistogram(llvm::outs(), results, set, b);
    }
  bool keepRecord = !held && !acceptDrop && reportPath == floorPath;
  if (keepRecord)
    llvm::errs() << "onnx-conformance: counts fell; " << reportPath
                 << " left as it was (-accept-drop records them)\n";
  if (!reportPath.empty() && !keepRecord) {
    std::error_code ec;
    llvm::raw_fd_ostream os(reportPath, ec);
    if (ec) {
      llvm::errs() << "onnx-conformance: cannot write " << reportPath << "\n";
      return 2;
    }
    writeReport(os, results, backends);
  }
  if (unexpected)
    llvm::errs() << unexpected << " unexpected failure(s)\n";
  if (!held)
    llvm::errs() << "onnx-conformance: pass counts fell below " << floorPath
                 << "\n";
  return unexpected || (!held && !acceptDrop) ? 1 : 0;
}
