/*===- run_bundle.c - Generic C driver of one bundle for the tests --------===*
 *
 * Built with: cc -std=c99 -DNET=name -include DIR/name.h run_bundle.c
 *             DIR/name.o -lm [-lpthread]
 * Usage: runner WEIGHTS|- THREADS OUTPREFIX INPUT.bin...
 * THREADS 0 calls NET(), otherwise NET_mt(..., THREADS). Inputs are raw
 * little-endian payloads in graph order; output k goes to OUTPREFIXk.bin.
 * With -DEXACT_REGIONS (and -D_DEFAULT_SOURCE) every region is mapped at
 * exactly its declared size between inaccessible pages
 * (tests/bundles/exact_regions_test.sh).
 *
 *===----------------------------------------------------------------------===*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "read_file.h"

#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)
#define INFO CAT(NET, _info)
#define ENTRY_MT CAT(NET, _mt)

#ifdef EXACT_REGIONS
#include <sys/mman.h>
#include <unistd.h>
/* Each region is exactly its declared size, with an inaccessible page right
 * after its end (EMBER_REGION_AT=end, the default) or right before its
 * start (EMBER_REGION_AT=start): an access one byte outside faults even in
 * the bundle's own code, which no sanitizer instruments. The start stays
 * 64-byte aligned, so the sizes must be multiples of 64. */
static uint8_t *region(uint64_t size) {
  const char *at = getenv("EMBER_REGION_AT");
  int atStart = at && !strcmp(at, "start");
  uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
  uint64_t span = (size + page - 1) / page * page;
  uint8_t *base;
  if (size % 64) {
    fprintf(stderr, "region size %llu is not a multiple of 64\n",
            (unsigned long long)size);
    exit(9);
  }
  base = mmap(NULL, span + 2 * page, PROT_READ | PROT_WRITE,
              MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (base == MAP_FAILED || mprotect(base, page, PROT_NONE) ||
      mprotect(base + page + span, page, PROT_NONE))
    exit(10);
  base += page;
  if (!atStart)
    base += span - size;
  memset(base, 0xA5, size);
  return base;
}
#else
static uint8_t *region(uint64_t size) {
  uint64_t n = (size + 63) / 64 * 64 + 64;
  uint8_t *p = aligned_alloc(64, n);
  memset(p, 0xA5, n); /* not zero: a kernel that forgets to write shows */
  return p;
}
#endif


int main(int argc, char **argv) {
  const EmberBundleInfo *info = &INFO;
  if (argc != 4 + (int)info->numInputs) {
    fprintf(stderr, "usage: %s WEIGHTS|- THREADS OUTPREFIX INPUTS(%u)\n",
            argv[0], info->numInputs);
    return 2;
  }
  if (info->abiVersion != EMBER_BUNDLE_ABI_VERSION || info->alignment != 64)
    return 3;
  uint8_t *weights = NULL;
  if (strcmp(argv[1], "-")) {
    weights = region(info->constantSize);
    if (readFile(argv[1], weights, info->constantSize))
      return 4;
  } else if (!info->embeddedWeights) {
    return 5;
  }
  uint8_t *mut = region(info->mutableSize);
  uint8_t *act = region(info->activationSize);
  for (uint32_t i = 0; i < info->numInputs; ++i)
    if (readFile(argv[4 + i], mut + info->inputs[i].offset,
                 info->inputs[i].sizeInBytes))
      return 6;
  int threads = atoi(argv[2]);
  int rc = threads ? ENTRY_MT(weights, mut, act, threads)
                   : NET(weights, mut, act);
  if (rc)
    return 7;
  for (uint32_t k = 0; k < info->numOutputs; ++k) {
    char path[4096];
    snprintf(path, sizeof path, "%s%u.bin", argv[3], k);
    FILE *f = fopen(path, "wb");
    if (!f)
      return 8;
    fwrite(mut + info->outputs[k].offset, 1, info->outputs[k].sizeInBytes, f);
    fclose(f);
  }
  return 0;
}
