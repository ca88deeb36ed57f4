//===- TextSeeds.cpp - Seed corpora for the text-format fuzz targets ------===//
//
// ember-fuzz-text-seeds IR_DIR GRAPH_DIR MODEL.onnx...
//
// Imports each model and writes what the tools print for it: the imported
// graph and the graph after the Interpreter's pipeline (GRAPH_DIR, the
// format parseFunction reads), and the planned instruction IR (IR_DIR, the
// format parseIR reads). scripts/fuzz.sh runs it once per build tree over
// the ONNX test data, so no corpus is committed. Models that do not import
// or compile are skipped; the count written is printed.
//
//===----------------------------------------------------------------------===//
#include "ember/Backend/Pipeline.h"
#include "ember/Graph/Printer.h"
#include "ember/IR/IRPrinter.h"
#include "ember/Importer/ONNXImporter.h"

#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include "glog/logging.h"

using namespace ember;

static void write(const std::string &path, const std::string &text) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec) {
    llvm::errs() << "ember-fuzz-text-seeds: cannot write " << path << ": "
                 << ec.message() << "\n";
    std::exit(1);
  }
  os << text;
}

int main(int argc, char **argv) {
  google::InitGoogleLogging(argv[0]);
  FLAGS_minloglevel = 2;
  if (argc < 3) {
    llvm::errs() << "usage: ember-fuzz-text-seeds IR_DIR GRAPH_DIR "
                    "MODEL.onnx...\n";
    return 2;
  }
  registerAllBackends();
  auto B = getBackend("Interpreter");
  if (!B) {
    llvm::errs() << llvm::toString(B.takeError()) << "\n";
    return 1;
  }
  std::string irDir = argv[1], graphDir = argv[2];
  unsigned irs = 0, graphs = 0;
  for (int i = 3; i < argc; ++i) {
    Module M;
    ImportOptions opts;
    opts.symbols = {{"N", 1}, {"batch", 1}, {"batch_size", 1}};
    auto F = importONNXFile(argv[i], M, opts);
    if (!F) {
      llvm::consumeError(F.takeError());
      continue;
    }
    // The last two directories of the path name the seed ("node-test_abs"),
    // so that several invocations (xargs) do not overwrite each other.
    llvm::StringRef dir = llvm::sys::path::parent_path(argv[i]);
    std::string id =
        (llvm::sys::path::filename(llvm::sys::path::parent_path(dir)) + "-" +
         llvm::sys::path::filename(dir))
            .str();
    write(graphDir + "/imported-" + id, functionToString(**F));
    ++graphs;
    auto ir = optimizeAndGenerateIR(**F, **B, CompileOptions());
    if (!ir) {
      llvm::consumeError(ir.takeError());
      continue;
    }
    write(graphDir + "/lowered-" + id, functionToString(**F));
    ++graphs;
    MemoryPlan plan = planMemory(**ir);
    // Half with the plan's comments and memory section, half without.
    write(irDir + "/ir-" + id, irToString(**ir, i % 2 ? &plan : nullptr));
    ++irs;
  }
  llvm::outs() << "wrote " << irs << " IR and " << graphs << " graph seeds\n";
  return 0;
}
