//===- HostEmulation.h - Generated CUDA C on the host (tests only) -*- C++
//-*-===//
//
// Defines the CUDA keywords and built-in variables the CUDA backend's
// generated source uses, so a C++ compiler can build it for the host. A
// launch runs every (block, thread) pair one after the other, which is
// exact for kernels without shared memory or barriers (all of ours).
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_TESTS_CUDA_HOSTEMULATION_H
#define EMBER_TESTS_CUDA_HOSTEMULATION_H

#include <math.h>

#define EMBER_HOST_EMULATION 1
#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(n)

/// CUDA's dim3, as far as kernels read it.
struct EmberDim3 {
  unsigned x, y, z;
};
static EmberDim3 blockIdx, threadIdx, blockDim, gridDim;

/// A generated kernel's signature.
typedef void (*EmberKernelFn)(unsigned char *, unsigned char *,
                              unsigned char *);

/// Runs \p k as a launch of \p blocks x \p threads.
extern "C" void ember_emu_launch(EmberKernelFn k, long long blocks,
                                 long long threads, unsigned char *r0,
                                 unsigned char *r1, unsigned char *r2) {
  gridDim = {unsigned(blocks), 1, 1};
  blockDim = {unsigned(threads), 1, 1};
  for (long long b = 0; b < blocks; ++b)
    for (long long t = 0; t < threads; ++t) {
      blockIdx = {unsigned(b), 0, 0};
      threadIdx = {unsigned(t), 0, 0};
      k(r0, r1, r2);
    }
}

#endif
