/*===- LibOpsLoader.c - LibOps.c for in-process runs (dlopen) -------------===*
 *
 * The in-process CUDA runtime uses LibOps.c with its cuBLASLt and cuDNN
 * calls routed through pointers that ember_lib_load() fills with dlopen
 * and dlsym, so the compiler and tools do not depend on those libraries.
 *
 *===----------------------------------------------------------------------===*/
#ifndef _GNU_SOURCE /* LLVM_DEFINITIONS may put it on the command line */
#define _GNU_SOURCE
#endif
#define EMBER_LIBOPS_DYNAMIC 1
#include "LibOps.c"

#include <dlfcn.h>
#include <stdio.h>

struct EmberLibFns ember_lib_fns;

/* dlopens the first of names that loads; NULL if none. */
static void *openAny(const char *const *names) {
  for (; *names; ++names) {
    void *h = dlopen(*names, RTLD_NOW | RTLD_LOCAL);
    if (h)
      return h;
  }
  return NULL;
}

const char *ember_lib_load(int cublasLt, int cudnn) {
  static const char *const ltNames[] = {"libcublasLt.so.13", "libcublasLt.so",
                                        NULL};
  static const char *const dnnNames[] = {"libcudnn.so.9", "libcudnn.so", NULL};
  static char error[256];
  void *h;
#undef EMBER_DECLARE_FN
#define EMBER_LOAD_FN(f)                                                       \
  if (!(*(void **)&ember_lib_fns.p_##f = dlsym(h, #f))) {                      \
    snprintf(error, sizeof(error), "cannot find %s: %s", #f, dlerror());       \
    return error;                                                              \
  }
  if (cublasLt && !ember_lib_fns.p_cublasLtCreate) {
    if (!(h = openAny(ltNames)))
      return "cannot load libcublasLt.so.13 (cuBLASLt); compile with "
             "-cuda-gemm=generated to do without";
    EMBER_CUBLASLT_FNS(EMBER_LOAD_FN)
  }
  if (cudnn && !ember_lib_fns.p_cudnnCreate) {
    if (!(h = openAny(dnnNames)))
      return "cannot load libcudnn.so.9 (cuDNN); compile with "
             "-cuda-conv=generated to do without";
    EMBER_CUDNN_FNS(EMBER_LOAD_FN)
  }
  return NULL;
}
