//===- ModelRunner.cpp - Compile an ONNX model and run it -----------------===//
//
// model-runner -model=F.onnx [-backend=B] [-input=NAME=FILE|FILE]...
//              [-onnx-define-symbol=NAME,VALUE]...
//              [-model-input=NAME,TYPE,[D0,...]]...
//              [-iterations=N] [-output-dir=DIR] [-topk=K]
//              [-dump-graph] [-dump-graph-dot=FILE] [-dump-ir]
//              [-print-memory] [-compile-only] [-optimize-ir=false]
//              [-profile [-profile-order=time|program|kernels]]
//              [-num-threads=N]
//              [-dump-profile=P.yaml | -load-profile=P.yaml
//               [-dump-quantization-report] [quantization flags]]
//              [pass manager options: see tools/common/PassOptions.h]
//
//===----------------------------------------------------------------------===//
#include "CodegenFlags.h"
#include "FlagDecl.h"
#include "ImportFlags.h"
#include "PassOptions.h"
#include "PrecisionFlags.h"
#include "ProfileRuns.h"

#include "ember/Backend/Pipeline.h"
#include "ember/Backend/Profile.h"
#include "ember/IR/IRPrinter.h"
#include "ember/Importer/ONNXImporter.h"
#include "ember/Importer/TensorIO.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include "glog/logging.h"

#include <algorithm>
#include <chrono>
#include <numeric>

using namespace ember;
namespace cl = llvm::cl;

static cl::OptionCategory category("model-runner options");
static cl::opt<std::string> modelPath =
    tools::stringFlag(category, "model", "file.onnx", "", "ONNX model file");
static cl::opt<std::string> backendName = tools::stringFlag(
    category, "backend", "", "Interpreter", "Backend to run on");
static cl::list<std::string>
    inputs("input",
           cl::desc("Input tensor: NAME=FILE or FILE (graph order); .pb "
                    "(ONNX TensorProto) or .npy"),
           cl::value_desc("[NAME=]FILE"), cl::cat(category));
static cl::opt<unsigned>
    iterations("iterations",
               cl::desc("Time N runs after one warm-up (0: run once)"),
               cl::init(0), cl::cat(category));
static cl::opt<std::string> outputDir =
    tools::stringFlag(category, "output-dir", "", "",
                      "Write each output as DIR/output_N.pb (TensorProto)");
static cl::opt<unsigned> topK("topk",
                              cl::desc("Print the K largest entries of "
                                       "each output with their indices"),
                              cl::init(0), cl::cat(category));
static cl::opt<unsigned> printCount("print-count",
                                    cl::desc("Leading values to print"),
                                    cl::init(10), cl::cat(category));
static cl::opt<bool> dumpGraph("dump-graph",
                               cl::desc("Print the lowered graph"),
                               cl::cat(category));
static cl::opt<std::string> dumpGraphDot =
    tools::stringFlag(category, "dump-graph-dot", "", "",
                      "Write the lowered graph as Graphviz to FILE");
static cl::opt<bool> dumpIR("dump-ir",
                            cl::desc("Print the IR with memory offsets"),
                            cl::cat(category));

static cl::opt<bool> printMemory(
    "print-memory",
    cl::desc("Print constant, mutable (I/O) and activation sizes with the "
             "activation lower bound"),
    cl::cat(category));
static cl::opt<bool>
    compileOnly("compile-only",
                cl::desc("Stop after compiling (no inputs are read or run)"),
                cl::cat(category));
static cl::opt<bool>
    optimizeIROpt("optimize-ir",
                  cl::desc("Run the IR optimizer (default true; "
                           "-optimize-ir=false shows the unoptimized IR)"),
                  cl::init(true), cl::cat(category));

static cl::opt<unsigned>
    threadsOpt("num-threads",
               cl::desc("Threads to run on (CPU: the threaded schedule, "
                        "NAME_mt; other backends: 1 only)"),
               cl::init(1), cl::cat(category));
static cl::opt<bool> profileOpt(
    "profile",
    cl::desc("Time every kernel (CPU backend): print ms, GFLOP/s and share "
             "per instruction, averaged over max(1, -iterations) runs after "
             "the warm-up run"),
    cl::cat(category));
static cl::opt<std::string> profileOrder = tools::stringFlag(
    category, "profile-order", "time|program|kernels", "time",
    "Rows of -profile: 'time' (slowest first, the default), 'program' "
    "(execution order) or 'kernels' (execution order, one row per kernel)");

static cl::opt<std::string> profileStat = tools::stringFlag(
    category, "profile-stat", "mean|min", "mean",
    "Per kernel time of -profile: 'mean' over the runs (the "
    "default) or 'min', the fastest run of each kernel (steadier "
    "on a loaded machine)");

static void fail(const llvm::Twine &msg) {
  llvm::errs() << "model-runner: error: " << msg << "\n";
  std::exit(1);
}

static void failOn(llvm::Error err) {
  if (err)
    fail(errorToString(std::move(err)));
}

template <typename T> static T unwrap(llvm::Expected<T> v) {
  if (!v)
    fail(errorToString(v.takeError()));
  return std::move(*v);
}

static void bindInputs(const Module &M, Bindings &b) {
  auto phs = M.getInputPlaceholders();
  size_t positional = 0;
  for (const std::string &spec : inputs) {
    auto [name, file] = llvm::StringRef(spec).split('=');
    Placeholder *p = nullptr;
    if (file.empty()) {
      file = name;
      if (positional >= phs.size())
        fail("more -input files than the model has inputs (" +
             llvm::Twine(phs.size()) + ")");
      p = phs[positional++];
    } else {
      p = M.getPlaceholderByName(name);
      if (!p || p->isOutput())
        fail("the model has no input named '" + name + "'");
    }
    NamedTensor t = unwrap(loadTensorFile(file));
    if (!t.tensor.getType().isSameStorage(*p->getType()))
      fail("input '" + p->getName() + "' expects " + p->getType()->toString() +
           ", file '" + file + "' holds " + t.tensor.getType().toString());
    b.insert(p, std::move(t.tensor));
  }
  bool anyRandom = false;
  std::mt19937 gen(0);
  for (Placeholder *p : phs) {
    if (b.get(p))
      continue;
    if (!inputs.empty())
      fail("no -input given for model input '" + p->getName() + "'");
    Tensor t(*p->getType());
    t.randomize(0.f, 1.f, gen);
    b.insert(p, std::move(t));
    anyRandom = true;
  }
  if (anyRandom)
    llvm::outs() << "no inputs given: using random inputs in [0, 1) (seed 0)\n";
}

static void printOutput(const Placeholder *p, const Tensor &t) {
  llvm::outs() << "output '" << p->getName() << "' " << t.getType().toString()
               << ":";
  dim_t n = std::min<dim_t>(t.size(), printCount);
  for (dim_t i = 0; i < n; ++i)
    llvm::outs() << " " << llvm::format("%g", t.elementAsDouble(i));
  if (n < t.size())
    llvm::outs() << " ... (" << t.size() << " values)";
  llvm::outs() << "\n";
  if (!topK)
    return;
  std::vector<dim_t> idx(t.size());
  std::iota(idx.begin(), idx.end(), 0);
  dim_t k = std::min<dim_t>(topK, t.size());
  std::partial_sort(idx.begin(), idx.begin() + k, idx.end(),
                    [&](dim_t a, dim_t b) {
                      return t.elementAsDouble(a) > t.elementAsDouble(b);
                    });
  for (dim_t i = 0; i < k; ++i)
    llvm::outs() << "  top " << i + 1 << ": index " << idx[i] << " value "
                 << llvm::format("%g", t.elementAsDouble(idx[i])) << "\n";
}

int main(int argc, char **argv) {
  google::InitGoogleLogging(argv[0]);
  FLAGS_minloglevel = 2; // quiet unless something is fatal
  tools::registerPassOptions();
  cl::HideUnrelatedOptions(
      {&category, &tools::passOptionsCategory(), &tools::codegenFlagsCategory(),
       &tools::precisionFlagsCategory(), &tools::importFlagsCategory(),
       &tools::quantizationFlagsCategory()});
  cl::ParseCommandLineOptions(argc, argv,
                              "Compiles an ONNX model and runs it\n");
  CodegenOptions codegen = unwrap(tools::getCodegenOptions());
  if (unwrap(tools::printTargetIfAsked(codegen, llvm::outs())))
    return 0;
  if (modelPath.empty())
    fail("-model is required");
  if (profileStat != "mean" && profileStat != "min")
    fail("-profile-stat must be 'mean' or 'min', not '" + profileStat + "'");
  // Threads take the kernels a late thread has not started, so in a run
  // where thread 0, which times them, was descheduled, every kernel reads
  // about zero: the fastest run is that one.
  if (profileStat == "min" && threadsOpt > 1)
    fail("-profile-stat=min needs -num-threads=1 (on more threads a run in "
         "which thread 0 was descheduled times every kernel at about zero); "
         "use -profile-stat=mean");
  if (profileOrder != "time" && profileOrder != "program" &&
      profileOrder != "kernels")
    fail("-profile-order must be 'time', 'program' or 'kernels', not '" +
         profileOrder + "'");
  tools::QuantizationRequest quant =
      unwrap(tools::getQuantizationRequest(codegen.precision.keepKinds));
  registerAllBackends();
  const Backend *backend = unwrap(getBackend(backendName));

  CompileOptions opts;
  opts.codegen = codegen;
  failOn(tools::fillPassOptions(opts));
  if (!quant.dumpProfile.empty() || quant.report) {
    tools::ProfileRunSetup setup{modelPath,
                                 unwrap(tools::getImportOptions()),
                                 backend,
                                 {inputs.begin(), inputs.end()},
                                 opts};
    failOn(quant.report
               ? tools::runQuantizationReport(setup, quant, llvm::outs())
               : tools::runDumpProfile(setup, quant, llvm::outs()));
    return 0;
  }

  Module M;
  ValueNames names;
  ImportOptions importOpts = unwrap(tools::getImportOptions());
  importOpts.valueNames = &names;
  Function *F = unwrap(importONNXFile(modelPath, M, importOpts));
  unwrap(tools::applyLoadProfile(quant, *F, names, opts));
  opts.dumpGraph = dumpGraph ? &llvm::outs() : nullptr;
  opts.dumpIR = dumpIR ? &llvm::outs() : nullptr;
  opts.printConvPlans = tools::convPlansStream();
  std::unique_ptr<llvm::raw_fd_ostream> dotFile;
  if (!dumpGraphDot.empty()) {
    std::error_code ec;
    dotFile = std::make_unique<llvm::raw_fd_ostream>(dumpGraphDot, ec);
    if (ec)
      fail("cannot write '" + dumpGraphDot + "': " + ec.message());
    opts.dumpGraphDot = dotFile.get();
  }
  opts.optimizeIR = optimizeIROpt;
  CompiledNetwork net = unwrap(compileFunction(*F, *backend, opts));
  if (printMemory)
    printMemorySummary(net.plan, llvm::outs(), net.schedulePeak);
  if (compileOnly)
    return 0;

  if (threadsOpt == 0)
    fail("-num-threads must be at least 1");
  failOn(net.function->setNumThreads(threadsOpt));
  Bindings bindings;
  bindInputs(M, bindings);
  failOn(net.function->run(bindings));
  std::vector<double> times;
  Profile profile;
  for (unsigned i = 0; profileOpt && i < std::max(1u, unsigned(iterations));
       ++i) {
    if (profileStat == "mean") {
      failOn(net.function->runProfiled(bindings, profile));
      continue;
    }
    // The table divides by the run count: keep min * runs.
    Profile one;
    failOn(net.function->runProfiled(bindings, one));
    if (profile.kernels.empty())
      profile.kernels = one.kernels;
    for (size_t k = 0; k < profile.kernels.size(); ++k)
      profile.kernels[k].seconds =
          std::min(profile.kernels[k].seconds / std::max(1u, profile.runs),
                   one.kernels[k].seconds) *
          (profile.runs + 1);
    ++profile.runs;
  }
  for (unsigned i = 0; i < iterations; ++i) {
    auto start = std::chrono::steady_clock::now();
    failOn(net.function->run(bindings));
    times.push_back(std::chrono::duration<double, std::milli>(
                        std::chrono::steady_clock::now() - start)
                        .count());
  }

  if (!outputDir.empty()) {
    if (std::error_code ec = llvm::sys::fs::create_directories(outputDir))
      fail("cannot create '" + outputDir + "': " + ec.message());
  }
  unsigned idx = 0;
  // Outputs whose extent depends on the data are written at that extent.
  for (Placeholder *p : modelOutputs(M)) {
    Tensor t = unwrap(outputAtExtent(M, bindings, p));
    printOutput(p, t);
    if (!outputDir.empty()) {
      llvm::SmallString<256> path(outputDir);
      llvm::sys::path::append(path, "output_" + std::to_string(idx) + ".pb");
      failOn(saveTensorProtoFile(t, p->getName(), path));
    }
    ++idx;
  }
  if (profileOpt)
    printProfile(profile, llvm::outs(), profileOrder == "time",
                 profileOrder == "kernels");
  if (!times.empty()) {
    std::sort(times.begin(), times.end());
    llvm::outs() << "median ms per run: "
                 << llvm::format("%.4f", times[times.size() / 2]) << "\n";
  }
  return 0;
}
