//===- ConvBF16.h - Convolutions with a BFloat16 filter on the CPU -*- C++ -*-//
//
// convert-precision gives a non-depthwise convolution a BFloat16 filter
// under -precision=bf16; its input stays Float32 and is rounded to
// BFloat16 where the convolution copies its patches. On the CPU such a
// convolution is a GEMM per image and group with the filter as A (packed
// at compile time) and BFloat16 pair panels of the patch matrix as B,
// written by each task for the columns it multiplies (libjit/ConvBF16.inc),
// on the kernel chooseBF16MatMul picks for a MatMul of as many rows.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_BACKENDS_CPU_CONVBF16_H
#define EMBER_BACKENDS_CPU_CONVBF16_H

#include "ConvPlan.h"
#include "MatMulBF16.h"

namespace ember {
namespace cpu {

/// How a convolution with a BFloat16 filter is split and laid out.
struct ConvBF16Tiling {
  BF16MatMulPlan plan;
  /// Panel columns, pairs of a panel (padded to whole B tiles on AMX),
  /// the filter's row stride (K, or 2 kp on AMX) and the K block in pairs.
  int64_t nr, kp, lda, kc;
  /// Panels of a group's N pixels, panels per task, pixel chunks.
  int64_t panels, panelsPerTask, chunks;
  /// Output channels per task and row tasks per chunk (each packs its
  /// chunk's panels itself, unless shared).
  int64_t rowsPerTask, rowTasks;
  /// The group's filter outweighs its panels (few pixels, long K): one
  /// chunk of all panels, written once per image by ember_conv_bf16_pack
  /// in packTasks parallel tasks per group, and tasks split by rows only,
  /// so the filter is read once.
  bool shared = false;
  int64_t packTasks = 0;
  /// Bytes of one task's panels.
  int64_t slotBytes() const { return panelsPerTask * kp * nr * 4; }
  /// The libjit kernel (ember_conv_bf16_amx, _dp or _widen).
  LibKernel entry() const;
};

/// The tiling of \p I (a Conv with a BFloat16 filter) on target \p T: the
/// kernel and tiles of a BFloat16 MatMul of mPerG rows; a task's panels
/// fill at most half of \p T's L2 (they are read once per block of
/// rows, the filter streams past them); at least kConvMinTasks tasks
/// where the pixels and then the rows allow; shared panels where the
/// filter is the larger operand and the panels fit.
ConvBF16Tiling chooseConvBF16(const ConvInst &I, const TargetDesc &T);

/// True if \p I is lowered by lowerConvBF16CV (output channels in the
/// lanes, transposed patch rows packed by ember_conv_bf16_cv_pack).
bool usesConvBF16CV(const ConvInst &I, const TargetDesc &T);

/// The plan planConv reports for \p I (the direct one where
/// chooseConvBF16Direct applies, else the channel-vector one where
/// chooseConvBF16CV does).
ConvPlan planConvBF16(const ConvInst &I, const TargetDesc &T);

/// The BFloat16 filter of \p I, [M][C][KH][KW], in the constant image
/// (convert-precision converts only constant filters).
const uint16_t *constantFilterBF16(const ConvInst &I,
                                   const MatMulBF16Context &ctx);

/// Appends the geometry arguments every bf16 convolution kernel takes in
/// this order: H, W, KH, KW, OW, strides, leading pads, dilations.
void appendConvGeometry(const ConvInst &I, kir::Kernel &k,
                        std::vector<kir::CallArg> &args);

/// Appends the output arguments every bf16 convolution kernel starts with,
/// y (Float32) and yb (BFloat16), at element \p yOffset: \p I's dest as
/// one of them, a null pointer as the other (BF16Storage.h).
void appendConvOutputs(const ConvInst &I, kir::Kernel &k,
                       const MatMulBF16Context &ctx, kir::ExprRef yOffset,
                       std::vector<kir::CallArg> &args);

/// Appends the input arguments x (Float32) and xb (BFloat16) at element
/// \p xOffset of a kernel that reads \p I's input either way
/// (takesBF16Input): the input as one, a null pointer as the other.
void appendConvInput(const ConvInst &I, kir::Kernel &k,
                     const MatMulBF16Context &ctx, kir::ExprRef xOffset,
                     std::vector<kir::CallArg> &args);

/// Adds to \p k the buffers of a bf16 convolution kernel that reads a
/// prepared copy of its input (\p prepared, in the scratch), and returns
/// the arguments such kernels start with: the outputs (appendConvOutputs)
/// at element \p yOffset, \p filter, the copy, the bias and the residual.
std::vector<kir::CallArg> preparedInputArgs(const ConvInst &I, kir::Kernel &k,
                                            const MatMulBF16Context &ctx,
                                            const kir::Buffer &filter,
                                            const kir::Buffer &prepared,
                                            int64_t yOffset);

/// Appends to \p out the kernels of \p I, one per image (or those of
/// lowerConvBF16Direct where chooseConvBF16Direct applies, else of
/// lowerConvBF16CV where chooseConvBF16CV does); its filter (a constant)
/// is laid out here, in the constant image.
void lowerConvBF16(const ConvInst &I, const MatMulBF16Context &ctx,
                   std::vector<kir::Kernel> &out);

} // namespace cpu
} // namespace ember

#endif // EMBER_BACKENDS_CPU_CONVBF16_H
