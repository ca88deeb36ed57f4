/*===- tensor_pb.h - Read the floats of an ONNX TensorProto file ----------===*
 *
 * A tiny reader for the examples: it walks the protobuf wire format of one
 * onnx.TensorProto and returns its float payload (raw_data, field 9, or
 * packed float_data, field 4). Enough for the shipped test inputs; not a
 * general protobuf parser. C99, header-only.
 *
 *===----------------------------------------------------------------------===*/
#ifndef EMBER_EXAMPLES_TENSOR_PB_H
#define EMBER_EXAMPLES_TENSOR_PB_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int pbVarint(const uint8_t **p, const uint8_t *end, uint64_t *v) {
  *v = 0;
  for (int shift = 0; *p < end && shift < 64; shift += 7) {
    uint8_t b = *(*p)++;
    *v |= (uint64_t)(b & 0x7f) << shift;
    if (!(b & 0x80))
      return 0;
  }
  return -1;
}

/* Reads up to `count` floats from the TensorProto file `path` into `out`.
   Returns the number of floats in the file, or -1 on error. */
static long readTensorFloats(const char *path, float *out, size_t count) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return -1;
  uint8_t buf[1 << 16];
  size_t n = fread(buf, 1, sizeof buf, f);
  fclose(f);
  const uint8_t *p = buf, *end = buf + n;
  while (p < end) {
    uint64_t key, len;
    if (pbVarint(&p, end, &key))
      return -1;
    unsigned field = (unsigned)(key >> 3), wire = (unsigned)(key & 7);
    if (wire == 0) {
      if (pbVarint(&p, end, &len))
        return -1;
      continue;
    }
    if (wire == 5 || wire == 1) {
      p += wire == 5 ? 4 : 8;
      continue;
    }
    if (wire != 2 || pbVarint(&p, end, &len) || len > (uint64_t)(end - p))
      return -1;
    if (field == 9 || field == 4) { /* raw_data or packed float_data */
      size_t floats = (size_t)len / 4;
      memcpy(out, p, 4 * (floats < count ? floats : count));
      return (long)floats;
    }
    p += len;
  }
  return -1;
}

#endif
