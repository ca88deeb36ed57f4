//===- ResizeTaps.cpp - Source taps of ONNX Resize, per dim ---------------===//
#include "ember/Base/ResizeTaps.h"

#include <algorithm>
#include <cmath>

using namespace ember;

/// Input coordinate of output coordinate \p o along one dim.
static double sourceCoord(int64_t o, int64_t in, int64_t out, double scale,
                          int64_t mode) {
  switch (mode) {
  case 1: // asymmetric
    return o / scale;
  case 2: // pytorch_half_pixel
    return out > 1 ? (o + 0.5) / scale - 0.5 : 0.0;
  case 3: { // align_corners, over the unrounded resized length in * scale
    double len = double(in) * scale;
    return len == 1.0 ? 0.0 : double(o) * double(in - 1) / (len - 1.0);
  }
  default: // half_pixel
    return (o + 0.5) / scale - 0.5;
  }
}

static int64_t nearestIndex(double x, int64_t mode) {
  switch (mode) {
  case 1: // round_prefer_ceil
    return int64_t(std::floor(x + 0.5));
  case 2:
    return int64_t(std::floor(x));
  case 3:
    return int64_t(std::ceil(x));
  default: // round_prefer_floor
    return int64_t(std::ceil(x - 0.5));
  }
}

ResizeTapList ember::resizeTapsAt(const ResizeRule &rule, int64_t o, int64_t in,
                                  int64_t out, double scale) {
  if (in == out && scale == 1.0)
    return {{o, 1.0}};
  double x = sourceCoord(o, in, out, scale, rule.coordMode);
  auto clampIdx = [in](int64_t i) {
    return std::min(std::max<int64_t>(i, 0), in - 1);
  };
  if (rule.mode == 0)
    return {{clampIdx(nearestIndex(x, rule.nearestMode)), 1.0}};
  int64_t i0 = int64_t(std::floor(x));
  double r = x - double(i0);
  ResizeTapList taps;
  if (rule.mode == 1) {
    taps = {{i0, 1.0 - r}, {i0 + 1, r}};
  } else {
    double A = rule.cubicCoeff;
    auto far = [A](double t) {
      return ((A * t - 5 * A) * t + 8 * A) * t - 4 * A;
    };
    auto near = [A](double t) { return ((A + 2) * t - (A + 3)) * t * t + 1; };
    taps = {{i0 - 1, far(r + 1)},
            {i0, near(r)},
            {i0 + 1, near(1 - r)},
            {i0 + 2, far(2 - r)}};
  }
  if (rule.excludeOutside) {
    double sum = 0;
    for (auto &t : taps) {
      if (t.first < 0 || t.first >= in)
        t.second = 0;
      sum += t.second;
    }
    for (auto &t : taps)
      t.second /= sum;
  }
  for (auto &t : taps)
    t.first = clampIdx(t.first);
  return taps;
}
