/*===- soak_bundle.c - Many callers of NAME_mt for a long time -----------===*
 *
 * Built with: cc -std=c99 -D_DEFAULT_SOURCE -DNET=name -include DIR/name.h
 *             soak_bundle.c DIR/name.o -lm -lpthread
 * Usage: soak_bundle WEIGHTS INPUT.bin CALLERS CALLS THREADS [no-rss]
 *   (a bundle with one float32 input and one output; no-rss skips the
 *   RSS check, for sanitizer runtimes whose own memory grows)
 *
 * CALLERS application threads share one constant region; each has its own
 * mutable and activation regions and its own input (the given one scaled by
 * a factor of its own, so that a call that read another caller's region
 * would give a wrong answer). Each calls NAME_mt with THREADS threads
 * CALLS times. Every output must be bit-identical to the reference that
 * NAME (one thread, no workers) computed for that caller's input before
 * the soak started. The resident set size (from /proc/self/statm) is read
 * after every call; its maximum over the last quarter of the calls must
 * not exceed its maximum over the first quarter by more than RSS_SLACK:
 * a leak of even 256 bytes per call would exceed it over the calls the
 * test makes. Exit 0: all equal and RSS flat.
 *
 *===----------------------------------------------------------------------===*/
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "read_file.h"

#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)
#define INFO CAT(NET, _info)
#define ENTRY_MT CAT(NET, _mt)
#define RELEASE CAT(NET, _threads_release)

/* Allocator arenas and stacks settle within the first quarter; later
 * growth beyond this is a leak (the calls of the last three quarters
 * times 256 bytes is above it in the ctest configuration). */
#define RSS_SLACK (512u * 1024u)

static const EmberBundleInfo *info = &INFO;
static uint8_t *weights;
static int calls, threads;
static atomic_int done;
static long pageSize;

struct Caller {
  uint8_t *mut, *act, *input, *expected;
  int failures;
  pthread_t tid;
};

static uint8_t *region(uint64_t size) {
  uint64_t n = (size + 63) / 64 * 64 + 64;
  void *p = NULL;
  if (posix_memalign(&p, 64, n))
    exit(4);
  memset(p, 0xA5, n);
  return p;
}

static long rssBytes(void) {
  long total = 0, resident = 0;
  FILE *f = fopen("/proc/self/statm", "r");
  if (!f)
    return -1;
  if (fscanf(f, "%ld %ld", &total, &resident) != 2)
    resident = -1;
  fclose(f);
  return resident < 0 ? -1 : resident * pageSize;
}

/* Runs one call into c's regions: NET when nThreads is 0. */
static int runOnce(struct Caller *c, int nThreads) {
  const EmberTensorInfo *in = &info->inputs[0], *out = &info->outputs[0];
  memcpy(c->mut + in->offset, c->input, in->sizeInBytes);
  memset(c->mut + out->offset, 0xA5, out->sizeInBytes);
  return nThreads ? ENTRY_MT(weights, c->mut, c->act, nThreads)
                  : NET(weights, c->mut, c->act);
}

static void *callerMain(void *p) {
  struct Caller *c = p;
  const EmberTensorInfo *out = &info->outputs[0];
  for (int i = 0; i < calls; ++i) {
    if (runOnce(c, threads) ||
        memcmp(c->expected, c->mut + out->offset, out->sizeInBytes))
      ++c->failures;
    atomic_fetch_add(&done, 1);
  }
  return NULL;
}

/* Samples RSS while the callers run: the maxima over the first and the
 * last quarter of all calls. */
static void watchRss(long total, long *first, long *last) {
  *first = *last = 0;
  for (;;) {
    int n = atomic_load(&done);
    long rss = rssBytes();
    if (n <= total / 4 && rss > *first)
      *first = rss;
    if (n >= total - total / 4 && rss > *last)
      *last = rss;
    if (n >= total)
      return;
    usleep(2000);
  }
}

int main(int argc, char **argv) {
  if (argc < 6 || argc > 7 || info->numInputs != 1 || info->numOutputs != 1 ||
      info->inputs[0].elemKind != 1)
    return 2;
  int callers = atoi(argv[3]);
  calls = atoi(argv[4]);
  threads = atoi(argv[5]);
  int checkRss = argc == 6;
  if (callers < 1 || callers > 64 || calls < 4 || threads < 1 ||
      (argc == 7 && strcmp(argv[6], "no-rss")))
    return 2;
  pageSize = sysconf(_SC_PAGESIZE);
  const EmberTensorInfo *in = &info->inputs[0], *out = &info->outputs[0];
  weights = region(info->constantSize);
  uint8_t *input = region(in->sizeInBytes);
  if (readFile(argv[1], weights, info->constantSize) ||
      readFile(argv[2], input, in->sizeInBytes))
    return 3;
  struct Caller *c = calloc((size_t)callers, sizeof *c);
  for (int k = 0; k < callers; ++k) {
    c[k].mut = region(info->mutableSize);
    c[k].act = region(info->activationSize);
    c[k].input = region(in->sizeInBytes);
    c[k].expected = region(out->sizeInBytes);
    float scale = 1.0f + 0.125f * (float)k;
    const float *src = (const float *)input;
    float *dst = (float *)c[k].input;
    for (uint64_t i = 0; i < in->sizeInBytes / 4; ++i)
      dst[i] = src[i] * scale;
    if (runOnce(&c[k], 0))
      return 5;
    memcpy(c[k].expected, c[k].mut + out->offset, out->sizeInBytes);
  }
  for (int k = 1; k < callers; ++k)
    if (!memcmp(c[k].expected, c[0].expected, out->sizeInBytes)) {
      fprintf(stderr, "FAIL: the callers' inputs give equal outputs\n");
      return 1;
    }
  for (int k = 0; k < callers; ++k)
    pthread_create(&c[k].tid, NULL, callerMain, &c[k]);
  long first, last;
  watchRss((long)callers * calls, &first, &last);
  int failures = 0;
  for (int k = 0; k < callers; ++k) {
    pthread_join(c[k].tid, NULL);
    failures += c[k].failures;
  }
  RELEASE();
  printf("%d callers x %d calls of NAME_mt(%d threads): %d differ; RSS max "
         "%.1f MB in the first quarter, %.1f MB in the last\n",
         callers, calls, threads, failures, first / 1048576.0,
         last / 1048576.0);
  if (checkRss && (first <= 0 || last <= 0)) {
    fprintf(stderr, "FAIL: cannot read /proc/self/statm\n");
    return 1;
  }
  if (checkRss && last > first + (long)RSS_SLACK) {
    fprintf(stderr, "FAIL: RSS grew by %ld KB\n", (last - first) / 1024);
    return 1;
  }
  return failures ? 1 : 0;
}
