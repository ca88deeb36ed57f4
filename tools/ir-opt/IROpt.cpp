//===- IROpt.cpp - Run IR passes on a textual IR file ---------------------===//
//
// ember-ir-opt FILE [-passes=a,b,...] [-O] [-plan] [-print-memory]
//                   [-print-kernels]
//
// Parses FILE (the format printIR writes; '-' reads stdin), runs the named
// passes with verification after each, and prints the result, or with
// -print-kernels the kernels the shared lowering makes of it (every
// instruction through the portable kernel IR, as a backend without library
// kernels gets it). This is what the golden tests in tests/ir drive with
// FileCheck.
//
//===----------------------------------------------------------------------===//
#include "ember/IR/IROptimizer.h"
#include "ember/IR/IRParser.h"
#include "ember/IR/IRPrinter.h"
#include "ember/Kernel/LowerToKernel.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include "glog/logging.h"

using namespace ember;
namespace cl = llvm::cl;

static cl::OptionCategory category("ember-ir-opt options");
static cl::opt<std::string> inputPath(cl::Positional, cl::desc("<file.ir>"),
                                      cl::init("-"), cl::cat(category));
static cl::list<std::string>
    passes("passes", cl::desc("IR passes to run, in order"), cl::CommaSeparated,
           cl::value_desc("pass,pass"), cl::cat(category));
static cl::opt<bool> defaultPipeline("O",
                                     cl::desc("Run the default IR pipeline"),
                                     cl::cat(category));
static cl::opt<bool>
    withPlan("plan", cl::desc("Plan memory and print every buffer's placement"),
             cl::cat(category));
static cl::opt<bool>
    printMemory("print-memory",
                cl::desc("Plan memory and print the region sizes"),
                cl::cat(category));
static cl::opt<bool> printKernels(
    "print-kernels",
    cl::desc("Plan memory and print the kernels the shared lowering makes"),
    cl::cat(category));
static cl::opt<bool> listPasses("list-passes",
                                cl::desc("List the IR passes and exit"),
                                cl::cat(category));

static void fail(const llvm::Twine &msg) {
  llvm::errs() << "ember-ir-opt: error: " << msg << "\n";
  std::exit(1);
}

/// Lowers \p F to kernels with no backend library (scratch after the
/// activations) and prints them.
static int printKernelsOf(const IRFunction &F, const MemoryPlan &plan) {
  uint64_t scratchUsed = 0;
  auto kernels = kir::lowerToKernels(
      F, plan,
      [](const Instruction &, std::vector<kir::Kernel> &) {
        return llvm::Expected<bool>(false);
      },
      [&](uint64_t bytes) -> std::optional<kir::Buffer> {
        kir::Buffer b{Region::Activation, plan.activationSize + scratchUsed,
                      bytes, ElemKind::Float32, "scratch"};
        scratchUsed += (bytes + 63) / 64 * 64;
        return b;
      });
  if (!kernels)
    fail(errorToString(kernels.takeError()));
  for (const kir::Kernel &k : *kernels)
    k.print(llvm::outs());
  return 0;
}

int main(int argc, char **argv) {
  google::InitGoogleLogging(argv[0]);
  FLAGS_minloglevel = 2;
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(argc, argv, "Runs IR passes on textual IR\n");
  if (listPasses) {
    for (const IRPass &p : getIRPasses())
      llvm::outs() << p.name << "\n";
    return 0;
  }
  auto buf = llvm::MemoryBuffer::getFileOrSTDIN(inputPath);
  if (!buf)
    fail("cannot read '" + inputPath + "': " + buf.getError().message());
  auto parsed = parseIR((*buf)->getBuffer(), inputPath);
  if (!parsed)
    fail(errorToString(parsed.takeError()));
  IRFunction &F = *parsed->function;
  if (llvm::Error err = runIRPasses(F, passes, /*verifyEach=*/true))
    fail(errorToString(std::move(err)));
  if (defaultPipeline)
    if (llvm::Error err = optimizeIR(F, /*verifyEach=*/true))
      fail(errorToString(std::move(err)));
  if (!withPlan && !printMemory && !printKernels) {
    printIR(F, llvm::outs());
    return 0;
  }
  MemoryPlan plan = planMemory(F);
  if (llvm::Error err = verifyMemoryPlan(F, plan))
    fail("internal error: invalid memory plan: " +
         errorToString(std::move(err)));
  if (printKernels)
    return printKernelsOf(F, plan);
  printIR(F, llvm::outs(), withPlan ? &plan : nullptr);
  if (printMemory)
    printMemorySummary(plan, llvm::outs());
  return 0;
}
