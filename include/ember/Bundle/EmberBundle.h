/*===- EmberBundle.h - Types of the Ember bundle ABI (C99 and C++) --------===*
 *
 * Every generated bundle header (NAME.h) contains this same text between
 * its EMBER_BUNDLE_TYPES_DEFINED guards, so several bundle headers and this
 * file can be included together. See docs/Bundle.md.
 *
 *===----------------------------------------------------------------------===*/
#ifndef EMBER_BUNDLE_EMBERBUNDLE_H
#define EMBER_BUNDLE_EMBERBUNDLE_H

#include <stdint.h>

#ifndef EMBER_BUNDLE_TYPES_DEFINED
#define EMBER_BUNDLE_TYPES_DEFINED
/* 2: outputs whose extent depends on the data (NAME_<OUT>_DYNAMIC_AXIS,
   NAME_<OUT>_EXTENT_OFFSET and the output '<out>.extent') and the scale and
   zero-point macros of quantized inputs and outputs; docs/Bundle.md */
#define EMBER_BUNDLE_ABI_VERSION 3
/** One network input or output in the mutable region. */
typedef struct EmberTensorInfo {
  const char *name; /* the ONNX input/output name */
  int32_t elemKind; /* ONNX TensorProto.DataType: 1 float32, 2 uint8, 3 int8, 6
                       int32, 7 int64, 9 bool */
  uint32_t rank;
  const int64_t *dims;
  uint64_t offset; /* byte offset in the mutable region */
  uint64_t sizeInBytes;
} EmberTensorInfo;
/** Everything a loader needs to run a bundle. */
typedef struct EmberBundleInfo {
  uint32_t abiVersion; /* EMBER_BUNDLE_ABI_VERSION */
  const char *networkName;
  uint64_t constantSize, mutableSize,
      activationSize; /* region sizes in bytes */
  uint64_t alignment; /* required alignment of every region: 64 */
  uint32_t numInputs, numOutputs;
  const EmberTensorInfo *inputs, *outputs;
  const uint8_t *embeddedWeights; /* NULL unless compiled with -embed-weights */
} EmberBundleInfo;
#endif /* EMBER_BUNDLE_TYPES_DEFINED */

#endif /* EMBER_BUNDLE_EMBERBUNDLE_H */
