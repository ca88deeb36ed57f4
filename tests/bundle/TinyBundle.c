/* TinyBundle.c - a hand-written bundle for the loader tests.
 *
 * Implements the bundle ABI (include/ember/Bundle/EmberBundle.h) for a
 * trivial network, so image-classifier's -bundle loader is tested without
 * model-compiler. Built as NAME.so with -DBUNDLE_NAME=NAME; -DEMBED=1 puts
 * the weights in the object, -DABI_VERSION=N fakes another ABI version.
 *
 * input  "image"  float32 [2,1,2,2] at offset 0 of the mutable region
 * output "scores" float32 [2,4]     at offset 64
 * scores[b][k] = w[k] * image[b][k] + c[k]; w, c are the constant region.
 * The product goes through the activation region. The entry returns 2 when
 * a region is not 64-byte aligned, 3 when the constants are missing.
 */
#include "ember/Bundle/EmberBundle.h"

#include <stddef.h>

#ifndef ABI_VERSION
#define ABI_VERSION EMBER_BUNDLE_ABI_VERSION
#endif

#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)

static const int64_t inDims[4] = {2, 1, 2, 2};
static const int64_t outDims[2] = {2, 4};
static const EmberTensorInfo inputs[1] = {{"image", 1, 4, inDims, 0, 32}};
static const EmberTensorInfo outputs[1] = {{"scores", 1, 2, outDims, 64, 32}};

#if EMBED
/* w = {1, -1, 0.5, 2}, c = {0, 255, 0, 0}, 64-byte aligned like a region. */
static const float embedded[8]
    __attribute__((aligned(64))) = {1.f, -1.f, 0.5f, 2.f, 0.f, 255.f, 0.f, 0.f};
#define EMBEDDED_PTR ((const uint8_t *)embedded)
#else
#define EMBEDDED_PTR NULL
#endif

const EmberBundleInfo CAT(BUNDLE_NAME, _info) = {
    ABI_VERSION, "tiny", 32, 128, 64, 64, 1, 1, inputs, outputs, EMBEDDED_PTR};

static int misaligned(const void *p) { return ((uintptr_t)p & 63) != 0; }

int BUNDLE_NAME(uint8_t *constantWeights, uint8_t *mutableWeights,
                uint8_t *activations) {
  const float *k = constantWeights ? (const float *)constantWeights
                                   : (const float *)EMBEDDED_PTR;
  if (!k)
    return 3;
  if (misaligned(k) || misaligned(mutableWeights) || misaligned(activations))
    return 2;
  const float *in = (const float *)mutableWeights;
  float *out = (float *)(mutableWeights + 64);
  float *tmp = (float *)activations;
  for (int i = 0; i < 8; ++i)
    tmp[i] = k[i % 4] * in[i];
  for (int i = 0; i < 8; ++i)
    out[i] = tmp[i] + k[4 + i % 4];
  return 0;
}
