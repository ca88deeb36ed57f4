//===- ModelRunner.cpp - An ONNX model compiled in-process ----------------===//
//
// Reads the model's graph inputs from the protobuf first, so that a
// symbolic batch dimension can be bound to the minibatch size, then imports
// and compiles it with the same pipeline as model-runner.
//
//===----------------------------------------------------------------------===//
#include "Runner.h"

#include "ember/Backend/Pipeline.h"
#include "ember/Base/Error.h"
#include "ember/Importer/ONNXImporter.h"
#include "ember/Quantization/Profiler.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/MemoryBuffer.h"

#include <onnx/onnx_pb.h>

namespace ember {
namespace {

/// A graph input as the file declares it: a name and, per dim, a value or
/// a symbol.
struct DeclaredInput {
  std::string name;
  std::vector<std::pair<int64_t, std::string>> dims;
};

/// An ONNX model compiled for a backend, with its bindings.
class CompiledModelRunner final : public NetworkRunner {
public:
  llvm::Error init(llvm::StringRef path, llvm::StringRef backend,
                   const RunnerOptions &opts);
  float *inputData() override {
    return bindings_.get(inputPH_)->getHandle<float>().begin();
  }
  const float *outputData() const override {
    return bindings_.get(outputPH_)->getHandle<float>().begin();
  }
  llvm::Error run() override {
    EMBER_RETURN_IF_ERR(net_.function->run(bindings_));
    if (recorder_)
      recorder_->record(bindings_, profile_);
    return llvm::Error::success();
  }
  llvm::Error finish() override {
    return recorder_ ? writeProfile(profile_, profilePath_)
                     : llvm::Error::success();
  }

private:
  /// Instruments \p F for -dump-profile or quantizes it for -load-profile.
  llvm::Error prepareQuantization(Function &F, const RunnerOptions &opts,
                                  CompileOptions &compileOpts);

  Module module_;
  ValueNames names_;
  std::unique_ptr<ProfileRecorder> recorder_;
  QuantProfile profile_;
  std::string profilePath_;
  CompiledNetwork net_;
  Bindings bindings_;
  const Placeholder *inputPH_ = nullptr, *outputPH_ = nullptr;
};

} // namespace

/// The graph inputs of \p model that are not initializers.
static std::vector<DeclaredInput>
declaredInputs(const onnx::ModelProto &model) {
  llvm::StringSet<> inits;
  for (const auto &t : model.graph().initializer())
    inits.insert(t.name());
  std::vector<DeclaredInput> result;
  for (const auto &in : model.graph().input()) {
    if (inits.count(in.name()))
      continue;
    DeclaredInput d{in.name(), {}};
    for (const auto &dim : in.type().tensor_type().shape().dim())
      d.dims.push_back({dim.has_dim_value() ? dim.dim_value() : -1,
                        dim.has_dim_param() ? dim.dim_param() : ""});
    result.push_back(std::move(d));
  }
  return result;
}

/// Picks the input images go to and sets the batch symbol in \p importOpts.
static llvm::Expected<DeclaredInput>
chooseInput(const std::vector<DeclaredInput> &inputs, llvm::StringRef path,
            const RunnerOptions &opts, ImportOptions &importOpts) {
  std::string names;
  for (const DeclaredInput &d : inputs)
    names += (names.empty() ? "'" : ", '") + d.name + "'";
  auto it = llvm::find_if(inputs, [&](const DeclaredInput &d) {
    return opts.inputName.empty() || d.name == opts.inputName;
  });
  if (it == inputs.end())
    return makeErrorF("model '{0}' has no input '{1}' (inputs: {2})", path,
                      opts.inputName, names);
  if (inputs.size() != 1)
    return makeErrorF("model '{0}' has {1} inputs ({2}); image-classifier "
                      "can only feed a model with a single input",
                      path, inputs.size(), names);
  if (it->dims.size() != 4)
    return makeErrorF("model input '{0}' has rank {1}; image-classifier "
                      "needs a rank-4 image batch (NCHW or NHWC)",
                      it->name, it->dims.size());
  importOpts.symbols = opts.symbols;
  importOpts.requireSymbolsUsed = true;
  const auto &batch = it->dims[0];
  bool batchDefined = llvm::any_of(
      opts.symbols, [&](const auto &s) { return s.first == batch.second; });
  if (batch.first < 0 && !batch.second.empty() && batchDefined)
    return makeErrorF("give the batch symbol '{0}' of input '{1}' with "
                      "-minibatch, not -onnx-define-symbol",
                      batch.second, it->name);
  if (batch.first < 0 && !batch.second.empty())
    importOpts.symbols.push_back({batch.second, opts.minibatch.value_or(1)});
  else if (opts.minibatch && int64_t(*opts.minibatch) != batch.first)
    return makeErrorF("model input '{0}' has a fixed batch of {1}; "
                      "-minibatch={2} needs a symbolic batch dimension",
                      it->name, batch.first, *opts.minibatch);
  return *it;
}

llvm::Error CompiledModelRunner::init(llvm::StringRef path,
                                      llvm::StringRef backendName,
                                      const RunnerOptions &opts) {
  auto buf = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                         /*RequiresNullTerminator=*/false);
  if (!buf)
    return makeErrorF("cannot read model '{0}': {1}", path,
                      buf.getError().message());
  onnx::ModelProto proto;
  if (!proto.ParseFromArray((*buf)->getBufferStart(),
                            int((*buf)->getBufferSize())))
    return makeErrorF("model '{0}' is not a valid ONNX protobuf", path);
  ImportOptions importOpts;
  EMBER_ASSIGN_OR_RETURN(
      DeclaredInput chosen,
      chooseInput(declaredInputs(proto), path, opts, importOpts));
  EMBER_ASSIGN_OR_RETURN(const Backend *backend, getBackend(backendName));
  importOpts.valueNames = &names_;
  EMBER_ASSIGN_OR_RETURN(
      Function * F,
      importONNXBuffer((*buf)->getBuffer(), path, module_, importOpts));
  inputPH_ = module_.getPlaceholderByName(chosen.name);
  auto outs = module_.getOutputPlaceholders();
  if (!inputPH_ || outs.empty())
    return makeErrorF("model '{0}' has no input '{1}' or no output", path,
                      chosen.name);
  outputPH_ = outs.front();
  for (const Placeholder *p : {inputPH_, outputPH_})
    if (p->getType()->getElemKind() != ElemKind::Float32)
      return makeErrorF("model '{0}': '{1}' is {2}; image-classifier needs "
                        "float32",
                        path, p->getName(), p->getType()->toString());
  CompileOptions compileOpts;
  compileOpts.passes = opts.passes;
  compileOpts.codegen.precision = opts.precision;
  EMBER_RETURN_IF_ERR(prepareQuantization(*F, opts, compileOpts));
  EMBER_ASSIGN_OR_RETURN(net_, compileFunction(*F, *backend, compileOpts));
  bindings_.insert(inputPH_, Tensor(*inputPH_->getType()));
  bindings_.allocateOutputs(module_);
  input_ = {
      inputPH_->getName().str(),
      {inputPH_->getType()->dims().begin(), inputPH_->getType()->dims().end()}};
  output_ = {outputPH_->getName().str(),
             {outputPH_->getType()->dims().begin(),
              outputPH_->getType()->dims().end()}};
  return llvm::Error::success();
}

llvm::Error
CompiledModelRunner::prepareQuantization(Function &F, const RunnerOptions &opts,
                                         CompileOptions &compileOpts) {
  if (!opts.quant.dumpProfile.empty()) {
    // The minimal pipeline keeps every saved value as the model computes it.
    recorder_ = std::make_unique<ProfileRecorder>(F, names_);
    compileOpts.pipeline = getMinimalPipeline();
    profilePath_ = opts.quant.dumpProfile;
    return llvm::Error::success();
  }
  return tools::applyLoadProfile(opts.quant, F, names_, compileOpts)
      .takeError();
}

llvm::Expected<std::unique_ptr<NetworkRunner>>
createModelRunner(llvm::StringRef path, llvm::StringRef backend,
                  const RunnerOptions &opts) {
  auto runner = std::make_unique<CompiledModelRunner>();
  EMBER_RETURN_IF_ERR(runner->init(path, backend, opts));
  return std::unique_ptr<NetworkRunner>(std::move(runner));
}

} // namespace ember
