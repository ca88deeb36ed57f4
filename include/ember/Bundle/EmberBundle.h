/*===- EmberBundle.h - The ABI of Ember's ahead-of-time bundles --*- C -*-===*\
|*                                                                            *|
|* A bundle written by `model-compiler -emit-bundle` exports                  *|
|*   int NAME(uint8_t *constantWeights, uint8_t *mutableWeights,              *|
|*            uint8_t *activations);              (0 on success)              *|
|*   int NAME_mt(..., int numThreads);            (optional)                  *|
|*   extern const EmberBundleInfo NAME_info;                                  *|
|* Each generated NAME.h defines the same types under the guard below, so     *|
|* several bundle headers, and this one, can be included together.           *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/
#ifndef EMBER_BUNDLE_EMBERBUNDLE_H
#define EMBER_BUNDLE_EMBERBUNDLE_H

#include <stdint.h>

#ifndef EMBER_BUNDLE_TYPES_DEFINED
#define EMBER_BUNDLE_TYPES_DEFINED
#define EMBER_BUNDLE_ABI_VERSION 1
typedef struct EmberTensorInfo {
  const char *name;       /* the ONNX input/output name */
  int32_t elemKind;       /* ONNX TensorProto.DataType code: 1 float32, 6 int32, 7 int64, 9 bool */
  uint32_t rank;
  const int64_t *dims;
  uint64_t offset;        /* byte offset in the mutable region */
  uint64_t sizeInBytes;
} EmberTensorInfo;
typedef struct EmberBundleInfo {
  uint32_t abiVersion;    /* EMBER_BUNDLE_ABI_VERSION */
  const char *networkName;
  uint64_t constantSize, mutableSize, activationSize; /* region sizes in bytes */
  uint64_t alignment;     /* required alignment of every region: 64 */
  uint32_t numInputs, numOutputs;
  const EmberTensorInfo *inputs, *outputs;
  const uint8_t *embeddedWeights; /* NULL unless compiled with -embed-weights */
} EmberBundleInfo;
#endif /* EMBER_BUNDLE_TYPES_DEFINED */

#endif /* EMBER_BUNDLE_EMBERBUNDLE_H */
