//===- PassOptions.cpp - Pass-manager flags shared by the tools -----------===//
#include "PassOptions.h"

#include "ember/Base/Error.h"

using namespace ember;
namespace cl = llvm::cl;

cl::OptionCategory &tools::passOptionsCategory() {
  static cl::OptionCategory category("pass manager options");
  return category;
}

namespace {
/// The flags, created by registerPassOptions (not at static
/// initialization: libLLVM already registers -print-after, -time-passes
/// and others with the same names, and a duplicate is a fatal error).
struct Flags {
  cl::list<std::string> printAfter{"print-after",
                                   cl::desc("Print the graph after pass PASS"),
                                   cl::value_desc("PASS"), cl::CommaSeparated,
                                   cl::cat(tools::passOptionsCategory())};
  cl::opt<bool> printAfterAll{"print-after-all",
                              cl::desc("Print the graph after every pass"),
                              cl::cat(tools::passOptionsCategory())};
  cl::opt<bool> verifyEach{
      "verify-each",
      cl::desc("Verify the graph after every pass and name the pass that "
               "broke it"),
      cl::cat(tools::passOptionsCategory())};
  cl::opt<bool> timePasses{"time-passes",
                           cl::desc("Print a table of time per pass"),
                           cl::cat(tools::passOptionsCategory())};
  cl::list<std::string> disablePass{
      "disable-pass", cl::desc("Do not run pass NAME"), cl::value_desc("NAME"),
      cl::CommaSeparated, cl::cat(tools::passOptionsCategory())};
  cl::list<std::string> dotAfter{
      "dump-graph-dot-after",
      cl::desc("Write the graph as Graphviz after pass PASS to FILE "
               "(default PASS.dot)"),
      cl::value_desc("PASS[=FILE]"), cl::cat(tools::passOptionsCategory())};
  cl::opt<bool> printStats{
      "print-optimization-stats",
      cl::desc("Print node counts per kind before and after the pipeline"),
      cl::cat(tools::passOptionsCategory())};
  cl::opt<std::string> quantizedProducts{
      "quantized-products",
      cl::desc("QDQ models' Conv/MatMul/Gemm: exact integer products "
               "(integer), the float product of the dequantized operands "
               "(float), or the backend's choice (auto: integers on a CPU "
               "with AVX512-VNNI except depthwise, float elsewhere)"),
      cl::value_desc("auto|integer|float"), cl::init("auto"),
      cl::cat(tools::passOptionsCategory())};
  cl::opt<std::string> convLayout{
      "conv-layout",
      cl::desc("Convolution layout the conv-layout pass targets instead of "
               "the backend's preference (nchw or nhwc; for testing)"),
      cl::value_desc("nchw|nhwc"), cl::cat(tools::passOptionsCategory())};
};

const char *const kFlagNames[] = {"print-after",
                                  "print-after-all",
                                  "verify-each",
                                  "time-passes",
                                  "disable-pass",
                                  "dump-graph-dot-after",
                                  "print-optimization-stats"};

Flags *flags = nullptr;
} // namespace

void tools::registerPassOptions() {
  if (flags)
    return;
  // Take the names over from libLLVM's own pass-manager options: the tools
  // never run LLVM's pass pipelines from these flags.
  llvm::StringMap<cl::Option *> &registered = cl::getRegisteredOptions();
  for (const char *name : kFlagNames) {
    auto it = registered.find(name);
    if (it != registered.end())
      it->second->removeArgument();
  }
  static Flags instance;
  flags = &instance;
}

static llvm::Error checkPassName(llvm::StringRef flag, llvm::StringRef name) {
  if (createPass(name))
    return llvm::Error::success();
  std::string known;
  for (const std::string &n : getPassNames())
    known += (known.empty() ? "" : ", ") + n;
  return makeErrorF("-{0}: unknown pass '{1}' (passes: {2})", flag, name,
                    known);
}

llvm::Error tools::fillPassOptions(CompileOptions &opts) {
  if (!flags)
    return makeError("internal error: registerPassOptions was not called");
  const Flags &f = *flags;
  PassInstrumentOptions &p = opts.passes;
  for (const std::string &n : f.printAfter) {
    EMBER_RETURN_IF_ERR(checkPassName("print-after", n));
    p.printAfter.insert(n);
  }
  for (const std::string &n : f.disablePass) {
    EMBER_RETURN_IF_ERR(checkPassName("disable-pass", n));
    p.disabled.insert(n);
  }
  for (const std::string &spec : f.dotAfter) {
    auto [pass, file] = llvm::StringRef(spec).split('=');
    EMBER_RETURN_IF_ERR(checkPassName("dump-graph-dot-after", pass));
    p.dotAfter[pass.str()] = file.empty() ? pass.str() + ".dot" : file.str();
  }
  p.printAfterAll = f.printAfterAll;
  p.verifyEach = f.verifyEach;
  p.timePasses = f.timePasses;
  p.printStats = f.printStats;
  if (f.quantizedProducts == "integer" || f.quantizedProducts == "float")
    opts.integerProducts = f.quantizedProducts == "integer";
  else if (f.quantizedProducts != "auto")
    return makeErrorF("-quantized-products: expected auto, integer or float, "
                      "got '{0}'",
                      f.quantizedProducts.getValue());
  if (f.convLayout == "nchw")
    opts.convLayout = ConvLayout::NCHW;
  else if (f.convLayout == "nhwc")
    opts.convLayout = ConvLayout::NHWC;
  else if (!f.convLayout.empty())
    return makeErrorF("-conv-layout: expected nchw or nhwc, got '{0}'",
                      f.convLayout.getValue());
  return llvm::Error::success();
}
