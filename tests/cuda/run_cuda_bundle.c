/*===- run_cuda_bundle.c - Runs one CUDA bundle (C99, tests and GPU script)
 *-===*
 *
 * Built with -DNET=<name> -include <name>.h, linked with <name>.o and the
 * CUDA runtime (plus the libraries the header names); or with
 * -DEMBER_DLOPEN, taking "LIB.so NAME" first and loading the bundle from a
 * shared object (scripts/gpu-test.sh's ONNX node tests). Usage:
 *   run_cuda_bundle WEIGHTS.bin OUTDIR [-iters N] [-graph] [-sync-each-step]
 *                   IN0.bin IN1.bin ...
 * reads each input as raw bytes (exactly its size), runs the network, and
 * writes OUTDIR/out<i>.bin; with -iters it also prints the mean latency of N
 * runs (after 3 warm-up runs) as "latency_ms <value>". The first run is
 * always eager and synchronized; -graph then captures the entry into a CUDA
 * graph (thread-local mode) and replays it, or says why not and goes on
 * with stream launches. -sync-each-step makes the bundle wait for every
 * step and name the one that fails (no graph then). Errors are printed with the
 *runtime's name and text (cudaErrorX: ...) or the library status's name, and
 *the bundle's notes (library ops running their generated kernel) after init.
 *Exit codes: 0 done, 2 no CUDA device is present, 1 any other error.
 *
 *===----------------------------------------------------------------------===*/
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../backends/CUDA/host/LibStatus.h"

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
static const char *(*notesPtr)(void);
static void (*syncEachStepPtr)(int);
static const char *(*failedStepPtr)(void);
#define INFO (*infoPtr)
#define ENTRY entryPtr
#define INIT initPtr
#define NOTES notesPtr
#define SYNC_EACH_STEP syncEachStepPtr
#define FAILED_STEP failedStepPtr
#else
#define INFO CAT(NET, _info)
#define ENTRY NET
#define INIT CAT(NET, _init)
#define NOTES CAT(NET, _notes)
#define SYNC_EACH_STEP CAT(NET, _sync_each_step)
#define FAILED_STEP CAT(NET, _failed_step)
#endif

#ifdef CHECK_MESSAGES
/* -DCHECK_MESSAGES=NAME_CHECK_MESSAGES for a bundle with run-time checks. */
static const char *const kCheckMessages[] = CHECK_MESSAGES;
#endif

/* "cudaErrorX: text", the library status's name, or the failed run-time
   check (30000 + k, docs/Bundle.md "Return codes"). */
static void describe(int rc, char *buf, size_t n) {
  const char *lib = ember_lib_status_name(rc);
#ifdef CHECK_MESSAGES
  int k = rc - 30000;
  if (k > 0 && k <= (int)(sizeof kCheckMessages / sizeof *kCheckMessages)) {
    snprintf(buf, n, "%s (check %d)", kCheckMessages[k - 1], k);
    return;
  }
#endif
  if (lib)
    snprintf(buf, n, "%s (%d)", lib, rc % 10000);
  else
    snprintf(buf, n, "%s: %s", cudaGetErrorName((cudaError_t)rc),
             cudaGetErrorString((cudaError_t)rc));
}

static int check(int rc, const char *what) {
  char text[256];
  if (rc == 0)
    return 0;
  describe(rc, text, sizeof text);
  fprintf(stderr, "run_cuda_bundle: %s: %s\n", what, text);
  exit(1);
}

/* check() for a call of the entry: names the failing step where the bundle
   knows it (always for a failed enqueue; for faults with -sync-each-step). */
static void checkRun(int rc, const char *what) {
  if (rc != 0 && *FAILED_STEP())
    fprintf(stderr, "run_cuda_bundle: %s failed at %s\n", what, FAILED_STEP());
  check(rc, what);
}

/* Captures the entry into a CUDA graph; NULL (said why) where the runtime
   refuses, and the runs stay stream launches. */
static cudaGraphExec_t capture(uint8_t **regions, cudaStream_t s) {
  cudaGraph_t g = NULL;
  cudaGraphExec_t exec = NULL;
  char text[256];
  const char *step = "starting the capture";
  int rc = cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal);
  if (rc == 0) {
    int run = ENTRY(regions[0], regions[1], regions[2], s);
    step = "capturing";
    rc = cudaStreamEndCapture(s, &g);
    if (run)
      rc = run;
    if (rc == 0) {
      step = "instantiating";
      rc = cudaGraphInstantiate(&exec, g, 0);
    }
    if (g)
      cudaGraphDestroy(g);
  }
  if (rc == 0)
    return exec;
  cudaGetLastError();
  describe(rc, text, sizeof text);
  /* The step that broke the capture, where the bundle names one (a loop's
     test, which reads the loop flag back). */
  fprintf(stderr,
          "run_cuda_bundle: no CUDA graph (%s: %s%s%s); running with stream "
          "launches\n",
          step, FAILED_STEP(), *FAILED_STEP() ? ": " : "", text);
  return NULL;
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
  int count = 0, iters = 0, graph = 0, syncEachStep = 0, argi = 3;
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
  snprintf(sym, sizeof sym, "%s_notes", argv[2]);
  *(void **)&notesPtr = dlsym(lib, sym);
  snprintf(sym, sizeof sym, "%s_sync_each_step", argv[2]);
  *(void **)&syncEachStepPtr = dlsym(lib, sym);
  snprintf(sym, sizeof sym, "%s_failed_step", argv[2]);
  *(void **)&failedStepPtr = dlsym(lib, sym);
  if (!infoPtr || !initPtr || !entryPtr || !notesPtr || !syncEachStepPtr ||
      !failedStepPtr) {
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
    else if (!strcmp(argv[argi], "-sync-each-step"))
      syncEachStep = 1;
    else if (!strcmp(argv[argi], "-iters") && argi + 1 < argc)
      iters = atoi(argv[++argi]);
  }
  if ((unsigned)(argc - argi) != INFO.numInputs) {
    fprintf(stderr, "run_cuda_bundle: %s expects %u inputs\n", INFO.networkName,
            INFO.numInputs);
    return 1;
  }
  cudaError_t devices = cudaGetDeviceCount(&count);
  if (devices != cudaSuccess || count == 0) {
    if (devices != cudaSuccess)
      printf("no CUDA device is present (%s: %s)\n", cudaGetErrorName(devices),
             cudaGetErrorString(devices));
    else
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
  check(INIT(), "loading the kernels and planning the library calls");
  if (*NOTES())
    fputs(NOTES(), stderr);
  /* One eager, synchronized run first: the libraries' lazy work happens
     outside any capture, and a fault is reported here. */
  SYNC_EACH_STEP(syncEachStep);
  checkRun(ENTRY(regions[0], regions[1], regions[2], s), "the first run");
  check(cudaStreamSynchronize(s),
        syncEachStep ? "the first run"
                     : "the first run (rerun with -sync-each-step to name "
                       "the failing step)");
  cudaGraphExec_t exec = graph && !syncEachStep ? capture(regions, s) : NULL;
  int runs = iters > 0 ? iters + 3 : exec ? 1 : 0;
  /* The outputs written by the replays, not left from the eager run. */
  for (uint32_t i = 0; exec && i < INFO.numOutputs; ++i)
    check(cudaMemset(regions[1] + INFO.outputs[i].offset, 0xFF,
                     INFO.outputs[i].sizeInBytes),
          "clearing the outputs");
  double start = 0;
  for (int r = 0; r < runs; ++r) {
    if (r == runs - iters && iters > 0) {
      check(cudaStreamSynchronize(s), "sync");
      start = now();
    }
    if (exec)
      check(cudaGraphLaunch(exec, s), "cudaGraphLaunch");
    else
      checkRun(ENTRY(regions[0], regions[1], regions[2], s), "run");
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
