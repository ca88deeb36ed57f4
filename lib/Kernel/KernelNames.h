//===- KernelNames.h - Operator spellings of the kernel IR text -*- C++ -*-===//
//
// The names the kernel printer writes and the kernel parser reads, kept in
// one place so that the two cannot disagree.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_LIB_KERNEL_KERNELNAMES_H
#define EMBER_LIB_KERNEL_KERNELNAMES_H

#include "ember/Kernel/Kernel.h"

#include <optional>

namespace ember {
namespace kir {

/// The spelling of \p op (e.g. "sqrt").
llvm::StringRef unOpName(UnOp op);
/// The spelling of \p op (e.g. "+", "max").
llvm::StringRef binOpName(BinOp op);
/// The operator spelled \p name, if any.
std::optional<UnOp> parseUnOp(llvm::StringRef name);
std::optional<BinOp> parseBinOp(llvm::StringRef name);

} // namespace kir
} // namespace ember

#endif // EMBER_LIB_KERNEL_KERNELNAMES_H
