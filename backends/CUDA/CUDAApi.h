//===- CUDAApi.h - The runtime calls of in-process runs ---------*- C++ -*-===//
//
// In-process runs reach the CUDA runtime and the library ops through this
// table: the real backend fills it with cudart and the dlopen'ed LibOps
// code; the host-emulation tests fill it from the host stand-ins
// (tests/cuda/fake_cudart.c and friends), so the very code that runs on a
// GPU (warm-up, capture and its fallback, library fallbacks, per-step
// synchronization) also runs in ctest.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_BACKENDS_CUDA_CUDAAPI_H
#define EMBER_BACKENDS_CUDA_CUDAAPI_H

#include "host/LibOps.h"

#include <cuda_runtime_api.h>

namespace ember {
namespace cuda {

/// The runtime functions in-process runs call.
#define EMBER_CUDA_API_FNS(X)                                                  \
  X(cudaLibraryLoadData)                                                       \
  X(cudaLibraryGetKernel)                                                      \
  X(cudaLibraryUnload)                                                         \
  X(cudaStreamCreateWithFlags)                                                 \
  X(cudaStreamDestroy)                                                         \
  X(cudaStreamSynchronize)                                                     \
  X(cudaMalloc)                                                                \
  X(cudaFree)                                                                  \
  X(cudaMemcpy)                                                                \
  X(cudaMemcpyAsync)                                                           \
  X(cudaLaunchKernelExC)                                                       \
  X(cudaStreamBeginCapture)                                                    \
  X(cudaStreamEndCapture)                                                      \
  X(cudaGraphInstantiate)                                                      \
  X(cudaGraphLaunch)                                                           \
  X(cudaGraphDestroy)                                                          \
  X(cudaGraphExecDestroy)                                                      \
  X(cudaGetLastError)                                                          \
  X(cudaGetErrorName)                                                          \
  X(cudaGetErrorString)

struct CUDAApi {
#define EMBER_API_FIELD(f) decltype(&::f) f = nullptr;
  EMBER_CUDA_API_FNS(EMBER_API_FIELD)
#undef EMBER_API_FIELD
  /// LibOps.h; load returns NULL or why a library cannot be loaded.
  const char *(*libLoad)(int cublasLt, int cudnn) = nullptr;
  decltype(&ember_lib_plan) libPlan = nullptr;
  decltype(&ember_lib_finish) libFinish = nullptr;
  decltype(&ember_lib_run) libRun = nullptr;
  decltype(&ember_lib_release) libRelease = nullptr;
  decltype(&ember_lib_destroy) libDestroy = nullptr;
};

/// The CUDA runtime linked into the compiler and LibOps through dlopen.
const CUDAApi &realCUDAApi();

} // namespace cuda
} // namespace ember

#endif // EMBER_BACKENDS_CUDA_CUDAAPI_H
