//===- GraphParserFuzzer.cpp - libFuzzer target: the graph text format ----===//
//
// ember-opt reads graphs in the printer's text format (Graph/Parser.h) from
// a user's file; the optimizer's golden tests are written in it. This
// target hands arbitrary text to parseFunction and, when it parses (the
// parser verifies the function), requires that the printed function
// parses again into a fresh Module and prints the same text. A clean
// llvm::Error from the parser is the expected outcome for nearly every
// input; any other failure aborts and is a finding.
//
//===----------------------------------------------------------------------===//
#include "ember/Base/Error.h"
#include "ember/Graph/Parser.h"
#include "ember/Graph/Printer.h"

#include "llvm/Support/raw_ostream.h"

#include "glog/logging.h"

#include <cstdint>
#include <cstdlib>

using namespace ember;

static void fail(const llvm::Twine &what) {
  llvm::errs() << "ember-fuzz-graph: " << what << "\n";
  std::abort();
}

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  google::InitGoogleLogging("ember-fuzz-graph");
  FLAGS_minloglevel = 2;
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef text(reinterpret_cast<const char *>(data), size);
  Module M;
  auto F = parseFunction(text, M);
  if (!F) {
    llvm::consumeError(F.takeError());
    return 0;
  }
  std::string printed = functionToString(**F);
  Module M2;
  auto again = parseFunction(printed, M2);
  if (!again)
    fail("the printed graph does not parse: " +
         errorToString(again.takeError()) + "\n" + printed);
  std::string reprinted = functionToString(**again);
  if (reprinted != printed)
    fail("print(parse(print(F))) != print(F):\n" + printed + "---\n" +
         reprinted);
  return 0;
}
