/*===- classify.c - Classify digits with a CUDA bundle (C99) --------------===*
 *
 * Usage: classify-cuda WEIGHTS.bin IMAGE.input.pb...
 * Uploads the constant weights to the GPU once, then for each input copies
 * it into the device's mutable region, runs the bundle on a stream and
 * prints the predicted digit. Links with the bundle, the CUDA runtime and
 * cuDNN (the bundle's Convs run on cuDNN; the header's comment and its
 * digits_cuda_USES_CUDNN say so; compiled with -cuda-conv=generated it
 * needs the runtime only). Without a GPU it says "no CUDA device is
 * present" and exits 2.
 *
 *===----------------------------------------------------------------------===*/
#include <cuda_runtime_api.h>

#include "digits_cuda.h"
#include "tensor_pb.h"

#include <stdio.h>
#include <stdlib.h>

static void check(cudaError_t rc, const char *what) {
  if (rc != cudaSuccess) {
    fprintf(stderr, "classify-cuda: %s: %s\n", what, cudaGetErrorString(rc));
    exit(1);
  }
}

int main(int argc, char **argv) {
  int count = 0;
  if (argc < 3) {
    fprintf(stderr, "usage: %s WEIGHTS.bin IMAGE.input.pb...\n", argv[0]);
    return 1;
  }
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    printf("no CUDA device is present\n");
    return 2;
  }
  uint8_t *host = malloc(digits_cuda_CONSTANT_SIZE);
  FILE *f = fopen(argv[1], "rb");
  if (!host || !f ||
      fread(host, 1, digits_cuda_CONSTANT_SIZE, f) !=
          digits_cuda_CONSTANT_SIZE) {
    fprintf(stderr, "classify-cuda: cannot read %s\n", argv[1]);
    return 1;
  }
  fclose(f);
  uint8_t *weights, *mutableWeights, *activations;
  check(cudaMalloc((void **)&weights, digits_cuda_CONSTANT_SIZE), "cudaMalloc");
  check(cudaMalloc((void **)&mutableWeights, digits_cuda_MUTABLE_SIZE),
        "cudaMalloc");
  check(cudaMalloc((void **)&activations, digits_cuda_ACTIVATIONS_SIZE + 64),
        "cudaMalloc");
  check(cudaMemcpy(weights, host, digits_cuda_CONSTANT_SIZE,
                   cudaMemcpyHostToDevice),
        "uploading the weights");
  cudaStream_t stream;
  check(cudaStreamCreate(&stream), "cudaStreamCreate");
  float input[digits_cuda_input_SIZE / sizeof(float)];
  float logits[digits_cuda_logits_SIZE / sizeof(float)];
  size_t numInputs = sizeof input / sizeof *input;
  size_t numClasses = sizeof logits / sizeof *logits;
  for (int i = 2; i < argc; ++i) {
    if (readTensorFloats(argv[i], input, numInputs) != (long)numInputs) {
      fprintf(stderr, "classify-cuda: %s is not a %zu-float tensor\n", argv[i],
              numInputs);
      return 1;
    }
    check(cudaMemcpyAsync(mutableWeights + digits_cuda_input_OFFSET, input,
                          sizeof input, cudaMemcpyHostToDevice, stream),
          "uploading the input");
    check(
        (cudaError_t)digits_cuda(weights, mutableWeights, activations, stream),
        "running the bundle");
    check(cudaMemcpyAsync(logits, mutableWeights + digits_cuda_logits_OFFSET,
                          sizeof logits, cudaMemcpyDeviceToHost, stream),
          "downloading the logits");
    check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    size_t best = 0;
    for (size_t c = 1; c < numClasses; ++c)
      if (logits[c] > logits[best])
        best = c;
    printf("%s: predicted %zu (score %.4f)\n", argv[i], best, logits[best]);
  }
  return 0;
}
