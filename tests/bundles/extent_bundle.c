/*===- extent_bundle.c - Reads an output's data-dependent extent ----------===*
 *
 * Built with: cc -std=c99 -DNET=name -include DIR/name.h extent_bundle.c
 *             DIR/name.o -lm
 * Usage: runner WEIGHTS INPUT.bin OUT.bin
 * The bundle has one input 'x' and one output 'y' whose extent on one axis
 * depends on the data (ABI version 2 on, docs/Bundle.md): the driver reads the
 * extent from NET_y_EXTENT_OFFSET, checks that the entries past it are
 * zeros, and writes the extent as an int64 followed by the entries within
 * it (the output cut to its actual extent).
 *
 *===----------------------------------------------------------------------===*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "read_file.h"

#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)
#define M(suffix) CAT(NET, suffix)

static uint8_t *region(uint64_t size) {
  uint8_t *p = aligned_alloc(64, (size + 63) / 64 * 64 + 64);
  memset(p, 0xA5, size); /* not zero: an extent or a row not written shows */
  return p;
}

int main(int argc, char **argv) {
  static const int64_t dims[] = M(_y_DIMS);
  int64_t extent, outer = 1, inner, kept = 1;
  uint8_t *weights, *mut, *act, *y;
  FILE *f;
  if (argc != 4)
    return 2;
  if (M(_BUNDLE_ABI_VERSION) < 2 || M(_info).abiVersion < 2)
    return 3;
  weights = region(M(_CONSTANT_SIZE));
  mut = region(M(_MUTABLE_SIZE));
  act = region(M(_ACTIVATIONS_SIZE));
  if (readFile(argv[1], weights, M(_CONSTANT_SIZE)) ||
      readFile(argv[2], mut + M(_x_OFFSET), M(_x_SIZE)))
    return 4;
  if (NET(weights, mut, act))
    return 5;
  memcpy(&extent, mut + M(_y_EXTENT_OFFSET), sizeof extent);
  if (extent < 0 || extent > dims[M(_y_DYNAMIC_AXIS)])
    return 6;
  /* Bytes of one entry along the dynamic axis, and how many such runs. */
  inner = M(_y_SIZE);
  for (int i = 0; i < M(_y_RANK); ++i) {
    inner /= dims[i];
    if (i < M(_y_DYNAMIC_AXIS))
      outer *= dims[i];
    else if (i > M(_y_DYNAMIC_AXIS))
      kept *= dims[i];
  }
  inner *= kept;
  y = mut + M(_y_OFFSET);
  f = fopen(argv[3], "wb");
  if (!f)
    return 7;
  fwrite(&extent, sizeof extent, 1, f);
  for (int64_t o = 0; o < outer; ++o) {
    uint8_t *run = y + o * dims[M(_y_DYNAMIC_AXIS)] * inner;
    fwrite(run, 1, extent * inner, f);
    for (int64_t b = extent * inner; b < dims[M(_y_DYNAMIC_AXIS)] * inner; ++b)
      if (run[b])
        return 8;
  }
  fclose(f);
  return 0;
}
