//===- GeneratedKernels.h - CUDA's own MatMul and Conv kernels -*- C++ -*-===//
//
// The kernels the CUDA backend generates for MatMul and Conv when cuBLASLt
// or cuDNN is not chosen or cannot plan an op: the shared-memory tiled
// GEMM and implicit-GEMM convolution of TiledKernels.h where they apply,
// one thread per output element otherwise.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_BACKENDS_CUDA_GENERATEDKERNELS_H
#define EMBER_BACKENDS_CUDA_GENERATEDKERNELS_H

#include "ember/IR/MemoryPlanner.h"
#include "ember/Kernel/Kernel.h"

#include <optional>
#include <string>

namespace ember {
namespace cuda {

/// The tiled kernel of D = A * B (+ bias[col] when \p epi > 0, then ReLU
/// when \p epi == 2: LibOps.h EMBER_EPI_*) written to \p dest, or nothing
/// when an operand is broadcast over only some batch dimensions (the
/// tiles take one stride per operand for the flattened batch). \p tf32:
/// on TF32 tensor cores.
std::optional<kir::Kernel> tiledGemm(const MatMulInst &I, Value *dest,
                                     Value *bias, int64_t epi,
                                     const MemoryPlan &plan, bool tf32);

/// One parallel loop over the elements of \p dest, each a dot product of
/// the prelude's `ember_gemm_f32`: reads operands of any layout the tiled
/// kernel refuses.
kir::Kernel elementwiseGemm(const MatMulInst &I, Value *dest, Value *bias,
                            int64_t epi, const MemoryPlan &plan);

/// The generated convolution of \p I (tiles on TF32 tensor cores when
/// \p tf32); \p how receives what it is (for -verbose choices).
kir::Kernel generatedConv(const ConvInst &I, const MemoryPlan &plan, bool tf32,
                          std::string &how);

} // namespace cuda
} // namespace ember

#endif
