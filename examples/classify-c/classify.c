/*===- classify.c - Classify digits with the digits bundle (C99) ----------===*
 *
 * Usage: classify-c WEIGHTS.bin|- IMAGE.input.pb...
 * Loads the constant weights (or "-" for a bundle built with
 * -embed-weights), then for each input prints the predicted digit.
 *
 *===----------------------------------------------------------------------===*/
#include "digits.h"
#include "tensor_pb.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint8_t *alignedZeroed(size_t size) {
  size_t rounded = (size + 63) / 64 * 64;
  uint8_t *p = aligned_alloc(digits_ALIGNMENT, rounded ? rounded : 64);
  if (p)
    memset(p, 0, rounded);
  return p;
}

static uint8_t *loadWeights(const char *path) {
  if (!strcmp(path, "-"))
    return NULL; /* the embedded copy is used */
  uint8_t *w = alignedZeroed(digits_CONSTANT_SIZE);
  FILE *f = fopen(path, "rb");
  if (!w || !f ||
      fread(w, 1, digits_CONSTANT_SIZE, f) != digits_CONSTANT_SIZE) {
    fprintf(stderr, "classify-c: cannot read %s\n", path);
    exit(1);
  }
  fclose(f);
  return w;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s WEIGHTS.bin|- IMAGE.input.pb...\n", argv[0]);
    return 1;
  }
  uint8_t *weights = loadWeights(argv[1]);
  uint8_t *mutableWeights = alignedZeroed(digits_MUTABLE_SIZE);
  uint8_t *activations = alignedZeroed(digits_ACTIVATIONS_SIZE);
  float *input = (float *)(mutableWeights + digits_input_OFFSET);
  const float *logits = (const float *)(mutableWeights + digits_logits_OFFSET);
  size_t numInputs = digits_input_SIZE / sizeof(float);
  size_t numClasses = digits_logits_SIZE / sizeof(float);
  for (int i = 2; i < argc; ++i) {
    if (readTensorFloats(argv[i], input, numInputs) != (long)numInputs) {
      fprintf(stderr, "classify-c: %s is not a %zu-float tensor\n", argv[i],
              numInputs);
      return 1;
    }
    if (digits(weights, mutableWeights, activations) != 0) {
      fprintf(stderr, "classify-c: the bundle failed\n");
      return 1;
    }
    size_t best = 0;
    for (size_t c = 1; c < numClasses; ++c)
      if (logits[c] > logits[best])
        best = c;
    printf("%s: predicted %zu (score %.4f)\n", argv[i], best, logits[best]);
  }
  free(weights);
  free(mutableWeights);
  free(activations);
  return 0;
}
