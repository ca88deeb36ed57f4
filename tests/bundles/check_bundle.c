/*===- check_bundle.c - Return codes of a bundle's run-time checks --------===*
 *
 * Built with: cc -std=c99 -DNET=name -include DIR/name.h check_bundle.c
 *             DIR/name.o -lm -lpthread
 * Usage: runner WEIGHTS IN0.bin IN1.bin ...
 * Runs the network through NET and NET_mt (2 threads) on the inputs, in
 * NET_info's order, and prints both return codes and, for a non-zero one,
 * its message from NET_CHECK_MESSAGES (docs/Bundle.md "Return codes").
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
  memset(p, 0xA5, size); /* not zero: a status not written shows */
  return p;
}

int main(int argc, char **argv) {
  static const char *const messages[] = M(_CHECK_MESSAGES);
  const EmberBundleInfo *info = &M(_info);
  uint8_t *weights, *mut, *act;
  int rc[2];
  if (argc != 2 + (int)info->numInputs)
    return 2;
  weights = region(M(_CONSTANT_SIZE));
  mut = region(M(_MUTABLE_SIZE));
  act = region(M(_ACTIVATIONS_SIZE));
  if (readFile(argv[1], weights, M(_CONSTANT_SIZE)))
    return 3;
  for (uint32_t i = 0; i < info->numInputs; ++i)
    if (readFile(argv[2 + i], mut + info->inputs[i].offset,
                 info->inputs[i].sizeInBytes))
      return 4;
  rc[0] = NET(weights, mut, act);
  rc[1] = M(_mt)(weights, mut, act, 2);
  printf("rc %d rc_mt %d\n", rc[0], rc[1]);
  for (int k = 0; k < 2; ++k) {
    if (rc[k] < 0 || rc[k] > M(_NUM_CHECKS))
      return 5;
    if (rc[k])
      printf("%s\n", messages[rc[k] - 1]);
  }
  M(_threads_release)();
  return 0;
}
