/*===- LibStatus.h - Names of the library ops' status codes (C99) -*- C -*-===*
 *
 * The library ops return 0, a cudaError_t, 10000 + a cublasStatus_t or
 * 20000 + a cudnnStatus_t (LibOps.h). ember_lib_status_name() names the
 * last two by their enumerators, so a failure reads
 * "CUDNN_STATUS_NOT_SUPPORTED_SHAPE" rather than a number; cudaError_t
 * values are named by the runtime (cudaGetErrorName), so this returns NULL
 * for them. Header-only: the bundle runner and the compiler both use it.
 *
 *===----------------------------------------------------------------------===*/
#ifndef EMBER_BACKENDS_CUDA_HOST_LIBSTATUS_H
#define EMBER_BACKENDS_CUDA_HOST_LIBSTATUS_H

#define EMBER_LIB_LT_BASE 10000
#define EMBER_LIB_DNN_BASE 20000

static inline const char *ember_lib_lt_status_name(int s) {
  switch (s) {
  case 1:
    return "CUBLAS_STATUS_NOT_INITIALIZED";
  case 3:
    return "CUBLAS_STATUS_ALLOC_FAILED";
  case 7:
    return "CUBLAS_STATUS_INVALID_VALUE";
  case 8:
    return "CUBLAS_STATUS_ARCH_MISMATCH";
  case 11:
    return "CUBLAS_STATUS_MAPPING_ERROR";
  case 13:
    return "CUBLAS_STATUS_EXECUTION_FAILED";
  case 14:
    return "CUBLAS_STATUS_INTERNAL_ERROR";
  case 15:
    return "CUBLAS_STATUS_NOT_SUPPORTED";
  case 16:
    return "CUBLAS_STATUS_LICENSE_ERROR";
  default:
    return "CUBLAS_STATUS_(unknown)";
  }
}

/* cuDNN 9 statuses are a category (thousands) and a detail (units). */
static inline const char *ember_lib_dnn_status_name(int s) {
  switch (s) {
  case 1000:
    return "CUDNN_STATUS_NOT_INITIALIZED";
  case 1008:
    return "CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED";
  case 2000:
    return "CUDNN_STATUS_BAD_PARAM";
  case 2002:
    return "CUDNN_STATUS_BAD_PARAM_NULL_POINTER";
  case 2003:
    return "CUDNN_STATUS_BAD_PARAM_MISALIGNED_POINTER";
  case 2005:
    return "CUDNN_STATUS_BAD_PARAM_OUT_OF_BOUND";
  case 2006:
    return "CUDNN_STATUS_BAD_PARAM_SIZE_INSUFFICIENT";
  case 2007:
    return "CUDNN_STATUS_BAD_PARAM_STREAM_MISMATCH";
  case 2008:
    return "CUDNN_STATUS_BAD_PARAM_SHAPE_MISMATCH";
  case 2011:
    return "CUDNN_STATUS_BAD_PARAM_CUDA_GRAPH_MISMATCH";
  case 3000:
    return "CUDNN_STATUS_NOT_SUPPORTED";
  case 3002:
    return "CUDNN_STATUS_NOT_SUPPORTED_SHAPE";
  case 3003:
    return "CUDNN_STATUS_NOT_SUPPORTED_DATA_TYPE";
  case 3004:
    return "CUDNN_STATUS_NOT_SUPPORTED_LAYOUT";
  case 3005:
    return "CUDNN_STATUS_NOT_SUPPORTED_INCOMPATIBLE_CUDA_DRIVER";
  case 3006:
    return "CUDNN_STATUS_NOT_SUPPORTED_INCOMPATIBLE_CUDART";
  case 3007:
    return "CUDNN_STATUS_NOT_SUPPORTED_ARCH_MISMATCH";
  case 3009:
    return "CUDNN_STATUS_NOT_SUPPORTED_SUBLIBRARY_UNAVAILABLE";
  case 3010:
    return "CUDNN_STATUS_NOT_SUPPORTED_SHARED_MEMORY_INSUFFICIENT";
  case 3013:
    return "CUDNN_STATUS_NOT_SUPPORTED_CUDA_GRAPH_NATIVE_API";
  case 4000:
    return "CUDNN_STATUS_INTERNAL_ERROR";
  case 4001:
    return "CUDNN_STATUS_INTERNAL_ERROR_COMPILATION_FAILED";
  case 4004:
    return "CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED";
  case 5000:
    return "CUDNN_STATUS_EXECUTION_FAILED";
  case 5001:
    return "CUDNN_STATUS_EXECUTION_FAILED_CUDA_DRIVER";
  case 5003:
    return "CUDNN_STATUS_EXECUTION_FAILED_CUDART";
  }
  /* Other details: the category's name (the number is printed beside). */
  switch (s / 1000) {
  case 1:
    return "CUDNN_STATUS_NOT_INITIALIZED(detail)";
  case 2:
    return "CUDNN_STATUS_BAD_PARAM(detail)";
  case 3:
    return "CUDNN_STATUS_NOT_SUPPORTED(detail)";
  case 4:
    return "CUDNN_STATUS_INTERNAL_ERROR(detail)";
  case 5:
    return "CUDNN_STATUS_EXECUTION_FAILED(detail)";
  default:
    return "CUDNN_STATUS_(unknown)";
  }
}

/* The name of a library status (rc >= 10000), or NULL for a cudaError_t. */
static inline const char *ember_lib_status_name(int rc) {
  if (rc >= EMBER_LIB_DNN_BASE)
    return ember_lib_dnn_status_name(rc - EMBER_LIB_DNN_BASE);
  if (rc >= EMBER_LIB_LT_BASE)
    return ember_lib_lt_status_name(rc - EMBER_LIB_LT_BASE);
  return 0;
}

#endif
