//===- libjit.cpp - CPU library kernels, compiled to bitcode --------------===//
//
// Compiled at build time by clang-19 to LLVM bitcode (one file per target),
// embedded in the compiler and linked into every network's module. The
// kernels are always inlined, so each call site is specialized for its
// constant shapes and then vectorized for the target by the O3 pipeline.
// No libc beyond libm is used: bundles stay dependency-free.
//
//===----------------------------------------------------------------------===//
#include <stdint.h>

#define EMBER_KERNEL extern "C" __attribute__((always_inline, used))
#define EMBER_HELPER static __attribute__((always_inline)) inline

namespace {
/// Mirrors ember::FusedActivation (include/ember/Graph/OpInfo.h).
enum Act : int64_t { None, Relu, Clip, Sigmoid, HardSwish, LeakyRelu };
} // namespace

EMBER_HELPER float activate(int64_t act, float x, float alpha, float beta) {
  switch (act) {
  case Relu:
    return x > 0.f ? x : 0.f;
  case Clip:
    return x < alpha ? alpha : (x > beta ? beta : x);
  case Sigmoid:
    return 1.f / (1.f + __builtin_expf(-x));
  case HardSwish: {
    float t = x * alpha + beta;
    t = t < 0.f ? 0.f : (t > 1.f ? 1.f : t);
    return x * t;
  }
  case LeakyRelu:
    return x >= 0.f ? x : alpha * x;
  default:
    return x;
  }
}

EMBER_HELPER int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
EMBER_HELPER int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

/// Rows [rowBegin, rowEnd) of C[m x n] = A[m x k] * B[k x n], row-major.
/// Four rows and 64 columns are accumulated at a time.
EMBER_KERNEL void ember_matmul_f32(float *c, const float *a, const float *b,
                                   int64_t m, int64_t n, int64_t k,
                                   int64_t rowBegin, int64_t rowEnd) {
  constexpr int64_t RB = 4, CB = 64;
  for (int64_t i0 = rowBegin; i0 < rowEnd; i0 += RB) {
    int64_t rows = min64(RB, rowEnd - i0);
    for (int64_t j0 = 0; j0 < n; j0 += CB) {
      int64_t cols = min64(CB, n - j0);
      float acc[RB][CB];
      for (int64_t r = 0; r < RB; ++r)
        for (int64_t j = 0; j < CB; ++j)
          acc[r][j] = 0.f;
      if (rows == RB && cols == CB) {
        for (int64_t p = 0; p < k; ++p) {
          const float *brow = b + p * n + j0;
          for (int64_t r = 0; r < RB; ++r) {
            float av = a[(i0 + r) * k + p];
            for (int64_t j = 0; j < CB; ++j)
              acc[r][j] += av * brow[j];
          }
        }
      } else {
        for (int64_t p = 0; p < k; ++p) {
          const float *brow = b + p * n + j0;
          for (int64_t r = 0; r < rows; ++r) {
            float av = a[(i0 + r) * k + p];
            for (int64_t j = 0; j < cols; ++j)
              acc[r][j] += av * brow[j];
          }
        }
      }
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t j = 0; j < cols; ++j)
          c[(i0 + r) * n + j0 + j] = acc[r][j];
    }
  }
}

/// One block of up to MB output channels of a 2-D NCHW convolution for
/// image \p img, with the fused epilogue y = act(conv + bias + residual).
/// The filter is packed per block as [cPerG][KH][KW][MB] (zero-padded
/// channels), block b covering channels g * mPerG + (b % nbg) * MB ...
EMBER_KERNEL void
ember_conv2d_f32(float *y, const float *x, const float *wp, const float *bias,
                 const float *res, int64_t C, int64_t H, int64_t W, int64_t M,
                 int64_t KH, int64_t KW, int64_t OH, int64_t OW, int64_t sh,
                 int64_t sw, int64_t pt, int64_t pl, int64_t dh, int64_t dw,
                 int64_t group, int64_t MB, int64_t act, float alpha,
                 float beta, int64_t img, int64_t blk) {
  constexpr int64_t MBMAX = 8, TW = 64;
  int64_t cPerG = C / group, mPerG = M / group;
  int64_t nbg = (mPerG + MB - 1) / MB;
  int64_t g = blk / nbg, m0 = g * mPerG + (blk % nbg) * MB;
  int64_t cnt = min64(MB, mPerG - (blk % nbg) * MB);
  const float *wblk = wp + blk * cPerG * KH * KW * MB;
  const float *ximg = x + (img * C + g * cPerG) * H * W;
  for (int64_t oh = 0; oh < OH; ++oh) {
    for (int64_t ow0 = 0; ow0 < OW; ow0 += TW) {
      int64_t tw = min64(TW, OW - ow0);
      float acc[MBMAX][TW];
      for (int64_t m = 0; m < MB; ++m)
        for (int64_t j = 0; j < TW; ++j)
          acc[m][j] = 0.f;
      for (int64_t c = 0; c < cPerG; ++c) {
        const float *xc = ximg + c * H * W;
        for (int64_t kh = 0; kh < KH; ++kh) {
          int64_t ih = oh * sh - pt + kh * dh;
          if (ih < 0 || ih >= H)
            continue;
          const float *xrow = xc + ih * W;
          for (int64_t kw = 0; kw < KW; ++kw) {
            const float *wv = wblk + ((c * KH + kh) * KW + kw) * MB;
            int64_t off = kw * dw - pl;
            // Valid j: 0 <= (ow0 + j) * sw + off < W.
            int64_t lo = max64(0, (-off - ow0 * sw + sw - 1) / sw);
            if (-off - ow0 * sw <= 0)
              lo = 0;
            int64_t hi = min64(tw, (W - off - ow0 * sw + sw - 1) / sw);
            for (int64_t j = lo; j < hi; ++j) {
              float xv = xrow[(ow0 + j) * sw + off];
              for (int64_t m = 0; m < MB; ++m)
                acc[m][j] += wv[m] * xv;
            }
          }
        }
      }
      for (int64_t m = 0; m < cnt; ++m) {
        int64_t at = ((img * M + m0 + m) * OH + oh) * OW + ow0;
        float bv = bias[m0 + m];
        for (int64_t j = 0; j < tw; ++j) {
          float v = acc[m][j] + bv;
          if (res)
            v += res[at + j];
          y[at + j] = activate(act, v, alpha, beta);
        }
      }
    }
  }
}

//===----------------------------------------------------------------------===//
// The threaded entry's runtime: each parallel kernel's range is split
// statically into one slice per thread; threads are created for the call
// and joined before it returns (no pool survives). pthread symbols are weak
// so that bundles which only use the single-threaded entry need no
// threading library; without them, work runs on the calling thread.
//===----------------------------------------------------------------------===//

typedef unsigned long ember_thread_t; // pthread_t on Linux (x86_64, aarch64)
extern "C" __attribute__((weak)) int
pthread_create(ember_thread_t *, const void *, void *(*)(void *), void *);
extern "C" __attribute__((weak)) int pthread_join(ember_thread_t, void **);

namespace {
typedef void (*KernelFn)(uint8_t *, uint8_t *, uint8_t *, int64_t, int64_t);
struct Task {
  KernelFn fn;
  uint8_t *c, *m, *a;
  int64_t begin, end;
};
void *runTask(void *p) {
  Task *t = (Task *)p;
  t->fn(t->c, t->m, t->a, t->begin, t->end);
  return nullptr;
}
} // namespace

extern "C" void ember_parallel_run(KernelFn fn, uint8_t *c, uint8_t *m,
                                   uint8_t *a, int64_t extent,
                                   int64_t numThreads) {
  constexpr int64_t kMaxThreads = 256;
  int64_t n = min64(min64(numThreads, extent), kMaxThreads);
  if (n <= 1 || !pthread_create || !pthread_join) {
    fn(c, m, a, 0, extent);
    return;
  }
  Task tasks[kMaxThreads];
  ember_thread_t threads[kMaxThreads];
  bool started[kMaxThreads];
  for (int64_t t = 0; t < n; ++t)
    tasks[t] = Task{fn, c, m, a, extent * t / n, extent * (t + 1) / n};
  for (int64_t t = 1; t < n; ++t) {
    started[t] = pthread_create(&threads[t], nullptr, runTask, &tasks[t]) == 0;
    if (!started[t])
      runTask(&tasks[t]);
  }
  runTask(&tasks[0]);
  for (int64_t t = 1; t < n; ++t)
    if (started[t])
      pthread_join(threads[t], nullptr);
}
