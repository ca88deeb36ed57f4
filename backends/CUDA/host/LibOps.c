/*===- LibOps.c - cuBLASLt and cuDNN calls of the CUDA backend (C99) ------===*
 *
 * See LibOps.h. GEMM: row-major D = A * B is the column-major product
 * D^T = B^T * A^T, so cuBLASLt's "A" is our B (n x k, ld n), its "B" is our
 * A (k x m, ld k) and D is n x m (ld n); batches are strided. The bias
 * epilogue adds a vector over D^T's rows, i.e. per output column. Compute
 * type CUBLAS_COMPUTE_32F (fp32 FMA), or CUBLAS_COMPUTE_32F_FAST_TF32 under
 * EMBER_MATH_TF32. CONV: cuDNN's convolution API (cross-correlation,
 * groups, CUDNN_FMA_MATH, or TF32 tensor-core math allowed), bias, residual
 * and activation fused into cudnnConvolutionBiasActivationForward where
 * cuDNN allows it (see fuseEpilogue), else cudnnAddTensor for the bias and
 * cudnnActivationForward in place after the convolution, a residual copied
 * into y first and accumulated (beta = 1).
 *
 *===----------------------------------------------------------------------===*/
#include "LibOps.h"
#include "LibStatus.h"

#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>

#define memset __builtin_memset
#define memcpy __builtin_memcpy

#ifdef EMBER_LIBOPS_DYNAMIC /* in-process: calls through dlsym'ed pointers */
#include "LibOpsDynamic.h"
#endif

#define LT_ERR(s) (10000 + (int)(s))
#define DNN_ERR(s) (20000 + (int)(s))
#define TRY_LT(call)                                                           \
  do {                                                                         \
    cublasStatus_t s_ = (call);                                                \
    if (s_ != CUBLAS_STATUS_SUCCESS)                                           \
      return LT_ERR(s_);                                                       \
  } while (0)
#define TRY_DNN(call)                                                          \
  do {                                                                         \
    cudnnStatus_t s_ = (call);                                                 \
    if (s_ != CUDNN_STATUS_SUCCESS)                                            \
      return DNN_ERR(s_);                                                      \
  } while (0)
#define TRY_RT(call)                                                           \
  do {                                                                         \
    cudaError_t e_ = (call);                                                   \
    if (e_ != cudaSuccess)                                                     \
      return (int)e_;                                                          \
  } while (0)

typedef struct GemmPlan {
  cublasLtMatmulDesc_t op;
  cublasLtMatrixLayout_t a, b, d;
  cublasLtMatmulAlgo_t algo;
  size_t workspace;
} GemmPlan;

typedef struct ConvPlan {
  cudnnTensorDescriptor_t x, y, bias;
  cudnnFilterDescriptor_t w;
  cudnnConvolutionDescriptor_t conv;
  cudnnActivationDescriptor_t act;
  cudnnConvolutionFwdAlgo_t algo;
  size_t workspace;
  int fused; /* bias, residual and activation in the convolution call */
} ConvPlan;

typedef char GemmPlanFits[sizeof(GemmPlan) <= sizeof(EmberLibPlan) ? 1 : -1];
typedef char ConvPlanFits[sizeof(ConvPlan) <= sizeof(EmberLibPlan) ? 1 : -1];
typedef char ContextSize[sizeof(EmberLibContext) == EMBER_LIB_CONTEXT_BYTES &&
                                 __builtin_offsetof(EmberLibContext, notes) ==
                                     EMBER_LIB_NOTES_OFFSET
                             ? 1
                             : -1];

static unsigned char *at(const long long *f, unsigned char *r0,
                         unsigned char *r1, unsigned char *r2) {
  unsigned char *base = f[0] == 0 ? r0 : f[0] == 1 ? r1 : r2;
  return base + f[1];
}

/* A column-major rows x cols fp32 layout, batched with a stride. */
static int layout(cublasLtMatrixLayout_t *l, long long rows, long long cols,
                  long long batch) {
  TRY_LT(cublasLtMatrixLayoutCreate(l, CUDA_R_32F, (uint64_t)rows,
                                    (uint64_t)cols, rows));
  if (batch > 1) {
    int32_t count = (int32_t)batch;
    int64_t stride = rows * cols;
    TRY_LT(cublasLtMatrixLayoutSetAttribute(
        *l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof(count)));
    TRY_LT(cublasLtMatrixLayoutSetAttribute(
        *l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride,
        sizeof(stride)));
  }
  return 0;
}

static int planGemm(EmberLibContext *ctx, GemmPlan *p, const long long *d) {
  cublasLtHandle_t lt;
  long long batch = d[EMBER_GEMM_BATCH], m = d[EMBER_GEMM_M],
            n = d[EMBER_GEMM_N], k = d[EMBER_GEMM_K];
  int rc;
  if (!ctx->cublasLt) {
    TRY_LT(cublasLtCreate(&lt));
    ctx->cublasLt = lt;
  }
  lt = (cublasLtHandle_t)ctx->cublasLt;
  TRY_LT(cublasLtMatmulDescCreate(&p->op,
                                  d[EMBER_GEMM_MATH] == EMBER_MATH_TF32
                                      ? CUBLAS_COMPUTE_32F_FAST_TF32
                                      : CUBLAS_COMPUTE_32F,
                                  CUDA_R_32F));
  if (d[EMBER_GEMM_EPILOGUE] != EMBER_EPI_NONE) {
    cublasLtEpilogue_t epi = d[EMBER_GEMM_EPILOGUE] == EMBER_EPI_RELU_BIAS
                                 ? CUBLASLT_EPILOGUE_RELU_BIAS
                                 : CUBLASLT_EPILOGUE_BIAS;
    TRY_LT(cublasLtMatmulDescSetAttribute(p->op, CUBLASLT_MATMUL_DESC_EPILOGUE,
                                          &epi, sizeof(epi)));
  }
  if ((rc = layout(&p->a, n, k, batch)) || (rc = layout(&p->b, k, m, batch)) ||
      (rc = layout(&p->d, n, m, batch)))
    return rc;
  cublasLtMatmulPreference_t pref;
  TRY_LT(cublasLtMatmulPreferenceCreate(&pref));
  uint64_t limit = EMBER_LIB_MAX_WORKSPACE;
  cublasLtMatmulHeuristicResult_t best;
  int found = 0;
  cublasStatus_t s = cublasLtMatmulPreferenceSetAttribute(
      pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &limit, sizeof(limit));
  /* Region bases are only promised 64-byte alignment: tell cuBLASLt what
     each operand's offset keeps (its heuristics assume 256 otherwise).
     cuBLASLt's "A" is our B, "B" our A. */
  const long long fields[4] = {EMBER_GEMM_B, EMBER_GEMM_A, EMBER_GEMM_D,
                               EMBER_GEMM_D};
  const cublasLtMatmulPreferenceAttributes_t attrs[4] = {
      CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES,
      CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
      CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES,
      CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES};
  for (int i = 0; i < 4 && s == CUBLAS_STATUS_SUCCESS; ++i) {
    uint32_t align = 64;
    while (align > 4 && d[fields[i] + 1] % align)
      align /= 2;
    s = cublasLtMatmulPreferenceSetAttribute(pref, attrs[i], &align,
                                             sizeof(align));
  }
  if (s == CUBLAS_STATUS_SUCCESS)
    s = cublasLtMatmulAlgoGetHeuristic(lt, p->op, p->a, p->b, p->d, p->d, pref,
                                       1, &best, &found);
  cublasLtMatmulPreferenceDestroy(pref);
  if (s != CUBLAS_STATUS_SUCCESS)
    return LT_ERR(s);
  if (found < 1)
    return LT_ERR(CUBLAS_STATUS_NOT_SUPPORTED);
  p->algo = best.algo;
  p->workspace = best.workspaceSize;
  return 0;
}

static int runGemm(EmberLibContext *ctx, GemmPlan *p, const long long *d,
                   unsigned char *r0, unsigned char *r1, unsigned char *r2,
                   cudaStream_t stream) {
  const float one = 1.f, zero = 0.f;
  void *dst = at(d + EMBER_GEMM_D, r0, r1, r2);
  if (d[EMBER_GEMM_EPILOGUE] != EMBER_EPI_NONE) {
    const void *bias = at(d + EMBER_GEMM_BIAS, r0, r1, r2);
    TRY_LT(cublasLtMatmulDescSetAttribute(
        p->op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias)));
  }
  TRY_LT(cublasLtMatmul((cublasLtHandle_t)ctx->cublasLt, p->op, &one,
                        at(d + EMBER_GEMM_B, r0, r1, r2), p->a,
                        at(d + EMBER_GEMM_A, r0, r1, r2), p->b, &zero, dst,
                        p->d, dst, p->d, &p->algo, ctx->workspace, p->workspace,
                        stream));
  return 0;
}

/* cudnnConvolutionBiasActivationForward takes the bias, the residual and
   the activation into the convolution where cuDNN allows it: ReLU with any
   algorithm, no activation (identity) with IMPLICIT_PRECOMP_GEMM only. */
static int fuseEpilogue(ConvPlan *p, const long long *d) {
  p->fused = d[EMBER_CONV_ACT] == EMBER_ACT_RELU;
  if (d[EMBER_CONV_ACT] == EMBER_ACT_NONE &&
      p->algo == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM) {
    TRY_DNN(cudnnCreateActivationDescriptor(&p->act));
    TRY_DNN(cudnnSetActivationDescriptor(p->act, CUDNN_ACTIVATION_IDENTITY,
                                         CUDNN_PROPAGATE_NAN, 0.0));
    p->fused = 1;
  }
  return 0;
}

/* Math types a heuristic entry may have: FMA (or the default, which is
   FMA under an FMA descriptor); with TF32 also tensor-core math, but never
   CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION (half-precision operands). */
static int mathAllowed(cudnnMathType_t t, int tf32) {
  return t == CUDNN_FMA_MATH || t == CUDNN_DEFAULT_MATH ||
         (tf32 && t == CUDNN_TENSOR_OP_MATH);
}

static int planConv(EmberLibContext *ctx, ConvPlan *p, const long long *d) {
  cudnnHandle_t dnn;
  int n = (int)d[EMBER_CONV_N], m = (int)d[EMBER_CONV_M];
  int group = (int)d[EMBER_CONV_GROUP];
  int tf32 = d[EMBER_CONV_MATH] == EMBER_MATH_TF32;
  if (!ctx->cudnn) {
    TRY_DNN(cudnnCreate(&dnn));
    ctx->cudnn = dnn;
  }
  dnn = (cudnnHandle_t)ctx->cudnn;
  TRY_DNN(cudnnCreateTensorDescriptor(&p->x));
  TRY_DNN(cudnnSetTensor4dDescriptor(
      p->x, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, n, (int)d[EMBER_CONV_C],
      (int)d[EMBER_CONV_H], (int)d[EMBER_CONV_W]));
  TRY_DNN(cudnnCreateTensorDescriptor(&p->y));
  TRY_DNN(cudnnSetTensor4dDescriptor(p->y, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT,
                                     n, m, (int)d[EMBER_CONV_OH],
                                     (int)d[EMBER_CONV_OW]));
  TRY_DNN(cudnnCreateTensorDescriptor(&p->bias));
  TRY_DNN(cudnnSetTensor4dDescriptor(p->bias, CUDNN_TENSOR_NCHW,
                                     CUDNN_DATA_FLOAT, 1, m, 1, 1));
  TRY_DNN(cudnnCreateFilterDescriptor(&p->w));
  TRY_DNN(cudnnSetFilter4dDescriptor(p->w, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW,
                                     m, (int)(d[EMBER_CONV_C] / group),
                                     (int)d[EMBER_CONV_KH],
                                     (int)d[EMBER_CONV_KW]));
  TRY_DNN(cudnnCreateConvolutionDescriptor(&p->conv));
  TRY_DNN(cudnnSetConvolution2dDescriptor(
      p->conv, (int)d[EMBER_CONV_PAD_H], (int)d[EMBER_CONV_PAD_W],
      (int)d[EMBER_CONV_STRIDE_H], (int)d[EMBER_CONV_STRIDE_W],
      (int)d[EMBER_CONV_DIL_H], (int)d[EMBER_CONV_DIL_W],
      CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
  TRY_DNN(cudnnSetConvolutionGroupCount(p->conv, group));
  TRY_DNN(cudnnSetConvolutionMathType(p->conv, tf32 ? CUDNN_DEFAULT_MATH
                                                    : CUDNN_FMA_MATH));
  p->act = NULL;
  if (d[EMBER_CONV_ACT] != EMBER_ACT_NONE) {
    cudnnActivationMode_t mode = d[EMBER_CONV_ACT] == EMBER_ACT_RELU
                                     ? CUDNN_ACTIVATION_RELU
                                 : d[EMBER_CONV_ACT] == EMBER_ACT_CLIPPED_RELU
                                     ? CUDNN_ACTIVATION_CLIPPED_RELU
                                     : CUDNN_ACTIVATION_SIGMOID;
    float coef;
    int32_t bits = (int32_t)d[EMBER_CONV_ACT_COEF];
    memcpy(&coef, &bits, sizeof(coef));
    TRY_DNN(cudnnCreateActivationDescriptor(&p->act));
    TRY_DNN(cudnnSetActivationDescriptor(p->act, mode, CUDNN_PROPAGATE_NAN,
                                         (double)coef));
  }
  /* The fastest algorithm (by cuDNN's heuristics) of an allowed math
     type (FMA; under TF32 also tensor cores, never a conversion to half
     precision) whose workspace, queried again for that algorithm under
     its math type (the heuristic's entry may assume another), fits the
     limit; an algorithm whose query fails is passed over. */
  cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
  int count = 0, i;
  TRY_DNN(cudnnGetConvolutionForwardAlgorithm_v7(
      dnn, p->x, p->w, p->conv, p->y, CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &count,
      perf));
  for (i = 0; i < count; ++i) {
    size_t need = 0;
    if (perf[i].status != CUDNN_STATUS_SUCCESS ||
        !mathAllowed(perf[i].mathType, tf32))
      continue;
    if (tf32)
      TRY_DNN(cudnnSetConvolutionMathType(p->conv, perf[i].mathType));
    if (cudnnGetConvolutionForwardWorkspaceSize(dnn, p->x, p->w, p->conv, p->y,
                                                perf[i].algo, &need) ==
            CUDNN_STATUS_SUCCESS &&
        need <= EMBER_LIB_MAX_WORKSPACE) {
      p->algo = perf[i].algo;
      p->workspace = need;
      return fuseEpilogue(p, d);
    }
  }
  return DNN_ERR(CUDNN_STATUS_NOT_SUPPORTED);
}

static int runConv(EmberLibContext *ctx, ConvPlan *p, const long long *d,
                   unsigned char *r0, unsigned char *r1, unsigned char *r2,
                   cudaStream_t stream) {
  cudnnHandle_t dnn = (cudnnHandle_t)ctx->cudnn;
  const float one = 1.f, zero = 0.f;
  void *y = at(d + EMBER_CONV_Y, r0, r1, r2);
  const void *beta = &zero;
  TRY_DNN(cudnnSetStream(dnn, stream));
  if (p->fused) {
    /* y = act(conv(x, w) + alpha2 * z + bias), z the residual (or y,
       ignored with alpha2 = 0). */
    int res = (int)d[EMBER_CONV_HAS_RES];
    const float alpha2 = res ? 1.f : 0.f;
    TRY_DNN(cudnnConvolutionBiasActivationForward(
        dnn, &one, p->x, at(d + EMBER_CONV_X, r0, r1, r2), p->w,
        at(d + EMBER_CONV_WEIGHTS, r0, r1, r2), p->conv, p->algo,
        ctx->workspace, p->workspace, &alpha2, p->y,
        res ? at(d + EMBER_CONV_RES, r0, r1, r2) : y, p->bias,
        at(d + EMBER_CONV_BIAS, r0, r1, r2), p->act, p->y, y));
    return 0;
  }
  if (d[EMBER_CONV_HAS_RES]) {
    void *res = at(d + EMBER_CONV_RES, r0, r1, r2);
    size_t bytes = (size_t)(d[EMBER_CONV_N] * d[EMBER_CONV_M] *
                            d[EMBER_CONV_OH] * d[EMBER_CONV_OW]) *
                   sizeof(float);
    if (res != y)
      TRY_RT(cudaMemcpyAsync(y, res, bytes, cudaMemcpyDeviceToDevice, stream));
    beta = &one;
  }
  TRY_DNN(cudnnConvolutionForward(
      dnn, &one, p->x, at(d + EMBER_CONV_X, r0, r1, r2), p->w,
      at(d + EMBER_CONV_WEIGHTS, r0, r1, r2), p->conv, p->algo, ctx->workspace,
      p->workspace, beta, p->y, y));
  TRY_DNN(cudnnAddTensor(dnn, &one, p->bias,
                         at(d + EMBER_CONV_BIAS, r0, r1, r2), &one, p->y, y));
  if (p->act)
    TRY_DNN(cudnnActivationForward(dnn, p->act, &one, p->y, y, &zero, p->y, y));
  return 0;
}

/* Records the workspace a planned op needs. */
static int planned(EmberLibContext *ctx, int rc, size_t need) {
  if (rc == 0 && need > ctx->workspaceSize)
    ctx->workspaceSize = need;
  return rc;
}

int ember_lib_plan_gemm(EmberLibContext *ctx, EmberLibPlan *plan,
                        const long long *desc) {
  int rc;
  memset(plan, 0, sizeof(*plan));
  rc = planGemm(ctx, (GemmPlan *)plan, desc);
  return planned(ctx, rc, ((GemmPlan *)plan)->workspace);
}

int ember_lib_plan_conv(EmberLibContext *ctx, EmberLibPlan *plan,
                        const long long *desc) {
  int rc;
  memset(plan, 0, sizeof(*plan));
  rc = planConv(ctx, (ConvPlan *)plan, desc);
  return planned(ctx, rc, ((ConvPlan *)plan)->workspace);
}

int ember_lib_plan(EmberLibContext *ctx, EmberLibPlan *plan,
                   const long long *desc) {
  if (desc[0] == EMBER_LIB_GEMM)
    return ember_lib_plan_gemm(ctx, plan, desc);
  if (desc[0] == EMBER_LIB_CONV)
    return ember_lib_plan_conv(ctx, plan, desc);
  return (int)cudaErrorInvalidValue;
}

int ember_lib_finish(EmberLibContext *ctx) {
  if (ctx->workspaceSize && !ctx->workspace)
    TRY_RT(cudaMalloc(&ctx->workspace, ctx->workspaceSize));
  return 0;
}

int ember_lib_run_gemm(EmberLibContext *ctx, EmberLibPlan *plan,
                       const long long *desc, unsigned char *r0,
                       unsigned char *r1, unsigned char *r2, void *stream) {
  return runGemm(ctx, (GemmPlan *)plan, desc, r0, r1, r2, (cudaStream_t)stream);
}

int ember_lib_run_conv(EmberLibContext *ctx, EmberLibPlan *plan,
                       const long long *desc, unsigned char *r0,
                       unsigned char *r1, unsigned char *r2, void *stream) {
  return runConv(ctx, (ConvPlan *)plan, desc, r0, r1, r2, (cudaStream_t)stream);
}

int ember_lib_run(EmberLibContext *ctx, EmberLibPlan *plan,
                  const long long *desc, unsigned char *r0, unsigned char *r1,
                  unsigned char *r2, void *stream) {
  if (desc[0] == EMBER_LIB_GEMM)
    return ember_lib_run_gemm(ctx, plan, desc, r0, r1, r2, stream);
  return ember_lib_run_conv(ctx, plan, desc, r0, r1, r2, stream);
}

static void releaseGemm(GemmPlan *p) {
  if (p->a)
    cublasLtMatrixLayoutDestroy(p->a);
  if (p->b)
    cublasLtMatrixLayoutDestroy(p->b);
  if (p->d)
    cublasLtMatrixLayoutDestroy(p->d);
  if (p->op)
    cublasLtMatmulDescDestroy(p->op);
  memset(p, 0, sizeof(*p));
}

static void releaseConv(ConvPlan *p) {
  if (p->x)
    cudnnDestroyTensorDescriptor(p->x);
  if (p->y)
    cudnnDestroyTensorDescriptor(p->y);
  if (p->bias)
    cudnnDestroyTensorDescriptor(p->bias);
  if (p->w)
    cudnnDestroyFilterDescriptor(p->w);
  if (p->conv)
    cudnnDestroyConvolutionDescriptor(p->conv);
  if (p->act)
    cudnnDestroyActivationDescriptor(p->act);
  memset(p, 0, sizeof(*p));
}

void ember_lib_release(EmberLibPlan *plan, const long long *desc) {
  if (desc[0] == EMBER_LIB_GEMM)
    releaseGemm((GemmPlan *)plan);
  else if (desc[0] == EMBER_LIB_CONV)
    releaseConv((ConvPlan *)plan);
  memset(plan, 0, sizeof(*plan));
}

/* Appends s to the notes (truncating; always terminated). */
static void note(EmberLibContext *ctx, const char *s) {
  size_t n = 0;
  while (n < EMBER_LIB_NOTES_BYTES - 1 && ctx->notes[n])
    ++n;
  while (n < EMBER_LIB_NOTES_BYTES - 1 && *s)
    ctx->notes[n++] = *s++;
  ctx->notes[n] = 0;
}

static void noteNumber(EmberLibContext *ctx, long long v) {
  char buf[24];
  int i = 23;
  buf[i] = 0;
  do
    buf[--i] = (char)('0' + v % 10);
  while ((v /= 10) > 0 && i > 0);
  note(ctx, buf + i);
}

static void noteFallback(EmberLibContext *ctx, const char *name,
                         const char *lib, int rc) {
  const char *status = ember_lib_status_name(rc);
  note(ctx, name);
  note(ctx, ": ");
  note(ctx, lib);
  note(ctx, " cannot run it (planning returned ");
  note(ctx, status ? status : cudaGetErrorName((cudaError_t)rc));
  note(ctx, " (");
  noteNumber(ctx, rc % 10000);
  note(ctx, ")); running its generated kernel instead\n");
}

int ember_lib_try_gemm(EmberLibContext *ctx, EmberLibPlan *plan,
                       const long long *desc, const char *name,
                       unsigned char *fallback) {
  int rc = ember_lib_plan_gemm(ctx, plan, desc);
  if (rc) {
    releaseGemm((GemmPlan *)plan);
    cudaGetLastError();
    *fallback = 1;
    noteFallback(ctx, name, "cuBLASLt", rc);
  }
  return 0;
}

int ember_lib_try_conv(EmberLibContext *ctx, EmberLibPlan *plan,
                       const long long *desc, const char *name,
                       unsigned char *fallback) {
  int rc = ember_lib_plan_conv(ctx, plan, desc);
  if (rc) {
    releaseConv((ConvPlan *)plan);
    cudaGetLastError();
    *fallback = 1;
    noteFallback(ctx, name, "cuDNN", rc);
  }
  return 0;
}

void ember_lib_destroy(EmberLibContext *ctx) {
  if (ctx->workspace)
    cudaFree(ctx->workspace);
  if (ctx->cublasLt)
    cublasLtDestroy((cublasLtHandle_t)ctx->cublasLt);
  if (ctx->cudnn)
    cudnnDestroy((cudnnHandle_t)ctx->cudnn);
  memset(ctx, 0, sizeof(*ctx));
}
