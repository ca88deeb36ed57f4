//===- NVRTC.cpp - In-process CUDA C compilation --------------------------===//
//
// One NVRTC program per network (compiling kernels one by one would cost
// ~0.2 s each). The result keeps the PTX, which drivers of newer GPUs can
// JIT, and the cubin for the requested architecture.
//
//===----------------------------------------------------------------------===//
#include "CUDA.h"

#include "ember/Base/Error.h"

#include <nvrtc.h>

#include <cctype>
#include <chrono>

using namespace ember;
using namespace ember::cuda;

bool cuda::isValidArch(llvm::StringRef arch) {
  if (!arch.consume_front("sm_") || arch.empty())
    return false;
  if (arch.back() == 'a' || arch.back() == 'f') // sm_90a, sm_100f
    arch = arch.drop_back();
  return !arch.empty() && llvm::all_of(arch, [](char c) {
    return std::isdigit(static_cast<unsigned char>(c));
  });
}

/// An error unless this NVRTC supports \p arch (sm_NN[a|f]).
static llvm::Error checkSupported(llvm::StringRef arch) {
  unsigned sm = 0;
  arch.drop_front(3)
      .take_while([](char c) { return std::isdigit(c); })
      .getAsInteger(10, sm);
  int n = 0;
  if (nvrtcGetNumSupportedArchs(&n) != NVRTC_SUCCESS || n <= 0)
    return llvm::Error::success(); // let the compile report it
  std::vector<int> archs(n);
  nvrtcGetSupportedArchs(archs.data());
  if (llvm::is_contained(archs, int(sm)))
    return llvm::Error::success();
  return makeErrorF("-cuda-arch '{0}' is not supported by this NVRTC "
                    "(sm_{1} to sm_{2})",
                    arch, archs.front(), archs.back());
}

namespace {
/// Destroys an NVRTC program on scope exit.
struct ProgramGuard {
  nvrtcProgram prog = nullptr;
  ~ProgramGuard() {
    if (prog)
      nvrtcDestroyProgram(&prog);
  }
};
} // namespace

llvm::Expected<CUDABinary> cuda::compileWithNVRTC(const std::string &source,
                                                  llvm::StringRef arch,
                                                  llvm::StringRef name) {
  if (!isValidArch(arch))
    return makeErrorF("-cuda-arch '{0}' is not an architecture like sm_90",
                      arch);
  EMBER_RETURN_IF_ERR(checkSupported(arch));
  auto start = std::chrono::steady_clock::now();
  ProgramGuard g;
  std::string file = (name + ".cu").str();
  if (nvrtcCreateProgram(&g.prog, source.c_str(), file.c_str(), 0, nullptr,
                         nullptr) != NVRTC_SUCCESS)
    return makeError("NVRTC: cannot create a program");
  std::string archOpt = ("--gpu-architecture=" + arch).str();
  const char *opts[] = {archOpt.c_str(), "--std=c++17", "-default-device",
                        "--fmad=true"};
  nvrtcResult rc = nvrtcCompileProgram(g.prog, 4, opts);
  if (rc != NVRTC_SUCCESS) {
    size_t n = 0;
    nvrtcGetProgramLogSize(g.prog, &n);
    std::string log(n, '\0');
    nvrtcGetProgramLog(g.prog, log.data());
    return makeErrorF("NVRTC failed to compile '{0}' for {1}: {2}\n{3}", file,
                      arch, nvrtcGetErrorString(rc), log);
  }
  CUDABinary bin;
  bin.arch = arch.str();
  size_t n = 0;
  nvrtcGetPTXSize(g.prog, &n);
  bin.ptx.resize(n);
  nvrtcGetPTX(g.prog, bin.ptx.data());
  if (!bin.ptx.empty() && bin.ptx.back() == '\0')
    bin.ptx.pop_back();
  nvrtcGetCUBINSize(g.prog, &n);
  bin.cubin.resize(n);
  if (n)
    nvrtcGetCUBIN(g.prog, bin.cubin.data());
  bin.compileSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  return bin;
}
