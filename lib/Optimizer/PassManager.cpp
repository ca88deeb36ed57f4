//===- PassManager.cpp - Running pipelines with instruments ---------------===//
#include "ember/Optimizer/PassManager.h"

#include "ember/Graph/Printer.h"
#include "ember/Graph/Verifier.h"

#include <chrono>
#include <cstdarg>
#include <cstdio>

using namespace ember;

/// printf-style formatting into a string (for the aligned tables).
static std::string fmt(const char *format, ...) {
  char buf[256];
  va_list args;
  va_start(args, format);
  std::vsnprintf(buf, sizeof(buf), format, args);
  va_end(args);
  return buf;
}

llvm::Expected<Pipeline> ember::parsePipeline(llvm::StringRef text) {
  Pipeline P;
  PipelineStage single;
  auto flushSingle = [&] {
    if (!single.passes.empty())
      P.push_back(std::move(single));
    single = PipelineStage();
  };
  auto checkName = [](llvm::StringRef name) -> llvm::Error {
    if (!createPass(name))
      return makeErrorF("unknown pass '{0}' in pipeline", name);
    return llvm::Error::success();
  };
  text = text.trim();
  while (!text.empty()) {
    if (text.consume_front("(")) {
      size_t close = text.find(')');
      if (close == llvm::StringRef::npos)
        return makeError("pipeline: missing ')'");
      PipelineStage group;
      llvm::SmallVector<llvm::StringRef, 8> names;
      text.take_front(close).split(names, ',', -1, false);
      for (llvm::StringRef n : names) {
        EMBER_RETURN_IF_ERR(checkName(n.trim()));
        group.passes.push_back(n.trim().str());
      }
      text = text.drop_front(close + 1).ltrim();
      group.fixedPoint = text.consume_front("*");
      flushSingle();
      P.push_back(std::move(group));
    } else {
      llvm::StringRef name = text.take_until([](char c) { return c == ','; });
      text = text.drop_front(name.size());
      EMBER_RETURN_IF_ERR(checkName(name.trim()));
      single.passes.push_back(name.trim().str());
    }
    text = text.ltrim();
    text.consume_front(",");
    text = text.ltrim();
  }
  flushSingle();
  return P;
}

std::string ember::pipelineToString(const Pipeline &P) {
  std::string s;
  for (const PipelineStage &stage : P) {
    std::string names;
    for (const std::string &n : stage.passes)
      names += (names.empty() ? "" : ",") + n;
    if (!s.empty())
      s += ",";
    s += stage.fixedPoint ? "(" + names + ")*" : names;
  }
  return s;
}

namespace {
/// Runs passes with the instruments and accumulates timings.
class Runner {
public:
  Runner(PassContext &ctx, const PassInstrumentOptions &opts)
      : ctx_(ctx), opts_(opts), os_(opts.os ? *opts.os : llvm::errs()) {}

  llvm::Expected<bool> runOne(Function &F, Pass &P);
  void printTimes() const;

private:
  struct Timing {
    std::string name;
    double seconds = 0;
    unsigned runs = 0, changed = 0;
  };
  Timing &timingFor(llvm::StringRef name);

  PassContext &ctx_;
  const PassInstrumentOptions &opts_;
  llvm::raw_ostream &os_;
  std::vector<Timing> times_;
};
} // namespace

Runner::Timing &Runner::timingFor(llvm::StringRef name) {
  for (Timing &t : times_)
    if (t.name == name)
      return t;
  times_.push_back({name.str()});
  return times_.back();
}

llvm::Expected<bool> Runner::runOne(Function &F, Pass &P) {
  auto start = std::chrono::steady_clock::now();
  bool changed = P.run(F, ctx_);
  double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  Timing &t = timingFor(P.getName());
  t.seconds += secs;
  ++t.runs;
  t.changed += changed;
  if (opts_.verifyEach)
    if (llvm::Error err = verifyFunction(F))
      return makeErrorF("pass '{0}' broke the graph: {1}", P.getName(),
                        errorToString(std::move(err)));
  if (opts_.printAfterAll || opts_.printAfter.count(P.getName().str())) {
    os_ << "// after " << P.getName() << (changed ? "" : " (no change)")
        << "\n";
    printFunction(F, os_);
  }
  auto dot = opts_.dotAfter.find(P.getName().str());
  if (dot != opts_.dotAfter.end()) {
    std::error_code ec;
    llvm::raw_fd_ostream file(dot->second, ec);
    if (ec)
      return makeErrorF("cannot write '{0}': {1}", dot->second, ec.message());
    printFunctionDot(F, file);
  }
  return changed;
}

void Runner::printTimes() const {
  double total = 0;
  for (const Timing &t : times_)
    total += t.seconds;
  os_ << "===- pass timings -===\n";
  os_ << fmt("%-24s %10s %6s %8s %6s\n", "pass", "ms", "%", "runs", "changed");
  for (const Timing &t : times_)
    os_ << fmt("%-24s %10.3f %6.1f %8u %6u\n", t.name.c_str(), t.seconds * 1e3,
               total > 0 ? 100 * t.seconds / total : 0.0, t.runs, t.changed);
  os_ << fmt("%-24s %10.3f\n", "total", total * 1e3);
}

/// Upper bound on rounds of a fixed-point stage; hitting it means two
/// passes undo each other, which is a bug worth reporting.
static constexpr unsigned kMaxRounds = 64;

llvm::Expected<bool> ember::runPipeline(Function &F, const Pipeline &P,
                                        PassContext &ctx,
                                        const PassInstrumentOptions &opts) {
  Runner runner(ctx, opts);
  auto before = countNodeKinds(F);
  bool changedAny = false;
  for (const PipelineStage &stage : P) {
    std::vector<std::unique_ptr<Pass>> passes;
    for (const std::string &name : stage.passes) {
      std::unique_ptr<Pass> pass = createPass(name);
      if (!pass)
        return makeErrorF("unknown pass '{0}'", name);
      if (!opts.disabled.count(name))
        passes.push_back(std::move(pass));
    }
    for (unsigned round = 0;; ++round) {
      if (round == kMaxRounds)
        return makeErrorF("pipeline stage '{0}' did not reach a fixed point",
                          pipelineToString({stage}));
      bool changed = false;
      for (auto &pass : passes) {
        EMBER_ASSIGN_OR_RETURN(bool c, runner.runOne(F, *pass));
        changed |= c;
      }
      changedAny |= changed;
      if (!stage.fixedPoint || !changed)
        break;
    }
  }
  llvm::raw_ostream &os = opts.os ? *opts.os : llvm::errs();
  if (opts.timePasses)
    runner.printTimes();
  if (opts.printStats) {
    os << "===- optimization statistics -===\n"
       << "pipeline: " << pipelineToString(P) << "\n";
    printNodeCountTable(before, countNodeKinds(F), os);
    for (auto &[name, count] : ctx.counters)
      os << fmt("%-32s %8u\n", name.c_str(), count);
  }
  return changedAny;
}

llvm::Expected<bool> ember::runPass(Function &F, Pass &P, PassContext &ctx,
                                    const PassInstrumentOptions &opts) {
  Runner runner(ctx, opts);
  EMBER_ASSIGN_OR_RETURN(bool changed, runner.runOne(F, P));
  if (opts.timePasses)
    runner.printTimes();
  return changed;
}

void ember::printNodeCountTable(const std::map<std::string, unsigned> &before,
                                const std::map<std::string, unsigned> &after,
                                llvm::raw_ostream &os) {
  std::map<std::string, std::pair<unsigned, unsigned>> rows;
  unsigned totalBefore = 0, totalAfter = 0;
  for (auto &[k, n] : before) {
    rows[k].first = n;
    totalBefore += n;
  }
  for (auto &[k, n] : after) {
    rows[k].second = n;
    totalAfter += n;
  }
  os << fmt("%-20s %8s %8s\n", "node kind", "before", "after");
  for (auto &[k, r] : rows)
    os << fmt("%-20s %8u %8u\n", k.c_str(), r.first, r.second);
  os << fmt("%-20s %8u %8u\n", "total", totalBefore, totalAfter);
}
