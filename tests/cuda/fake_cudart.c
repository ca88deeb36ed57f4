/*===- fake_cudart.c - A host stand-in for the CUDA runtime (tests only) --===*
 *
 * Implements the CUDA runtime functions that a CUDA bundle's host code and
 * run_cuda_bundle.c call, over host memory: "device" pointers are host
 * pointers, and the "library" is a shared object built from the bundle's
 * CUDA C with HostEmulation.h (path in $EMBER_FAKE_KERNELS). Linking a
 * bundle against this instead of cudart runs its real launch code (library
 * load, kernel lookup by name, cudaLaunchConfig_t, argument arrays) without
 * a GPU. cudaLibraryLoadData also checks that the image it is given is the
 * embedded cubin (an ELF file). With fake_cublaslt.c and fake_cudnn.c it
 * also runs the bundle's cuBLASLt and cuDNN calls.
 *
 *===----------------------------------------------------------------------===*/
#include <cuda_runtime_api.h>

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef void (*KernelFn)(unsigned char *, unsigned char *, unsigned char *);
typedef void (*LaunchFn)(KernelFn, long long, long long, unsigned char *,
                         unsigned char *, unsigned char *);
static void *lib;
static int launches;

cudaError_t cudaGetDeviceCount(int *count) {
  *count = 1;
  return cudaSuccess;
}
const char *cudaGetErrorString(cudaError_t e) { return "fake cudart error"; }
cudaError_t cudaMalloc(void **p, size_t size) {
  *p = aligned_alloc(256, (size + 255) / 256 * 256);
  memset(*p, 0xA5, size); /* not zero: a kernel that forgets to write shows */
  return *p ? cudaSuccess : cudaErrorMemoryAllocation;
}
cudaError_t cudaMemcpy(void *d, const void *s, size_t n,
                       enum cudaMemcpyKind k) {
  memcpy(d, s, n);
  return cudaSuccess;
}
cudaError_t cudaMemcpyAsync(void *d, const void *s, size_t n,
                            enum cudaMemcpyKind k, cudaStream_t st) {
  if (st != (cudaStream_t)&launches)
    return cudaErrorInvalidResourceHandle;
  memmove(d, s, n);
  return cudaSuccess;
}
cudaError_t cudaFree(void *p) {
  free(p);
  return cudaSuccess;
}
cudaError_t cudaStreamCreate(cudaStream_t *s) {
  *s = (cudaStream_t)&launches;
  return cudaSuccess;
}
/* cudaStreamCreate for the host emulation (C++), which has no CUDA types:
 * called through a pointer of exactly this type, not cudaStreamCreate's
 * (a call through a pointer of another function type is undefined; UBSan's
 * -fsanitize=function reports it). */
int ember_fake_stream_create(void **s) {
  return cudaStreamCreate((cudaStream_t *)s);
}
cudaError_t cudaStreamSynchronize(cudaStream_t s) { return cudaSuccess; }
cudaError_t cudaStreamBeginCapture(cudaStream_t s,
                                   enum cudaStreamCaptureMode m) {
  return cudaErrorNotSupported;
}
cudaError_t cudaStreamEndCapture(cudaStream_t s, cudaGraph_t *g) {
  return cudaErrorNotSupported;
}
cudaError_t cudaGraphInstantiate(cudaGraphExec_t *e, cudaGraph_t g,
                                 unsigned long long f) {
  return cudaErrorNotSupported;
}
cudaError_t cudaGraphLaunch(cudaGraphExec_t e, cudaStream_t s) {
  return cudaErrorNotSupported;
}

cudaError_t cudaLibraryLoadData(cudaLibrary_t *library, const void *code,
                                enum cudaJitOption *o, void **ov,
                                unsigned int no, enum cudaLibraryOption *lo,
                                void **lov, unsigned int nlo) {
  if (memcmp(code, "\177ELF", 4) != 0) {
    fprintf(stderr, "fake cudart: the image is not a cubin\n");
    return cudaErrorInvalidKernelImage;
  }
  lib = dlopen(getenv("EMBER_FAKE_KERNELS"), RTLD_NOW);
  if (!lib) {
    fprintf(stderr, "fake cudart: %s\n", dlerror());
    return cudaErrorInvalidKernelImage;
  }
  *library = (cudaLibrary_t)lib;
  return cudaSuccess;
}

cudaError_t cudaLibraryGetKernel(cudaKernel_t *k, cudaLibrary_t l,
                                 const char *name) {
  *k = (cudaKernel_t)dlsym((void *)l, name);
  return *k ? cudaSuccess : cudaErrorSymbolNotFound;
}

cudaError_t cudaLaunchKernelExC(const cudaLaunchConfig_t *c, const void *f,
                                void **args) {
  LaunchFn launch = (LaunchFn)dlsym(lib, "ember_emu_launch");
  if (c->gridDim.y != 1 || c->gridDim.z != 1 || c->blockDim.y != 1 ||
      c->blockDim.z != 1 || c->dynamicSmemBytes || c->numAttrs ||
      c->stream != (cudaStream_t)&launches || !launch)
    return cudaErrorInvalidConfiguration;
  launch((KernelFn)f, c->gridDim.x, c->blockDim.x, *(unsigned char **)args[0],
         *(unsigned char **)args[1], *(unsigned char **)args[2]);
  ++launches;
  return cudaSuccess;
}
