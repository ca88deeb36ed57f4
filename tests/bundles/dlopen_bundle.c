/*===- dlopen_bundle.c - Run a bundle's NAME.so through dlopen ------------===*
 *
 * Usage: dlopen-runner LIB.so NAME WEIGHTS OUTPREFIX INPUT.bin...
 * Finds NAME and NAME_info with dlsym; otherwise like run_bundle.c.
 *
 *===----------------------------------------------------------------------===*/
#include <stdint.h>

#include "ember/Bundle/EmberBundle.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int (*Entry)(uint8_t *, uint8_t *, uint8_t *);

static uint8_t *region(uint64_t size) {
  uint64_t n = (size + 63) / 64 * 64 + 64;
  uint8_t *p = aligned_alloc(64, n);
  memset(p, 0, n);
  return p;
}

int main(int argc, char **argv) {
  if (argc < 5)
    return 2;
  void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    fprintf(stderr, "%s\n", dlerror());
    return 3;
  }
  char sym[256];
  snprintf(sym, sizeof sym, "%s_info", argv[2]);
  const EmberBundleInfo *info = (const EmberBundleInfo *)dlsym(lib, sym);
  Entry entry = (Entry)dlsym(lib, argv[2]);
  if (!info || !entry || argc != 5 + (int)info->numInputs)
    return 4;
  uint8_t *w = region(info->constantSize);
  FILE *f = fopen(argv[3], "rb");
  if (!f || fread(w, 1, info->constantSize, f) != info->constantSize)
    return 5;
  fclose(f);
  uint8_t *mut = region(info->mutableSize), *act = region(info->activationSize);
  for (uint32_t i = 0; i < info->numInputs; ++i) {
    f = fopen(argv[5 + i], "rb");
    if (!f || fread(mut + info->inputs[i].offset, 1,
                    info->inputs[i].sizeInBytes, f) !=
                  info->inputs[i].sizeInBytes)
      return 6;
    fclose(f);
  }
  if (entry(w, mut, act))
    return 7;
  for (uint32_t k = 0; k < info->numOutputs; ++k) {
    char path[4096];
    snprintf(path, sizeof path, "%s%u.bin", argv[4], k);
    f = fopen(path, "wb");
    fwrite(mut + info->outputs[k].offset, 1, info->outputs[k].sizeInBytes, f);
    fclose(f);
  }
  dlclose(lib);
  return 0;
}
