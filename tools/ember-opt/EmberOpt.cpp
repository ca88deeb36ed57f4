//===- EmberOpt.cpp - Run graph passes on a text graph or an ONNX model ---===//
//
// ember-opt FILE [-passes=PIPELINE] [-backend=B] [-o=-|FILE|none]
//           [pass manager options]
//
// FILE is a graph in the printer's text format (see Parser.h) or an .onnx
// model. The pipeline syntax is parsePipeline's: "dce,(cse,dce)*"; without
// -passes the backend's default pipeline runs. The result is printed in
// the same text format, so golden tests pipe it into FileCheck.
//
//===----------------------------------------------------------------------===//
#include "PassOptions.h"

#include "ember/Graph/Parser.h"
#include "ember/Graph/Printer.h"
#include "ember/Graph/Verifier.h"
#include "ember/Importer/ONNXImporter.h"

#include "llvm/Support/MemoryBuffer.h"

#include "glog/logging.h"

using namespace ember;
namespace cl = llvm::cl;

static cl::OptionCategory category("ember-opt options");
static cl::opt<std::string> inputPath(cl::Positional,
                                      cl::desc("<graph.txt | model.onnx>"),
                                      cl::cat(category));
static cl::opt<std::string>
    passes("passes",
           cl::desc("Pipeline to run, e.g. \"dce,(cse,dce)*\" (default: the "
                    "backend's full pipeline)"),
           cl::cat(category));
static cl::opt<std::string> backendName("backend",
                                        cl::desc("Backend whose capabilities "
                                                 "the passes see"),
                                        cl::init("Interpreter"),
                                        cl::cat(category));
static cl::opt<std::string> output("o",
                                   cl::desc("Where to print the result: - "
                                            "(stdout), a file, or none"),
                                   cl::init("-"), cl::cat(category));
static cl::opt<bool> listPasses("list-passes",
                                cl::desc("List the registered passes"),
                                cl::cat(category));

static void fail(const llvm::Twine &msg) {
  llvm::errs() << "ember-opt: error: " << msg << "\n";
  std::exit(1);
}

template <typename T> static T unwrap(llvm::Expected<T> v) {
  if (!v)
    fail(errorToString(v.takeError()));
  return std::move(*v);
}

static Function *load(Module &M) {
  if (llvm::StringRef(inputPath).ends_with(".onnx"))
    return unwrap(importONNXFile(inputPath, M, ImportOptions()));
  auto buf = llvm::MemoryBuffer::getFileOrSTDIN(inputPath);
  if (!buf)
    fail("cannot read '" + inputPath + "': " + buf.getError().message());
  auto F = parseFunction((*buf)->getBuffer(), M);
  if (!F)
    fail(inputPath + ": " + errorToString(F.takeError()));
  return *F;
}

int main(int argc, char **argv) {
  google::InitGoogleLogging(argv[0]);
  FLAGS_minloglevel = 2;
  tools::registerPassOptions();
  cl::HideUnrelatedOptions({&category, &tools::passOptionsCategory()});
  cl::ParseCommandLineOptions(argc, argv, "Runs graph passes\n");
  if (listPasses) {
    for (const std::string &n : getPassNames())
      llvm::outs() << n << "  " << createPass(n)->getDescription() << "\n";
    return 0;
  }
  if (inputPath.empty())
    fail("an input file is required");
  registerAllBackends();
  const Backend *B = unwrap(getBackend(backendName));
  CompileOptions opts;
  if (llvm::Error err = tools::fillPassOptions(opts))
    fail(errorToString(std::move(err)));
  Pipeline P =
      passes.empty() ? getDefaultPipeline() : unwrap(parsePipeline(passes));
  Module M;
  Function *F = load(M);
  PassContext ctx = makePassContext(*B, opts);
  // A pass list that names fold-qdq asks for it, whatever the backend's
  // default for compiles.
  if (!passes.empty()) {
    ctx.foldQuantizedProducts = opts.integerProducts.value_or(true);
    ctx.foldQuantizedProduct = nullptr;
  }
  unwrap(runPipeline(*F, P, ctx, opts.passes));
  if (llvm::Error err = verifyFunction(*F))
    fail("the pipeline produced an invalid graph (use -verify-each): " +
         errorToString(std::move(err)));
  if (output == "none")
    return 0;
  std::error_code ec;
  llvm::raw_fd_ostream os(output, ec);
  if (ec)
    fail("cannot write '" + output + "': " + ec.message());
  printFunction(*F, os);
  return 0;
}
