/*===- run_cuda_bundle.c - Runs one CUDA bundle (C99, tests and GPU script)
 *-===*
 *
 * Built with -DNET=<name> -include <name>.h, linked with <name>.o and the
 * CUDA runtime (plus the libraries the header names); or with
 * -DEMBER_DLOPEN, taking "LIB.so NAME" first and loading the bundle from a
 * shared object (scripts/gpu-test.sh's ONNX node tests). Usage:
 *   run_cuda_bundle WEIGHTS.bin OUTDIR [-iters N] [-graph] IN0.bin IN1.bin ...
 * reads each input as raw bytes (exactly its size), runs the network, and
 * writes OUTDIR/out<i>.bin; with -iters it also prints the mean latency of N
 * runs (after 3 warm-up runs) as "latency_ms <value>". Exit codes: 0 done,
 * 2 no CUDA device is present, 1 any other error.
 *
 *===----------------------------------------------------------------------===*/
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#ifdef EMBER_DLOPEN
/* One runner for many bundles, each linked into a shared object whose CUDA
   runtime calls resolve to this executable's cudart_static. */
#include "ember/Bundle/EmberBundle.h"
#include <dlfcn.h>
static const EmberBundleInfo *infoPtr;
static int (*entryPtr)(uint8_t *, uint8_t *, uint8_t *, cudaStream_t);
static int (*initPtr)(void);
#define INFO (*infoPtr)
#define ENTRY entryPtr
#define INIT initPtr
#else
#define INFO CAT(NET, _info)
#define ENTRY NET
#define INIT CAT(NET, _init)
#endif

static int check(cudaError_t rc, const char *what) {
  if (rc == cudaSuccess)
    return 0;
  fprintf(stderr, "run_cuda_bundle: %s: %s\n", what, cudaGetErrorString(rc));
  exit(1);
}

static void *readFile(const char *path, size_t size) {
  FILE *f = fopen(path, "rb");
  void *buf = malloc(size ? size : 1);
  if (!f || fread(buf, 1, size, f) != size) {
    fprintf(stderr, "run_cuda_bundle: cannot read %zu bytes from %s\n", size,
            path);
    exit(1);
  }
  fclose(f);
  return buf;
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int main(int argc, char **argv) {
  int count = 0, iters = 0, graph = 0, argi = 3;
#ifdef EMBER_DLOPEN
  /* run_cuda_bundle LIB.so NAME WEIGHTS OUTDIR ... */
  if (argc < 5) {
    fprintf(stderr, "usage: %s LIB.so NAME WEIGHTS OUTDIR [...] INPUTS...\n",
            argv[0]);
    return 1;
  }
  void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  char sym[256];
  if (!lib) {
    fprintf(stderr, "run_cuda_bundle: %s\n", dlerror());
    return 1;
  }
  snprintf(sym, sizeof sym, "%s_info", argv[2]);
  infoPtr = (const EmberBundleInfo *)dlsym(lib, sym);
  snprintf(sym, sizeof sym, "%s_init", argv[2]);
  *(void **)&initPtr = dlsym(lib, sym);
  *(void **)&entryPtr = dlsym(lib, argv[2]);
  if (!infoPtr || !initPtr || !entryPtr) {
    fprintf(stderr, "run_cuda_bundle: %s has no bundle %s\n", argv[1], argv[2]);
    return 1;
  }
  argv += 2, argc -= 2;
#endif
  if (argc < 3) {
    fprintf(stderr, "usage: %s WEIGHTS OUTDIR [-iters N] [-graph] INPUTS...\n",
            argv[0]);
    return 1;
  }
  for (; argi < argc && argv[argi][0] == '-'; ++argi) {
    if (!strcmp(argv[argi], "-graph"))
      graph = 1;
    else if (!strcmp(argv[argi], "-iters") && argi + 1 < argc)
      iters = atoi(argv[++argi]);
  }
  if ((unsigned)(argc - argi) != INFO.numInputs) {
    fprintf(stderr, "run_cuda_bundle: %s expects %u inputs\n", INFO.networkName,
            INFO.numInputs);
    return 1;
  }
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    printf("no CUDA device is present\n");
    return 2;
  }
  uint8_t *regions[3];
  uint64_t sizes[3] = {INFO.constantSize, INFO.mutableSize,
                       INFO.activationSize};
  for (int i = 0; i < 3; ++i)
    check(cudaMalloc((void **)&regions[i], sizes[i] ? sizes[i] : 64),
          "cudaMalloc");
  void *w = readFile(argv[1], INFO.constantSize);
  check(cudaMemcpy(regions[0], w, INFO.constantSize, cudaMemcpyHostToDevice),
        "uploading the weights");
  for (uint32_t i = 0; i < INFO.numInputs; ++i) {
    const EmberTensorInfo *t = &INFO.inputs[i];
    void *in = readFile(argv[argi + i], t->sizeInBytes);
    check(cudaMemcpy(regions[1] + t->offset, in, t->sizeInBytes,
                     cudaMemcpyHostToDevice),
          "uploading an input");
    free(in);
  }
  cudaStream_t s;
  check(cudaStreamCreate(&s), "cudaStreamCreate");
  check((cudaError_t)INIT(), "loading the kernels");
  cudaGraphExec_t exec = NULL;
  if (graph) {
    cudaGraph_t g;
    check(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), "capture");
    check((cudaError_t)ENTRY(regions[0], regions[1], regions[2], s), "run");
    check(cudaStreamEndCapture(s, &g), "capture");
    check(cudaGraphInstantiate(&exec, g, 0), "instantiate");
  }
  int runs = iters > 0 ? iters + 3 : 1;
  double start = 0;
  for (int r = 0; r < runs; ++r) {
    if (r == runs - iters && iters > 0) {
      check(cudaStreamSynchronize(s), "sync");
      start = now();
    }
    if (exec)
      check(cudaGraphLaunch(exec, s), "cudaGraphLaunch");
    else
      check((cudaError_t)ENTRY(regions[0], regions[1], regions[2], s), "run");
  }
  check(cudaStreamSynchronize(s), "running the network");
  if (iters > 0)
    printf("latency_ms %.4f\n", (now() - start) / iters);
  for (uint32_t i = 0; i < INFO.numOutputs; ++i) {
    const EmberTensorInfo *t = &INFO.outputs[i];
    void *out = malloc(t->sizeInBytes ? t->sizeInBytes : 1);
    char path[4096];
    check(cudaMemcpy(out, regions[1] + t->offset, t->sizeInBytes,
                     cudaMemcpyDeviceToHost),
          "downloading an output");
    snprintf(path, sizeof path, "%s/out%u.bin", argv[2], i);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(out, 1, t->sizeInBytes, f) != t->sizeInBytes) {
      fprintf(stderr, "run_cuda_bundle: cannot write %s\n", path);
      return 1;
    }
    fclose(f);
    free(out);
  }
  return 0;
}
