//===- DeviceCall.h - Prelude calls checked against DeviceABI.h -*- C++ -*-===//
//
// Every call of a CUDA prelude function is built through EMBER_CUDA_CALL,
// which reads the function's parameter list from its declaration in
// DeviceABI.h and checks the arguments against it when the call is built
// (ember/Kernel/LibCall.h says what is checked).
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_BACKENDS_CUDA_DEVICECALL_H
#define EMBER_BACKENDS_CUDA_DEVICECALL_H

#include "DeviceABI.h"
#include "ember/Kernel/LibCall.h"

/// A call of prelude function FN from kernel K with arguments ARGS.
#define EMBER_CUDA_CALL(K, FN, ARGS)                                           \
  ::ember::kir::checkedLibCall(K, EMBER_LIB_FUNCTION(FN), ARGS)

#endif // EMBER_BACKENDS_CUDA_DEVICECALL_H
