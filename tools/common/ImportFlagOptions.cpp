//===- ImportFlagOptions.cpp - The import flags, declared once ------------===//
#include "ImportFlags.h"

#include "ember/Backend/ConstantEval.h"

using namespace ember;
namespace cl = llvm::cl;

cl::OptionCategory &tools::importFlagsCategory() {
  static cl::OptionCategory category("Import options");
  return category;
}

static cl::list<std::string>
    symbols("onnx-define-symbol",
            cl::desc("Value of a symbolic input dimension: NAME,VALUE"),
            cl::value_desc("NAME,VALUE"),
            cl::cat(tools::importFlagsCategory()));
static cl::list<std::string>
    modelInputs("model-input",
                cl::desc("Type of a model input: NAME,TYPE,[D0,D1,...] (e.g. "
                         "input,float,[1,3,224,224])"),
                cl::value_desc("NAME,TYPE,[DIMS]"),
                cl::cat(tools::importFlagsCategory()));

llvm::Expected<ImportOptions> tools::getImportOptions() {
  std::vector<std::string> syms(symbols.begin(), symbols.end()),
      ins(modelInputs.begin(), modelInputs.end());
  EMBER_ASSIGN_OR_RETURN(ImportOptions opts, makeImportOptions(syms, ins));
  // Fold constant subgraphs (shape arithmetic) at import.
  opts.evaluator = makeConstantEvaluator();
  return opts;
}
