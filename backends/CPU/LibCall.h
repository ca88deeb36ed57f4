//===- LibCall.h - libjit calls checked against their declarations -*- C++
//-*-===//
//
// Every call of a libjit kernel is built through EMBER_LIBJIT_CALL, which
// reads the kernel's parameter list from its declaration in LibjitABI.h
// and checks the arguments against it when the call is built: their count,
// buffers for pointers (of the pointee's element kind, or for integer
// pointees any integer kind of its size; an Int64 constant 0 passes a null
// pointer) and scalars of the right kind for the others. A mismatch is a bug of
// the lowering, caught at compile time of the network rather than as a wrong
// result.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_BACKENDS_CPU_LIBCALL_H
#define EMBER_BACKENDS_CPU_LIBCALL_H

#include "ember/Kernel/Kernel.h"
#include "libjit/LibjitABI.h"

#include "llvm/ADT/ArrayRef.h"

#include <type_traits>
#include <vector>

namespace ember {
namespace cpu {

/// What one parameter of a libjit kernel takes: a buffer of elements of
/// \c elem (pointer parameters) or a scalar of kind \c elem.
struct LibParam {
  bool pointer;
  ElemKind elem;
};

template <class T> constexpr ElemKind libElemKind() {
  using U = std::remove_cv_t<T>;
  if constexpr (std::is_same_v<U, float>)
    return ElemKind::Float32;
  else if constexpr (std::is_same_v<U, uint16_t>)
    return ElemKind::BFloat16; // bfloat16 bits; float16 is libjit::Half16
  else if constexpr (std::is_same_v<U, libjit::Half16>)
    return ElemKind::Float16;
  else if constexpr (std::is_same_v<U, int32_t>)
    return ElemKind::Int32;
  else if constexpr (std::is_same_v<U, int64_t>)
    return ElemKind::Int64;
  else if constexpr (std::is_same_v<U, double>)
    return ElemKind::Float64;
  else if constexpr (std::is_same_v<U, int8_t>)
    return ElemKind::Int8;
  else {
    static_assert(std::is_same_v<U, uint8_t>, "no ElemKind for this type");
    return ElemKind::UInt8;
  }
}

template <class T> constexpr LibParam libParam() {
  if constexpr (std::is_pointer_v<T>)
    return {true, libElemKind<std::remove_pointer_t<T>>()};
  else
    return {false, libElemKind<T>()};
}

template <class Fn> struct LibSignature;
template <class... P> struct LibSignature<void(P...)> {
  static llvm::ArrayRef<LibParam> params() {
    static const LibParam list[] = {libParam<P>()...};
    return list;
  }
};

/// A libjit kernel: its name and parameter list (EMBER_LIBJIT_KERNEL).
struct LibKernel {
  const char *name;
  llvm::ArrayRef<LibParam> params;
};

/// The call of \p callee with \p args in kernel \p k, after checking
/// them against its parameters (CHECK: a mismatch is a lowering bug).
kir::Stmt checkedLibCall(const kir::Kernel &k, const LibKernel &callee,
                         std::vector<kir::CallArg> args);

} // namespace cpu
} // namespace ember

/// libjit kernel FN (declared in LibjitABI.h) as a LibKernel.
#define EMBER_LIBJIT_KERNEL(FN)                                                \
  ::ember::cpu::LibKernel {                                                    \
#FN, ::ember::cpu::LibSignature < decltype(FN)> ::params()                 \
  }
/// A call of libjit kernel FN from kernel K with arguments ARGS.
#define EMBER_LIBJIT_CALL(K, FN, ARGS)                                         \
  ::ember::cpu::checkedLibCall(K, EMBER_LIBJIT_KERNEL(FN), ARGS)

#endif // EMBER_BACKENDS_CPU_LIBCALL_H
