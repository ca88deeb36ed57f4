/*===- fake_cudart.c - A host stand-in for the CUDA runtime (tests only) --===*
 *
 * Implements the CUDA runtime functions that a CUDA bundle's host code,
 * run_cuda_bundle.c and the in-process runtime (backends/CUDA/CUDAApi.h)
 * call, over host memory: "device" pointers are host pointers, and the
 * "library" is a shared object built from the network's CUDA C with
 * HostEmulation.h (ember_fake_use_kernels, else $EMBER_FAKE_KERNELS). The
 * image given to cudaLibraryLoadData must be the embedded cubin (an ELF
 * file) or PTX text. Stream capture is modelled: launches, copies and the
 * stand-in libraries' calls on a capturing stream are recorded into a
 * graph, and cudaGraphLaunch replays them in order; what capture forbids
 * (synchronizing or allocating while capturing) invalidates it as the
 * runtime does. Copies and memsets must match their cudaMemcpyKind: a
 * "device" side lies inside one cudaMalloc allocation (its requested
 * size), a host side outside every one (cudaErrorInvalidValue otherwise).
 * $EMBER_FAKE_REFUSE lists refusals the tests provoke: "cubin" (only PTX
 * loads), "capture", "instantiate", "cudnn-plan", "cublaslt-plan",
 * "cudnn-load", "fault" (every launch reports an illegal address on the
 * next synchronize).
 *
 *===----------------------------------------------------------------------===*/
#include <cuda_runtime_api.h>
#include <stdint.h>

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef void (*KernelFn)(unsigned char *, unsigned char *, unsigned char *);
typedef void (*LaunchFn)(KernelFn, long long, long long, unsigned char *,
                         unsigned char *, unsigned char *);
typedef int (*ReplayFn)(const void *);

/* A recorded operation: a launch, a copy or a library call. */
typedef struct Node {
  int kind; /* 0 launch, 1 copy, 2 call */
  LaunchFn launch;
  KernelFn fn;
  long long blocks, threads;
  unsigned char *r[3];
  void *dst;
  const void *src;
  size_t bytes;
  ReplayFn replay;
  void *args;
} Node;

typedef struct Graph {
  Node *nodes;
  size_t count, cap;
  int invalid;
} Graph;

typedef struct Stream {
  unsigned magic;
  Graph *capture;      /* non-null while capturing */
  cudaError_t pending; /* reported by the next synchronize */
} Stream;
#define STREAM_MAGIC 0x5742u

typedef struct Kernel {
  KernelFn fn;
  LaunchFn launch;
  struct Kernel *next; /* every handle given out, so it stays reachable */
} Kernel;
/* Kernel handles live as long as the process (as cudart's do until the
 * library is unloaded; the runtime keeps them past that here): listed so
 * that LeakSanitizer sees them reachable. */
static Kernel *kernels;

/* Every live cudaMalloc allocation, at its requested size. */
typedef struct Allocation {
  unsigned char *base;
  size_t size;
  struct Allocation *next;
} Allocation;
static Allocation *allocations;

static void *kernelsOverride;
static cudaError_t lastError;
static int stats[6]; /* cubin, ptx loads; stream, graph launches; replays */
static Stream *capturing; /* the one capturing stream, if any */

int ember_fake_refuses(const char *what) {
  const char *r = getenv("EMBER_FAKE_REFUSE");
  return r && strstr(r, what) != NULL;
}

/* Tests: the kernels' shared object for the next cudaLibraryLoadData. */
void ember_fake_use_kernels(void *handle) { kernelsOverride = handle; }

/* Tests: 0 cubin loads, 1 PTX loads, 2 stream launches, 3 graph launches,
   4 nodes replayed, 5 captures ended with a graph. */
int ember_fake_stat(int which) { return stats[which]; }
void ember_fake_reset_stats(void) { memset(stats, 0, sizeof(stats)); }

static cudaError_t fail(cudaError_t e) { return lastError = e; }

static Stream *asStream(cudaStream_t s) {
  Stream *st = (Stream *)s;
  return st && st->magic == STREAM_MAGIC ? st : NULL;
}

static void append(Graph *g, Node n) {
  if (g->count == g->cap) {
    g->cap = g->cap ? 2 * g->cap : 16;
    g->nodes = (Node *)realloc(g->nodes, g->cap * sizeof(Node));
  }
  g->nodes[g->count++] = n;
}

/* Records a library call on a capturing stream (returns 1), or returns 0
   and the caller runs it now. */
int ember_fake_capture(cudaStream_t s, ReplayFn fn, const void *args,
                       size_t bytes) {
  Stream *st = asStream(s);
  Node n;
  if (!st || !st->capture)
    return 0;
  memset(&n, 0, sizeof(n));
  n.kind = 2;
  n.replay = fn;
  n.args = malloc(bytes);
  memcpy(n.args, args, bytes);
  append(st->capture, n);
  return 1;
}

/* What the runtime forbids while a stream captures invalidates it. */
static int forbiddenInCapture(void) {
  if (!capturing)
    return 0;
  capturing->capture->invalid = 1;
  lastError = cudaErrorStreamCaptureInvalidated;
  return 1;
}

cudaError_t cudaGetDeviceCount(int *count) {
  *count = 1;
  return cudaSuccess;
}
cudaError_t cudaGetLastError(void) {
  cudaError_t e = lastError;
  lastError = cudaSuccess;
  return e;
}
const char *cudaGetErrorName(cudaError_t e) {
  switch (e) {
  case cudaSuccess:
    return "cudaSuccess";
  case cudaErrorIllegalAddress:
    return "cudaErrorIllegalAddress";
  case cudaErrorStreamCaptureUnsupported:
    return "cudaErrorStreamCaptureUnsupported";
  case cudaErrorStreamCaptureInvalidated:
    return "cudaErrorStreamCaptureInvalidated";
  case cudaErrorNoKernelImageForDevice:
    return "cudaErrorNoKernelImageForDevice";
  case cudaErrorInvalidValue:
    return "cudaErrorInvalidValue";
  default:
    return "cudaErrorFake";
  }
}
const char *cudaGetErrorString(cudaError_t e) {
  return e == cudaErrorIllegalAddress ? "an illegal memory access was "
                                        "encountered (fake)"
                                      : "fake cudart error";
}
/* 1 if the n bytes at p lie in one allocation, -1 if they touch one
   without lying in it, 0 if they are host memory. */
static int onDevice(const void *p, size_t n) {
  /* As integers: p may be NULL (a zero-size copy), where pointer
     arithmetic is undefined. */
  uintptr_t b = (uintptr_t)p;
  for (const Allocation *a = allocations; a; a = a->next) {
    uintptr_t lo = (uintptr_t)a->base, hi = lo + a->size;
    if (b < hi && lo < b + n)
      return b >= lo && b + n <= hi ? 1 : -1;
  }
  return 0;
}

/* 1 if the sides of a copy of n bytes are where kind k says. */
static int copyMatches(void *d, const void *s, size_t n,
                       enum cudaMemcpyKind k) {
  int dd = onDevice(d, n), sd = onDevice(s, n);
  if (n == 0 || k == cudaMemcpyDefault)
    return 1;
  if (dd < 0 || sd < 0) {
    fprintf(stderr, "fake cudart: a copy runs past an allocation\n");
    return 0;
  }
  if (dd == (k == cudaMemcpyHostToDevice || k == cudaMemcpyDeviceToDevice) &&
      sd == (k == cudaMemcpyDeviceToHost || k == cudaMemcpyDeviceToDevice))
    return 1;
  fprintf(stderr, "fake cudart: a copy's pointers do not match its kind %d\n",
          (int)k);
  return 0;
}

cudaError_t cudaMalloc(void **p, size_t size) {
  Allocation *a;
  if (forbiddenInCapture())
    return cudaErrorStreamCaptureUnsupported;
  *p = aligned_alloc(256, (size + 255) / 256 * 256 + 256);
  a = (Allocation *)malloc(sizeof(Allocation));
  if (!*p || !a) {
    free(*p);
    free(a);
    return fail(cudaErrorMemoryAllocation);
  }
  memset(*p, 0xA5, size); /* not zero: a kernel that forgets to write shows */
  a->base = (unsigned char *)*p, a->size = size, a->next = allocations;
  allocations = a;
  return cudaSuccess;
}
cudaError_t cudaMemcpy(void *d, const void *s, size_t n,
                       enum cudaMemcpyKind k) {
  if (forbiddenInCapture())
    return cudaErrorStreamCaptureUnsupported;
  if (!copyMatches(d, s, n, k))
    return fail(cudaErrorInvalidValue);
  /* Zero bytes (an empty constant region) may come with null pointers, as
   * cudart allows; memcpy does not. */
  if (n)
    memcpy(d, s, n);
  return cudaSuccess;
}
cudaError_t cudaMemset(void *d, int v, size_t n) {
  if (forbiddenInCapture())
    return cudaErrorStreamCaptureUnsupported;
  if (n && onDevice(d, n) != 1)
    return fail(cudaErrorInvalidValue);
  if (n)
    memset(d, v, n);
  return cudaSuccess;
}
cudaError_t cudaMemcpyAsync(void *d, const void *s, size_t n,
                            enum cudaMemcpyKind k, cudaStream_t st) {
  Stream *str = asStream(st);
  if (!str)
    return fail(cudaErrorInvalidResourceHandle);
  if (!copyMatches(d, s, n, k))
    return fail(cudaErrorInvalidValue);
  if (str->capture) {
    Node node;
    memset(&node, 0, sizeof(node));
    node.kind = 1, node.dst = d, node.src = s, node.bytes = n;
    append(str->capture, node);
    return cudaSuccess;
  }
  if (n)
    memmove(d, s, n);
  return cudaSuccess;
}
cudaError_t cudaFree(void *p) {
  Allocation **a = &allocations, *dead;
  if (!p)
    return cudaSuccess;
  while (*a && (*a)->base != (unsigned char *)p)
    a = &(*a)->next;
  if (!*a)
    return fail(cudaErrorInvalidValue); /* not an allocation's start */
  dead = *a;
  *a = dead->next;
  free(dead);
  free(p);
  return cudaSuccess;
}
cudaError_t cudaStreamCreate(cudaStream_t *s) {
  Stream *st = (Stream *)calloc(1, sizeof(Stream));
  st->magic = STREAM_MAGIC;
  *s = (cudaStream_t)st;
  return cudaSuccess;
}
cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned flags) {
  return cudaStreamCreate(s);
}
cudaError_t cudaStreamDestroy(cudaStream_t s) {
  Stream *st = asStream(s);
  if (!st)
    return fail(cudaErrorInvalidResourceHandle);
  st->magic = 0;
  free(st);
  return cudaSuccess;
}
cudaError_t cudaStreamSynchronize(cudaStream_t s) {
  Stream *st = asStream(s);
  cudaError_t e;
  if (!st)
    return fail(cudaErrorInvalidResourceHandle);
  if (st->capture) {
    st->capture->invalid = 1;
    return fail(cudaErrorStreamCaptureUnsupported);
  }
  e = st->pending;
  st->pending = cudaSuccess;
  return e == cudaSuccess ? e : fail(e);
}

cudaError_t cudaStreamBeginCapture(cudaStream_t s,
                                   enum cudaStreamCaptureMode m) {
  Stream *st = asStream(s);
  if (!st || st->capture || capturing)
    return fail(cudaErrorIllegalState);
  if (ember_fake_refuses("capture"))
    return fail(cudaErrorStreamCaptureUnsupported);
  st->capture = (Graph *)calloc(1, sizeof(Graph));
  capturing = st;
  return cudaSuccess;
}

cudaError_t cudaGraphDestroy(cudaGraph_t g) {
  Graph *gr = (Graph *)g;
  size_t i;
  if (!gr)
    return cudaSuccess;
  for (i = 0; i < gr->count; ++i)
    free(gr->nodes[i].args);
  free(gr->nodes);
  free(gr);
  return cudaSuccess;
}

cudaError_t cudaStreamEndCapture(cudaStream_t s, cudaGraph_t *g) {
  Stream *st = asStream(s);
  Graph *gr;
  if (!st || !st->capture)
    return fail(cudaErrorIllegalState);
  gr = st->capture;
  st->capture = NULL;
  capturing = NULL;
  *g = NULL;
  if (gr->invalid) {
    cudaGraphDestroy((cudaGraph_t)gr);
    return fail(cudaErrorStreamCaptureInvalidated);
  }
  *g = (cudaGraph_t)gr;
  ++stats[5];
  return cudaSuccess;
}

/* An executable graph owns a copy of the nodes (the graph may be
   destroyed right after instantiation). */
cudaError_t cudaGraphInstantiate(cudaGraphExec_t *e, cudaGraph_t g,
                                 unsigned long long f) {
  Graph *src = (Graph *)g, *copy;
  size_t i;
  if (!src || f)
    return fail(cudaErrorInvalidValue);
  if (ember_fake_refuses("instantiate"))
    return fail(cudaErrorNotSupported);
  copy = (Graph *)calloc(1, sizeof(Graph));
  for (i = 0; i < src->count; ++i)
    append(copy, src->nodes[i]);
  for (i = 0; i < src->count; ++i)
    src->nodes[i].args = NULL; /* moved */
  *e = (cudaGraphExec_t)copy;
  return cudaSuccess;
}

cudaError_t cudaGraphExecDestroy(cudaGraphExec_t e) {
  return cudaGraphDestroy((cudaGraph_t)e);
}

static void runLaunch(const Node *n, Stream *st) {
  n->launch(n->fn, n->blocks, n->threads, n->r[0], n->r[1], n->r[2]);
  if (ember_fake_refuses("fault") && st)
    st->pending = cudaErrorIllegalAddress;
}

cudaError_t cudaGraphLaunch(cudaGraphExec_t e, cudaStream_t s) {
  Graph *g = (Graph *)e;
  Stream *st = asStream(s);
  size_t i;
  if (!g || !st || st->capture)
    return fail(cudaErrorInvalidValue);
  ++stats[3];
  for (i = 0; i < g->count; ++i) {
    const Node *n = &g->nodes[i];
    ++stats[4];
    if (n->kind == 0)
      runLaunch(n, st);
    else if (n->kind == 1) {
      if (n->bytes)
        memmove(n->dst, n->src, n->bytes);
    } else if (n->replay(n->args)) {
      fprintf(stderr, "fake cudart: a recorded library call failed\n");
      st->pending = cudaErrorLaunchFailure;
    }
  }
  return cudaSuccess;
}

static int isPtx(const char *text) {
  return strstr(text, ".version") != NULL && strstr(text, ".target") != NULL;
}

cudaError_t cudaLibraryLoadData(cudaLibrary_t *library, const void *code,
                                enum cudaJitOption *o, void **ov,
                                unsigned int no, enum cudaLibraryOption *lo,
                                void **lov, unsigned int nlo) {
  void *lib;
  int cubin = memcmp(code, "\177ELF", 4) == 0;
  if (cubin && ember_fake_refuses("cubin"))
    return fail(cudaErrorNoKernelImageForDevice);
  if (!cubin && !isPtx((const char *)code)) {
    fprintf(stderr, "fake cudart: the image is neither a cubin nor PTX\n");
    return fail(cudaErrorInvalidKernelImage);
  }
  lib = kernelsOverride ? kernelsOverride
                        : dlopen(getenv("EMBER_FAKE_KERNELS"), RTLD_NOW);
  if (!lib) {
    fprintf(stderr, "fake cudart: %s\n", dlerror());
    return fail(cudaErrorInvalidKernelImage);
  }
  ++stats[cubin ? 0 : 1];
  *library = (cudaLibrary_t)lib;
  return cudaSuccess;
}

cudaError_t cudaLibraryUnload(cudaLibrary_t l) { return cudaSuccess; }

cudaError_t cudaLibraryGetKernel(cudaKernel_t *k, cudaLibrary_t l,
                                 const char *name) {
  Kernel *kern;
  char marker[512];
  KernelFn fn = (KernelFn)dlsym((void *)l, name);
  LaunchFn launch;
  /* Kernels with barriers (HostEmulation.h EMBER_EMU_COOPERATIVE) run
     their blocks' threads as fibers. */
  snprintf(marker, sizeof(marker), "%s_cooperative", name);
  launch = (LaunchFn)dlsym((void *)l, dlsym((void *)l, marker)
                                          ? "ember_emu_launch_cooperative"
                                          : "ember_emu_launch");
  if (!fn || !launch)
    return fail(cudaErrorSymbolNotFound);
  kern = (Kernel *)malloc(sizeof(Kernel));
  kern->fn = fn;
  kern->launch = launch;
  kern->next = kernels;
  kernels = kern;
  *k = (cudaKernel_t)kern;
  return cudaSuccess;
}

cudaError_t cudaLaunchKernelExC(const cudaLaunchConfig_t *c, const void *f,
                                void **args) {
  const Kernel *k = (const Kernel *)f;
  Stream *st = asStream(c->stream);
  Node n;
  if (c->gridDim.y != 1 || c->gridDim.z != 1 || c->blockDim.y != 1 ||
      c->blockDim.z != 1 || c->dynamicSmemBytes || c->numAttrs || !st || !k)
    return fail(cudaErrorInvalidConfiguration);
  memset(&n, 0, sizeof(n));
  n.launch = k->launch, n.fn = k->fn;
  n.blocks = c->gridDim.x, n.threads = c->blockDim.x;
  for (int i = 0; i < 3; ++i)
    n.r[i] = *(unsigned char **)args[i];
  if (st->capture) {
    append(st->capture, n);
    return cudaSuccess;
  }
  ++stats[2];
  runLaunch(&n, st);
  return cudaSuccess;
}

/* LibOpsLoader.c's entry for in-process runs: the stand-ins are linked in
   already; "cudnn-load" pretends libcudnn.so.9 is missing. */
const char *ember_lib_load(int cublasLt, int cudnn) {
  if (cudnn && ember_fake_refuses("cudnn-load"))
    return "cannot load libcudnn.so.9 (fake)";
  return NULL;
}
