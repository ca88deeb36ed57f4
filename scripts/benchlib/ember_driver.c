/* Ember side of scripts/bench: times a shared CPU bundle through the bundle
 * ABI (docs/Bundle.md), with nothing else of Ember linked.
 *
 *   ember_driver DIR/NAME INPUTS THREADS WARMUP ITERS
 *
 * INPUTS: FILE (the first input) or NAME=FILE[,NAME=FILE...] (inputs by
 * their ONNX names), each FILE the raw bytes of the input in its own element
 * type (float32, int64, ...). Loads DIR/NAME.so, reads NAME_info, the
 * weights (embedded or DIR/NAME.weights.bin), copies every input to its
 * offset, and calls NAME (THREADS == 1) or NAME_mt. Prints one JSON line. */
#define _DEFAULT_SOURCE
#include "ember/Bundle/EmberBundle.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

typedef int (*EntryFn)(uint8_t *, uint8_t *, uint8_t *);
typedef int (*EntryMtFn)(uint8_t *, uint8_t *, uint8_t *, int);

/* A zeroed region; from 2 MiB on aligned to 2 MiB and advised to be backed
 * by transparent huge pages, as Ember's own runners allocate them
 * (include/ember/Base/Memory.h: fewer TLB misses, steadier timings). */
static uint8_t *alignedAlloc(uint64_t size, uint64_t align) {
  const uint64_t huge = (uint64_t)2 << 20;
  void *p = NULL;
  if (!size)
    size = 1;
  if (align < 64)
    align = 64;
  if (size >= huge)
    align = huge;
  size = (size + align - 1) / align * align;
  if (posix_memalign(&p, align, size))
    return NULL;
  if (align == huge)
    madvise(p, size, MADV_HUGEPAGE);
  memset(p, 0, size);
  return p;
}

static double nowMs(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int die(const char *what, const char *detail) {
  fprintf(stderr, "ember_driver: %s %s\n", what, detail ? detail : "");
  return 1;
}

/* Reads exactly in->sizeInBytes bytes of PATH to IO + in->offset. */
static int readInput(const EmberTensorInfo *in, const char *path, uint8_t *io) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return die("cannot open input", path);
  size_t got = fread(io + in->offset, 1, in->sizeInBytes, f);
  int extra = fgetc(f) != EOF;
  fclose(f);
  if (got != in->sizeInBytes || extra) {
    fprintf(stderr, "ember_driver: %s: input '%s' needs %llu bytes\n", path,
            in->name, (unsigned long long)in->sizeInBytes);
    return 1;
  }
  return 0;
}

/* Fills the inputs from SPEC (see the usage above). */
static int readInputs(const EmberBundleInfo *info, char *spec, uint8_t *io) {
  if (!strchr(spec, '='))
    return readInput(&info->inputs[0], spec, io);
  for (char *item = strtok(spec, ","); item; item = strtok(NULL, ",")) {
    char *eq = strchr(item, '=');
    if (!eq)
      return die("expected NAME=FILE, got", item);
    *eq = 0;
    uint32_t i = 0;
    while (i < info->numInputs && strcmp(info->inputs[i].name, item))
      ++i;
    if (i == info->numInputs)
      return die("the bundle has no input named", item);
    if (readInput(&info->inputs[i], eq + 1, io))
      return 1;
  }
  return 0;
}

int main(int argc, char **argv) {
  if (argc != 6)
    return die("usage: ember_driver DIR/NAME INPUTS THREADS WARMUP ITERS",
               NULL);
  const char *base = argv[1];
  const char *name = strrchr(base, '/') ? strrchr(base, '/') + 1 : base;
  int threads = atoi(argv[3]), warmup = atoi(argv[4]), iters = atoi(argv[5]);
  char path[4096], sym[512];
  snprintf(path, sizeof path, "%s.so", base);
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h)
    return die("cannot load", dlerror());
  snprintf(sym, sizeof sym, "%s_info", name);
  const EmberBundleInfo *info = dlsym(h, sym);
  EntryFn entry = (EntryFn)dlsym(h, name);
  snprintf(sym, sizeof sym, "%s_mt", name);
  EntryMtFn entryMt = (EntryMtFn)dlsym(h, sym);
  if (!info || !entry)
    return die("missing symbols in", path);
  uint8_t *consts = NULL;
  if (!info->embeddedWeights) {
    consts = alignedAlloc(info->constantSize, info->alignment);
    snprintf(path, sizeof path, "%s.weights.bin", base);
    FILE *f = fopen(path, "rb");
    if (!f || fread(consts, 1, info->constantSize, f) != info->constantSize)
      return die("cannot read", path);
    fclose(f);
  }
  uint8_t *io = alignedAlloc(info->mutableSize, info->alignment);
  uint8_t *act = alignedAlloc(info->activationSize, info->alignment);
  if (readInputs(info, argv[2], io))
    return 1;
  printf("{\"ms\": [");
  for (int i = 0; i < warmup + iters; ++i) {
    double t0 = nowMs();
    int rc = threads > 1 && entryMt ? entryMt(consts, io, act, threads)
                                    : entry(consts, io, act);
    double t = nowMs() - t0;
    if (rc != 0)
      return die("bundle returned an error", NULL);
    if (i >= warmup)
      printf("%s%.4f", i > warmup ? ", " : "", t);
  }
  printf("], \"threaded_entry\": %s}\n", entryMt ? "true" : "false");
  return 0;
}
