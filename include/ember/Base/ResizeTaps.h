//===- ResizeTaps.h - Source taps of ONNX Resize, per dim -------*- C++ -*-===//
//
// Which input elements (and with which weights) one output coordinate of a
// Resize reads along one dim, computed in Float64. The Interpreter sums
// these taps per element; the CPU backend tabulates them at compile time
// for its plane kernel, so both read the same indices and weights.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_BASE_RESIZETAPS_H
#define EMBER_BASE_RESIZETAPS_H

#include <cstdint>
#include <utility>
#include <vector>

namespace ember {

/// The attributes of a Resize that decide its taps (ResizeNode's).
struct ResizeRule {
  int64_t mode;        ///< 0 nearest, 1 linear, 2 cubic.
  int64_t coordMode;   ///< 0 half_pixel, 1 asymmetric, 2 pytorch, 3 corners.
  int64_t nearestMode; ///< 0 round_prefer_floor, 1 _ceil, 2 floor, 3 ceil.
  double cubicCoeff;
  bool excludeOutside;
};

/// (input index, weight) pairs of one output coordinate along one dim.
using ResizeTapList = std::vector<std::pair<int64_t, double>>;

/// The taps of output coordinate \p o along a dim of \p in input and
/// \p out output elements resized by \p scale. A dim that keeps its size
/// at scale 1 reads element o with weight 1. Indices are clamped to the
/// input (ONNX's edge rule).
ResizeTapList resizeTapsAt(const ResizeRule &rule, int64_t o, int64_t in,
                           int64_t out, double scale);

} // namespace ember

#endif // EMBER_BASE_RESIZETAPS_H
