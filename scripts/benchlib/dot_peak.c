/* Measures the peak throughput of one core (and of N threads) for the
 * dot-product instructions Ember's reduced-precision kernels use:
 * "int8" vpdpbusd (AVX512-VNNI; 64 multiply-adds per 512-bit instruction)
 * and "bf16" vdpbf16ps (AVX512-BF16; 32 per instruction), with independent
 * accumulator chains, counting 2 operations per multiply-add as the
 * profiler does. Build: clang-19 -O2 -march=native -pthread dot_peak.c
 * Usage: dot_peak int8|bf16 THREADS -> prints GOP/s (all threads
 * together), or 0 when the compiler's target lacks the extension (the
 * report then divides by the fp32 FMA peak and says so). */
#include <immintrin.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHAINS 12
static const long kIters = 200000000L / CHAINS;
static int gInt8;

#if defined(__AVX512VNNI__) && defined(__AVX512BF16__)
#define HAVE_INT8 1
#define HAVE_BF16 1
#elif defined(__AVX512VNNI__)
#define HAVE_INT8 1
#define HAVE_BF16 0
#else
#define HAVE_INT8 0
#define HAVE_BF16 0
#endif

static void *run(void *out) {
#if HAVE_INT8
  __m512i acc[CHAINS];
  __m512i a = _mm512_set1_epi8(1), b = _mm512_set1_epi8(2);
  for (int c = 0; c < CHAINS; ++c)
    acc[c] = _mm512_set1_epi32(c);
  if (gInt8) {
    for (long i = 0; i < kIters; ++i)
      for (int c = 0; c < CHAINS; ++c)
        acc[c] = _mm512_dpbusd_epi32(acc[c], a, b);
  }
#if HAVE_BF16
  else {
    __m512 f[CHAINS];
    __m512bh x = (__m512bh)_mm512_set1_epi16(0x3f80); /* 1.0 */
    __m512bh y = (__m512bh)_mm512_set1_epi16(0x3380); /* 6e-8 */
    for (int c = 0; c < CHAINS; ++c)
      f[c] = _mm512_set1_ps((float)c);
    for (long i = 0; i < kIters; ++i)
      for (int c = 0; c < CHAINS; ++c)
        f[c] = _mm512_dpbf16_ps(f[c], x, y);
    for (int c = 0; c < CHAINS; ++c)
      acc[c] = _mm512_add_epi32(acc[c], _mm512_cvttps_epi32(f[c]));
  }
#endif
  __m512i s = acc[0];
  for (int c = 1; c < CHAINS; ++c)
    s = _mm512_add_epi32(s, acc[c]);
  *(int *)out = _mm512_reduce_add_epi32(s);
#else
  *(int *)out = 0;
#endif
  return NULL;
}

int main(int argc, char **argv) {
  if (argc < 3 || (strcmp(argv[1], "int8") && strcmp(argv[1], "bf16"))) {
    fprintf(stderr, "usage: dot_peak int8|bf16 THREADS\n");
    return 2;
  }
  gInt8 = !strcmp(argv[1], "int8");
  if (gInt8 ? !HAVE_INT8 : !HAVE_BF16) {
    printf("0\n");
    return 0;
  }
  int threads = atoi(argv[2]);
  if (threads < 1 || threads > 64)
    threads = 1;
  pthread_t tid[64];
  int sink[64];
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (int t = 0; t < threads; ++t)
    pthread_create(&tid[t], NULL, run, &sink[t]);
  for (int t = 0; t < threads; ++t)
    pthread_join(tid[t], NULL);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double s = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
  double macs = gInt8 ? 64 : 32;
  double ops = 2.0 * macs * CHAINS * (double)kIters * threads;
  printf("%.1f\n", ops / s / 1e9 + 0 * sink[0]);
  return 0;
}
