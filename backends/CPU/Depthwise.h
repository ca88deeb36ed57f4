//===- Depthwise.h - Depthwise convolutions and max pools ------*- C++ -*-===//
#ifndef EMBER_BACKENDS_CPU_DEPTHWISE_H
#define EMBER_BACKENDS_CPU_DEPTHWISE_H

#include "CPU.h"

namespace ember {
namespace cpu {

/// What the depthwise and max-pool lowerings need of the CPU lowering.
struct DepthwiseContext {
  const MemoryPlan &plan;
  /// The constant image: packed filters are appended.
  std::vector<uint8_t> &constants;
  ConvPath path;
  /// The kernel target (see lowerForCPU).
  const TargetDesc &target;
  /// The 16-bit constant a convolution's filter widens (NarrowWeights.h),
  /// or null; then \p pre receives the kernel that widens it before the
  /// convolution's own.
  WeightVar *narrow = nullptr;
  std::vector<kir::Kernel> *pre = nullptr;
};

/// The kernel of depthwise convolution \p I: per channel plane (vectors
/// along rows), or per 16 channels (channels as vector lanes) on narrow
/// rows and for windows past 3x3 on rows up to 32 (ConvPath::Auto), or as
/// forced by ctx.path.
kir::Kernel lowerDepthwiseConv(const ConvInst &I, const DepthwiseContext &ctx);

/// The channel-vector kernel of max pool \p I, or none when it keeps the
/// shared pooling kernel (not float32, rows of 16 pixels or more under
/// ConvPath::Auto, ConvPath::Panels, or rows too wide for a band).
std::optional<kir::Kernel> lowerMaxPoolCV(const MaxPoolInst &I,
                                          const DepthwiseContext &ctx);

/// An average pool through the channel-vector depthwise kernel (every tap
/// 1 / (KH * KW)) where a depthwise convolution of its shape would take it
/// (or it is forced), through the per-plane one (same taps) at stride 1 on
/// rows up to 32, or none when it keeps the shared pooling kernel: also
/// when not float32, or padded without counting the padding in the divisor.
std::optional<kir::Kernel> lowerAvgPoolDepthwise(const AvgPoolInst &I,
                                                 const DepthwiseContext &ctx);

/// Max or average pool \p I (float32, 2-D) as one separable libjit call
/// per channel plane (PoolLowering.cpp), or none: another instruction, a
/// forced ConvPath, or a row too wide for the kernel's band.
std::optional<kir::Kernel> lowerPoolPlanes(const Instruction &I,
                                           const DepthwiseContext &ctx);
} // namespace cpu
} // namespace ember

#endif
