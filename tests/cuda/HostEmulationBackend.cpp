//===- HostEmulationBackend.cpp - CUDA kernels run on the host ------------===//
//
// The oracle for the CUDA backend without a GPU: every network the tests
// compile for "CUDAHostEmu" (cuBLASLt for every MatMul, cuDNN for every
// Conv it can express) or "CUDAHostEmuGen" (generated kernels only) goes
// through the CUDA backend's lowering and renderer, must compile with
// NVRTC for sm_90, and is then built for the host (c++ -shared with
// HostEmulation.h), dlopen'ed and run launch by launch with the real grid
// geometry. Library ops run the backend's own LibOps.c against the host
// stand-ins of cuBLASLt and cuDNN (fake_cublaslt.c, fake_cudnn.c), built
// into one shared object (EMBER_FAKE_LIBS).
//
//===----------------------------------------------------------------------===//
#include "HostEmulationBackend.h"

#include "../../backends/CUDA/CUDA.h"
#include "../../backends/CUDA/host/LibOps.h"

#include "ember/Base/Error.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

#include <cstring>
#include <dlfcn.h>
#include <map>
#include <mutex>

using namespace ember;
using namespace ember::cuda;

namespace {
using KernelFn = void (*)(uint8_t *, uint8_t *, uint8_t *);
using LaunchFn = void (*)(KernelFn, long long, long long, uint8_t *, uint8_t *,
                          uint8_t *);

/// The library ops' entry points in the stand-in libraries.
struct FakeLibs {
  int (*plan)(EmberLibContext *, EmberLibPlan *, const long long *);
  int (*finish)(EmberLibContext *);
  int (*run)(EmberLibContext *, EmberLibPlan *, const long long *, uint8_t *,
             uint8_t *, uint8_t *, void *);
  void (*release)(EmberLibPlan *, const long long *);
  void (*destroy)(EmberLibContext *);
  int (*createStream)(void **);
};

/// Loads EMBER_FAKE_LIBS once.
static llvm::Expected<const FakeLibs *> fakeLibs() {
  static FakeLibs libs;
  static std::string error;
  static bool loaded = [] {
    void *h = dlopen(EMBER_FAKE_LIBS, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      error = dlerror();
      return false;
    }
    auto get = [&](auto &fn, const char *name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(
          dlsym(h, name));
      if (!fn)
        error += std::string(" missing ") + name;
    };
    get(libs.plan, "ember_lib_plan");
    get(libs.finish, "ember_lib_finish");
    get(libs.run, "ember_lib_run");
    get(libs.release, "ember_lib_release");
    get(libs.destroy, "ember_lib_destroy");
    get(libs.createStream, "ember_fake_stream_create");
    return error.empty();
  }();
  if (!loaded)
    return makeErrorF("emulation: cannot load the library stand-ins: {0}",
                      error);
  return &libs;
}

/// The three regions in host memory, 64-byte aligned as the ABI promises
/// (cuBLASLt's stand-in checks the alignment it was told).
struct Regions {
  std::vector<uint8_t> storage[3];
  uint8_t *base[3];
  Regions(const std::vector<uint8_t> &consts, size_t mut, size_t act) {
    size_t sizes[3] = {consts.size(), mut, act};
    for (int i = 0; i < 3; ++i) {
      storage[i].assign(sizes[i] + 128, 0);
      auto p = reinterpret_cast<uintptr_t>(storage[i].data());
      base[i] = storage[i].data() + (64 - p % 64) % 64;
    }
    if (!consts.empty()) // data() may be null then
      std::memcpy(base[0], consts.data(), consts.size());
  }
};

class EmuFunction final : public CompiledFunction {
public:
  EmuFunction(const Module &M, std::shared_ptr<const IRFunction> F,
              const MemoryPlan &plan, CUDAProgram prog, CUDASource src,
              std::shared_ptr<void> dl)
      : M_(M), F_(std::move(F)), plan_(plan), prog_(std::move(prog)),
        src_(std::move(src)), dl_(std::move(dl)) {}

  llvm::Error run(Bindings &b) override {
    Regions r(prog_.constants, plan_.mutableSize, plan_.activationSize);
    for (auto &w : F_->getWeights()) {
      if (w->isConstant() || w->isOutput())
        continue;
      const Tensor *t = b.get(M_.getPlaceholderByName(w->getName()));
      if (!t)
        return makeErrorF("no tensor is bound to input '{0}'", w->getName());
      std::memcpy(r.base[1] + plan_.placements.lookup(w.get()).offset,
                  t->data(), t->sizeInBytes());
    }
    auto launch =
        reinterpret_cast<LaunchFn>(dlsym(dl_.get(), "ember_emu_launch"));
    if (!launch)
      return makeError("emulation: ember_emu_launch is missing");
    if (!prog_.libOps.empty())
      EMBER_RETURN_IF_ERR(runLibraries(
          r, [&](const Step &s) { return runKernel(launch, s.index, r); }));
    else
      for (const Step &s : prog_.steps)
        EMBER_RETURN_IF_ERR(runKernel(launch, s.index, r));
    b.allocateOutputs(M_);
    for (auto &w : F_->getWeights())
      if (w->isOutput())
        std::memcpy(b.get(M_.getPlaceholderByName(w->getName()))->data(),
                    r.base[1] + plan_.placements.lookup(w.get()).offset,
                    w->getType()->sizeInBytes());
    return llvm::Error::success();
  }

private:
  llvm::Error runKernel(LaunchFn launch, unsigned i, Regions &r) {
    const LaunchInfo &li = src_.launches[i];
    auto k = reinterpret_cast<KernelFn>(dlsym(dl_.get(), li.symbol.c_str()));
    if (!k)
      return makeErrorF("emulation: kernel {0} is missing", li.symbol);
    launch(k, li.blocks, li.threads, r.base[0], r.base[1], r.base[2]);
    return llvm::Error::success();
  }

  /// Plans the library ops, runs every step, releases the plans.
  llvm::Error
  runLibraries(Regions &r,
               llvm::function_ref<llvm::Error(const Step &)> kernel) {
    EMBER_ASSIGN_OR_RETURN(const FakeLibs *libs, fakeLibs());
    EmberLibContext ctx = {};
    std::vector<EmberLibPlan> plans(prog_.libOps.size());
    void *stream = nullptr;
    libs->createStream(&stream);
    auto desc = [&](unsigned i) {
      return reinterpret_cast<const long long *>(prog_.libOps[i].desc.data());
    };
    llvm::Error err = llvm::Error::success();
    for (unsigned i = 0; i < plans.size() && !err; ++i)
      if (int rc = libs->plan(&ctx, &plans[i], desc(i)))
        err = makeErrorF("emulation: planning {0}: status {1}",
                         prog_.libOps[i].name, rc);
    if (!err)
      if (int rc = libs->finish(&ctx))
        err = makeErrorF("emulation: workspace: status {0}", rc);
    for (size_t i = 0; i < prog_.steps.size() && !err; ++i) {
      const Step &s = prog_.steps[i];
      if (!s.isLibrary) {
        err = kernel(s);
        continue;
      }
      if (int rc = libs->run(&ctx, &plans[s.index], desc(s.index), r.base[0],
                             r.base[1], r.base[2], stream))
        err = makeErrorF("emulation: {0}: status {1}",
                         prog_.libOps[s.index].name, rc);
    }
    for (unsigned i = 0; i < plans.size(); ++i)
      libs->release(&plans[i], desc(i));
    libs->destroy(&ctx);
    return err;
  }

  const Module &M_;
  std::shared_ptr<const IRFunction> F_;
  MemoryPlan plan_;
  CUDAProgram prog_;
  CUDASource src_;
  std::shared_ptr<void> dl_;
};

class EmuBackend final : public Backend {
public:
  EmuBackend(std::string name, CUDACodegenOptions opts)
      : name_(std::move(name)), opts_(opts) {}
  llvm::StringRef getName() const override { return name_; }
  bool isOpSupported(const Node &n) const override {
    return cuda_.isOpSupported(n);
  }
  bool shouldLower(const Node &n) const override {
    return cuda_.shouldLower(n);
  }
  bool supportsFusedActivation(FusedActivation act) const override {
    return cuda_.supportsFusedActivation(act);
  }
  bool supportsConvResidual() const override {
    return cuda_.supportsConvResidual();
  }
  llvm::Expected<std::unique_ptr<CompiledFunction>>
  compile(const Module &M, std::shared_ptr<const IRFunction> F,
          const MemoryPlan &plan, const CodegenOptions &opts) const override;

private:
  std::string name_;
  CUDACodegenOptions opts_;
  CUDABackend cuda_;
  /// Host builds by source text: a test that compiles the same network
  /// again (the digits test does, per input) builds it once.
  mutable std::map<std::string, std::shared_ptr<void>> cache_;
  mutable std::mutex mu_;
};
} // namespace

llvm::Expected<void *> test::buildCUDAForHost(const std::string &source) {
  llvm::SmallString<128> dir;
  if (auto ec = llvm::sys::fs::createUniqueDirectory("ember-cuda-emu", dir))
    return makeErrorF("emulation: cannot create a directory: {0}",
                      ec.message());
  std::string cu = (dir + "/net.cpp").str(), so = (dir + "/net.so").str();
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(cu, ec);
    if (ec)
      return makeErrorF("emulation: cannot write {0}", cu);
    os << "#include \"HostEmulation.h\"\n" << source;
  }
  std::string inc = "-I" EMBER_SOURCE_DIR "/tests/cuda";
  llvm::SmallVector<llvm::StringRef, 12> args = {
      EMBER_HOST_CXX, "-std=c++17", "-O1", "-fPIC", "-shared",
      "-w",           inc,          "-o",  so,      cu};
  std::string err;
  if (llvm::sys::ExecuteAndWait(EMBER_HOST_CXX, args, std::nullopt, {}, 0, 0,
                                &err))
    return makeErrorF("emulation: the host compiler failed on {0} {1}", cu,
                      err);
  void *dl = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
  llvm::sys::fs::remove(cu);
  llvm::sys::fs::remove(so);
  llvm::sys::fs::remove(dir);
  if (!dl)
    return makeErrorF("emulation: dlopen failed: {0}", dlerror());
  return dl;
}

llvm::Expected<std::unique_ptr<CompiledFunction>>
EmuBackend::compile(const Module &M, std::shared_ptr<const IRFunction> F,
                    const MemoryPlan &plan, const CodegenOptions &) const {
  EMBER_ASSIGN_OR_RETURN(CUDAProgram prog, lowerForCUDA(*F, plan, opts_));
  CUDASource src = renderCUDA(prog, "emu");
  std::lock_guard<std::mutex> lock(mu_);
  std::shared_ptr<void> &dl = cache_[src.text];
  if (!dl) {
    // The same text must compile for the GPU.
    EMBER_ASSIGN_OR_RETURN(CUDABinary bin,
                           compileWithNVRTC(src.text, kDefaultArch, "emu"));
    if (bin.cubin.empty() || bin.ptx.find(".target sm_90") == std::string::npos)
      return makeError("emulation: NVRTC produced no sm_90 cubin or PTX");
    EMBER_ASSIGN_OR_RETURN(void *handle, test::buildCUDAForHost(src.text));
    dl = std::shared_ptr<void>(handle, [](void *h) { dlclose(h); });
  }
  return std::make_unique<EmuFunction>(M, std::move(F), plan, std::move(prog),
                                       std::move(src), dl);
}

void test::registerCUDAHostEmulation() {
  static bool done = [] {
    CUDACodegenOptions libs, generated;
    libs.gemm = libs.conv = LibChoice::Library;
    generated.gemm = generated.conv = LibChoice::Generated;
    registerBackend(std::make_unique<EmuBackend>("CUDAHostEmu", libs));
    registerBackend(std::make_unique<EmuBackend>("CUDAHostEmuGen", generated));
    return true;
  }();
  (void)done;
}
