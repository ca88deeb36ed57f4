//===- MatMulBF16.h - BFloat16 MatMul on the CPU ---------------*- C++ -*-===//
//
// The rule that picks libjit's BFloat16 MatMul kernel and its tiles for a
// target, and the lowering of a BFloat16 MatMul instruction into the
// packing of B and calls of that kernel (libjit/MatMulBF16.inc).
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_BACKENDS_CPU_MATMULBF16_H
#define EMBER_BACKENDS_CPU_MATMULBF16_H

#include "LibCall.h"
#include "MatMulTiling.h"

#include "ember/IR/MemoryPlanner.h"
#include "ember/Kernel/Kernel.h"

#include "llvm/Support/raw_ostream.h"

#include <vector>

namespace ember {
struct TargetDesc;

namespace cpu {

/// Tile geometry of AMX palette 1 (the only palette the architecture
/// defines; a CPU with AMX-TILE has it): 8 tiles of 16 rows x 64 bytes.
inline constexpr int64_t kAMXTileRows = 16, kAMXTileBytes = 64;

/// Which libjit kernel a BFloat16 MatMul calls.
enum class BF16MatMulKernel {
  AMX,        ///< tdpbf16ps tiles (AMX-BF16), vdpbf16ps where Linux refuses
  DotProduct, ///< vdpbf16ps (AVX512-BF16 with the 16-lane kernels)
  Widen,      ///< both operands widened to Float32, Float32 FMAs
};

/// A BFloat16 MatMul's kernel and tiles for one target.
struct BF16MatMulPlan {
  BF16MatMulKernel kernel;
  /// DotProduct and Widen: chooseMatMulTiling's tile (the register budget
  /// is the same: MR * V accumulators, V vectors of B, one broadcast);
  /// kBlock counts K pairs, whose panel rows take the bytes of a Float32
  /// row. AMX: a block of 2 x 2 tiles (rows 2 x 16, panelCols 16: one tile
  /// row of pairs), kBlock the pairs of one B tile (16), to which each
  /// panel's pairs are padded.
  MatMulTiling tiling;
  /// The libjit entry point.
  LibKernel entry() const;
  void print(llvm::raw_ostream &os) const;
};

/// The plan for target \p T (a kernelTarget) and products of \p m rows:
/// AMX tiles where \p T has AMX-TILE and AMX-BF16 besides what vdpbf16ps
/// needs (its fallback) and \p m fills at least one tile's rows (fewer rows
/// would multiply mostly padding, and a product that short is bound by
/// reading B, which vdpbf16ps streams as well); vdpbf16ps where \p T has
/// AVX512-BF16 and takes the 16-lane kernels; the widening kernel
/// otherwise.
BF16MatMulPlan chooseBF16MatMul(const TargetDesc &T, int64_t m);

class BF16Storage;

/// What lowerMatMulBF16 needs of the CPU lowering.
struct MatMulBF16Context {
  const MemoryPlan &plan;
  /// The constant image: a constant B is packed and appended.
  std::vector<uint8_t> &constants;
  const TargetDesc &target;
  /// Scratch for a B packed at run time: its offset in the activation
  /// region, and the scratch size to raise to what it needs.
  size_t scratchOffset;
  size_t &scratchSize;
  /// Activations stored in BFloat16 (convolutions only; null: none).
  const BF16Storage *storage = nullptr;
};

/// Appends to \p out the kernels of BFloat16 MatMul \p I: the packing of a
/// B computed at run time (a constant B is packed here, into the constant
/// image), then the product in parallel tasks (splitMatMul), its epilogue
/// (bias, residual, activation) applied in Float32 as the sums are stored.
void lowerMatMulBF16(const MatMulInst &I, const MatMulBF16Context &ctx,
                     std::vector<kir::Kernel> &out);

} // namespace cpu
} // namespace ember

#endif // EMBER_BACKENDS_CPU_MATMULBF16_H
