//===- BundleRunner.cpp - A pre-compiled bundle loaded with dlopen --------===//
//
// Implements the loader side of the bundle ABI in
// include/ember/Bundle/EmberBundle.h: DIR/NAME.so exports NAME (the entry),
// NAME_info (the metadata) and optionally NAME_mt; the constant region is
// NAME.weights.bin unless the bundle embeds it.
//
//===----------------------------------------------------------------------===//
#include "Runner.h"

#include "ember/Base/Error.h"
#include "ember/Base/Memory.h"
#include "ember/Bundle/EmberBundle.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <cstdlib>
#include <cstring>
#include <dlfcn.h>

namespace ember {
namespace {

using EntryFn = int (*)(uint8_t *, uint8_t *, uint8_t *);

/// A region of at least \p size bytes at the bundle's alignment, zeroed.
struct Region {
  struct Free {
    void operator()(uint8_t *p) const { std::free(p); }
  };
  std::unique_ptr<uint8_t, Free> data;
  llvm::Error allocate(uint64_t size, uint64_t align) {
    data.reset(static_cast<uint8_t *>(allocateZeroed(size, align)));
    if (!data)
      return makeErrorF("cannot allocate {0} bytes for a bundle region", size);
    return llvm::Error::success();
  }
};

/// A dlopened bundle with its three regions.
class LoadedBundleRunner final : public NetworkRunner {
public:
  ~LoadedBundleRunner() override {
    if (handle_)
      dlclose(handle_);
  }
  llvm::Error init(llvm::StringRef prefix, const RunnerOptions &opts);
  float *inputData() override {
    return reinterpret_cast<float *>(mutable_.data.get() + in_->offset);
  }
  const float *outputData() const override {
    return reinterpret_cast<const float *>(mutable_.data.get() + out_->offset);
  }
  llvm::Error run() override;

private:
  llvm::Error loadLibrary(llvm::StringRef soPath, llvm::StringRef name);
  llvm::Error loadWeights(llvm::StringRef path);
  llvm::Error checkTensor(const EmberTensorInfo &t, const char *what);

  void *handle_ = nullptr;
  EntryFn entry_ = nullptr;
  const EmberBundleInfo *info_ = nullptr;
  const EmberTensorInfo *in_ = nullptr, *out_ = nullptr;
  std::string name_;
  Region constant_, mutable_, activations_;
  uint8_t *constantPtr_ = nullptr;
};

} // namespace

llvm::Error LoadedBundleRunner::loadLibrary(llvm::StringRef soPath,
                                            llvm::StringRef name) {
  handle_ = dlopen(soPath.str().c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle_)
    return makeErrorF("cannot load bundle '{0}': {1}", soPath, dlerror());
  entry_ = reinterpret_cast<EntryFn>(dlsym(handle_, name.str().c_str()));
  info_ = static_cast<const EmberBundleInfo *>(
      dlsym(handle_, (name + "_info").str().c_str()));
  if (!entry_ || !info_)
    return makeErrorF("bundle '{0}' does not export '{1}' and '{1}_info'",
                      soPath, name);
  // Version 2 only added outputs with a data-dependent extent, which an
  // image classifier does not have: a version 1 bundle reads the same.
  if (info_->abiVersion < 1 || info_->abiVersion > EMBER_BUNDLE_ABI_VERSION)
    return makeErrorF("bundle '{0}' has ABI version {1}; this tool reads "
                      "versions 1 to {2}",
                      soPath, info_->abiVersion, EMBER_BUNDLE_ABI_VERSION);
  if (info_->alignment == 0 || (info_->alignment & (info_->alignment - 1)) ||
      info_->alignment < 64)
    return makeErrorF("bundle '{0}' declares alignment {1}; expected a "
                      "power of two >= 64",
                      soPath, info_->alignment);
  return llvm::Error::success();
}

llvm::Error LoadedBundleRunner::loadWeights(llvm::StringRef path) {
  EMBER_RETURN_IF_ERR(
      constant_.allocate(info_->constantSize, info_->alignment));
  constantPtr_ = constant_.data.get();
  if (info_->constantSize == 0)
    return llvm::Error::success();
  auto buf = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                         /*RequiresNullTerminator=*/false);
  if (!buf)
    return makeErrorF("cannot read bundle weights '{0}': {1}", path,
                      buf.getError().message());
  if ((*buf)->getBufferSize() != info_->constantSize)
    return makeErrorF("bundle weights '{0}' hold {1} bytes; the bundle "
                      "expects {2}",
                      path, (*buf)->getBufferSize(), info_->constantSize);
  std::memcpy(constantPtr_, (*buf)->getBufferStart(), info_->constantSize);
  return llvm::Error::success();
}

llvm::Error LoadedBundleRunner::checkTensor(const EmberTensorInfo &t,
                                            const char *what) {
  if (!t.name || (t.rank && !t.dims))
    return makeErrorF("bundle '{0}': an {1} has no name or no dims", name_,
                      what);
  uint64_t n = 1;
  for (uint32_t i = 0; i < t.rank; ++i)
    n *= t.dims[i] > 0 ? uint64_t(t.dims[i]) : 0;
  if (t.elemKind != 1)
    return makeErrorF("bundle '{0}': {1} '{2}' has element kind {3}; "
                      "image-classifier needs float32 (1)",
                      name_, what, t.name, t.elemKind);
  if (t.rank < 1 || n * 4 != t.sizeInBytes ||
      t.offset + t.sizeInBytes > info_->mutableSize || t.offset % 4)
    return makeErrorF("bundle '{0}': {1} '{2}' has inconsistent metadata "
                      "(dims, size {3}, offset {4}, mutable region {5})",
                      name_, what, t.name, t.sizeInBytes, t.offset,
                      info_->mutableSize);
  return llvm::Error::success();
}

llvm::Error LoadedBundleRunner::init(llvm::StringRef prefix,
                                     const RunnerOptions &opts) {
  name_ = llvm::sys::path::filename(prefix).str();
  EMBER_RETURN_IF_ERR(loadLibrary((prefix + ".so").str(), name_));
  if (info_->numInputs == 0 || info_->numOutputs == 0 || !info_->inputs ||
      !info_->outputs)
    return makeErrorF("bundle '{0}' has no inputs or no outputs", name_);
  in_ = &info_->inputs[0];
  if (info_->numInputs != 1 ||
      (!opts.inputName.empty() && opts.inputName != in_->name))
    return makeErrorF("bundle '{0}' has {1} inputs (the first is '{2}'); "
                      "image-classifier feeds a single input{3}",
                      name_, info_->numInputs, in_->name,
                      opts.inputName.empty() ? "" : " named " + opts.inputName);
  out_ = &info_->outputs[0];
  EMBER_RETURN_IF_ERR(checkTensor(*in_, "input"));
  EMBER_RETURN_IF_ERR(checkTensor(*out_, "output"));
  if (opts.minibatch && in_->dims[0] != int64_t(*opts.minibatch))
    return makeErrorF("bundle '{0}' was compiled for a batch of {1}; "
                      "-minibatch={2} does not match",
                      name_, in_->dims[0], *opts.minibatch);
  // With embedded weights the ABI lets the caller pass NULL.
  if (!info_->embeddedWeights)
    EMBER_RETURN_IF_ERR(loadWeights((prefix + ".weights.bin").str()));
  EMBER_RETURN_IF_ERR(mutable_.allocate(info_->mutableSize, info_->alignment));
  EMBER_RETURN_IF_ERR(
      activations_.allocate(info_->activationSize, info_->alignment));
  input_ = {in_->name, {in_->dims, in_->dims + in_->rank}};
  output_ = {out_->name, {out_->dims, out_->dims + out_->rank}};
  return llvm::Error::success();
}

llvm::Error LoadedBundleRunner::run() {
  if (int rc =
          entry_(constantPtr_, mutable_.data.get(), activations_.data.get()))
    return makeErrorF("bundle '{0}' returned {1}", name_, rc);
  return llvm::Error::success();
}

llvm::Expected<std::unique_ptr<NetworkRunner>>
createBundleRunner(llvm::StringRef prefix, const RunnerOptions &opts) {
  auto runner = std::make_unique<LoadedBundleRunner>();
  EMBER_RETURN_IF_ERR(runner->init(prefix, opts));
  return std::unique_ptr<NetworkRunner>(std::move(runner));
}

} // namespace ember
