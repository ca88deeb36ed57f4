//===- ConvRows.h - Direct convolution along output rows --------*- C++ -*-===//
//
// The row-direct path (libjit's ConvRows.inc): pixels of an output row in
// vectors, a block of a group's output channels in registers, the input
// band copied once per call. The tiling is a pure function of the
// convolution and the kernel target, shared by the plan (its estimate) and
// the emission.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_BACKENDS_CPU_CONVROWS_H
#define EMBER_BACKENDS_CPU_CONVROWS_H

#include "CPU.h"

#include <optional>

namespace ember {
namespace cpu {

/// The register tile and the tasks of a row-direct convolution.
struct ConvRowsTiling {
  int64_t mr = 0;       ///< Output channels per block (a tile's rows).
  int64_t nv = 0;       ///< Vectors of 16 pixels per tile.
  int64_t blocks = 0;   ///< Blocks per group.
  int64_t bandRows = 0; ///< Output rows per call.
  int64_t bands = 0;    ///< Calls per (group, block) along the rows.
  /// Real output pixels over the pixels the tiles compute.
  double pixelUse = 0;
  /// Floats one call copies into its band.
  int64_t bandFloats = 0;
};

/// The tiling of \p I on the kernel target \p T, or none when the band of a
/// single output row exceeds libjit's stack buffer (a group of very many
/// channels on very wide rows).
std::optional<ConvRowsTiling> chooseConvRowsTiling(const ConvInst &I,
                                                   const TargetDesc &T);

/// Appends the kernels of \p I along the row-direct path to \p out.
void lowerConvRows(const ConvInst &I, const ConvRowsTiling &t,
                   const MemoryPlan &plan, std::vector<kir::Kernel> &out);

} // namespace cpu
} // namespace ember

#endif // EMBER_BACKENDS_CPU_CONVROWS_H
