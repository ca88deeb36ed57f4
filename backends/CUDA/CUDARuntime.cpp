//===- CUDARuntime.cpp - In-process runs through the CUDA runtime ---------===//
//
// One device allocation per region (constants uploaded once, the mutable
// region for inputs and outputs, one activation arena as planned by the
// MemoryPlanner), one stream, and by default a CUDA graph captured on the
// first run and replayed afterwards (-cuda-graph=0, CUDACodegenOptions::graph
// false, launches kernel by kernel instead).
//
//===----------------------------------------------------------------------===//
#include "CUDA.h"
#include "host/LibOps.h"

#include "ember/Base/Error.h"

#include <cuda_runtime_api.h>

extern "C" const char *ember_lib_load(int cublasLt, int cudnn);

using namespace ember;
using namespace ember::cuda;

static llvm::Error cudaError(cudaError_t rc, llvm::StringRef what) {
  return makeErrorF("CUDA: {0} failed: {1}", what, cudaGetErrorString(rc));
}

#define EMBER_CUDA_CHECK(call, what)                                           \
  do {                                                                         \
    cudaError_t rc_ = (call);                                                  \
    if (rc_ != cudaSuccess)                                                    \
      return cudaError(rc_, what);                                             \
  } while (0)

llvm::Error cuda::checkForDevice() {
  int count = 0; // untouched when the driver is missing
  if (cudaGetDeviceCount(&count) != cudaSuccess || count <= 0) {
    cudaGetLastError(); // clear the sticky error
    return makeError("no CUDA device is present");
  }
  return llvm::Error::success();
}

namespace {
/// A network loaded on the device.
class CUDAFunction final : public CompiledFunction {
public:
  CUDAFunction(const Module &M, std::shared_ptr<const IRFunction> F,
               const MemoryPlan &plan, CUDASource src, std::vector<Step> steps,
               std::vector<LibOp> libOps, bool useGraph)
      : M_(M), F_(std::move(F)), plan_(plan), src_(std::move(src)),
        steps_(std::move(steps)), libOps_(std::move(libOps)),
        useGraph_(useGraph) {}
  ~CUDAFunction() override {
    if (exec_)
      cudaGraphExecDestroy(exec_);
    for (size_t i = 0; i < plans_.size(); ++i)
      ember_lib_release(&plans_[i], descOf(i));
    ember_lib_destroy(&libCtx_);
    for (uint8_t *p : regions_)
      if (p)
        cudaFree(p);
    if (stream_)
      cudaStreamDestroy(stream_);
    if (lib_)
      cudaLibraryUnload(lib_);
  }

  /// Loads the code and allocates and fills the regions.
  llvm::Error init(const CUDABinary &bin, const std::vector<uint8_t> &consts);
  llvm::Error run(Bindings &b) override;

private:
  llvm::Error enqueue();
  const long long *descOf(size_t i) const {
    return reinterpret_cast<const long long *>(libOps_[i].desc.data());
  }

  const Module &M_;
  std::shared_ptr<const IRFunction> F_;
  MemoryPlan plan_;
  CUDASource src_;
  std::vector<Step> steps_;
  std::vector<LibOp> libOps_;
  EmberLibContext libCtx_ = {};
  std::vector<EmberLibPlan> plans_;
  bool useGraph_ = true;
  cudaLibrary_t lib_ = nullptr;
  std::vector<cudaKernel_t> kernels_;
  uint8_t *regions_[3] = {};
  cudaStream_t stream_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
  std::vector<uint8_t> host_;
};
} // namespace

llvm::Error CUDAFunction::init(const CUDABinary &bin,
                               const std::vector<uint8_t> &consts) {
  const void *image = bin.cubin.empty()
                          ? static_cast<const void *>(bin.ptx.c_str())
                          : bin.cubin.data();
  EMBER_CUDA_CHECK(cudaLibraryLoadData(&lib_, image, nullptr, nullptr, 0,
                                       nullptr, nullptr, 0),
                   "loading the kernels");
  for (const LaunchInfo &li : src_.launches) {
    cudaKernel_t k;
    EMBER_CUDA_CHECK(cudaLibraryGetKernel(&k, lib_, li.symbol.c_str()),
                     "finding kernel " + li.symbol);
    kernels_.push_back(k);
  }
  EMBER_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking),
                   "creating a stream");
  if (!libOps_.empty()) {
    bool lt = llvm::any_of(libOps_,
                           [](auto &o) { return o.desc[0] == EMBER_LIB_GEMM; });
    bool dnn = llvm::any_of(
        libOps_, [](auto &o) { return o.desc[0] == EMBER_LIB_CONV; });
    if (const char *err = ember_lib_load(lt, dnn))
      return makeErrorF("CUDA: {0}", err);
    plans_.resize(libOps_.size());
    for (size_t i = 0; i < libOps_.size(); ++i)
      if (int rc = ember_lib_plan(&libCtx_, &plans_[i], descOf(i)))
        return makeErrorF("CUDA: planning {0} failed with library status {1}",
                          libOps_[i].name, rc);
    if (int rc = ember_lib_finish(&libCtx_))
      return cudaError(cudaError_t(rc), "allocating the library workspace");
  }
  size_t sizes[3] = {consts.size(), plan_.mutableSize, plan_.activationSize};
  for (unsigned i = 0; i < 3; ++i)
    EMBER_CUDA_CHECK(cudaMalloc(reinterpret_cast<void **>(&regions_[i]),
                                std::max<size_t>(sizes[i], 64)),
                     "allocating device memory");
  EMBER_CUDA_CHECK(cudaMemcpy(regions_[0], consts.data(), consts.size(),
                              cudaMemcpyHostToDevice),
                   "uploading the constants");
  host_.assign(plan_.mutableSize, 0);
  return llvm::Error::success();
}

llvm::Error CUDAFunction::enqueue() {
  for (const Step &s : steps_) {
    size_t i = s.index;
    if (s.isLibrary) {
      if (int rc = ember_lib_run(&libCtx_, &plans_[i], descOf(i), regions_[0],
                                 regions_[1], regions_[2], stream_))
        return makeErrorF("CUDA: {0} failed with library status {1}",
                          libOps_[i].name, rc);
      continue;
    }
    const LaunchInfo &li = src_.launches[i];
    void *args[3] = {&regions_[0], &regions_[1], &regions_[2]};
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(unsigned(li.blocks));
    cfg.blockDim = dim3(unsigned(li.threads));
    cfg.stream = stream_;
    EMBER_CUDA_CHECK(cudaLaunchKernelExC(&cfg, (const void *)kernels_[i], args),
                     "launching " + li.symbol);
  }
  return llvm::Error::success();
}

llvm::Error CUDAFunction::run(Bindings &b) {
  EMBER_RETURN_IF_ERR(copyInputsToRegion(M_, *F_, plan_, b, host_.data()));
  EMBER_CUDA_CHECK(cudaMemcpyAsync(regions_[1], host_.data(), host_.size(),
                                   cudaMemcpyHostToDevice, stream_),
                   "uploading the inputs");
  if (useGraph_ && !exec_) {
    cudaGraph_t graph;
    EMBER_CUDA_CHECK(
        cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal),
        "starting graph capture");
    llvm::Error err = enqueue();
    cudaError_t rc = cudaStreamEndCapture(stream_, &graph);
    EMBER_RETURN_IF_ERR(std::move(err));
    if (rc != cudaSuccess)
      return cudaError(rc, "capturing the graph");
    rc = cudaGraphInstantiate(&exec_, graph, 0);
    cudaGraphDestroy(graph);
    if (rc != cudaSuccess)
      return cudaError(rc, "instantiating the graph");
  }
  if (exec_)
    EMBER_CUDA_CHECK(cudaGraphLaunch(exec_, stream_), "launching the graph");
  else
    EMBER_RETURN_IF_ERR(enqueue());
  EMBER_CUDA_CHECK(cudaMemcpyAsync(host_.data(), regions_[1], host_.size(),
                                   cudaMemcpyDeviceToHost, stream_),
                   "downloading the outputs");
  EMBER_CUDA_CHECK(cudaStreamSynchronize(stream_), "running the network");
  copyOutputsFromRegion(M_, *F_, plan_, b, host_.data());
  return llvm::Error::success();
}

/// The device's architecture as sm_XY, capped at what NVRTC knows (newer
/// GPUs JIT the PTX).
static llvm::Expected<std::string> deviceArch() {
  int major = 0, minor = 0;
  EMBER_CUDA_CHECK(
      cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0),
      "querying the device");
  EMBER_CUDA_CHECK(
      cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0),
      "querying the device");
  if (major > 12)
    major = 12, minor = 0;
  return "sm_" + std::to_string(major) + std::to_string(minor);
}

llvm::Expected<std::unique_ptr<CompiledFunction>>
CUDABackend::compile(const Module &M, std::shared_ptr<const IRFunction> F,
                     const MemoryPlan &plan, const CodegenOptions &opts) const {
  EMBER_RETURN_IF_ERR(checkForDevice());
  EMBER_CUDA_CHECK(cudaSetDevice(0), "selecting device 0");
  EMBER_ASSIGN_OR_RETURN(CUDAProgram prog, lowerForCUDA(*F, plan, opts.cuda));
  CUDASource src = renderCUDA(prog, "ember");
  EMBER_ASSIGN_OR_RETURN(std::string arch, deviceArch());
  EMBER_ASSIGN_OR_RETURN(CUDABinary bin,
                         compileWithNVRTC(src.text, arch, "ember_network"));
  auto fn = std::make_unique<CUDAFunction>(
      M, std::move(F), plan, std::move(src), std::move(prog.steps),
      std::move(prog.libOps), opts.cuda.graph);
  EMBER_RETURN_IF_ERR(fn->init(bin, prog.constants));
  return fn;
}
