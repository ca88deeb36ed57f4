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
/// host C++ compiler with HostEmulation.h, then run on the host by the
/// backend's in-process runtime over host stand-ins of cudart, cuBLASLt and
/// cuDNN. The stand-ins refuse what $EMBER_FAKE_REFUSE lists
/// (fake_cudart.c).
void registerCUDAHostEmulation();

/// Builds CUDA C \p source for the host with HostEmulation.h and returns
/// its dlopen handle (or an error naming the failed step).
llvm::Expected<void *> buildCUDAForHost(const std::string &source);

/// Counters of the stand-in runtime (fake_cudart.c ember_fake_stat): 0
/// cubin loads, 1 PTX loads, 2 stream launches, 3 graph launches, 4 graph
/// nodes replayed, 5 captures that made a graph.
int fakeCUDAStat(int which);
void resetFakeCUDAStats();

} // namespace test
} // namespace ember

#endif
