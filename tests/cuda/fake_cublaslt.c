/*===- fake_cublaslt.c - Host stand-in for the cuBLASLt calls we make -----===*
 *
 * Exactly the cuBLASLt entry points of backends/CUDA/host/LibOps.c, over
 * host memory, written from the documented semantics: column-major
 * matrices with a leading dimension, optional transposes, strided batches,
 * D = alpha * op(A) * op(B) + beta * C, and the BIAS / RELU_BIAS epilogues
 * (a bias vector of D's row count, added to every column, then ReLU).
 * Anything outside that subset (other types, attributes, pointer modes)
 * fails with CUBLAS_STATUS_NOT_SUPPORTED or INVALID_VALUE, so the tests
 * notice a call they do not model. Tests only.
 *
 *===----------------------------------------------------------------------===*/
#include <cublasLt.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* fake_cudart.c: provoked refusals and stream capture. */
int ember_fake_refuses(const char *what);
int ember_fake_capture(cudaStream_t s, int (*fn)(const void *),
                       const void *args, size_t bytes);

/* Reports a call outside what this stand-in models (or a wrong one). */
static cublasStatus_t reject(const char *fn, const char *why,
                             cublasStatus_t s) {
  fprintf(stderr, "fake cuBLASLt: %s: %s\n", fn, why);
  return s;
}

enum { L_ROWS, L_COLS, L_LD, L_BATCH, L_STRIDE };
enum { D_TRANSA, D_TRANSB, D_EPI, D_BIAS, D_TF32 };
#define ALGO_MAGIC 0x454d424552ull /* "EMBER" */
#define FAKE_WORKSPACE 4096

static int liveObjects; /* creates minus destroys */

cublasStatus_t cublasLtCreate(cublasLtHandle_t *h) {
  *h = (cublasLtHandle_t)malloc(16);
  ++liveObjects;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtDestroy(cublasLtHandle_t h) {
  free(h);
  --liveObjects;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t *l,
                                          cudaDataType type, uint64_t rows,
                                          uint64_t cols, int64_t ld) {
  if (type != CUDA_R_32F || ld < (int64_t)rows)
    return CUBLAS_STATUS_NOT_SUPPORTED;
  *l = (cublasLtMatrixLayout_t)calloc(1, sizeof(**l));
  (*l)->data[L_ROWS] = rows;
  (*l)->data[L_COLS] = cols;
  (*l)->data[L_LD] = (uint64_t)ld;
  (*l)->data[L_BATCH] = 1;
  ++liveObjects;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t l) {
  free(l);
  --liveObjects;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t
cublasLtMatrixLayoutSetAttribute(cublasLtMatrixLayout_t l,
                                 cublasLtMatrixLayoutAttribute_t a,
                                 const void *buf, size_t size) {
  if (a == CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT && size == sizeof(int32_t)) {
    int32_t v;
    memcpy(&v, buf, size);
    l->data[L_BATCH] = (uint64_t)v;
  } else if (a == CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET &&
             size == sizeof(int64_t)) {
    int64_t v;
    memcpy(&v, buf, size);
    l->data[L_STRIDE] = (uint64_t)v;
  } else {
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t *d,
                                        cublasComputeType_t compute,
                                        cudaDataType_t scale) {
  if ((compute != CUBLAS_COMPUTE_32F &&
       compute != CUBLAS_COMPUTE_32F_FAST_TF32) ||
      scale != CUDA_R_32F)
    return CUBLAS_STATUS_NOT_SUPPORTED; /* fp32 data, FMA or TF32 only */
  *d = (cublasLtMatmulDesc_t)calloc(1, sizeof(**d));
  (*d)->data[D_TF32] = compute == CUBLAS_COMPUTE_32F_FAST_TF32;
  (*d)->data[D_TRANSA] = CUBLAS_OP_N;
  (*d)->data[D_TRANSB] = CUBLAS_OP_N;
  (*d)->data[D_EPI] = CUBLASLT_EPILOGUE_DEFAULT;
  ++liveObjects;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t d) {
  free(d);
  --liveObjects;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t d,
                                              cublasLtMatmulDescAttributes_t a,
                                              const void *buf, size_t size) {
  if ((a == CUBLASLT_MATMUL_DESC_TRANSA || a == CUBLASLT_MATMUL_DESC_TRANSB) &&
      size == sizeof(int32_t)) {
    int32_t v;
    memcpy(&v, buf, size);
    d->data[a == CUBLASLT_MATMUL_DESC_TRANSA ? D_TRANSA : D_TRANSB] =
        (uint64_t)v;
  } else if (a == CUBLASLT_MATMUL_DESC_EPILOGUE && size == sizeof(uint32_t)) {
    uint32_t v;
    memcpy(&v, buf, size);
    if (v != CUBLASLT_EPILOGUE_DEFAULT && v != CUBLASLT_EPILOGUE_BIAS &&
        v != CUBLASLT_EPILOGUE_RELU_BIAS && v != CUBLASLT_EPILOGUE_RELU)
      return CUBLAS_STATUS_NOT_SUPPORTED;
    d->data[D_EPI] = v;
  } else if (a == CUBLASLT_MATMUL_DESC_BIAS_POINTER && size == sizeof(void *)) {
    memcpy(&d->data[D_BIAS], buf, size);
  } else {
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t *p) {
  *p = (cublasLtMatmulPreference_t)calloc(1, sizeof(**p));
  ++liveObjects;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t p) {
  free(p);
  --liveObjects;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t
cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t p,
                                     cublasLtMatmulPreferenceAttributes_t a,
                                     const void *buf, size_t size) {
  if (a == CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES &&
      size == sizeof(uint64_t)) {
    memcpy(&p->data[0], buf, size);
    return CUBLAS_STATUS_SUCCESS;
  }
  if (a >= CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES &&
      a <= CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES &&
      size == sizeof(uint32_t)) {
    uint32_t v;
    memcpy(&v, buf, size);
    p->data[1 + a - CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES] = v;
    return CUBLAS_STATUS_SUCCESS;
  }
  return reject("cublasLtMatmulPreferenceSetAttribute", "unmodelled attribute",
                CUBLAS_STATUS_INVALID_VALUE);
}

/* op(X)'s rows and cols. */
static void opDims(cublasLtMatrixLayout_t l, uint64_t trans, uint64_t *r,
                   uint64_t *c) {
  *r = trans == CUBLAS_OP_N ? l->data[L_ROWS] : l->data[L_COLS];
  *c = trans == CUBLAS_OP_N ? l->data[L_COLS] : l->data[L_ROWS];
}

/* The shapes must agree: op(A) m x k, op(B) k x n, C and D m x n. */
static int consistent(cublasLtMatmulDesc_t d, cublasLtMatrixLayout_t A,
                      cublasLtMatrixLayout_t B, cublasLtMatrixLayout_t C,
                      cublasLtMatrixLayout_t D) {
  uint64_t am, ak, bk, bn;
  opDims(A, d->data[D_TRANSA], &am, &ak);
  opDims(B, d->data[D_TRANSB], &bk, &bn);
  return ak == bk && C->data[L_ROWS] == am && C->data[L_COLS] == bn &&
         D->data[L_ROWS] == am && D->data[L_COLS] == bn &&
         A->data[L_BATCH] == D->data[L_BATCH] &&
         B->data[L_BATCH] == D->data[L_BATCH] &&
         C->data[L_BATCH] == D->data[L_BATCH];
}

cublasStatus_t cublasLtMatmulAlgoGetHeuristic(
    cublasLtHandle_t h, cublasLtMatmulDesc_t d, cublasLtMatrixLayout_t A,
    cublasLtMatrixLayout_t B, cublasLtMatrixLayout_t C,
    cublasLtMatrixLayout_t D, cublasLtMatmulPreference_t pref, int requested,
    cublasLtMatmulHeuristicResult_t *results, int *count) {
  if (!h || requested < 1 || !consistent(d, A, B, C, D))
    return reject("cublasLtMatmulAlgoGetHeuristic", "layouts disagree",
                  CUBLAS_STATUS_INVALID_VALUE);
  if (ember_fake_refuses("cublaslt-plan")) {
    *count = 0; /* no algorithm for this problem */
    return CUBLAS_STATUS_SUCCESS;
  }
  memset(results, 0, sizeof(*results));
  results->algo.data[0] = ALGO_MAGIC;
  /* The algorithm assumes the alignments of the preference (256 bytes
     where none was given, as cuBLASLt does); cublasLtMatmul checks them. */
  for (int i = 0; i < 4; ++i)
    results->algo.data[1 + i] = pref->data[1 + i] ? pref->data[1 + i] : 256;
  /* Ask for workspace when the preference allows it, so callers that pass
     none are caught. */
  results->workspaceSize = pref->data[0] >= FAKE_WORKSPACE ? FAKE_WORKSPACE : 0;
  results->state = CUBLAS_STATUS_SUCCESS;
  results->wavesCount = 1.f;
  *count = 1;
  return CUBLAS_STATUS_SUCCESS;
}

static float elem(const float *x, cublasLtMatrixLayout_t l, uint64_t trans,
                  uint64_t i, uint64_t j) {
  uint64_t ld = l->data[L_LD];
  return trans == CUBLAS_OP_N ? x[i + j * ld] : x[j + i * ld];
}

/* An operand as TF32 tensor cores read it (when tf32): 10-bit mantissa,
   rounded to nearest, ties away from zero. */
static float operand(float v, uint64_t tf32) {
  uint32_t u;
  if (!tf32)
    return v;
  memcpy(&u, &v, 4);
  u = (u + 0x1000u) & 0xffffe000u;
  memcpy(&v, &u, 4);
  return v;
}

/* Calls on a capturing stream are recorded (scalars by value, the
   descriptor's attributes as they are at capture) and replayed by
   cudaGraphLaunch. */
typedef struct MatmulArgs {
  cublasLtHandle_t h;
  cublasLtMatmulDesc_t d;
  float alpha, beta;
  const void *A, *B, *C;
  void *D, *workspace;
  cublasLtMatrixLayout_t Ad, Bd, Cd, Dd;
  cublasLtMatmulAlgo_t algo;
  size_t workspaceSize;
  uint64_t bias;
} MatmulArgs;

static int replayMatmul(const void *p) {
  const MatmulArgs *a = (const MatmulArgs *)p;
  a->d->data[D_BIAS] = a->bias;
  return cublasLtMatmul(a->h, a->d, &a->alpha, a->A, a->Ad, a->B, a->Bd,
                        &a->beta, a->C, a->Cd, a->D, a->Dd, &a->algo,
                        a->workspace, a->workspaceSize, NULL);
}

cublasStatus_t cublasLtMatmul(cublasLtHandle_t h, cublasLtMatmulDesc_t d,
                              const void *alpha, const void *A,
                              cublasLtMatrixLayout_t Ad, const void *B,
                              cublasLtMatrixLayout_t Bd, const void *beta,
                              const void *C, cublasLtMatrixLayout_t Cd, void *D,
                              cublasLtMatrixLayout_t Dd,
                              const cublasLtMatmulAlgo_t *algo, void *workspace,
                              size_t workspaceSize, cudaStream_t stream) {
  uint64_t m = Dd->data[L_ROWS], n = Dd->data[L_COLS], k, b, i, j, p;
  uint64_t epi = d->data[D_EPI];
  float a = *(const float *)alpha, bt = *(const float *)beta;
  const float *bias;
  uint64_t tmp;
  if (algo && d) {
    MatmulArgs args = {h,
                       d,
                       *(const float *)alpha,
                       *(const float *)beta,
                       A,
                       B,
                       C,
                       D,
                       workspace,
                       Ad,
                       Bd,
                       Cd,
                       Dd,
                       *algo,
                       workspaceSize,
                       d->data[D_BIAS]};
    if (ember_fake_capture(stream, replayMatmul, &args, sizeof(args)))
      return CUBLAS_STATUS_SUCCESS;
  }
  if (!h || !algo || algo->data[0] != ALGO_MAGIC ||
      !consistent(d, Ad, Bd, Cd, Dd))
    return reject("cublasLtMatmul",
                  "no heuristic algorithm or layouts disagree",
                  CUBLAS_STATUS_INVALID_VALUE);
  const void *ptrs[4] = {A, B, C, D};
  for (int i = 0; i < 4; ++i)
    if ((uintptr_t)ptrs[i] % algo->data[1 + i])
      return reject("cublasLtMatmul",
                    "an operand is less aligned than the algorithm assumes",
                    CUBLAS_STATUS_INVALID_VALUE);
  if (workspaceSize && !workspace)
    return reject("cublasLtMatmul", "no workspace",
                  CUBLAS_STATUS_INVALID_VALUE);
  opDims(Ad, d->data[D_TRANSA], &tmp, &k);
  memcpy(&bias, &d->data[D_BIAS], sizeof(bias));
  if ((epi == CUBLASLT_EPILOGUE_BIAS || epi == CUBLASLT_EPILOGUE_RELU_BIAS) &&
      !bias)
    return reject("cublasLtMatmul", "bias epilogue without a bias pointer",
                  CUBLAS_STATUS_INVALID_VALUE);
  for (b = 0; b < Dd->data[L_BATCH]; ++b) {
    const float *ab = (const float *)A + b * Ad->data[L_STRIDE];
    const float *bb = (const float *)B + b * Bd->data[L_STRIDE];
    const float *cb = (const float *)C + b * Cd->data[L_STRIDE];
    float *db = (float *)D + b * Dd->data[L_STRIDE];
    for (j = 0; j < n; ++j)
      for (i = 0; i < m; ++i) {
        float acc = 0.f, v;
        for (p = 0; p < k; ++p)
          acc +=
              operand(elem(ab, Ad, d->data[D_TRANSA], i, p), d->data[D_TF32]) *
              operand(elem(bb, Bd, d->data[D_TRANSB], p, j), d->data[D_TF32]);
        v = a * acc;
        if (bt != 0.f)
          v += bt * cb[i + j * Cd->data[L_LD]];
        if (epi == CUBLASLT_EPILOGUE_BIAS || epi == CUBLASLT_EPILOGUE_RELU_BIAS)
          v += bias[i];
        if ((epi == CUBLASLT_EPILOGUE_RELU ||
             epi == CUBLASLT_EPILOGUE_RELU_BIAS) &&
            v < 0.f)
          v = 0.f;
        db[i + j * Dd->data[L_LD]] = v;
      }
  }
  return CUBLAS_STATUS_SUCCESS;
}

/* For tests: the number of objects created and not destroyed. */
int fake_cublaslt_live_objects(void) { return liveObjects; }
