//===- ModelCompiler.cpp - Compile an ONNX model to a bundle --------------===//
//
// model-compiler -model=F.onnx -backend=CPU -emit-bundle=DIR
//                [-network-name=NAME] [-target=TRIPLE] [-mcpu=CPU]
//                [-mattr=FEATURES] [-print-target] [-cpu-*] [-cuda-*]
//                [-embed-weights] [-bundle-shared] [-onnx-define-symbol=N,V]
//                [-dump-graph] [-dump-ir] [-dump-llvm-ir] [-dump-llvm-asm]
//                [-print-memory] [-time-passes] [-verbose] [-quiet]
//                [-load-profile=P.yaml [quantization flags]]
//
// Prints nothing on success unless asked, except that a compile running
// longer than two seconds reports each finished stage when stderr is a
// terminal (not with -quiet); one error line and exit code 1 on failure. Flag
// names follow Glow's model-compiler.
//
//===----------------------------------------------------------------------===//
#include "CodegenFlags.h"
#include "FlagDecl.h"
#include "ImportFlags.h"
#include "PassOptions.h"
#include "PrecisionFlags.h"
#include "QuantizationFlags.h"

#include "ember/Backend/BundleWriter.h"
#include "ember/Backend/Pipeline.h"
#include "ember/Base/Error.h"
#include "ember/Base/Progress.h"
#include "ember/IR/IRPrinter.h"
#include "ember/Importer/ONNXImporter.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/Pass.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include "glog/logging.h"

#include <cctype>
#include <chrono>
#include <memory>

#include <malloc.h>
#include <sys/resource.h>

using namespace ember;
namespace cl = llvm::cl;

static cl::OptionCategory category("model-compiler options");
static cl::opt<std::string> modelPath =
    tools::stringFlag(category, "model", "file.onnx", "", "ONNX model file");
static cl::opt<std::string> backendName = tools::stringFlag(
    category, "backend", "", "CPU", "Backend: CPU, Interpreter or CUDA");
static cl::opt<std::string> bundleDir = tools::stringFlag(
    category, "emit-bundle", "DIR", "", "Write the bundle into DIR");
static cl::opt<std::string> networkName = tools::stringFlag(
    category, "network-name", "", "",
    "Bundle entry point name (default: the model file's stem)");
static cl::opt<bool>
    embedWeights("embed-weights",
                 cl::desc("Put the constant weights into the object file"),
                 cl::cat(category));
static cl::opt<bool> bundleShared("bundle-shared",
                                  cl::desc("Also link NAME.so for dlopen"),
                                  cl::cat(category));
static cl::opt<bool> dumpGraph("dump-graph",
                               cl::desc("Print the lowered graph"),
                               cl::cat(category));
static cl::opt<bool> dumpIR("dump-ir", cl::desc("Print the IR and its plan"),
                            cl::cat(category));
static cl::opt<bool> dumpLLVMIR("dump-llvm-ir",
                                cl::desc("Print the optimized LLVM IR"),
                                cl::cat(category));
static cl::opt<bool> dumpLLVMAsm("dump-llvm-asm",
                                 cl::desc("Print the target assembly"),
                                 cl::cat(category));
static cl::opt<bool> printMemory("print-memory",
                                 cl::desc("Print the region sizes"),
                                 cl::cat(category));
static cl::opt<bool>
    dumpCUDASource("dump-cuda-source",
                   cl::desc("CUDA bundles: print the generated CUDA C"),
                   cl::init(false), cl::cat(category));
// -time-passes is LLVM's own flag (it also reports LLVM's codegen passes);
// the phases below are timed when it is on.
static cl::opt<bool> verbose("verbose", cl::desc("Say what is being done"),
                             cl::cat(category));

static cl::opt<bool> quiet("quiet",
                           cl::desc("No progress lines, however long the "
                                    "compile takes"),
                           cl::cat(category));
// Given explicitly, it also reports when stderr is not a terminal (tests
// force the lines with 0).
static cl::opt<double> progressAfter(
    "progress-after", cl::init(2.0), cl::Hidden,
    cl::desc("Report finished stages once the compile has run this many "
             "seconds"));

static void fail(const llvm::Twine &msg) {
  llvm::errs() << "model-compiler: error: " << msg << "\n";
  std::exit(1);
}

template <typename T> static T unwrap(llvm::Expected<T> v) {
  if (!v)
    fail(errorToString(v.takeError()));
  return std::move(*v);
}

/// Set from -time-passes (tools/common) after the command line is parsed.
static bool timePhases = false;

/// Times one phase when -time-passes is given.
class PhaseTimer {
public:
  explicit PhaseTimer(const char *name)
      : name_(name), start_(std::chrono::steady_clock::now()) {
    if (verbose)
      llvm::errs() << "model-compiler: " << name << "\n";
  }
  ~PhaseTimer() {
    if (timePhases)
      llvm::errs() << llvm::format(
          "%-10s %9.1f ms\n", name_,
          std::chrono::duration<double, std::milli>(
              std::chrono::steady_clock::now() - start_)
              .count());
  }

private:
  const char *name_;
  std::chrono::steady_clock::time_point start_;
};

/// Reports each finished stage, with its own and the total elapsed time
/// and the process's peak resident memory so far, once the compile has run
/// longer than -progress-after seconds: short compiles stay silent, long ones
/// show that they move.
static void installProgressLines() {
  // Scripts that read a successful compile's output expect none: the
  // lines go to a terminal, or wherever -progress-after sends them.
  if (quiet ||
      (!llvm::errs().is_displayed() && progressAfter.getNumOccurrences() == 0))
    return;
  using Clock = std::chrono::steady_clock;
  auto start = Clock::now();
  auto last = std::make_shared<Clock::time_point>(start);
  setStageListener([start, last](llvm::StringRef stage) {
    auto now = Clock::now();
    double total = std::chrono::duration<double>(now - start).count();
    double own = std::chrono::duration<double>(now - *last).count();
    *last = now;
    if (total < progressAfter)
      return;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru); // ru_maxrss is in KiB on Linux.
    llvm::errs() << llvm::format("model-compiler: %-8s done in %6.1f s "
                                 "(%6.1f s in all, peak memory %ld MiB)\n",
                                 stage.str().c_str(), own, total,
                                 long(ru.ru_maxrss / 1024));
  });
}

/// Weights, their folded and packed copies and the import's protobuf
/// payloads are large blocks freed while the compile goes on. glibc raises
/// its mmap threshold to the largest block freed so far, after which such
/// blocks come from the heap and their memory stays with the process when
/// freed: the Module's weights stayed resident beside the constant image.
/// A fixed threshold returns every block of 128 KiB or more when freed.
static void returnLargeBlocksWhenFreed() {
#ifdef __GLIBC__
  mallopt(M_MMAP_THRESHOLD, 128 << 10);
#endif
}

int main(int argc, char **argv) {
  returnLargeBlocksWhenFreed();
  google::InitGoogleLogging(argv[0]);
  FLAGS_minloglevel = std::getenv("GLOG_minloglevel") ? FLAGS_minloglevel : 2;
  tools::registerPassOptions();
  cl::HideUnrelatedOptions({&category, &tools::codegenFlagsCategory(),
                            &tools::precisionFlagsCategory(),
                            &tools::importFlagsCategory(),
                            &tools::quantizationFlagsCategory()});
  cl::ParseCommandLineOptions(argc, argv,
                              "Compiles an ONNX model to a bundle\n");
  CodegenOptions codegen = unwrap(tools::getCodegenOptions());
  if (unwrap(tools::printTargetIfAsked(codegen, llvm::outs())))
    return 0;
  if (modelPath.empty())
    fail("-model is required");
#ifndef EMBER_WITH_CUDA
  if (llvm::StringRef(backendName).equals_insensitive("CUDA"))
    fail("backend CUDA is not built into this model-compiler");
#endif
  std::string name = networkName;
  if (name.empty()) {
    name = llvm::sys::path::stem(modelPath).str();
    for (char &c : name)
      if (!std::isalnum(static_cast<unsigned char>(c)))
        c = '_';
  }
  if (!isCIdentifier(name))
    fail("-network-name '" + name + "' is not a C identifier");
  tools::QuantizationRequest quant =
      unwrap(tools::getQuantizationRequest(codegen.precision.keepKinds));
  if (!quant.dumpProfile.empty() || quant.report)
    fail("-dump-profile and -dump-quantization-report run the model on "
         "inputs: use model-runner or image-classifier");
  registerAllBackends();
  const Backend *backend = unwrap(getBackend(backendName));

  installProgressLines();
  Module M;
  Function *F;
  ValueNames names;
  {
    PhaseTimer t("import");
    ImportOptions importOpts = unwrap(tools::getImportOptions());
    importOpts.valueNames = &names;
    F = unwrap(importONNXFile(modelPath, M, importOpts));
  }
  if (verbose)
    for (auto &p : M.getPlaceholders())
      if (p->getType()->isQuantized())
        llvm::errs() << "model-compiler: "
                     << (p->isOutput() ? "output" : "input") << " '"
                     << p->getName()
                     << "' is quantized: " << p->getType()->toString() << "\n";
  if (!M.getInputChecks().empty())
    fail("input '" + M.getInputChecks()[0].inputs[0]->getName() +
         "' is a shape operand fed at run time; the network is compiled for "
         "the value the declared shapes imply, which bundles cannot check "
         "yet (docs/RuntimeInputs.md): give the model that input as a "
         "constant");
  noteStageDone("import");
  CompileOptions copts;
  copts.codegen = codegen;
  copts.dumpGraph = dumpGraph ? &llvm::outs() : nullptr;
  if (llvm::Error err = tools::fillPassOptions(copts))
    fail(errorToString(std::move(err)));
  unwrap(tools::applyLoadProfile(quant, *F, names, copts));
  timePhases = copts.passes.timePasses;
  std::unique_ptr<IRFunction> ir;
  MemoryPlan plan;
  {
    PhaseTimer t("optimize");
    ir = unwrap(optimizeAndGenerateIR(*F, *backend, copts));
    plan = planMemory(*ir);
    if (llvm::Error err = verifyMemoryPlan(*ir, plan))
      fail("internal error: invalid memory plan: " +
           errorToString(std::move(err)));
    noteStageDone("plan");
  }
  if (dumpIR)
    printIR(*ir, llvm::outs(), &plan);
  if (printMemory)
    printMemorySummary(plan, llvm::outs());
  if (llvm::raw_ostream *os = tools::convPlansStream())
    if (llvm::Error err = backend->printConvPlans(*ir, codegen, *os))
      fail(errorToString(std::move(err)));
  // Without -emit-bundle the whole compile still runs (a check that the
  // model compiles for the backend); its files go to a scratch directory.
  std::string outDir = bundleDir;
  llvm::SmallString<128> scratch;
  if (outDir.empty()) {
    if (std::error_code ec =
            llvm::sys::fs::createUniqueDirectory("ember-check", scratch))
      fail("cannot create a scratch directory: " + ec.message());
    outDir = scratch.str().str();
  }
  BundleOptions bopts;
  bopts.outputDir = outDir;
  bopts.networkName = name;
  bopts.embedWeights = embedWeights;
  bopts.sharedObject = bundleShared;
  bopts.dumpLLVMIR = dumpLLVMIR ? &llvm::outs() : nullptr;
  bopts.dumpLLVMAsm = dumpLLVMAsm ? &llvm::outs() : nullptr;
  bopts.codegen = codegen;
  bopts.verbose = verbose;
  bopts.dumpSource = dumpCUDASource ? &llvm::outs() : nullptr;
  // Nothing here reads a weight after the backend has its own copy.
  llvm::DenseMap<const Tensor *, Constant *> constantOf;
  for (const auto &c : M.getConstants())
    constantOf[&c->getPayload()] = c.get();
  bopts.weightCopied = [&constantOf](const Tensor &payload) {
    if (Constant *c = constantOf.lookup(&payload))
      c->getPayloadMutable() = Tensor();
  };
  {
    PhaseTimer t("codegen");
    llvm::Error err = backend->saveBundle(M, *ir, plan, bopts);
    if (!scratch.empty())
      llvm::sys::fs::remove_directories(scratch);
    if (err)
      fail(errorToString(std::move(err)));
  }
  return 0;
}
