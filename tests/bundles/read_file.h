/*===- read_file.h - Reads a raw file into memory, for the bundle drivers -===*
 *
 * Included by the C test drivers of bundles (run_bundle.c, pool_bundle.c).
 *
 *===----------------------------------------------------------------------===*/
#ifndef EMBER_TESTS_BUNDLES_READ_FILE_H
#define EMBER_TESTS_BUNDLES_READ_FILE_H

#include <stdint.h>
#include <stdio.h>

/* Reads exactly \p size bytes of \p path into \p dst: 0, or -1 when the
 * file is missing or shorter. */
static int readFile(const char *path, uint8_t *dst, uint64_t size) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return -1;
  size_t n = fread(dst, 1, size, f);
  fclose(f);
  return n == size ? 0 : -1;
}

#endif
