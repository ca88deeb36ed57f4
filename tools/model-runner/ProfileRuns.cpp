//===- ProfileRuns.cpp - model-runner's profile and report modes ----------===//
#include "ProfileRuns.h"

#include "ember/Base/Error.h"
#include "ember/Importer/TensorIO.h"
#include "ember/Quantization/Report.h"

#include "llvm/Support/FileSystem.h"

#include <algorithm>

using namespace ember;
using namespace ember::tools;

namespace {
/// One input set: (input name or "" for the next one, file) pairs.
using InputSet = std::vector<std::pair<std::string, std::string>>;
} // namespace

/// \p path, or the sorted regular files in it when it is a directory.
static llvm::Expected<std::vector<std::string>> expandPath(llvm::StringRef p) {
  if (!llvm::sys::fs::is_directory(p))
    return std::vector<std::string>{p.str()};
  std::vector<std::string> files;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(p, ec), end; it != end && !ec;
       it.increment(ec))
    if (llvm::sys::fs::is_regular_file(it->path()))
      files.push_back(it->path());
  if (ec)
    return makeErrorF("cannot list '{0}': {1}", p, ec.message());
  std::sort(files.begin(), files.end());
  if (files.empty())
    return makeErrorF("input directory '{0}' holds no files", p);
  return files;
}

/// Groups the -input values into input sets of \p M's inputs.
static llvm::Expected<std::vector<InputSet>>
inputSets(const Module &M, const std::vector<std::string> &specs) {
  size_t n = M.getInputPlaceholders().size();
  std::vector<InputSet> sets(1);
  for (const std::string &spec : specs) {
    auto [name, file] = llvm::StringRef(spec).split('=');
    if (file.empty())
      std::swap(name, file);
    EMBER_ASSIGN_OR_RETURN(std::vector<std::string> files, expandPath(file));
    for (std::string &f : files) {
      sets.back().push_back({name.str(), std::move(f)});
      if (sets.back().size() == n)
        sets.emplace_back();
    }
  }
  if (!sets.back().empty())
    return makeErrorF("the -input files do not fill whole input sets ({0} "
                      "model inputs each)",
                      n);
  sets.pop_back();
  if (sets.empty())
    return makeError("give the inputs to run with -input=FILE or "
                     "-input=DIR (repeated)");
  return sets;
}

/// Binds one input set to \p M's inputs in \p b.
static llvm::Error bindSet(const Module &M, const InputSet &set, Bindings &b) {
  auto phs = M.getInputPlaceholders();
  size_t next = 0;
  for (const auto &[name, file] : set) {
    const Placeholder *p =
        name.empty() ? phs[next++] : M.getPlaceholderByName(name);
    if (!p || p->isOutput())
      return makeErrorF("the model has no input named '{0}'", name);
    EMBER_ASSIGN_OR_RETURN(NamedTensor t, loadTensorFile(file));
    if (!t.tensor.getType().isSameStorage(*p->getType()))
      return makeErrorF("input '{0}' expects {1}, file '{2}' holds {3}",
                        p->getName(), p->getType()->toString(), file,
                        t.tensor.getType().toString());
    b.insert(p, std::move(t.tensor));
  }
  return llvm::Error::success();
}

llvm::Error tools::runDumpProfile(const ProfileRunSetup &s,
                                  const QuantizationRequest &req,
                                  llvm::raw_ostream &os) {
  Module M;
  ValueNames names;
  ImportOptions io = s.importOptions;
  io.valueNames = &names;
  EMBER_ASSIGN_OR_RETURN(Function * F, importONNXFile(s.modelPath, M, io));
  ProfileRecorder rec(*F, names);
  CompileOptions opts;
  opts.codegen = s.compile.codegen;
  opts.pipeline = getMinimalPipeline();
  EMBER_ASSIGN_OR_RETURN(CompiledNetwork net,
                         compileFunction(*F, *s.backend, opts));
  EMBER_ASSIGN_OR_RETURN(std::vector<InputSet> sets,
                         inputSets(M, s.inputSpecs));
  QuantProfile profile;
  Bindings b;
  b.allocateOutputs(M);
  for (const InputSet &set : sets) {
    EMBER_RETURN_IF_ERR(bindSet(M, set, b));
    EMBER_RETURN_IF_ERR(net.function->run(b));
    rec.record(b, profile);
  }
  EMBER_RETURN_IF_ERR(writeProfile(profile, req.dumpProfile));
  os << "profile: " << profile.values.size() << " values over " << sets.size()
     << " input set(s) written to " << req.dumpProfile << "\n";
  return llvm::Error::success();
}

llvm::Error tools::runQuantizationReport(ProfileRunSetup s,
                                         const QuantizationRequest &req,
                                         llvm::raw_ostream &os) {
  Module MF, MQ;
  ValueNames namesF, namesQ;
  ImportOptions io = s.importOptions;
  io.valueNames = &namesF;
  EMBER_ASSIGN_OR_RETURN(Function * FF, importONNXFile(s.modelPath, MF, io));
  io.valueNames = &namesQ;
  EMBER_ASSIGN_OR_RETURN(Function * FQ, importONNXFile(s.modelPath, MQ, io));
  EMBER_ASSIGN_OR_RETURN(std::vector<QuantizedLayer> layers,
                         applyLoadProfile(req, *FQ, namesQ, s.compile));
  QuantizationReport report(*FF, namesF, *FQ, layers);
  CompileOptions floatOpts;
  floatOpts.codegen = s.compile.codegen;
  EMBER_ASSIGN_OR_RETURN(CompiledNetwork netF,
                         compileFunction(*FF, *s.backend, floatOpts));
  EMBER_ASSIGN_OR_RETURN(CompiledNetwork netQ,
                         compileFunction(*FQ, *s.backend, s.compile));
  EMBER_ASSIGN_OR_RETURN(std::vector<InputSet> sets,
                         inputSets(MF, s.inputSpecs));
  Bindings bf, bq;
  bf.allocateOutputs(MF);
  bq.allocateOutputs(MQ);
  for (const InputSet &set : sets) {
    EMBER_RETURN_IF_ERR(bindSet(MF, set, bf));
    EMBER_RETURN_IF_ERR(bindSet(MQ, set, bq));
    EMBER_RETURN_IF_ERR(netF.function->run(bf));
    EMBER_RETURN_IF_ERR(netQ.function->run(bq));
    report.record(bf, bq);
  }
  report.print(os);
  return llvm::Error::success();
}
