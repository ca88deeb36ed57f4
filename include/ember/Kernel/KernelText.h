//===- KernelText.h - Kernel IR parser and verifier ------------*- C++ -*-===//
//
// Kernel::print writes a kernel as text; parseKernels reads that text back
// into kernels that print identically, so kernel lowering can be tested on
// text and kernels can be written by hand. verifyKernel checks the typing
// and scoping rules every renderer relies on.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_KERNEL_KERNELTEXT_H
#define EMBER_KERNEL_KERNELTEXT_H

#include "ember/Kernel/Kernel.h"

#include "llvm/Support/Error.h"

namespace ember {
namespace kir {

/// Parses every kernel in \p text (the format Kernel::print writes, one or
/// more kernels one after another). Errors name the line.
llvm::Expected<std::vector<Kernel>> parseKernels(llvm::StringRef text);

/// Checks \p k: buffers, locals and loop variables referenced exist and are
/// in scope; indices and loop variables are integers; a store's value has
/// its buffer's kind and an assignment's its local's; conditions are Bool;
/// both operands of a binary operator and both arms of a select have one
/// kind; float-only operators get float operands. Errors name the kernel.
llvm::Error verifyKernel(const Kernel &k);

} // namespace kir
} // namespace ember

#endif // EMBER_KERNEL_KERNELTEXT_H
