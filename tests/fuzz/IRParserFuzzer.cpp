//===- IRParserFuzzer.cpp - libFuzzer target: the textual instruction IR --===//
//
// ember-ir-opt reads instruction IR from a user's file (docs/IR.md). This
// target hands arbitrary text to parseIR and, when it parses, checks what
// the format promises and what ember-ir-opt then does with it:
//  - the printed function parses again and prints the same text;
//  - the default IR pipeline, verified after every pass, succeeds;
//  - the memory plan of the result is valid.
// A clean llvm::Error from the parser is the expected outcome for nearly
// every input; any other failure aborts and is a finding.
//
//===----------------------------------------------------------------------===//
#include "ember/Base/Error.h"
#include "ember/IR/IROptimizer.h"
#include "ember/IR/IRParser.h"
#include "ember/IR/IRPrinter.h"
#include "ember/IR/MemoryPlanner.h"

#include "llvm/Support/raw_ostream.h"

#include "glog/logging.h"

#include <cstdint>
#include <cstdlib>

using namespace ember;

static void fail(const llvm::Twine &what) {
  llvm::errs() << "ember-fuzz-ir: " << what << "\n";
  std::abort();
}

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  google::InitGoogleLogging("ember-fuzz-ir");
  FLAGS_minloglevel = 2;
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef text(reinterpret_cast<const char *>(data), size);
  auto parsed = parseIR(text, "fuzz.ir");
  if (!parsed) {
    llvm::consumeError(parsed.takeError());
    return 0;
  }
  IRFunction &F = *parsed->function;
  std::string printed = irToString(F);
  // The first parse's constants serve the second: no second zero payload.
  auto again = parseIR(printed, "printed.ir", parsed->module.get());
  if (!again)
    fail("the printed IR does not parse: " + errorToString(again.takeError()) +
         "\n" + printed);
  std::string reprinted = irToString(*again->function);
  if (reprinted != printed)
    fail("print(parse(print(F))) != print(F):\n" + printed + "---\n" +
         reprinted);
  if (llvm::Error err = optimizeIR(F, /*verifyEach=*/true))
    fail("the IR pipeline failed on verified IR: " +
         errorToString(std::move(err)) + "\n" + printed);
  MemoryPlan plan = planMemory(F);
  if (llvm::Error err = verifyMemoryPlan(F, plan))
    fail("invalid memory plan: " + errorToString(std::move(err)));
  return 0;
}
