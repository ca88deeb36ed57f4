/* Measures peak fp32 FMA throughput of one core (and of N threads) with
 * independent vector FMA chains, so the figure is the machine's, not a
 * guess. Build: clang-19 -O2 -march=native -pthread fma_peak.c
 * Usage: fma_peak THREADS [cpu] -> prints GFLOP/s (all threads together);
 * with "cpu", GFLOP per second of CPU time the process used (the rate of
 * one core while it runs, steady on a loaded machine). */
#include <immintrin.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if defined(__AVX512F__)
typedef __m512 vec;
#define VLEN 16
#define SET1 _mm512_set1_ps
#define FMA _mm512_fmadd_ps
#define ADD _mm512_add_ps
#define RED(x) _mm512_reduce_add_ps(x)
#else
typedef __m256 vec;
#define VLEN 8
#define SET1 _mm256_set1_ps
#define FMA _mm256_fmadd_ps
#define ADD _mm256_add_ps
static float RED(__m256 x) {
  float t[8];
  _mm256_storeu_ps(t, x);
  return t[0] + t[1] + t[2] + t[3] + t[4] + t[5] + t[6] + t[7];
}
#endif

#define CHAINS 12
static const long kIters = 200000000L / CHAINS;

static void *run(void *out) {
  vec acc[CHAINS];
  vec a = SET1(0.999999f), b = SET1(1e-7f);
  for (int c = 0; c < CHAINS; ++c)
    acc[c] = SET1((float)c);
  for (long i = 0; i < kIters; ++i)
    for (int c = 0; c < CHAINS; ++c)
      acc[c] = FMA(acc[c], a, b);
  vec s = acc[0];
  for (int c = 1; c < CHAINS; ++c)
    s = ADD(s, acc[c]);
  *(float *)out = RED(s);
  return NULL;
}

int main(int argc, char **argv) {
  int threads = argc > 1 ? atoi(argv[1]) : 1;
  pthread_t tid[64];
  float sink[64];
  struct timespec t0, t1;
  clockid_t clock = argc > 2 && !strcmp(argv[2], "cpu")
                        ? CLOCK_PROCESS_CPUTIME_ID
                        : CLOCK_MONOTONIC;
  clock_gettime(clock, &t0);
  for (int t = 0; t < threads; ++t)
    pthread_create(&tid[t], NULL, run, &sink[t]);
  for (int t = 0; t < threads; ++t)
    pthread_join(tid[t], NULL);
  clock_gettime(clock, &t1);
  double s = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
  double flops = 2.0 * VLEN * CHAINS * (double)kIters * threads;
  printf("%.1f\n", flops / s / 1e9 + 0 * sink[0]);
  return 0;
}
