//===- LibCall.h - libjit calls checked against their declarations -*- C++
//-*-===//
//
// Every call of a libjit kernel is built through EMBER_LIBJIT_CALL, which
// reads the kernel's parameter list from its declaration in LibjitABI.h
// and checks the arguments against it when the call is built
// (ember/Kernel/LibCall.h says what is checked).
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_BACKENDS_CPU_LIBCALL_H
#define EMBER_BACKENDS_CPU_LIBCALL_H

#include "ember/Kernel/LibCall.h"
#include "libjit/LibjitABI.h"

namespace ember {
namespace kir {
/// libjit's float16 elements, told from bfloat16 bits by their type.
template <> struct LibElemKindOf<libjit::Half16> {
  static constexpr ElemKind value = ElemKind::Float16;
};
} // namespace kir

namespace cpu {
using kir::checkedLibCall;
using kir::LibKernel;
using kir::LibParam;
} // namespace cpu
} // namespace ember

/// libjit kernel FN (declared in LibjitABI.h) as a LibKernel.
#define EMBER_LIBJIT_KERNEL(FN) EMBER_LIB_FUNCTION(FN)
/// A call of libjit kernel FN from kernel K with arguments ARGS.
#define EMBER_LIBJIT_CALL(K, FN, ARGS)                                         \
  ::ember::kir::checkedLibCall(K, EMBER_LIBJIT_KERNEL(FN), ARGS)

#endif // EMBER_BACKENDS_CPU_LIBCALL_H
