//===- HostEmulationBackend.cpp - CUDA kernels run on the host ------------===//
//
// The oracle for the CUDA backend without a GPU: every network the tests
// compile for "CUDAHostEmu" (cuBLASLt for every MatMul, cuDNN for every
// Conv it can express) or "CUDAHostEmuGen" (generated kernels only) goes
// through the CUDA backend's lowering and renderer, must compile with
// NVRTC for sm_90, and is then built for the host (c++ -shared with
// HostEmulation.h) and run by the backend's own in-process runtime
// (CUDARuntime.cpp: warm-up, graph capture and replay, library
// fallbacks) over host stand-ins of cudart, cuBLASLt and cuDNN
// (fake_cudart.c, fake_cublaslt.c, fake_cudnn.c with LibOps.c, one shared
// object: EMBER_FAKE_LIBS).
//
//===----------------------------------------------------------------------===//
#include "HostEmulationBackend.h"

#include "../../backends/CUDA/CUDA.h"
#include "../../backends/CUDA/CUDAApi.h"

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
/// The stand-ins' entry points: the runtime table of in-process runs and
/// the test controls of fake_cudart.c.
struct FakeCUDA {
  CUDAApi api;
  void (*useKernels)(void *) = nullptr;
  int (*stat)(int) = nullptr;
  void (*resetStats)() = nullptr;
};

/// Loads EMBER_FAKE_LIBS once.
static llvm::Expected<const FakeCUDA *> fakeCUDA() {
  static FakeCUDA fake;
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
#define EMBER_API_GET(f) get(fake.api.f, #f);
    EMBER_CUDA_API_FNS(EMBER_API_GET)
#undef EMBER_API_GET
    get(fake.api.libLoad, "ember_lib_load");
    get(fake.api.libPlan, "ember_lib_plan");
    get(fake.api.libFinish, "ember_lib_finish");
    get(fake.api.libRun, "ember_lib_run");
    get(fake.api.libRelease, "ember_lib_release");
    get(fake.api.libDestroy, "ember_lib_destroy");
    get(fake.useKernels, "ember_fake_use_kernels");
    get(fake.stat, "ember_fake_stat");
    get(fake.resetStats, "ember_fake_reset_stats");
    return error.empty();
  }();
  if (!loaded)
    return makeErrorF("emulation: cannot load the CUDA stand-ins: {0}", error);
  return &fake;
}

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
  mutable std::map<std::string, std::pair<std::shared_ptr<void>, CUDABinary>>
      cache_;
  /// Shared by both backends: the stand-in runtime's kernel library is
  /// process-wide state (ember_fake_use_kernels, then the load).
  static std::mutex mu_;
};
} // namespace

std::mutex EmuBackend::mu_;

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
    os << "#include \"HostEmulation.h\"\n"
       << source << "\nEMBER_EMU_CHECK_DEVICE_ABI\n";
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
                    const MemoryPlan &plan, const CodegenOptions &opts) const {
  EMBER_ASSIGN_OR_RETURN(const FakeCUDA *fake, fakeCUDA());
  // This backend's library choice, the caller's arithmetic.
  CUDACodegenOptions lowering = opts_;
  lowering.math = opts.cuda.math;
  EMBER_ASSIGN_OR_RETURN(CUDAProgram prog, lowerForCUDA(*F, plan, lowering));
  CUDASource src = renderCUDA(prog, "emu");
  std::lock_guard<std::mutex> lock(mu_);
  auto &[dl, bin] = cache_[src.text];
  if (!dl) {
    // The same text must compile for the GPU.
    EMBER_ASSIGN_OR_RETURN(bin,
                           compileWithNVRTC(src.text, kDefaultArch, "emu"));
    if (bin.cubin.empty() || bin.ptx.find(".target sm_90") == std::string::npos)
      return makeError("emulation: NVRTC produced no sm_90 cubin or PTX");
    EMBER_ASSIGN_OR_RETURN(void *handle, test::buildCUDAForHost(src.text));
    dl = std::shared_ptr<void>(handle, [](void *h) { dlclose(h); });
  }
  // The in-process runtime itself, on the stand-ins; the kernels'
  // shared object stays loaded as long as this backend.
  fake->useKernels(dl.get());
  CUDACodegenOptions run = opts_;
  run.graph = opts.cuda.graph;
  run.syncEachStep = opts.cuda.syncEachStep;
  return makeCUDAFunction(fake->api, M, std::move(F), plan, std::move(prog),
                          std::move(src), bin, run);
}

int test::fakeCUDAStat(int which) {
  auto fake = fakeCUDA();
  if (!fake) {
    llvm::consumeError(fake.takeError());
    return -1;
  }
  return (*fake)->stat(which);
}

void test::resetFakeCUDAStats() {
  if (auto fake = fakeCUDA())
    (*fake)->resetStats();
  else
    llvm::consumeError(fake.takeError());
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
