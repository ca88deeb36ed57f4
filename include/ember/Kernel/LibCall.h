//===- LibCall.h - Library calls checked against their declarations -*- C++
//-*-===//
//
// A backend's library functions (libjit's kernels on the CPU, the CUDA
// prelude's device functions) are declared once, with named and typed
// parameters, in a header both the function's source and the lowering
// include. A call is built against the declaration's C++ type: its count
// of arguments, buffers for pointers (of the pointee's element kind, or for
// integer pointees any integer kind of its size; an Int64 constant 0
// passes a null pointer) and scalars of the right kind for the others. A
// mismatch is a bug of the lowering, caught when the network is compiled
// rather than as a wrong result.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_KERNEL_LIBCALL_H
#define EMBER_KERNEL_LIBCALL_H

#include "ember/Kernel/Kernel.h"

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <type_traits>
#include <vector>

namespace ember {
namespace kir {

/// What one parameter of a library function takes: a buffer of elements
/// of \c elem (pointer parameters) or a scalar of kind \c elem.
struct LibParam {
  bool pointer;
  ElemKind elem;
};

/// The element kind a parameter type stands for; a backend specializes it
/// for the element types of its own (libjit's float16 bits).
template <class T, class = void> struct LibElemKindOf;
template <> struct LibElemKindOf<float> {
  static constexpr ElemKind value = ElemKind::Float32;
};
template <> struct LibElemKindOf<double> {
  static constexpr ElemKind value = ElemKind::Float64;
};
/// bfloat16 bits: a float16 element type is a struct of the backend's.
template <> struct LibElemKindOf<uint16_t> {
  static constexpr ElemKind value = ElemKind::BFloat16;
};
template <> struct LibElemKindOf<int8_t> {
  static constexpr ElemKind value = ElemKind::Int8;
};
template <> struct LibElemKindOf<uint8_t> {
  static constexpr ElemKind value = ElemKind::UInt8;
};
template <> struct LibElemKindOf<int32_t> {
  static constexpr ElemKind value = ElemKind::Int32;
};
/// int64_t and long long are distinct types on LP64 hosts; CUDA C spells
/// 64-bit integers long long.
template <> struct LibElemKindOf<long> {
  static constexpr ElemKind value = ElemKind::Int64;
};
template <> struct LibElemKindOf<long long> {
  static constexpr ElemKind value = ElemKind::Int64;
};

template <class T> constexpr LibParam libParam() {
  if constexpr (std::is_pointer_v<T>)
    return {true,
            LibElemKindOf<std::remove_cv_t<std::remove_pointer_t<T>>>::value};
  else
    return {false, LibElemKindOf<std::remove_cv_t<T>>::value};
}

/// The parameter list of a function type.
template <class Fn> struct LibSignature;
template <class... P> struct LibSignature<void(P...)> {
  static llvm::ArrayRef<LibParam> params() {
    static const LibParam list[] = {libParam<P>()...};
    return list;
  }
};

/// A library function: its name and parameter list (EMBER_LIB_FUNCTION).
struct LibKernel {
  const char *name;
  llvm::ArrayRef<LibParam> params;
};

/// The call of \p callee with \p args in kernel \p k, after checking
/// them against its parameters (CHECK: a mismatch is a lowering bug).
Stmt checkedLibCall(const Kernel &k, const LibKernel &callee,
                    std::vector<CallArg> args);

} // namespace kir
} // namespace ember

/// Library function FN (declared in a backend's ABI header) as a LibKernel.
#define EMBER_LIB_FUNCTION(FN)                                                 \
  ::ember::kir::LibKernel {                                                    \
#FN, ::ember::kir::LibSignature < decltype(FN)> ::params()                 \
  }

#endif // EMBER_KERNEL_LIBCALL_H
