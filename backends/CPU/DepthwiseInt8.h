//===- DepthwiseInt8.h - Requantized 8-bit depthwise conv -------*- C++ -*-===//
//
// A depthwise RequantConv (one input channel per output channel) as one
// call of libjit's ember_dwconv_i8q per channel plane
// (libjit/DepthwiseInt8.inc): a direct convolution on the bytes with the
// requantizing store, where the integer GEMM would pack a one-row product
// per channel.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_BACKENDS_CPU_DEPTHWISEINT8_H
#define EMBER_BACKENDS_CPU_DEPTHWISEINT8_H

#include "MatMulInt8.h"

#include <cstdint>
#include <vector>

namespace ember {
namespace cpu {

/// True when RequantConv \p I is depthwise with output rows the kernel
/// takes.
bool isDepthwiseInt8(const RequantConvInst &I);

/// Appends the kernel of depthwise RequantConv \p I (isDepthwiseInt8) with
/// its filter \p weights as Int8 ([C][KH * KW], UInt8 weights less 128,
/// whose zero point is then 0).
void lowerDepthwiseInt8(const RequantConvInst &I,
                        const std::vector<int8_t> &weights,
                        const Int8Context &ctx, std::vector<kir::Kernel> &out);

} // namespace cpu
} // namespace ember

#endif // EMBER_BACKENDS_CPU_DEPTHWISEINT8_H
