//===- RunTest.cpp - Run one ONNX backend test in this process ------------===//
#include "RunTest.h"

#include "ember/Backend/ConstantEval.h"
#include "ember/Backend/Pipeline.h"
#include "ember/Base/Error.h"
#include "ember/Importer/ONNXImporter.h"
#include "ember/Importer/TensorIO.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <memory>

using namespace ember;
using namespace ember::conformance;

namespace {

/// The test_data_set_* directories of a test, sorted.
std::vector<std::string> dataSets(const std::string &dir) {
  std::vector<std::string> sets;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(dir, ec), e; it != e && !ec;
       it.increment(ec))
    if (llvm::sys::path::filename(it->path()).starts_with("test_data_set_"))
      sets.push_back(it->path());
  std::sort(sets.begin(), sets.end());
  return sets;
}

/// \p path, a file under test directory \p dir, or the file of the same
/// relative path under \p errata where that holds one (a corrected copy
/// from a later ONNX release of a stale file of the data set).
std::string withErrata(const std::string &path, const std::string &dir,
                       const std::string &errata) {
  if (errata.empty() || path.compare(0, dir.size(), dir) != 0)
    return path;
  std::string fixed = errata + path.substr(dir.size());
  return llvm::sys::fs::exists(fixed) ? fixed : path;
}

/// The files prefix_0.pb, prefix_1.pb, ... of a data set, each replaced by
/// its erratum where one exists.
std::vector<std::string> numbered(const std::string &set,
                                  const std::string &prefix,
                                  const std::string &dir,
                                  const std::string &errata) {
  std::vector<std::string> files;
  for (int i = 0;; ++i) {
    llvm::SmallString<256> p(set);
    llvm::sys::path::append(p, prefix + "_" + std::to_string(i) + ".pb");
    if (!llvm::sys::fs::exists(p))
      return files;
    files.push_back(withErrata(std::string(p), dir, errata));
  }
}

/// Tolerances: rtol 1e-3 and atol 1e-5 as the ONNX test runner uses,
/// except that float16 results get atol 1e-3 (half has ~3 decimal digits,
/// so values near zero cannot be closer than that after rounding).
bool closeEnough(const Tensor &got, const Tensor &want, std::string &why) {
  if (got.getType() != want.getType()) {
    why = "result " + got.getType().toString() + ", expected " +
          want.getType().toString();
    return false;
  }
  double atol = want.getElemKind() == ElemKind::Float16 ? 1e-3 : 1e-5;
  double rtol = 1e-3;
  for (dim_t i = 0, e = got.size(); i < e; ++i) {
    double a = got.elementAsDouble(i), b = want.elementAsDouble(i);
    if (std::isnan(a) && std::isnan(b))
      continue;
    if (std::isinf(b) && a == b)
      continue;
    if (!(std::fabs(a - b) <= atol + rtol * std::fabs(b))) {
      why = "element " + std::to_string(i) + ": got " + std::to_string(a) +
            ", expected " + std::to_string(b);
      return false;
    }
  }
  return true;
}

/// The random ops Ember draws at compile time from its own generator
/// (lib/Importer/ImportRandom.cpp): their values cannot equal another
/// generator's, so a test using one is checked by what any draw satisfies.
enum class Draw { None, Bernoulli, Dropout, Other };

/// The random op of a model and, for a model of one Dropout node with a
/// training_mode input whose inputs are graph inputs, their names.
struct DrawSpec {
  Draw kind = Draw::None;
  std::string x, ratio, training; ///< ratio is empty when absent (0.5)
};

/// A DrawSpec for the one-node Dropout model \p m, if it is one.
DrawSpec dropoutSpec(const onnx::ModelProto &m) {
  const onnx::GraphProto &g = m.graph();
  if (g.node_size() != 1 || g.node(0).op_type() != "Dropout" ||
      g.node(0).input_size() < 3 || g.node(0).input(2).empty())
    return {};
  const onnx::NodeProto &n = g.node(0);
  for (int i = 0; i < g.output_size(); ++i)
    if (i >= n.output_size() || g.output(i).name() != n.output(i))
      return {};
  return {Draw::Dropout, n.input(0), n.input(1), n.input(2)};
}

DrawSpec drawIn(const std::string &model) {
  onnx::ModelProto m;
  std::ifstream in(model, std::ios::binary);
  if (!m.ParseFromIstream(&in))
    return {}; // the import reports it
  DrawSpec d = dropoutSpec(m);
  for (const onnx::NodeProto &n : m.graph().node()) {
    const std::string &op = n.op_type();
    if (op == "Bernoulli")
      d.kind = Draw::Bernoulli;
    else if (d.kind != Draw::Bernoulli && (op.rfind("RandomUniform", 0) == 0 ||
                                           op.rfind("RandomNormal", 0) == 0))
      d.kind = Draw::Other;
  }
  return d;
}

/// Whether \p got has \p want's type (element kind and dims).
bool sameType(const Tensor &got, const Tensor &want, std::string &why) {
  if (got.getType() == want.getType())
    return true;
  why = "result " + got.getType().toString() + ", expected " +
        want.getType().toString();
  return false;
}

/// A draw's result: the expected type, every value finite, and 0 or 1 for
/// Bernoulli.
bool isDrawOf(const Tensor &got, const Tensor &want, Draw draw,
              std::string &why) {
  if (!sameType(got, want, why))
    return false;
  for (dim_t i = 0, e = got.size(); i < e; ++i) {
    double a = got.elementAsDouble(i);
    bool ok = draw == Draw::Bernoulli ? (a == 0 || a == 1) : std::isfinite(a);
    if (!ok) {
      why = "element " + std::to_string(i) + ": " + std::to_string(a) +
            " is not a possible draw";
      return false;
    }
  }
  return true;
}

/// A training Dropout's outputs \p got (y, and the mask when the model
/// returns it) for data \p x and effective ratio \p r (ratio times
/// training_mode): each y is x / (1 - r) (rtol 1e-3, atol 1e-5, as
/// closeEnough) or, only when r > 0, 0; where the mask is returned, y is
/// the scaled x exactly where the mask is true. Any draw satisfies this;
/// a wrong scale, a mask out of step with y or drops without training
/// does not.
bool isDropoutOf(const Tensor &x, double r, llvm::ArrayRef<const Tensor *> got,
                 std::string &why) {
  const Tensor &y = *got[0];
  const Tensor *mask = got.size() > 1 ? got[1] : nullptr;
  for (dim_t i = 0, e = y.size(); i < e; ++i) {
    double a = y.elementAsDouble(i), kept = x.elementAsDouble(i) / (1 - r);
    bool isKept = std::fabs(a - kept) <= 1e-5 + 1e-3 * std::fabs(kept);
    bool isDropped = a == 0 && r > 0;
    bool ok = mask ? (mask->elementAsDouble(i) != 0 ? isKept : isDropped)
                   : (isKept || isDropped);
    if (!ok) {
      why = "element " + std::to_string(i) + ": y = " + std::to_string(a) +
            (mask ? ", mask = " + std::to_string(int(mask->elementAsDouble(i)))
                  : std::string()) +
            ", x / (1 - ratio) = " + std::to_string(kept) +
            (r > 0 ? "" : ", nothing may be dropped");
      return false;
    }
  }
  return true;
}

/// isDropoutOf with x, the ratio and training_mode read from the inputs
/// \p b binds.
bool checkDropout(Module &M, Bindings &b, const DrawSpec &spec,
                  llvm::ArrayRef<const Tensor *> got, std::string &why) {
  auto value = [&](const std::string &name) -> const Tensor * {
    Placeholder *p = M.getPlaceholderByName(name);
    return p ? b.get(p) : nullptr;
  };
  const Tensor *x = value(spec.x), *t = value(spec.training);
  const Tensor *r = spec.ratio.empty() ? nullptr : value(spec.ratio);
  if (!x || !t || (!spec.ratio.empty() && !r)) {
    why = "Dropout's inputs are not all fed";
    return false;
  }
  double ratio = r ? r->elementAsDouble(0) : 0.5;
  return isDropoutOf(*x, t->elementAsDouble(0) != 0 ? ratio : 0, got, why);
}

/// \p t as a bfloat16 tensor where \p want is bfloat16 and \p t is uint16
/// of the same dims: the ONNX test generator stored bfloat16 data as UINT16
/// holding the bit patterns (numpy had no bfloat16), not as the operator's
/// BFLOAT16 with int32_data or raw_data; the bytes are the same.
void bfloat16FromBits(Tensor &t, const Type &want) {
  if (want.getElemKind() != ElemKind::BFloat16 ||
      t.getElemKind() != ElemKind::UInt16 || t.dims() != want.dims())
    return;
  Tensor r(want);
  std::memcpy(r.data(), t.data(), t.sizeInBytes());
  t = std::move(r);
}

/// Import (and compile) state for one data set.
struct Compiled {
  std::unique_ptr<Module> M = std::make_unique<Module>();
  Function *F = nullptr;
  CompiledNetwork net;
};

/// The graph input an import error asks to be known at compile time: one
/// that a node needs as a constant, or an empty one (only constants may be
/// empty). Empty if the error is about something else.
std::string inputToFreeze(const std::string &msg) {
  for (const char *pat : {"input '", "graph value '"}) {
    size_t at = msg.find(pat);
    if (at == std::string::npos)
      continue;
    size_t begin = at + std::strlen(pat), end = msg.find('\'', begin);
    if (end == std::string::npos)
      continue;
    std::string rest = msg.substr(end);
    if (rest.find("must be a constant") != std::string::npos ||
        rest.find("empty tensors are not supported") != std::string::npos)
      return msg.substr(begin, end - begin);
  }
  return "";
}

/// Imports and compiles. With \p freeze, when the importer needs a graph
/// input as a constant (a shape, axes, scales, ...), that input is frozen
/// to this data set's value and the import retried; \p frozen reports
/// whether any was.
llvm::Error build(Compiled &c, const std::string &model,
                  const std::vector<std::string> &inputs, const Backend &B,
                  bool freeze, bool &frozen) {
  ImportOptions opts;
  opts.evaluator = makeConstantEvaluator();
  frozen = false;
  for (int attempt = 0;; ++attempt) {
    c.M = std::make_unique<Module>();
    auto F = importONNXFile(model, *c.M, opts);
    if (F) {
      c.F = *F;
      break;
    }
    std::string msg = errorToString(F.takeError());
    std::string name = freeze ? inputToFreeze(msg) : "";
    if (name.empty() || opts.frozenInputs.count(name) || attempt > 16)
      return makeError(msg);
    bool found = false;
    for (const std::string &f : inputs) {
      EMBER_ASSIGN_OR_RETURN(NamedTensor t, loadTensorFile(f));
      if (t.name == name) {
        opts.frozenInputs[name] =
            std::make_shared<const Tensor>(std::move(t.tensor));
        found = true;
      }
    }
    if (!found)
      return makeError(msg);
    frozen = true;
  }
  EMBER_ASSIGN_OR_RETURN(c.net, compileFunction(*c.F, B, CompileOptions()));
  return llvm::Error::success();
}

/// Runs one data set; returns an empty string on success, else the reason.
std::string runSet(Compiled &c, const std::vector<std::string> &inputs,
                   const std::vector<std::string> &outputs,
                   const DrawSpec &draw) {
  Bindings b;
  auto phs = c.M->getInputPlaceholders();
  size_t next = 0;
  for (const std::string &f : inputs) {
    auto t = loadTensorFile(f);
    if (!t)
      return "cannot read " + f + ": " + errorToString(t.takeError());
    Placeholder *p =
        t->name.empty() ? nullptr : c.M->getPlaceholderByName(t->name);
    if (!p && t->name.empty() && next < phs.size())
      p = phs[next];
    ++next;
    if (!p)
      continue; // Frozen into a Constant.
    bfloat16FromBits(t->tensor, *p->getType());
    // An input no node reads (CastLike's target, whose type alone counts)
    // takes zeros where its data does not match its declared type.
    if (t->tensor.getType() != *p->getType() && !p->hasUsers()) {
      b.insert(p, Tensor(*p->getType()));
      continue;
    }
    if (t->tensor.getType() != *p->getType())
      return "input '" + p->getName().str() + "' is " +
             p->getType()->toString() + ", data is " +
             t->tensor.getType().toString();
    b.insert(p, std::move(t->tensor));
  }
  if (llvm::Error err = c.net.function->run(b))
    return "run failed: " + errorToString(std::move(err));
  auto outs = modelOutputs(*c.M);
  if (outs.size() != outputs.size())
    return "the model has " + std::to_string(outs.size()) +
           " outputs, the data " + std::to_string(outputs.size());
  // The outputs cut to their actual extents, and pointers to them.
  std::vector<std::unique_ptr<Tensor>> kept;
  std::vector<const Tensor *> got;
  for (size_t i = 0; i < outs.size(); ++i) {
    auto want = loadTensorFile(outputs[i]);
    if (!want)
      return "cannot read " + outputs[i] + ": " +
             errorToString(want.takeError());
    std::string why;
    auto cut = outputAtExtent(*c.M, b, outs[i]);
    if (!cut)
      return "output " + std::to_string(i) + ": " +
             errorToString(cut.takeError());
    kept.push_back(std::make_unique<Tensor>(std::move(*cut)));
    got.push_back(kept.back().get());
    bfloat16FromBits(want->tensor, got.back()->getType());
    bool ok = draw.kind == Draw::None
                  ? closeEnough(*got.back(), want->tensor, why)
              : draw.kind == Draw::Dropout
                  ? sameType(*got.back(), want->tensor, why)
                  : isDrawOf(*got.back(), want->tensor, draw.kind, why);
    if (!ok)
      return "output " + std::to_string(i) + ": " + why;
  }
  std::string why;
  if (draw.kind == Draw::Dropout && !checkDropout(*c.M, b, draw, got, why))
    return "output 0: " + why;
  return "";
}

} // namespace

Outcome conformance::runTest(const std::string &dir, const std::string &backend,
                             bool freezeInputs, const std::string &errata) {
  registerAllBackends();
  auto B = getBackend(backend);
  if (!B)
    return {Verdict::Unsupported, errorToString(B.takeError())};
  std::string model = withErrata(dir + "/model.onnx", dir, errata);
  std::vector<std::string> sets = dataSets(dir);
  if (sets.empty())
    return {Verdict::Unsupported, "no test_data_set_* directory"};
  std::unique_ptr<Compiled> c;
  bool frozen = false;
  DrawSpec draw = drawIn(model);
  for (const std::string &set : sets) {
    auto inputs = numbered(set, "input", dir, errata);
    auto outputs = numbered(set, "output", dir, errata);
    if (!c || frozen) { // Frozen inputs differ per data set.
      c = std::make_unique<Compiled>();
      if (llvm::Error err =
              build(*c, model, inputs, **B, freezeInputs, frozen)) {
        std::string msg = errorToString(std::move(err));
        std::replace(msg.begin(), msg.end(), '\n', ' ');
        return {Verdict::Unsupported, msg};
      }
    }
    std::string why = runSet(*c, inputs, outputs, draw);
    // The run-time input check refusing a value the network was not
    // compiled for (docs/RuntimeInputs.md) is a clean error, as an import
    // error is, not a wrong result.
    const std::string refused = "run failed: run-time input check: ";
    if (llvm::StringRef(why).starts_with(refused))
      return {Verdict::Unsupported, why.substr(std::strlen("run failed: "))};
    if (!why.empty())
      return {Verdict::Fail, llvm::sys::path::filename(set).str() + ": " + why};
  }
  if (frozen)
    return {Verdict::FrozenPass, "inputs needed at compile time were frozen"};
  return {Verdict::Pass, ""};
}
