/*===- bench_bundle.c - Time a bundle's entry point -----------------------===*
 *
 * Built with: cc -O2 -D_GNU_SOURCE -DNET=name -include DIR/name.h bench_bundle.c DIR/name.o
 * Usage: bench WEIGHTS THREADS ITERATIONS [INPUT.bin]
 * Prints "median ms: X" over ITERATIONS runs after one warm-up.
 *
 *===----------------------------------------------------------------------===*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)

static uint8_t *region(uint64_t size) {
  uint64_t n = (size + 63) / 64 * 64 + 64;
  uint8_t *p = aligned_alloc(64, n);
  memset(p, 0, n);
  return p;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
  const EmberBundleInfo *info = &CAT(NET, _info);
  if (argc < 4)
    return 2;
  uint8_t *w = region(info->constantSize);
  FILE *f = fopen(argv[1], "rb");
  if (!f || fread(w, 1, info->constantSize, f) != info->constantSize)
    return 3;
  fclose(f);
  uint8_t *mut = region(info->mutableSize), *act = region(info->activationSize);
  if (argc > 4 && info->numInputs) {
    f = fopen(argv[4], "rb");
    if (!f || fread(mut + info->inputs[0].offset, 1,
                    info->inputs[0].sizeInBytes, f) != info->inputs[0].sizeInBytes)
      return 4;
    fclose(f);
  }
  int threads = atoi(argv[2]), iters = atoi(argv[3]);
  double *ms = malloc(sizeof(double) * (iters > 0 ? iters : 1));
  for (int i = -1; i < iters; ++i) {
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    int rc = threads > 1 ? CAT(NET, _mt)(w, mut, act, threads) : NET(w, mut, act);
    clock_gettime(CLOCK_MONOTONIC, &b);
    if (rc)
      return 5;
    if (i >= 0)
      ms[i] = (b.tv_sec - a.tv_sec) * 1e3 + (b.tv_nsec - a.tv_nsec) / 1e6;
  }
  qsort(ms, iters, sizeof(double), cmp);
  printf("median ms: %.3f\n", ms[iters / 2]);
  return 0;
}
