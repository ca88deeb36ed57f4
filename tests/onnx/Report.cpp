//===- Report.cpp - Conformance results and their Markdown report ---------===//
#include "Report.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>

using namespace ember;
using namespace ember::conformance;

ModelInfo conformance::describeModel(const std::string &modelPath) {
  ModelInfo info;
  onnx::ModelProto m;
  std::ifstream in(modelPath, std::ios::binary);
  if (!in || !m.ParseFromIstream(&in))
    return info;
  for (const auto &o : m.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx")
      info.opset = o.version();
  std::set<std::string> seen;
  for (const auto &n : m.graph().node())
    if (n.op_type() != "Constant" && seen.insert(n.op_type()).second)
      info.opTypes.push_back(n.op_type());
  return info;
}

const char *conformance::verdictName(Verdict v) {
  switch (v) {
  case Verdict::Pass:
    return "pass";
  case Verdict::Fail:
    return "fail";
  case Verdict::Unsupported:
    return "unsupported";
  case Verdict::FrozenPass:
    return "pass with frozen inputs";
  }
  return "?";
}

namespace {

/// Per-verdict counts. A pass with frozen inputs counts as unsupported (a
/// user feeding the inputs at run time gets an error) and, apart, as
/// frozen.
struct Counts {
  unsigned pass = 0, fail = 0, unsupported = 0, frozen = 0;
  unsigned total() const { return pass + fail + unsupported; }
  void add(Verdict v) {
    (v == Verdict::Pass ? pass : v == Verdict::Fail ? fail : unsupported)++;
    if (v == Verdict::FrozenPass)
      ++frozen;
  }
};

/// "ReduceLogSumExp" -> "reduce_log_sum_exp".
std::string snake(llvm::StringRef s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    bool up = llvm::isUpper(s[i]);
    if (up && i &&
        (llvm::isLower(s[i - 1]) ||
         (i + 1 < s.size() && llvm::isLower(s[i + 1]))))
      out += '_';
    out += llvm::toLower(s[i]);
  }
  return out;
}

/// The op type a node test is about: its only op, or the op whose name
/// (snake_case or lower case) starts the test name.
std::string opOf(const TestResult &r, const std::vector<std::string> &allOps) {
  if (r.info.opTypes.size() == 1)
    return r.info.opTypes[0];
  llvm::StringRef name = llvm::StringRef(r.name).drop_front(5); // "test_"
  static const std::pair<const char *, const char *> kAliases[] = {
      {"nllloss", "NegativeLogLikelihoodLoss"},
      {"sce_", "SoftmaxCrossEntropyLoss"},
      {"mvn", "MeanVarianceNormalization"},
      {"layer_normalization", "LayerNormalization"},
      {"logsoftmax", "LogSoftmax"},
      {"reduce_log_sum_exp", "ReduceLogSumExp"},
  };
  for (auto &[prefix, op] : kAliases)
    if (name.starts_with(prefix))
      return op;
  std::string best;
  size_t bestLen = 0;
  for (const std::string &op : allOps)
    for (const std::string &form : {snake(op), llvm::StringRef(op).lower()})
      if (name.starts_with(form) && form.size() > bestLen &&
          (name.size() == form.size() || name[form.size()] == '_')) {
        best = op;
        bestLen = form.size();
      }
  if (!best.empty())
    return best;
  return r.info.opTypes.empty() ? "(none)" : r.info.opTypes[0];
}

/// \p s with every '...' quoted name and every digit run replaced, so that
/// node, input and test names and sizes do not split a group.
std::string anonymize(llvm::StringRef s) {
  std::string out;
  bool quoted = false;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '\'') {
      out += quoted ? "'" : "'X";
      quoted = !quoted;
    } else if (quoted) {
      continue;
    } else if (llvm::isDigit(c)) {
      if (out.empty() || out.back() != 'N')
        out += 'N';
    } else {
      out += c;
    }
  }
  return out;
}

} // namespace

std::string conformance::reasonGroup(llvm::StringRef reason) {
  // The runner prefixes import errors with the model's path.
  size_t at = reason.find("model.onnx: ");
  if (at != llvm::StringRef::npos)
    reason = reason.drop_front(at + 12);
  reason = reason.split('\n').first;
  size_t open = reason.find(" op type(s) [");
  if (reason.contains("unsupported node(s)") && open != llvm::StringRef::npos)
    return "op not imported: " +
           reason.drop_front(open + 13).split(']').first.str();
  // "node 'n' (Op): rest": the op type and the innermost clause of rest.
  llvm::StringRef op;
  if (reason.starts_with("node '")) {
    llvm::StringRef rest = reason.drop_front(6).split("' (").second;
    op = rest.split("): ").first;
    reason = rest.split("): ").second;
  }
  std::string prefix = op.empty() ? "" : op.str() + ": ";
  if (reason.contains("must be a constant"))
    return "run-time operand: " + op.str();
  size_t ty = reason.find("unsupported element type ");
  if (ty != llvm::StringRef::npos)
    return "element type " + reason.drop_front(ty + 25).split(' ').first.str();
  if (reason.contains("exceeds the maximum"))
    return "rank above the maximum";
  if (reason.contains("zero-sized dimension") ||
      reason.contains("result is empty") ||
      reason.contains("empty tensors are supported only"))
    return "empty tensor";
  if (reason.contains("is not a tensor"))
    return "sequence or optional value";
  size_t inner = reason.rfind("): ");
  if (inner != llvm::StringRef::npos)
    reason = reason.drop_front(inner + 3);
  std::string g = prefix + anonymize(reason);
  return g.size() > 100 ? g.substr(0, 100) + "…" : g;
}

void conformance::writeReasonHistogram(llvm::raw_ostream &os,
                                       llvm::ArrayRef<TestResult> results,
                                       llvm::StringRef set,
                                       llvm::StringRef backend) {
  std::map<std::string, unsigned> count;
  for (const TestResult &r : results)
    if (r.set == set && r.backend == backend && r.verdict != Verdict::Pass)
      ++count[std::string(r.verdict == Verdict::Fail ? "fail: " : "") +
              reasonGroup(r.reason)];
  std::vector<std::pair<unsigned, std::string>> sorted;
  for (auto &[g, n] : count)
    sorted.push_back({n, g});
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](auto &a, auto &b) { return a.first > b.first; });
  for (auto &[n, g] : sorted)
    os << "- " << n << ": " << g << "\n";
}

std::string conformance::summarize(llvm::ArrayRef<TestResult> results) {
  std::map<std::pair<std::string, std::string>, Counts> bySet;
  for (const TestResult &r : results)
    bySet[{r.set, r.backend}].add(r.verdict);
  std::string s;
  for (auto &[key, c] : bySet) {
    if (!s.empty())
      s += "; ";
    s += key.first + " on " + key.second + ": " + std::to_string(c.pass) + "/" +
         std::to_string(c.total()) + " pass (" +
         llvm::formatv("{0:F1}", 100.0 * c.pass / std::max(1u, c.total()))
             .str() +
         "%), " + std::to_string(c.fail) + " fail, " +
         std::to_string(c.unsupported) + " unsupported";
    if (c.frozen)
      s +=
          " (" + std::to_string(c.frozen) + " of them pass with frozen inputs)";
  }
  return s;
}

namespace {

/// The report's histogram of why node tests did not pass, per backend.
void writeWhySection(llvm::raw_ostream &os, llvm::ArrayRef<TestResult> results,
                     llvm::ArrayRef<llvm::StringRef> backends) {
  os << "\n## Why node tests did not pass\n\nNon-passing node tests by "
        "reason group (tests/onnx/Report.cpp, reasonGroup), largest "
        "first.\n";
  for (llvm::StringRef b : backends) {
    os << "\n" << b << ":\n\n";
    writeReasonHistogram(os, results, "node", b);
  }
}

} // namespace

void conformance::writeReport(llvm::raw_ostream &os,
                              llvm::ArrayRef<TestResult> results,
                              llvm::ArrayRef<llvm::StringRef> backends) {
  os << "# ONNX support\n\n"
     << "Generated by `onnx-conformance` (tests/onnx) from the ONNX backend "
        "tests of Debian's libonnx-testdata; regenerate it with "
        "`scripts/onnx-support.sh`. Do not edit by hand. Where that data "
        "set (ONNX 1.12) is wrong, ONNX's later corrected file replaces the "
        "stale one: test_adam_multiple's model (its epsilon attribute) and "
        "the expected outputs of the three FLOAT to BFLOAT16 Cast/CastLike "
        "tests (rounded to nearest even, not truncated), from ONNX 1.23.2's "
        "generators (tests/onnx/errata, `make.py` there).\n\n"
     << "A test **passes** when every output of every data set matches "
        "`output_N.pb` within rtol 1e-3 and atol 1e-5 (float16: atol 1e-3); "
        "it **fails** on wrong numbers, a wrong type or shape, a run-time "
        "error, a crash or a hang; it is **unsupported** when import or "
        "compilation stops with a clean error, or the run-time input check "
        "refuses a data set's values (docs/RuntimeInputs.md). Every input is "
        "fed at run "
        "time, as `model-runner -input=...` does; a test that passes only "
        "when the runner turns inputs into constants (`-freeze-inputs`) is "
        "not a pass. Ember draws the values of the random ops (Bernoulli, "
        "RandomUniform/RandomNormal and their *Like forms, Dropout's "
        "training mask) when it compiles "
        "the model, from its own generator seeded by the `seed` attribute "
        "(0 without one): the same values on every call and compile, never "
        "another runtime's, so a test using one passes when each output has "
        "the expected type and every value is a possible draw (0 or 1 for "
        "Bernoulli; for a one-node Dropout model with a training_mode "
        "input, each y is x / (1 - ratio) where the mask is true and 0, only "
        "when training with a ratio above 0, where it is false; finite "
        "otherwise).\n\n"
     << "The pass counts of the \"All sets\" table are the floor that the "
        "`onnx.conformance.*` ctests hold: a count below it fails them.\n\n"
     << "**Summary:** " << summarize(results) << ".\n\n";
  std::set<std::string> opSet;
  for (const TestResult &r : results)
    for (const std::string &op : r.info.opTypes)
      opSet.insert(op);
  std::vector<std::string> allOps(opSet.begin(), opSet.end());
  // Node tests per op type.
  std::map<std::string, std::map<std::string, Counts>> byOp;
  std::map<std::string, std::set<long>> opsets;
  for (const TestResult &r : results)
    if (r.set == "node") {
      std::string op = opOf(r, allOps);
      byOp[op][r.backend].add(r.verdict);
      opsets[op].insert(r.info.opset);
    }
  os << "## Node tests by op type\n\n| op type | tests |";
  for (llvm::StringRef b : backends)
    os << " " << b << " pass / fail / unsupported |";
  os << " opsets |\n|---|---|";
  for (size_t i = 0; i < backends.size(); ++i)
    os << "---|";
  os << "---|\n";
  for (auto &[op, perBackend] : byOp) {
    os << "| " << op << " | " << perBackend.begin()->second.total() << " |";
    for (llvm::StringRef b : backends) {
      Counts c = perBackend[b.str()];
      os << " " << c.pass << " / " << c.fail << " / " << c.unsupported << " |";
    }
    std::string ops;
    for (long v : opsets[op])
      ops += (ops.empty() ? "" : ", ") + std::to_string(v);
    os << " " << ops << " |\n";
  }
  // Other sets.
  std::map<std::string, std::map<std::string, Counts>> bySet;
  for (const TestResult &r : results)
    bySet[r.set][r.backend].add(r.verdict);
  os << "\n## All sets\n\n| set | backend | tests | pass | fail | "
        "unsupported |\n|---|---|---|---|---|---|\n";
  for (auto &[set, perBackend] : bySet)
    for (auto &[b, c] : perBackend)
      os << "| " << set << " | " << b << " | " << c.total() << " | " << c.pass
         << " | " << c.fail << " | " << c.unsupported << " |\n";
  unsigned frozen = 0;
  for (const TestResult &r : results)
    frozen += r.verdict == Verdict::FrozenPass;
  if (frozen) {
    os << "\n## Tests that pass only with frozen inputs\n\nThese models "
          "take a shape, axes, scales or similar operand as a graph input "
          "that Ember needs at compile time; with `-freeze-inputs` the runner "
          "passed each data set's value as a constant "
          "(ImportOptions::frozenInputs). They count as unsupported.\n\n";
    for (const TestResult &r : results)
      if (r.verdict == Verdict::FrozenPass)
        os << "`" << r.backend << " " << r.name << "` ";
    os << "(" << frozen << ")\n";
  }
  writeWhySection(os, results, backends);
  os << "\n## Tests that did not pass\n\n";
  for (const TestResult &r : results) {
    if (r.verdict == Verdict::Pass)
      continue;
    std::string why = r.reason;
    std::string prefix = r.dir + "/model.onnx: ";
    if (llvm::StringRef(why).starts_with(prefix))
      why = why.substr(prefix.size());
    if (why.size() > 200)
      why = why.substr(0, 200) + "…";
    for (char &ch : why)
      if (ch == '|' || ch == '\n')
        ch = ' ';
    os << "- " << r.backend << " `" << r.set << "/" << r.name << "` **"
       << verdictName(r.verdict) << "**: " << why << "\n";
  }
}
