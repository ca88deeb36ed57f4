/*===- LibOpsDynamic.h - LibOps.c's library calls through dlsym -*- C -*-===*
 *
 * Included by LibOps.c when it is built into the compiler (LibOpsLoader.c):
 * every cuBLASLt and cuDNN function it calls goes through a pointer that
 * ember_lib_load() fills, so the compiler and tools do not load the (large)
 * libraries unless a network on a GPU uses them.
 *
 *===----------------------------------------------------------------------===*/
#ifndef EMBER_BACKENDS_CUDA_HOST_LIBOPSDYNAMIC_H
#define EMBER_BACKENDS_CUDA_HOST_LIBOPSDYNAMIC_H

/* X(function) for every cuBLASLt function LibOps.c calls. */
#define EMBER_CUBLASLT_FNS(X)                                                  \
  X(cublasLtCreate)                                                            \
  X(cublasLtDestroy)                                                           \
  X(cublasLtMatmul)                                                            \
  X(cublasLtMatmulAlgoGetHeuristic)                                            \
  X(cublasLtMatmulDescCreate)                                                  \
  X(cublasLtMatmulDescDestroy)                                                 \
  X(cublasLtMatmulDescSetAttribute)                                            \
  X(cublasLtMatmulPreferenceCreate)                                            \
  X(cublasLtMatmulPreferenceDestroy)                                           \
  X(cublasLtMatmulPreferenceSetAttribute)                                      \
  X(cublasLtMatrixLayoutCreate)                                                \
  X(cublasLtMatrixLayoutDestroy)                                               \
  X(cublasLtMatrixLayoutSetAttribute)

/* X(function) for every cuDNN function LibOps.c calls. */
#define EMBER_CUDNN_FNS(X)                                                     \
  X(cudnnActivationForward)                                                    \
  X(cudnnAddTensor)                                                            \
  X(cudnnConvolutionBiasActivationForward)                                     \
  X(cudnnConvolutionForward)                                                   \
  X(cudnnCreate)                                                               \
  X(cudnnCreateActivationDescriptor)                                           \
  X(cudnnCreateConvolutionDescriptor)                                          \
  X(cudnnCreateFilterDescriptor)                                               \
  X(cudnnCreateTensorDescriptor)                                               \
  X(cudnnDestroy)                                                              \
  X(cudnnDestroyActivationDescriptor)                                          \
  X(cudnnDestroyConvolutionDescriptor)                                         \
  X(cudnnDestroyFilterDescriptor)                                              \
  X(cudnnDestroyTensorDescriptor)                                              \
  X(cudnnGetConvolutionForwardAlgorithm_v7)                                    \
  X(cudnnGetConvolutionForwardWorkspaceSize)                                   \
  X(cudnnSetActivationDescriptor)                                              \
  X(cudnnSetConvolution2dDescriptor)                                           \
  X(cudnnSetConvolutionGroupCount)                                             \
  X(cudnnSetConvolutionMathType)                                               \
  X(cudnnSetFilter4dDescriptor)                                                \
  X(cudnnSetStream)                                                            \
  X(cudnnSetTensor4dDescriptor)

#define EMBER_DECLARE_FN(f) __typeof__(&f) p_##f;
/* The resolved entry points. */
struct EmberLibFns {
  EMBER_CUBLASLT_FNS(EMBER_DECLARE_FN)
  EMBER_CUDNN_FNS(EMBER_DECLARE_FN)
};
extern struct EmberLibFns ember_lib_fns;

/* Fills ember_lib_fns for the libraries asked for; NULL or an error. */
const char *ember_lib_load(int cublasLt, int cudnn);

#define cublasLtCreate(...) ember_lib_fns.p_cublasLtCreate(__VA_ARGS__)
#define cublasLtDestroy(...) ember_lib_fns.p_cublasLtDestroy(__VA_ARGS__)
#define cublasLtMatmul(...) ember_lib_fns.p_cublasLtMatmul(__VA_ARGS__)
#define cublasLtMatmulAlgoGetHeuristic(...)                                    \
  ember_lib_fns.p_cublasLtMatmulAlgoGetHeuristic(__VA_ARGS__)
#define cublasLtMatmulDescCreate(...)                                          \
  ember_lib_fns.p_cublasLtMatmulDescCreate(__VA_ARGS__)
#define cublasLtMatmulDescDestroy(...)                                         \
  ember_lib_fns.p_cublasLtMatmulDescDestroy(__VA_ARGS__)
#define cublasLtMatmulDescSetAttribute(...)                                    \
  ember_lib_fns.p_cublasLtMatmulDescSetAttribute(__VA_ARGS__)
#define cublasLtMatmulPreferenceCreate(...)                                    \
  ember_lib_fns.p_cublasLtMatmulPreferenceCreate(__VA_ARGS__)
#define cublasLtMatmulPreferenceDestroy(...)                                   \
  ember_lib_fns.p_cublasLtMatmulPreferenceDestroy(__VA_ARGS__)
#define cublasLtMatmulPreferenceSetAttribute(...)                              \
  ember_lib_fns.p_cublasLtMatmulPreferenceSetAttribute(__VA_ARGS__)
#define cublasLtMatrixLayoutCreate(...)                                        \
  ember_lib_fns.p_cublasLtMatrixLayoutCreate(__VA_ARGS__)
#define cublasLtMatrixLayoutDestroy(...)                                       \
  ember_lib_fns.p_cublasLtMatrixLayoutDestroy(__VA_ARGS__)
#define cublasLtMatrixLayoutSetAttribute(...)                                  \
  ember_lib_fns.p_cublasLtMatrixLayoutSetAttribute(__VA_ARGS__)
#define cudnnActivationForward(...)                                            \
  ember_lib_fns.p_cudnnActivationForward(__VA_ARGS__)
#define cudnnAddTensor(...) ember_lib_fns.p_cudnnAddTensor(__VA_ARGS__)
#define cudnnConvolutionForward(...)                                           \
  ember_lib_fns.p_cudnnConvolutionForward(__VA_ARGS__)
#define cudnnCreate(...) ember_lib_fns.p_cudnnCreate(__VA_ARGS__)
#define cudnnCreateActivationDescriptor(...)                                   \
  ember_lib_fns.p_cudnnCreateActivationDescriptor(__VA_ARGS__)
#define cudnnCreateConvolutionDescriptor(...)                                  \
  ember_lib_fns.p_cudnnCreateConvolutionDescriptor(__VA_ARGS__)
#define cudnnCreateFilterDescriptor(...)                                       \
  ember_lib_fns.p_cudnnCreateFilterDescriptor(__VA_ARGS__)
#define cudnnCreateTensorDescriptor(...)                                       \
  ember_lib_fns.p_cudnnCreateTensorDescriptor(__VA_ARGS__)
#define cudnnDestroy(...) ember_lib_fns.p_cudnnDestroy(__VA_ARGS__)
#define cudnnDestroyActivationDescriptor(...)                                  \
  ember_lib_fns.p_cudnnDestroyActivationDescriptor(__VA_ARGS__)
#define cudnnDestroyConvolutionDescriptor(...)                                 \
  ember_lib_fns.p_cudnnDestroyConvolutionDescriptor(__VA_ARGS__)
#define cudnnDestroyFilterDescriptor(...)                                      \
  ember_lib_fns.p_cudnnDestroyFilterDescriptor(__VA_ARGS__)
#define cudnnDestroyTensorDescriptor(...)                                      \
  ember_lib_fns.p_cudnnDestroyTensorDescriptor(__VA_ARGS__)
#define cudnnGetConvolutionForwardAlgorithm_v7(...)                            \
  ember_lib_fns.p_cudnnGetConvolutionForwardAlgorithm_v7(__VA_ARGS__)
#define cudnnConvolutionBiasActivationForward(...)                             \
  ember_lib_fns.p_cudnnConvolutionBiasActivationForward(__VA_ARGS__)
#define cudnnGetConvolutionForwardWorkspaceSize(...)                           \
  ember_lib_fns.p_cudnnGetConvolutionForwardWorkspaceSize(__VA_ARGS__)
#define cudnnSetActivationDescriptor(...)                                      \
  ember_lib_fns.p_cudnnSetActivationDescriptor(__VA_ARGS__)
#define cudnnSetConvolution2dDescriptor(...)                                   \
  ember_lib_fns.p_cudnnSetConvolution2dDescriptor(__VA_ARGS__)
#define cudnnSetConvolutionGroupCount(...)                                     \
  ember_lib_fns.p_cudnnSetConvolutionGroupCount(__VA_ARGS__)
#define cudnnSetConvolutionMathType(...)                                       \
  ember_lib_fns.p_cudnnSetConvolutionMathType(__VA_ARGS__)
#define cudnnSetFilter4dDescriptor(...)                                        \
  ember_lib_fns.p_cudnnSetFilter4dDescriptor(__VA_ARGS__)
#define cudnnSetStream(...) ember_lib_fns.p_cudnnSetStream(__VA_ARGS__)
#define cudnnSetTensor4dDescriptor(...)                                        \
  ember_lib_fns.p_cudnnSetTensor4dDescriptor(__VA_ARGS__)

#endif
