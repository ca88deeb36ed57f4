/*===- LibOps.h - cuBLASLt/cuDNN calls of the CUDA backend (C99) -*- C -*-===*
 *
 * The host side of the library ops (MatMul through cuBLASLt, Conv through
 * cuDNN). LibOps.c is compiled three ways: into the compiler for in-process
 * runs, by clang-19 to LLVM bitcode that is linked into every CUDA bundle's
 * host code (so a bundle needs only the CUDA libraries), and into the
 * tests' host stand-ins. An op is described by an array of int64 (the
 * layout below); it is planned once (descriptors, algorithm, workspace
 * size) and run as often as needed.
 *
 *===----------------------------------------------------------------------===*/
#ifndef EMBER_BACKENDS_CUDA_HOST_LIBOPS_H
#define EMBER_BACKENDS_CUDA_HOST_LIBOPS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Operand addresses: a region (0 constants, 1 mutable, 2 activations) and a
   byte offset, two fields each. */

/* Op kinds (field 0). */
#define EMBER_LIB_GEMM 1 /* cuBLASLt */
#define EMBER_LIB_CONV 2 /* cuDNN */

/* GEMM: D[b] = A[b] * B[b] (+ bias, relu), row-major, fp32. */
enum {
  EMBER_GEMM_BATCH = 1,
  EMBER_GEMM_M,
  EMBER_GEMM_N,
  EMBER_GEMM_K,
  EMBER_GEMM_EPILOGUE,                   /* EMBER_EPI_* */
  EMBER_GEMM_A,                          /* region, offset: m x k */
  EMBER_GEMM_B = EMBER_GEMM_A + 2,       /* k x n */
  EMBER_GEMM_D = EMBER_GEMM_B + 2,       /* m x n */
  EMBER_GEMM_BIAS = EMBER_GEMM_D + 2,    /* n (when the epilogue has one) */
  EMBER_GEMM_MATH = EMBER_GEMM_BIAS + 2, /* EMBER_MATH_* */
  EMBER_GEMM_FIELDS
};
/* The arithmetic (-cuda-math): fp32 FMA, or TF32 tensor cores. */
#define EMBER_MATH_FP32 0
#define EMBER_MATH_TF32 1
#define EMBER_EPI_NONE 0
#define EMBER_EPI_BIAS 1
#define EMBER_EPI_RELU_BIAS 2

/* CONV: y = act(conv(x, w) + bias [+ residual]), NCHW, MCHW filter, fp32. */
enum {
  EMBER_CONV_N = 1,
  EMBER_CONV_C,
  EMBER_CONV_H,
  EMBER_CONV_W,
  EMBER_CONV_M,
  EMBER_CONV_KH,
  EMBER_CONV_KW,
  EMBER_CONV_OH,
  EMBER_CONV_OW,
  EMBER_CONV_PAD_H, /* symmetric */
  EMBER_CONV_PAD_W,
  EMBER_CONV_STRIDE_H,
  EMBER_CONV_STRIDE_W,
  EMBER_CONV_DIL_H,
  EMBER_CONV_DIL_W,
  EMBER_CONV_GROUP,
  EMBER_CONV_ACT,      /* EMBER_ACT_* */
  EMBER_CONV_ACT_COEF, /* clipped relu ceiling, as float bits */
  EMBER_CONV_HAS_RES,
  EMBER_CONV_X,
  EMBER_CONV_WEIGHTS = EMBER_CONV_X + 2,
  EMBER_CONV_BIAS = EMBER_CONV_WEIGHTS + 2,
  EMBER_CONV_Y = EMBER_CONV_BIAS + 2,
  EMBER_CONV_RES = EMBER_CONV_Y + 2,
  EMBER_CONV_MATH = EMBER_CONV_RES + 2, /* EMBER_MATH_* */
  EMBER_CONV_FIELDS
};
#define EMBER_ACT_NONE 0
#define EMBER_ACT_RELU 1
#define EMBER_ACT_CLIPPED_RELU 2 /* min(max(x, 0), coef) */
#define EMBER_ACT_SIGMOID 3

/* The most workspace one op may use (one buffer per network, sized by the
   largest need). */
#define EMBER_LIB_MAX_WORKSPACE (64u << 20)

/* Per-network state: the library handles, the shared workspace and, in
   bundles, lines saying which ops run their generated fallback. */
#define EMBER_LIB_NOTES_BYTES 1024
typedef struct EmberLibContext {
  void *cublasLt;
  void *cudnn;
  void *workspace;
  size_t workspaceSize;
  char notes[EMBER_LIB_NOTES_BYTES];
} EmberLibContext;
#define EMBER_LIB_CONTEXT_BYTES (32 + EMBER_LIB_NOTES_BYTES)
#define EMBER_LIB_NOTES_OFFSET 32

/* Storage for one planned op (opaque; descriptors and the algorithm). */
#define EMBER_LIB_PLAN_BYTES 512
typedef struct EmberLibPlan {
  unsigned long long words[EMBER_LIB_PLAN_BYTES / 8];
} EmberLibPlan;

/* Plans op desc (creating ctx's handles on first use) on the current
   device. Returns 0, a cudaError_t, 10000 + a cublasStatus_t or
   20000 + a cudnnStatus_t. */
int ember_lib_plan(EmberLibContext *ctx, EmberLibPlan *plan,
                   const long long *desc);
/* The same for an op known to be a GEMM / a convolution (bundles call
   these, so a bundle without GEMMs does not reference cuBLASLt). */
int ember_lib_plan_gemm(EmberLibContext *ctx, EmberLibPlan *plan,
                        const long long *desc);
int ember_lib_plan_conv(EmberLibContext *ctx, EmberLibPlan *plan,
                        const long long *desc);
/* Bundles: plans a GEMM / a convolution; where the library refuses,
   releases what was made, sets *fallback, appends "NAME: cuDNN cannot run
   it (planning returned STATUS); running its generated kernel instead" to
   ctx->notes and returns 0: the bundle then launches the op's generated
   kernel. */
int ember_lib_try_gemm(EmberLibContext *ctx, EmberLibPlan *plan,
                       const long long *desc, const char *name,
                       unsigned char *fallback);
int ember_lib_try_conv(EmberLibContext *ctx, EmberLibPlan *plan,
                       const long long *desc, const char *name,
                       unsigned char *fallback);
/* Allocates the workspace once every op is planned. */
int ember_lib_finish(EmberLibContext *ctx);
/* Enqueues the planned op on stream; r0..r2 are the region bases. */
int ember_lib_run(EmberLibContext *ctx, EmberLibPlan *plan,
                  const long long *desc, unsigned char *r0, unsigned char *r1,
                  unsigned char *r2, void *stream);
int ember_lib_run_gemm(EmberLibContext *ctx, EmberLibPlan *plan,
                       const long long *desc, unsigned char *r0,
                       unsigned char *r1, unsigned char *r2, void *stream);
int ember_lib_run_conv(EmberLibContext *ctx, EmberLibPlan *plan,
                       const long long *desc, unsigned char *r0,
                       unsigned char *r1, unsigned char *r2, void *stream);
/* Releases a planned op's descriptors. */
void ember_lib_release(EmberLibPlan *plan, const long long *desc);
/* Releases the handles and the workspace. */
void ember_lib_destroy(EmberLibContext *ctx);

#ifdef __cplusplus
}
#endif

#endif
