//===- CUDA.h - Internals of the CUDA backend ------------------*- C++ -*-===//
//
// The CUDA backend renders the shared kernel IR to CUDA C (one source per
// network), compiles it in process with NVRTC and launches the kernels
// through the CUDA runtime, or emits a bundle whose host code calls the
// runtime directly. See docs/CUDA.md.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_BACKENDS_CUDA_CUDA_H
#define EMBER_BACKENDS_CUDA_CUDA_H

#include "ember/Backend/Backend.h"
#include "ember/Kernel/Kernel.h"

namespace ember {
namespace cuda {

/// Threads per block of every generated kernel.
constexpr int64_t kBlockSize = 256;
/// The most blocks a launch uses; kernels loop over the rest (grid-stride).
constexpr int64_t kMaxBlocks = 65536;

/// A call into cuBLASLt or cuDNN: the int64 descriptor of
/// backends/CUDA/host/LibOps.h.
struct LibOp {
  std::string name;
  std::vector<int64_t> desc;
  /// The generated kernel (into CUDAProgram::kernels, launched by no step)
  /// that computes the same result, run instead when the library cannot
  /// plan the op on the GPU at hand.
  unsigned fallback = 0;
};

/// One step of a network: a generated kernel or a library op.
struct Step {
  bool isLibrary = false;
  unsigned index = 0; ///< Into CUDAProgram::kernels or ::libOps.
};

/// What a CUDA bundle's entry returns when run-time check k failed: this
/// plus k, above the cudaError_t codes and the 10000 + cublasStatus_t /
/// 20000 + cudnnStatus_t the library ops return (docs/Bundle.md "Return
/// codes").
constexpr int kCUDACheckCodeBase = 30000;

/// A loop kept as a loop (docs/ControlFlow.md): the steps of its
/// loopbegin and loopend kernels, which both write the loop flag.
struct StepLoop {
  size_t begin = 0, end = 0;
};

/// A network ready for rendering: kernels, library ops, their order, the
/// constant image, sizes and the choices made per heavy op (reported with
/// -verbose).
struct CUDAProgram {
  std::vector<kir::Kernel> kernels;
  std::vector<LibOp> libOps;
  std::vector<Step> steps;
  /// The loops, paired once over the steps (nested loops included). After
  /// the loopbegin or loopend step of a loop, the host reads the one-byte
  /// flag at loopFlagOffset of the activation region and goes on at the
  /// step after the loopbegin (1: run the body) or after the loopend (0).
  std::vector<StepLoop> loops;
  /// Per step: the index into loops of the loop it tests, or -1.
  std::vector<int> testOf;
  uint64_t loopFlagOffset = 0;
  /// The run-time check status in the mutable region, or -1 without checks
  /// (kir::checkStatusOffset): the bundle entry reads it back at its end.
  int64_t checkOffset = -1;
  std::vector<uint8_t> constants;
  size_t mutableSize = 0;
  size_t activationSize = 0;
  std::vector<std::string> choices;
  bool usesCublasLt() const;
  bool usesCudnn() const;
  /// The step after step \p n when its loop flag reads \p more (any flag
  /// where \p n tests no loop).
  size_t nextStep(size_t n, bool more) const {
    if (!testsLoop(n))
      return n + 1;
    const StepLoop &l = loops[size_t(testOf[n])];
    return more ? l.begin + 1 : l.end + 1;
  }
  /// True if step \p n is a loopbegin or loopend (writes the loop flag).
  bool testsLoop(size_t n) const { return n < testOf.size() && testOf[n] >= 0; }
};

/// True if the CUDA backend can run node \p n.
bool cudaSupports(const Node &n);

/// Lowers planned IR: the shared lowering for everything, MatMul to
/// cuBLASLt (absorbing a following bias Add and ReLU into its epilogue
/// where it can) and Conv to cuDNN or to a generated direct convolution,
/// as \p opts and the op's parameters allow.
llvm::Expected<CUDAProgram> lowerForCUDA(const IRFunction &F,
                                         const MemoryPlan &plan,
                                         const CUDACodegenOptions &opts = {});

/// How to launch one rendered kernel.
struct LaunchInfo {
  std::string symbol; ///< extern "C" name of the __global__ function.
  int64_t blocks = 1;
  int64_t threads = 1; ///< Per block.
  /// True if the kernel uses shared memory and barriers (the tiled
  /// kernels): the host emulation runs its blocks' threads as fibers.
  bool usesSharedMemory = false;
};

/// CUDA C for a whole network: a small prelude, then one kernel
/// `extern "C" __global__ void SYM(uint8_t *constants, uint8_t *mutables,
/// uint8_t *activations)` per kernel, in launch order.
struct CUDASource {
  std::string text;
  std::vector<LaunchInfo> launches;
};

/// Renders every kernel of \p prog. \p prefix starts every symbol.
CUDASource renderCUDA(const CUDAProgram &prog, llvm::StringRef prefix);

/// NVRTC output for one architecture.
struct CUDABinary {
  std::string arch;        ///< "sm_90", ...
  std::string ptx;         ///< Always present (JIT-able by newer GPUs).
  std::vector<char> cubin; ///< SASS for arch.
  double compileSeconds = 0;
};

/// True if \p arch names a real architecture, "sm_" followed by digits.
bool isValidArch(llvm::StringRef arch);

/// Compiles \p source with NVRTC for \p arch (e.g. "sm_90").
llvm::Expected<CUDABinary> compileWithNVRTC(const std::string &source,
                                            llvm::StringRef arch,
                                            llvm::StringRef name);

/// The number of CUDA devices, or an error "no CUDA device is present"
/// (also when the driver is missing).
llvm::Error checkForDevice();

struct CUDAApi;

/// A network ready to run on the device behind \p api: loads \p bin,
/// plans the library ops (falling back to their generated kernels where a
/// library refuses) and uploads the constants. Runs are eager first, then
/// replayed from a CUDA graph where \p opts allow and capture succeeds.
llvm::Expected<std::unique_ptr<CompiledFunction>>
makeCUDAFunction(const CUDAApi &api, const Module &M,
                 std::shared_ptr<const IRFunction> F, const MemoryPlan &plan,
                 CUDAProgram prog, CUDASource src, const CUDABinary &bin,
                 const CUDACodegenOptions &opts);

/// "cudaErrorX: text", "CUBLAS_STATUS_X" or "CUDNN_STATUS_X" for a status
/// of the runtime or of the library ops (see host/LibOps.h).
std::string statusText(const CUDAApi &api, int rc);

/// Writes the CUDA bundle (see docs/Bundle.md).
llvm::Error writeCUDABundle(const IRFunction &F, const MemoryPlan &plan,
                            const CUDAProgram &prog, const CUDASource &src,
                            const CUDABinary &bin, const BundleOptions &opts);

/// The architecture bundles target unless -cuda-arch says otherwise.
constexpr const char *kDefaultArch = "sm_90";

} // namespace cuda

/// The CUDA backend: kernels rendered to CUDA C, NVRTC, the CUDA runtime.
class CUDABackend final : public Backend {
public:
  llvm::StringRef getName() const override { return "CUDA"; }
  bool isOpSupported(const Node &n) const override;
  bool shouldLower(const Node &n) const override;
  bool supportsFusedActivation(FusedActivation act) const override;
  bool supportsConvResidual() const override { return true; }
  llvm::Expected<std::unique_ptr<CompiledFunction>>
  compile(const Module &M, std::shared_ptr<const IRFunction> F,
          const MemoryPlan &plan, const CodegenOptions &opts) const override;
  llvm::Error saveBundle(const Module &M, const IRFunction &F,
                         const MemoryPlan &plan,
                         const BundleOptions &opts) const override;
};

} // namespace ember

#endif // EMBER_BACKENDS_CUDA_CUDA_H
