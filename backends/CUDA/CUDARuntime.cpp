//===- CUDARuntime.cpp - In-process runs through the CUDA runtime ---------===//
//
// One device allocation per region (constants uploaded once, the mutable
// region for inputs and outputs, one activation arena as planned by the
// MemoryPlanner) and one stream. The first run is eager and synchronized:
// cuDNN and cuBLASLt do their lazy work (plan building, module loading)
// outside any capture, and a fault surfaces there. Only then is the
// network captured into a CUDA graph, replayed by later runs; where
// capture or instantiation fails, runs stay plain stream launches and the
// reason is said once. A library op that cannot be planned runs its
// generated fallback kernel. A network with a loop kept as a loop reads
// the loop flag back after every test and runs with stream launches.
//
//===----------------------------------------------------------------------===//
#include "CUDA.h"
#include "CUDAApi.h"
#include "host/LibStatus.h"

#include "ember/Base/Error.h"

#include "llvm/Support/raw_ostream.h"

extern "C" const char *ember_lib_load(int cublasLt, int cudnn);

using namespace ember;
using namespace ember::cuda;

const CUDAApi &cuda::realCUDAApi() {
  static const CUDAApi api = [] {
    CUDAApi a;
#define EMBER_API_SET(f) a.f = &::f;
    EMBER_CUDA_API_FNS(EMBER_API_SET)
#undef EMBER_API_SET
    a.libLoad = &ember_lib_load;
    a.libPlan = &ember_lib_plan;
    a.libFinish = &ember_lib_finish;
    a.libRun = &ember_lib_run;
    a.libRelease = &ember_lib_release;
    a.libDestroy = &ember_lib_destroy;
    return a;
  }();
  return api;
}

std::string cuda::statusText(const CUDAApi &api, int rc) {
  if (const char *name = ember_lib_status_name(rc))
    return std::string(name) + " (" + std::to_string(rc % 10000) + ")";
  auto e = cudaError_t(rc);
  return std::string(api.cudaGetErrorName(e)) + ": " +
         api.cudaGetErrorString(e);
}

llvm::Error cuda::checkForDevice() {
  int count = 0; // untouched when the driver is missing
  cudaError_t rc = cudaGetDeviceCount(&count);
  if (rc != cudaSuccess || count <= 0) {
    cudaGetLastError(); // clear the sticky error
    if (rc == cudaSuccess)
      return makeError("no CUDA device is present (the driver reports 0)");
    return makeErrorF("no CUDA device is present ({0}: {1})",
                      cudaGetErrorName(rc), cudaGetErrorString(rc));
  }
  return llvm::Error::success();
}

namespace {
/// A network loaded on the device.
class CUDAFunction final : public CompiledFunction {
public:
  CUDAFunction(const CUDAApi &api, const Module &M,
               std::shared_ptr<const IRFunction> F, const MemoryPlan &plan,
               CUDAProgram prog, CUDASource src, const CUDACodegenOptions &opts)
      : api_(api), M_(M), F_(std::move(F)), plan_(plan), prog_(std::move(prog)),
        src_(std::move(src)), useGraph_(opts.graph && !opts.syncEachStep),
        syncEachStep_(opts.syncEachStep) {}
  ~CUDAFunction() override;

  /// Loads the code, plans the library ops, allocates and fills the regions.
  llvm::Error init(const CUDABinary &bin);
  llvm::Error run(Bindings &b) override;

private:
  llvm::Error check(cudaError_t rc, const llvm::Twine &what) const {
    if (rc == cudaSuccess)
      return llvm::Error::success();
    api_.cudaGetLastError(); // clear a non-sticky error
    return makeErrorF("CUDA: {0} failed: {1}", what.str(),
                      statusText(api_, rc));
  }
  llvm::Error loadCode(const CUDABinary &bin);
  llvm::Error planLibraries();
  void fallBack(unsigned i, const std::string &why);
  llvm::Error enqueue();
  llvm::Error launch(unsigned kernel);
  llvm::Error readLoopFlag(bool &more);
  std::string stepName(const Step &s) const;
  void captureGraph();
  const long long *descOf(size_t i) const {
    return reinterpret_cast<const long long *>(prog_.libOps[i].desc.data());
  }

  const CUDAApi &api_;
  const Module &M_;
  std::shared_ptr<const IRFunction> F_;
  MemoryPlan plan_;
  CUDAProgram prog_;
  CUDASource src_;
  EmberLibContext libCtx_ = {};
  std::vector<EmberLibPlan> plans_;
  /// Per library op: planned (run the library) or not (its fallback).
  std::vector<bool> planned_;
  bool useGraph_, syncEachStep_;
  bool warm_ = false;
  cudaLibrary_t lib_ = nullptr;
  std::vector<cudaKernel_t> kernels_;
  uint8_t *regions_[3] = {};
  cudaStream_t stream_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
  std::vector<uint8_t> host_;
};
} // namespace

CUDAFunction::~CUDAFunction() {
  if (exec_)
    api_.cudaGraphExecDestroy(exec_);
  for (size_t i = 0; i < plans_.size(); ++i)
    api_.libRelease(&plans_[i], descOf(i));
  if (api_.libDestroy)
    api_.libDestroy(&libCtx_);
  for (uint8_t *p : regions_)
    if (p)
      api_.cudaFree(p);
  if (stream_)
    api_.cudaStreamDestroy(stream_);
  if (lib_)
    api_.cudaLibraryUnload(lib_);
}

llvm::Error CUDAFunction::loadCode(const CUDABinary &bin) {
  // The cubin, or where the GPU cannot run it (a newer architecture), the
  // PTX, compiled by the driver.
  cudaError_t rc = cudaErrorInvalidKernelImage;
  if (!bin.cubin.empty())
    rc = api_.cudaLibraryLoadData(&lib_, bin.cubin.data(), nullptr, nullptr, 0,
                                  nullptr, nullptr, 0);
  if (rc != cudaSuccess) {
    api_.cudaGetLastError();
    EMBER_RETURN_IF_ERR(check(
        api_.cudaLibraryLoadData(&lib_, bin.ptx.c_str(), nullptr, nullptr, 0,
                                 nullptr, nullptr, 0),
        "loading the kernels (cubin: " + statusText(api_, rc) + "; PTX)"));
  }
  for (const LaunchInfo &li : src_.launches) {
    cudaKernel_t k;
    EMBER_RETURN_IF_ERR(
        check(api_.cudaLibraryGetKernel(&k, lib_, li.symbol.c_str()),
              "finding kernel " + li.symbol));
    kernels_.push_back(k);
  }
  return llvm::Error::success();
}

void CUDAFunction::fallBack(unsigned i, const std::string &why) {
  const LibOp &op = prog_.libOps[i];
  llvm::errs() << "CUDA: " << op.name << ": "
               << (op.desc[0] == EMBER_LIB_GEMM ? "cuBLASLt" : "cuDNN")
               << " cannot run it (" << why
               << "); running its generated kernel "
               << src_.launches[op.fallback].symbol << " instead\n";
  planned_[i] = false;
}

/// Plans every library op; an op whose library is missing or refuses the
/// plan runs its generated fallback kernel instead.
llvm::Error CUDAFunction::planLibraries() {
  size_t n = prog_.libOps.size();
  plans_.resize(n);
  planned_.assign(n, true);
  if (!n)
    return llvm::Error::success();
  for (int kind : {EMBER_LIB_GEMM, EMBER_LIB_CONV}) {
    bool used = false;
    for (const LibOp &op : prog_.libOps)
      used |= op.desc[0] == kind;
    const char *err =
        used ? api_.libLoad(kind == EMBER_LIB_GEMM, kind == EMBER_LIB_CONV)
             : nullptr;
    for (unsigned i = 0; err && i < n; ++i)
      if (prog_.libOps[i].desc[0] == kind)
        fallBack(i, err);
  }
  for (unsigned i = 0; i < n; ++i) {
    if (!planned_[i])
      continue;
    if (int rc = api_.libPlan(&libCtx_, &plans_[i], descOf(i))) {
      api_.libRelease(&plans_[i], descOf(i));
      api_.cudaGetLastError();
      fallBack(i, "planning returned " + statusText(api_, rc));
    }
  }
  if (int rc = api_.libFinish(&libCtx_))
    return check(cudaError_t(rc), "allocating the library workspace");
  return llvm::Error::success();
}

llvm::Error CUDAFunction::init(const CUDABinary &bin) {
  EMBER_RETURN_IF_ERR(loadCode(bin));
  EMBER_RETURN_IF_ERR(
      check(api_.cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking),
            "creating a stream"));
  EMBER_RETURN_IF_ERR(planLibraries());
  size_t sizes[3] = {prog_.constants.size(), plan_.mutableSize,
                     prog_.activationSize};
  for (unsigned i = 0; i < 3; ++i)
    EMBER_RETURN_IF_ERR(
        check(api_.cudaMalloc(reinterpret_cast<void **>(&regions_[i]),
                              std::max<size_t>(sizes[i], 64)),
              "allocating device memory"));
  EMBER_RETURN_IF_ERR(
      check(api_.cudaMemcpy(regions_[0], prog_.constants.data(),
                            prog_.constants.size(), cudaMemcpyHostToDevice),
            "uploading the constants"));
  host_.assign(plan_.mutableSize, 0);
  return llvm::Error::success();
}

std::string CUDAFunction::stepName(const Step &s) const {
  if (!s.isLibrary)
    return "kernel " + src_.launches[s.index].symbol + " (" +
           prog_.kernels[s.index].getName().str() + ")";
  const LibOp &op = prog_.libOps[s.index];
  const char *lib = op.desc[0] == EMBER_LIB_GEMM ? "cuBLASLt" : "cuDNN";
  if (!planned_[s.index])
    return "kernel " + src_.launches[op.fallback].symbol + " (" + op.name +
           ", generated instead of " + lib + ")";
  return std::string(lib) + " op " + op.name;
}

llvm::Error CUDAFunction::launch(unsigned kernel) {
  const LaunchInfo &li = src_.launches[kernel];
  void *args[3] = {&regions_[0], &regions_[1], &regions_[2]};
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(unsigned(li.blocks));
  cfg.blockDim = dim3(unsigned(li.threads));
  cfg.stream = stream_;
  return check(
      api_.cudaLaunchKernelExC(&cfg, (const void *)kernels_[kernel], args),
      "launching " + li.symbol);
}

/// The loop flag that the loopbegin or loopend step just enqueued writes:
/// copied back on the stream and waited for (the next step depends on it).
llvm::Error CUDAFunction::readLoopFlag(bool &more) {
  uint8_t flag = 0;
  EMBER_RETURN_IF_ERR(
      check(api_.cudaMemcpyAsync(&flag, regions_[2] + prog_.loopFlagOffset, 1,
                                 cudaMemcpyDeviceToHost, stream_),
            "reading the loop flag"));
  EMBER_RETURN_IF_ERR(check(api_.cudaStreamSynchronize(stream_),
                            "running a loop test (rerun with "
                            "-cuda-sync-each-step to name a failing step)"));
  more = flag != 0;
  return llvm::Error::success();
}

/// Enqueues the steps in order, jumping where a loop test says; with
/// -cuda-sync-each-step, waits for each and names the first that fails.
llvm::Error CUDAFunction::enqueue() {
  for (size_t n = 0; n < prog_.steps.size();) {
    const Step &s = prog_.steps[n];
    unsigned i = s.index;
    if (!s.isLibrary) {
      EMBER_RETURN_IF_ERR(launch(i));
    } else if (!planned_[i]) {
      EMBER_RETURN_IF_ERR(launch(prog_.libOps[i].fallback));
    } else if (int rc =
                   api_.libRun(&libCtx_, &plans_[i], descOf(i), regions_[0],
                               regions_[1], regions_[2], stream_)) {
      return makeErrorF("CUDA: {0} failed: {1}", stepName(s),
                        statusText(api_, rc));
    }
    if (syncEachStep_) {
      cudaError_t rc = api_.cudaStreamSynchronize(stream_);
      if (rc == cudaSuccess)
        rc = api_.cudaGetLastError();
      if (rc != cudaSuccess)
        return makeErrorF("CUDA: step {0} of {1}, {2}, failed: {3}", n + 1,
                          prog_.steps.size(), stepName(s),
                          statusText(api_, rc));
    }
    bool more = false;
    if (prog_.testsLoop(n))
      EMBER_RETURN_IF_ERR(readLoopFlag(more));
    n = prog_.nextStep(n, more);
  }
  return llvm::Error::success();
}

/// Captures the network into a graph after the eager warm-up run; where
/// the runtime refuses, runs stay stream launches (said once).
void CUDAFunction::captureGraph() {
  auto refuse = [&](const std::string &why) {
    api_.cudaGetLastError();
    llvm::errs() << "CUDA: no CUDA graph (" << why
                 << "); running with stream launches\n";
    useGraph_ = false;
  };
  // A graph replays one fixed sequence; a loop's trip count is known only
  // by reading its flag back after each test.
  if (!prog_.loops.empty())
    return refuse("the network has a loop kept as a loop, whose flag the "
                  "host reads after every test");
  cudaError_t rc =
      api_.cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal);
  if (rc != cudaSuccess)
    return refuse("starting the capture: " + statusText(api_, rc));
  llvm::Error err = enqueue();
  cudaGraph_t graph = nullptr;
  rc = api_.cudaStreamEndCapture(stream_, &graph);
  if (err) {
    if (graph)
      api_.cudaGraphDestroy(graph);
    return refuse("capturing: " + llvm::toString(std::move(err)));
  }
  if (rc != cudaSuccess)
    return refuse("capturing: " + statusText(api_, rc));
  rc = api_.cudaGraphInstantiate(&exec_, graph, 0);
  api_.cudaGraphDestroy(graph);
  if (rc != cudaSuccess) {
    exec_ = nullptr;
    refuse("instantiating: " + statusText(api_, rc));
  }
}

llvm::Error CUDAFunction::run(Bindings &b) {
  EMBER_RETURN_IF_ERR(copyInputsToRegion(M_, *F_, plan_, b, host_.data()));
  EMBER_RETURN_IF_ERR(
      check(api_.cudaMemcpyAsync(regions_[1], host_.data(), host_.size(),
                                 cudaMemcpyHostToDevice, stream_),
            "uploading the inputs"));
  if (exec_)
    EMBER_RETURN_IF_ERR(
        check(api_.cudaGraphLaunch(exec_, stream_), "launching the graph"));
  else
    EMBER_RETURN_IF_ERR(enqueue());
  EMBER_RETURN_IF_ERR(
      check(api_.cudaMemcpyAsync(host_.data(), regions_[1], host_.size(),
                                 cudaMemcpyDeviceToHost, stream_),
            "downloading the outputs"));
  EMBER_RETURN_IF_ERR(check(api_.cudaStreamSynchronize(stream_),
                            syncEachStep_ ? "running the network"
                                          : "running the network (rerun "
                                            "with -cuda-sync-each-step to "
                                            "name the failing step)"));
  copyOutputsFromRegion(M_, *F_, plan_, b, host_.data());
  if (!warm_) {
    warm_ = true;
    if (useGraph_)
      captureGraph();
  }
  return llvm::Error::success();
}

llvm::Expected<std::unique_ptr<CompiledFunction>>
cuda::makeCUDAFunction(const CUDAApi &api, const Module &M,
                       std::shared_ptr<const IRFunction> F,
                       const MemoryPlan &plan, CUDAProgram prog, CUDASource src,
                       const CUDABinary &bin, const CUDACodegenOptions &opts) {
  auto fn = std::make_unique<CUDAFunction>(
      api, M, std::move(F), plan, std::move(prog), std::move(src), opts);
  EMBER_RETURN_IF_ERR(fn->init(bin));
  return fn;
}

/// The device's architecture as sm_XY, capped at what NVRTC knows (newer
/// GPUs JIT the PTX).
static llvm::Expected<std::string> deviceArch() {
  int major = 0, minor = 0;
  for (auto [attr, out] :
       {std::pair{cudaDevAttrComputeCapabilityMajor, &major},
        std::pair{cudaDevAttrComputeCapabilityMinor, &minor}})
    if (cudaError_t rc = cudaDeviceGetAttribute(out, attr, 0))
      return makeErrorF("CUDA: querying the device failed: {0}",
                        statusText(realCUDAApi(), rc));
  if (major > 12)
    major = 12, minor = 0;
  return "sm_" + std::to_string(major) + std::to_string(minor);
}

llvm::Expected<std::unique_ptr<CompiledFunction>>
CUDABackend::compile(const Module &M, std::shared_ptr<const IRFunction> F,
                     const MemoryPlan &plan, const CodegenOptions &opts) const {
  EMBER_RETURN_IF_ERR(checkForDevice());
  if (cudaError_t rc = cudaSetDevice(0))
    return makeErrorF("CUDA: selecting device 0 failed: {0}",
                      statusText(realCUDAApi(), rc));
  EMBER_ASSIGN_OR_RETURN(CUDAProgram prog, lowerForCUDA(*F, plan, opts.cuda));
  CUDASource src = renderCUDA(prog, "ember");
  EMBER_ASSIGN_OR_RETURN(std::string arch, deviceArch());
  EMBER_ASSIGN_OR_RETURN(CUDABinary bin,
                         compileWithNVRTC(src.text, arch, "ember_network"));
  return makeCUDAFunction(realCUDAApi(), M, std::move(F), plan, std::move(prog),
                          std::move(src), bin, opts.cuda);
}
