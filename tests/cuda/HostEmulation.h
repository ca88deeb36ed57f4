//===- HostEmulation.h - Generated CUDA C on the host (tests only) -*- C++
//-*-===//
//
// Defines the CUDA keywords and built-in variables the CUDA backend's
// generated source uses, so a C++ compiler can build it for the host. A
// launch runs every (block, thread) pair one after the other, which is
// exact for kernels without shared memory or barriers. A kernel marked
// EMBER_EMU_COOPERATIVE (the tiled kernels) is launched by
// ember_emu_launch_cooperative instead: the threads of a block run as
// fibers, each __syncthreads() switches to the next thread, and a barrier
// is passed when every thread of the block has reached it; __shared__
// variables are statics, which the threads of the one running block share.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_TESTS_CUDA_HOSTEMULATION_H
#define EMBER_TESTS_CUDA_HOSTEMULATION_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <ucontext.h>

#include <vector>

#define EMBER_HOST_EMULATION 1
#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(n)
#define __shared__ static

// The prelude's functions as the lowering calls them (a source built here
// ends with EMBER_EMU_CHECK_DEVICE_ABI).
#include "../../backends/CUDA/DeviceABI.h"

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

/// A thread of a cooperative launch.
struct EmberFiber {
  ucontext_t ctx;
  bool done;
};
static ucontext_t emberScheduler;
static EmberFiber *emberRunning; ///< Null outside cooperative launches.
static EmberKernelFn emberFn;
static unsigned char *emberRegions[3];

inline void __syncthreads() {
  if (emberRunning)
    swapcontext(&emberRunning->ctx, &emberScheduler);
}

static void emberFiberMain() {
  emberFn(emberRegions[0], emberRegions[1], emberRegions[2]);
  emberRunning->done = true; // Returns to emberScheduler (uc_link).
}

/// One warp's m16n8k8 product of TF32 operands (mma.sync's fragment
/// layout: lane l holds A(l/4 + 8(r%2), l%4 + 4(r/2)), B(l%4 + 4r, l/4),
/// D(l/4 + 8(r/2), 2(l%4) + r%2)): every lane deposits its fragments,
/// meets the block at a barrier (the tiled kernels issue their products
/// uniformly), and sums its four results in fp32.
static float emberMmaA[32][16][8], emberMmaB[32][8][8];
inline void ember_emu_mma_m16n8k8(float d[4], const unsigned a[4],
                                  const unsigned b[2]) {
  unsigned lane = threadIdx.x % 32, w = threadIdx.x / 32;
  unsigned g = lane / 4, t = lane % 4;
  for (unsigned r = 0; r < 4; ++r)
    __builtin_memcpy(&emberMmaA[w][g + 8 * (r % 2)][t + 4 * (r / 2)], &a[r], 4);
  for (unsigned r = 0; r < 2; ++r)
    __builtin_memcpy(&emberMmaB[w][t + 4 * r][g], &b[r], 4);
  __syncthreads();
  for (unsigned r = 0; r < 4; ++r) {
    unsigned row = g + 8 * (r / 2), col = 2 * t + r % 2;
    float sum = d[r];
    for (unsigned k = 0; k < 8; ++k)
      sum += emberMmaA[w][row][k] * emberMmaB[w][k][col];
    d[r] = sum;
  }
  __syncthreads();
}

/// Runs one block of a cooperative launch: every thread up to its next
/// barrier, round after round, until all have returned. A round in which
/// some threads return and others wait at a barrier is a divergent
/// barrier (undefined on the GPU): reported and aborted.
static void emberRunBlock(std::vector<EmberFiber> &fibers,
                          std::vector<char> &stacks, size_t stack) {
  unsigned n = blockDim.x;
  for (unsigned t = 0; t < n; ++t) {
    EmberFiber &f = fibers[t];
    getcontext(&f.ctx);
    f.ctx.uc_stack.ss_sp = stacks.data() + t * stack;
    f.ctx.uc_stack.ss_size = stack;
    f.ctx.uc_link = &emberScheduler;
    f.done = false;
    makecontext(&f.ctx, emberFiberMain, 0);
  }
  for (unsigned live = n; live;) {
    unsigned finished = 0;
    for (unsigned t = 0; t < n; ++t) {
      if (fibers[t].done)
        continue;
      threadIdx = {t, 0, 0};
      emberRunning = &fibers[t];
      swapcontext(&emberScheduler, &fibers[t].ctx);
      finished += fibers[t].done;
    }
    if (finished && finished != live) {
      fprintf(stderr, "host emulation: divergent __syncthreads in block %u\n",
              blockIdx.x);
      abort();
    }
    live -= finished;
  }
  emberRunning = nullptr;
}

/// Runs \p k as a launch of \p blocks x \p threads whose threads meet at
/// barriers.
extern "C" void ember_emu_launch_cooperative(EmberKernelFn k, long long blocks,
                                             long long threads,
                                             unsigned char *r0,
                                             unsigned char *r1,
                                             unsigned char *r2) {
  const size_t stack = 64 * 1024;
  std::vector<EmberFiber> fibers(threads);
  std::vector<char> stacks(size_t(threads) * stack);
  gridDim = {unsigned(blocks), 1, 1};
  blockDim = {unsigned(threads), 1, 1};
  emberFn = k;
  emberRegions[0] = r0, emberRegions[1] = r1, emberRegions[2] = r2;
  for (long long b = 0; b < blocks; ++b) {
    blockIdx = {unsigned(b), 0, 0};
    emberRunBlock(fibers, stacks, stack);
  }
}

#define EMBER_EMU_COOPERATIVE(sym) extern "C" const int sym##_cooperative = 1;

#endif
