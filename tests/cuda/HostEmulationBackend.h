//===- HostEmulationBackend.h - CUDA kernels run on the host ---*- C++ -*-===//
#ifndef EMBER_TESTS_CUDA_HOSTEMULATIONBACKEND_H
#define EMBER_TESTS_CUDA_HOSTEMULATIONBACKEND_H

namespace ember {
namespace test {

/// Registers the test backend "CUDAHostEmu" (idempotent): the CUDA
/// backend's lowering and renderer, each network compiled by NVRTC for
/// sm_90 (so it must compile for the GPU) and by the host C++ compiler with
/// HostEmulation.h, then run on the host.
void registerCUDAHostEmulation();

} // namespace test
} // namespace ember

#endif
