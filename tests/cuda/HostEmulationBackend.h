//===- HostEmulationBackend.h - CUDA kernels run on the host ---*- C++ -*-===//
#ifndef EMBER_TESTS_CUDA_HOSTEMULATIONBACKEND_H
#define EMBER_TESTS_CUDA_HOSTEMULATIONBACKEND_H

#include "llvm/Support/Error.h"

#include <string>

namespace ember {
namespace test {

/// Registers the test backends "CUDAHostEmu" (MatMul on cuBLASLt, Conv on
/// cuDNN where it can) and "CUDAHostEmuGen" (generated kernels only),
/// idempotent: the CUDA backend's lowering and renderer, each network
/// compiled by NVRTC for sm_90 (so it must compile for the GPU) and by the
/// host C++ compiler with HostEmulation.h, then run on the host; library
/// calls run LibOps.c against host stand-ins of cuBLASLt and cuDNN.
void registerCUDAHostEmulation();

/// Builds CUDA C \p source for the host with HostEmulation.h and returns
/// its dlopen handle (or an error naming the failed step).
llvm::Expected<void *> buildCUDAForHost(const std::string &source);

} // namespace test
} // namespace ember

#endif
