//===- MatMulInt8.h - 8-bit integer products on the CPU --------*- C++ -*-===//
//
// The rule that picks libjit's integer product kernel for a target, and the
// lowering of IntMatMul and IntConv instructions into weight packing at
// compile time and calls of that kernel (libjit/MatMulInt8.inc; the
// convolutions in ConvInt8.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_BACKENDS_CPU_MATMULINT8_H
#define EMBER_BACKENDS_CPU_MATMULINT8_H

#include "LibCall.h"
#include "MatMulTiling.h"

#include "ember/IR/MemoryPlanner.h"
#include "ember/Kernel/Kernel.h"

#include <vector>

namespace ember {
struct TargetDesc;
class Instruction;
class Node;
class IRFunction;

namespace cpu {

/// Which libjit kernel an integer product calls.
enum class Int8Kernel {
  Amx,   ///< tdpbsud tiles for convolutions (AMX-INT8), else as Vnni
  Vnni,  ///< vpdpbusd (AVX512-VNNI with the 16-lane kernels)
  Widen, ///< bytes widened to Int32, Int32 multiply-adds
};

/// An integer product's kernel and tiles for one target.
struct Int8Plan {
  Int8Kernel kernel;
  /// chooseMatMulTiling's tile (MR * V Int32 accumulators, V vectors of B,
  /// one broadcast: the Float32 register budget); kBlock counts K quads,
  /// whose panel rows take the bytes of a Float32 row.
  MatMulTiling tiling;
  /// The libjit entry point.
  LibKernel entry() const;
  /// The entry point with the requantizing store (RequantMatMul,
  /// RequantConv).
  LibKernel requantEntry() const;
};

/// The plan for target \p T (a kernelTarget): vpdpbusd where \p T has
/// AVX512-VNNI and takes the 16-lane kernels, and then AMX tiles where it
/// also has AMX-TILE and AMX-INT8; the widening kernel otherwise.
Int8Plan chooseInt8Plan(const TargetDesc &T);

/// What lowerIntProduct needs of the CPU lowering.
struct Int8Context {
  /// The function, to find the Splat that fills a zero-point buffer.
  const IRFunction &fn;
  const MemoryPlan &plan;
  /// The constant image: packed weights and their sums are appended.
  std::vector<uint8_t> &constants;
  const TargetDesc &target;
  /// Scratch for a convolution's packed activations: its offset in the
  /// activation region, and the scratch size to raise to what it needs.
  size_t scratchOffset;
  size_t &scratchSize;
};

/// Appends to \p out the kernels of IntMatMul or IntConv \p I and returns
/// true, or returns false (the portable loop nest then runs) when \p I is
/// neither or is outside what the kernel takes: the weights (IntMatMul's
/// RHS, IntConv's filter) must be constants whose zero points are
/// constants that are 0 once Int8 (UInt8 weights less 128). A RequantAdd
/// goes to lowerInt8Elementwise (Int8Elementwise.h) here too.
bool lowerIntProductCPU(const Instruction &I, const Int8Context &ctx,
                        std::vector<kir::Kernel> &out);

/// True when the CPU keeps RequantConv / RequantMatMul \p n whole for
/// lowerIntProductCPU: its weights are a Constant with zero points a
/// Constant or Splat of 0 once Int8 (what constantWeights finds in the IR).
/// Others are lowered to the integer product and float arithmetic.
bool keepsRequantProduct(const Node &n);

} // namespace cpu
} // namespace ember

#endif // EMBER_BACKENDS_CPU_MATMULINT8_H
