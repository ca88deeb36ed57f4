/*===- fake_cudnn.c - Host stand-in for the cuDNN calls we make -----------===*
 *
 * Exactly the cuDNN entry points of backends/CUDA/host/LibOps.c, over host
 * memory, written from the documented semantics: packed NCHW fp32 tensors,
 * KCRS filters, 2-D cross-correlation with symmetric padding, strides,
 * dilations and groups; y = alpha * conv(x) + beta * y; cudnnAddTensor
 * broadcasting a 1xCx1x1 tensor; cudnnActivationForward (ReLU, clipped
 * ReLU, sigmoid), in place allowed. The algorithm query returns one
 * candidate too large for any sane workspace first, so callers must honour
 * the memory field. Tests only.
 *
 *===----------------------------------------------------------------------===*/
#include <cudnn.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* fake_cudart.c: provoked refusals and stream capture. */
int ember_fake_refuses(const char *what);
int ember_fake_capture(cudaStream_t s, int (*fn)(const void *),
                       const void *args, size_t bytes);

/* Reports a call outside what this stand-in models (or a wrong one). */
static cudnnStatus_t reject(const char *fn, const char *why, cudnnStatus_t s) {
  fprintf(stderr, "fake cuDNN: %s: %s\n", fn, why);
  return s;
}

struct cudnnContext {
  cudaStream_t stream;
};
struct cudnnTensorStruct {
  int n, c, h, w, set;
};
struct cudnnFilterStruct {
  int k, c, h, w, set;
};
struct cudnnConvolutionStruct {
  int ph, pw, sh, sw, dh, dw, groups, set;
  cudnnMathType_t math;
};
struct cudnnActivationStruct {
  cudnnActivationMode_t mode;
  double coef;
  int set;
};
#define FAKE_WORKSPACE 8192

static int liveObjects;
#define MAKE(p)                                                                \
  ((*(p) = calloc(1, sizeof(**(p)))), ++liveObjects, CUDNN_STATUS_SUCCESS)
#define FREE(p) (free(p), --liveObjects, CUDNN_STATUS_SUCCESS)

cudnnStatus_t cudnnCreate(cudnnHandle_t *h) { return MAKE(h); }
cudnnStatus_t cudnnDestroy(cudnnHandle_t h) { return FREE(h); }
cudnnStatus_t cudnnSetStream(cudnnHandle_t h, cudaStream_t s) {
  h->stream = s;
  return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnCreateTensorDescriptor(cudnnTensorDescriptor_t *d) {
  return MAKE(d);
}
cudnnStatus_t cudnnDestroyTensorDescriptor(cudnnTensorDescriptor_t d) {
  return FREE(d);
}
cudnnStatus_t cudnnSetTensor4dDescriptor(cudnnTensorDescriptor_t d,
                                         cudnnTensorFormat_t f,
                                         cudnnDataType_t t, int n, int c, int h,
                                         int w) {
  if (f != CUDNN_TENSOR_NCHW || t != CUDNN_DATA_FLOAT)
    return CUDNN_STATUS_NOT_SUPPORTED;
  if (n <= 0 || c <= 0 || h <= 0 || w <= 0)
    return CUDNN_STATUS_BAD_PARAM;
  d->n = n, d->c = c, d->h = h, d->w = w, d->set = 1;
  return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnCreateFilterDescriptor(cudnnFilterDescriptor_t *d) {
  return MAKE(d);
}
cudnnStatus_t cudnnDestroyFilterDescriptor(cudnnFilterDescriptor_t d) {
  return FREE(d);
}
cudnnStatus_t cudnnSetFilter4dDescriptor(cudnnFilterDescriptor_t d,
                                         cudnnDataType_t t,
                                         cudnnTensorFormat_t f, int k, int c,
                                         int h, int w) {
  if (f != CUDNN_TENSOR_NCHW || t != CUDNN_DATA_FLOAT)
    return CUDNN_STATUS_NOT_SUPPORTED;
  if (k <= 0 || c <= 0 || h <= 0 || w <= 0)
    return CUDNN_STATUS_BAD_PARAM;
  d->k = k, d->c = c, d->h = h, d->w = w, d->set = 1;
  return CUDNN_STATUS_SUCCESS;
}
/* Math types of fp32 data: FMA, or TF32 tensor cores (the default math
   on Ampere and newer, or tensor-op math); not the conversion to half. */
static int fp32Math(cudnnMathType_t m) {
  return m == CUDNN_FMA_MATH || m == CUDNN_DEFAULT_MATH ||
         m == CUDNN_TENSOR_OP_MATH;
}

/* An operand as the math type reads it: TF32 (10-bit mantissa, to
   nearest, ties away) unless FMA. */
static float operand(float v, cudnnMathType_t m) {
  uint32_t u;
  if (m == CUDNN_FMA_MATH)
    return v;
  memcpy(&u, &v, 4);
  u = (u + 0x1000u) & 0xffffe000u;
  memcpy(&v, &u, 4);
  return v;
}

cudnnStatus_t
cudnnCreateConvolutionDescriptor(cudnnConvolutionDescriptor_t *d) {
  cudnnStatus_t s = MAKE(d);
  (*d)->groups = 1;
  (*d)->math = CUDNN_DEFAULT_MATH;
  return s;
}
cudnnStatus_t
cudnnDestroyConvolutionDescriptor(cudnnConvolutionDescriptor_t d) {
  return FREE(d);
}
cudnnStatus_t cudnnSetConvolution2dDescriptor(cudnnConvolutionDescriptor_t d,
                                              int ph, int pw, int sh, int sw,
                                              int dh, int dw,
                                              cudnnConvolutionMode_t mode,
                                              cudnnDataType_t t) {
  if (mode != CUDNN_CROSS_CORRELATION || t != CUDNN_DATA_FLOAT)
    return CUDNN_STATUS_NOT_SUPPORTED;
  if (ph < 0 || pw < 0 || sh <= 0 || sw <= 0 || dh <= 0 || dw <= 0)
    return CUDNN_STATUS_BAD_PARAM;
  d->ph = ph, d->pw = pw, d->sh = sh, d->sw = sw, d->dh = dh, d->dw = dw;
  d->set = 1;
  return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnSetConvolutionGroupCount(cudnnConvolutionDescriptor_t d,
                                            int groups) {
  if (groups <= 0)
    return CUDNN_STATUS_BAD_PARAM;
  d->groups = groups;
  return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnSetConvolutionMathType(cudnnConvolutionDescriptor_t d,
                                          cudnnMathType_t m) {
  d->math = m;
  return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnCreateActivationDescriptor(cudnnActivationDescriptor_t *d) {
  return MAKE(d);
}
cudnnStatus_t cudnnDestroyActivationDescriptor(cudnnActivationDescriptor_t d) {
  return FREE(d);
}
cudnnStatus_t cudnnSetActivationDescriptor(cudnnActivationDescriptor_t d,
                                           cudnnActivationMode_t mode,
                                           cudnnNanPropagation_t nan,
                                           double coef) {
  (void)nan;
  if (mode != CUDNN_ACTIVATION_RELU && mode != CUDNN_ACTIVATION_CLIPPED_RELU &&
      mode != CUDNN_ACTIVATION_SIGMOID && mode != CUDNN_ACTIVATION_IDENTITY)
    return CUDNN_STATUS_NOT_SUPPORTED;
  d->mode = mode, d->coef = coef, d->set = 1;
  return CUDNN_STATUS_SUCCESS;
}

/* The descriptors agree: channels per group, output size by the formula. */
static int consistent(cudnnTensorDescriptor_t x, cudnnFilterDescriptor_t w,
                      cudnnConvolutionDescriptor_t c,
                      cudnnTensorDescriptor_t y) {
  int oh, ow;
  if (!x->set || !w->set || !c->set || !y->set)
    return 0;
  oh = (x->h + 2 * c->ph - (c->dh * (w->h - 1) + 1)) / c->sh + 1;
  ow = (x->w + 2 * c->pw - (c->dw * (w->w - 1) + 1)) / c->sw + 1;
  return x->c % c->groups == 0 && w->k % c->groups == 0 &&
         w->c == x->c / c->groups && y->n == x->n && y->c == w->k &&
         y->h == oh && y->w == ow;
}

cudnnStatus_t cudnnGetConvolutionForwardAlgorithm_v7(
    cudnnHandle_t h, const cudnnTensorDescriptor_t x,
    const cudnnFilterDescriptor_t w, const cudnnConvolutionDescriptor_t c,
    const cudnnTensorDescriptor_t y, const int requested, int *returned,
    cudnnConvolutionFwdAlgoPerf_t *perf) {
  if (!h || requested < 4 || !consistent(x, w, c, y))
    return reject("cudnnGetConvolutionForwardAlgorithm_v7",
                  "descriptors disagree", CUDNN_STATUS_BAD_PARAM);
  if (ember_fake_refuses("cudnn-plan"))
    return CUDNN_STATUS_NOT_SUPPORTED_SHAPE;
  /* Entries a caller must not take: one over any workspace limit, one
     with tensor-core (TF32) math, one whose workspace query fails; then
     the one to take, whose entry underestimates the workspace that
     cudnnGetConvolutionForwardWorkspaceSize reports (as entries made for
     another math type do). */
  memset(perf, 0, 4 * sizeof(*perf));
  perf[0].algo = CUDNN_CONVOLUTION_FWD_ALGO_FFT;
  perf[0].memory = (size_t)1 << 40;
  perf[0].mathType = c->math;
  perf[1].algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
  perf[1].mathType = CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION;
  perf[2].algo = CUDNN_CONVOLUTION_FWD_ALGO_GEMM;
  perf[2].mathType = c->math;
  perf[3].algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM;
  perf[3].memory = FAKE_WORKSPACE / 2;
  perf[3].mathType = c->math;
  for (int i = 0; i < 4; ++i)
    perf[i].status = CUDNN_STATUS_SUCCESS;
  *returned = 4;
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnGetConvolutionForwardWorkspaceSize(
    cudnnHandle_t h, const cudnnTensorDescriptor_t x,
    const cudnnFilterDescriptor_t w, const cudnnConvolutionDescriptor_t c,
    const cudnnTensorDescriptor_t y, cudnnConvolutionFwdAlgo_t algo,
    size_t *size) {
  if (!h || !consistent(x, w, c, y) || !fp32Math(c->math))
    return reject("cudnnGetConvolutionForwardWorkspaceSize",
                  "descriptors disagree or math converts to half precision",
                  CUDNN_STATUS_BAD_PARAM);
  if (algo == CUDNN_CONVOLUTION_FWD_ALGO_GEMM)
    return CUDNN_STATUS_NOT_SUPPORTED; /* the failed trial */
  if (algo == CUDNN_CONVOLUTION_FWD_ALGO_FFT)
    *size = (size_t)1 << 40;
  else if (algo == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM)
    *size = FAKE_WORKSPACE;
  else if (algo == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM)
    *size = 0; /* fits, but its entry's math is TF32: the run rejects it */
  else
    return reject("cudnnGetConvolutionForwardWorkspaceSize",
                  "an algorithm the caller must not take",
                  CUDNN_STATUS_BAD_PARAM);
  return CUDNN_STATUS_SUCCESS;
}

/* Calls on a capturing stream are recorded with their scalars by value
   (as the library reads host scalars at capture) and replayed by
   cudaGraphLaunch. */
typedef struct ConvArgs {
  cudnnHandle_t h;
  float alpha, beta;
  cudnnTensorDescriptor_t xd, yd;
  const void *xp;
  cudnnFilterDescriptor_t wd;
  const void *wp;
  cudnnConvolutionDescriptor_t cd;
  cudnnConvolutionFwdAlgo_t algo;
  void *ws, *yp;
  size_t wsSize;
} ConvArgs;

static int replayConv(const void *p) {
  const ConvArgs *a = (const ConvArgs *)p;
  return cudnnConvolutionForward(a->h, &a->alpha, a->xd, a->xp, a->wd, a->wp,
                                 a->cd, a->algo, a->ws, a->wsSize, &a->beta,
                                 a->yd, a->yp);
}

cudnnStatus_t cudnnConvolutionForward(
    cudnnHandle_t h, const void *alpha, const cudnnTensorDescriptor_t xd,
    const void *xp, const cudnnFilterDescriptor_t wd, const void *wp,
    const cudnnConvolutionDescriptor_t cd, cudnnConvolutionFwdAlgo_t algo,
    void *ws, size_t wsSize, const void *beta, const cudnnTensorDescriptor_t yd,
    void *yp) {
  ConvArgs args = {h,
                   *(const float *)alpha,
                   *(const float *)beta,
                   xd,
                   yd,
                   xp,
                   wd,
                   wp,
                   cd,
                   algo,
                   ws,
                   yp,
                   wsSize};
  if (h && ember_fake_capture(h->stream, replayConv, &args, sizeof(args)))
    return CUDNN_STATUS_SUCCESS;
  const float *x = (const float *)xp, *w = (const float *)wp;
  float *y = (float *)yp, a = *(const float *)alpha, b = *(const float *)beta;
  int n, m, oh, ow, c, kh, kw, cpg, mpg;
  if (!h || !consistent(xd, wd, cd, yd))
    return reject("cudnnConvolutionForward", "descriptors disagree",
                  CUDNN_STATUS_BAD_PARAM);
  if (algo != CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM ||
      wsSize < FAKE_WORKSPACE || !ws)
    return reject("cudnnConvolutionForward",
                  "not the algorithm and workspace the query returned",
                  CUDNN_STATUS_BAD_PARAM);
  if (!fp32Math(cd->math))
    return reject("cudnnConvolutionForward",
                  "math type converts to half precision",
                  CUDNN_STATUS_BAD_PARAM);
  cpg = xd->c / cd->groups, mpg = wd->k / cd->groups;
  for (n = 0; n < yd->n; ++n)
    for (m = 0; m < yd->c; ++m)
      for (oh = 0; oh < yd->h; ++oh)
        for (ow = 0; ow < yd->w; ++ow) {
          float acc = 0.f;
          float *out = &y[((n * yd->c + m) * yd->h + oh) * yd->w + ow];
          int g = m / mpg;
          for (c = 0; c < cpg; ++c)
            for (kh = 0; kh < wd->h; ++kh)
              for (kw = 0; kw < wd->w; ++kw) {
                int ih = oh * cd->sh - cd->ph + kh * cd->dh;
                int iw = ow * cd->sw - cd->pw + kw * cd->dw;
                if (ih < 0 || ih >= xd->h || iw < 0 || iw >= xd->w)
                  continue;
                acc +=
                    operand(x[((n * xd->c + g * cpg + c) * xd->h + ih) * xd->w +
                              iw],
                            cd->math) *
                    operand(w[((m * cpg + c) * wd->h + kh) * wd->w + kw],
                            cd->math);
              }
          *out = a * acc + (b != 0.f ? b * *out : 0.f);
        }
  return CUDNN_STATUS_SUCCESS;
}

typedef struct FusedArgs {
  cudnnHandle_t h;
  float alpha1, alpha2;
  cudnnTensorDescriptor_t xd, zd, bd, yd;
  cudnnFilterDescriptor_t wd;
  cudnnConvolutionDescriptor_t cd;
  cudnnConvolutionFwdAlgo_t algo;
  cudnnActivationDescriptor_t ad;
  const void *x, *w, *z, *bias;
  void *ws, *y;
  size_t wsSize;
} FusedArgs;

static int replayFused(const void *p) {
  const FusedArgs *a = (const FusedArgs *)p;
  return cudnnConvolutionBiasActivationForward(
      a->h, &a->alpha1, a->xd, a->x, a->wd, a->w, a->cd, a->algo, a->ws,
      a->wsSize, &a->alpha2, a->zd, a->z, a->bd, a->bias, a->ad, a->yd, a->y);
}

static int sameDims(cudnnTensorDescriptor_t a, cudnnTensorDescriptor_t b) {
  return a->n == b->n && a->c == b->c && a->h == b->h && a->w == b->w;
}

/* y = act(alpha1 * conv(x, w) + alpha2 * z + bias): ReLU, or identity with
   IMPLICIT_PRECOMP_GEMM only (as documented); z may be y. */
cudnnStatus_t cudnnConvolutionBiasActivationForward(
    cudnnHandle_t h, const void *alpha1, const cudnnTensorDescriptor_t xd,
    const void *x, const cudnnFilterDescriptor_t wd, const void *w,
    const cudnnConvolutionDescriptor_t cd, cudnnConvolutionFwdAlgo_t algo,
    void *ws, size_t wsSize, const void *alpha2,
    const cudnnTensorDescriptor_t zd, const void *z,
    const cudnnTensorDescriptor_t bd, const void *bias,
    const cudnnActivationDescriptor_t ad, const cudnnTensorDescriptor_t yd,
    void *y) {
  FusedArgs args = {h,
                    *(const float *)alpha1,
                    *(const float *)alpha2,
                    xd,
                    zd,
                    bd,
                    yd,
                    wd,
                    cd,
                    algo,
                    ad,
                    x,
                    w,
                    z,
                    bias,
                    ws,
                    y,
                    wsSize};
  const float zero = 0.f, a2 = args.alpha2;
  long long i, size = (long long)yd->n * yd->c * yd->h * yd->w;
  float *out = (float *)y, *saved = NULL;
  cudnnStatus_t st;
  if (h && ember_fake_capture(h->stream, replayFused, &args, sizeof(args)))
    return CUDNN_STATUS_SUCCESS;
  if (!h || !ad || !ad->set ||
      (ad->mode != CUDNN_ACTIVATION_RELU &&
       (ad->mode != CUDNN_ACTIVATION_IDENTITY ||
        algo != CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM)))
    return reject("cudnnConvolutionBiasActivationForward",
                  "activation is neither ReLU nor identity with "
                  "IMPLICIT_PRECOMP_GEMM",
                  CUDNN_STATUS_NOT_SUPPORTED);
  if (!sameDims(zd, yd) || bd->n != 1 || bd->h != 1 || bd->w != 1 ||
      bd->c != yd->c || !z || !bias)
    return reject("cudnnConvolutionBiasActivationForward",
                  "z or bias descriptors disagree with y",
                  CUDNN_STATUS_BAD_PARAM);
  if (a2 != 0.f) { /* z may be y: keep it before the convolution writes */
    saved = (float *)malloc((size_t)size * sizeof(float));
    memcpy(saved, z, (size_t)size * sizeof(float));
  }
  st = cudnnConvolutionForward(h, alpha1, xd, x, wd, w, cd, algo, ws, wsSize,
                               &zero, yd, y);
  for (i = 0; st == CUDNN_STATUS_SUCCESS && i < size; ++i) {
    float v = out[i] + ((const float *)bias)[(i / (yd->h * yd->w)) % yd->c];
    if (saved)
      v += a2 * saved[i];
    out[i] = ad->mode == CUDNN_ACTIVATION_RELU && v < 0.f ? 0.f : v;
  }
  free(saved);
  return st;
}

typedef struct AddArgs {
  cudnnHandle_t h;
  float alpha, beta;
  cudnnTensorDescriptor_t ad, cd;
  const void *A;
  void *C;
} AddArgs;

static int replayAdd(const void *p) {
  const AddArgs *a = (const AddArgs *)p;
  return cudnnAddTensor(a->h, &a->alpha, a->ad, a->A, &a->beta, a->cd, a->C);
}

cudnnStatus_t cudnnAddTensor(cudnnHandle_t h, const void *alpha,
                             const cudnnTensorDescriptor_t ad, const void *A,
                             const void *beta, const cudnnTensorDescriptor_t cd,
                             void *C) {
  AddArgs args = {h, *(const float *)alpha, *(const float *)beta, ad, cd, A, C};
  if (h && ember_fake_capture(h->stream, replayAdd, &args, sizeof(args)))
    return CUDNN_STATUS_SUCCESS;
  const float *a = (const float *)A;
  float *c = (float *)C, al = *(const float *)alpha, be = *(const float *)beta;
  long long i, size = (long long)cd->n * cd->c * cd->h * cd->w;
  if (!h || ad->c != cd->c || (ad->n != 1 && ad->n != cd->n) ||
      (ad->h != 1 && ad->h != cd->h) || (ad->w != 1 && ad->w != cd->w))
    return reject("cudnnAddTensor", "shapes do not broadcast",
                  CUDNN_STATUS_BAD_PARAM);
  if (ad->n != 1 || ad->h != 1 || ad->w != 1) {
    if (ad->n != cd->n || ad->h != cd->h || ad->w != cd->w)
      return CUDNN_STATUS_NOT_SUPPORTED; /* partial broadcasts: not modelled */
    for (i = 0; i < size; ++i)
      c[i] = al * a[i] + be * c[i];
    return CUDNN_STATUS_SUCCESS;
  }
  for (i = 0; i < size; ++i)
    c[i] = al * a[(i / (cd->h * cd->w)) % cd->c] + be * c[i];
  return CUDNN_STATUS_SUCCESS;
}

typedef struct ActArgs {
  cudnnHandle_t h;
  cudnnActivationDescriptor_t d;
  float alpha, beta;
  cudnnTensorDescriptor_t xd, yd;
  const void *X;
  void *Y;
} ActArgs;

static int replayAct(const void *p) {
  const ActArgs *a = (const ActArgs *)p;
  return cudnnActivationForward(a->h, a->d, &a->alpha, a->xd, a->X, &a->beta,
                                a->yd, a->Y);
}

cudnnStatus_t
cudnnActivationForward(cudnnHandle_t h, cudnnActivationDescriptor_t d,
                       const void *alpha, const cudnnTensorDescriptor_t xd,
                       const void *X, const void *beta,
                       const cudnnTensorDescriptor_t yd, void *Y) {
  ActArgs args = {h, d, *(const float *)alpha, *(const float *)beta, xd, yd,
                  X, Y};
  if (h && ember_fake_capture(h->stream, replayAct, &args, sizeof(args)))
    return CUDNN_STATUS_SUCCESS;
  const float *x = (const float *)X;
  float *y = (float *)Y, al = *(const float *)alpha, be = *(const float *)beta;
  long long i, size = (long long)xd->n * xd->c * xd->h * xd->w;
  if (!h || !d->set || xd->n != yd->n || xd->c != yd->c || xd->h != yd->h ||
      xd->w != yd->w)
    return reject("cudnnActivationForward", "bad descriptors",
                  CUDNN_STATUS_BAD_PARAM);
  for (i = 0; i < size; ++i) {
    float v = x[i];
    if (d->mode == CUDNN_ACTIVATION_RELU)
      v = v > 0.f ? v : 0.f;
    else if (d->mode == CUDNN_ACTIVATION_CLIPPED_RELU)
      v = v < 0.f ? 0.f : (v > (float)d->coef ? (float)d->coef : v);
    else
      v = 1.f / (1.f + expf(-v));
    y[i] = al * v + (be != 0.f ? be * y[i] : 0.f);
  }
  return CUDNN_STATUS_SUCCESS;
}

/* For tests: the number of objects created and not destroyed. */
int fake_cudnn_live_objects(void) { return liveObjects; }
