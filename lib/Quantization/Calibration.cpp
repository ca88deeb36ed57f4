//===- Calibration.cpp - KL-divergence clipping of a histogram ------------===//
//
// Clipping a few outliers buys resolution for the bulk of a distribution.
// For each candidate threshold T (a whole number of bins from zero), the
// kept bins [a, b) are those inside [-T, T]; P is the histogram over them
// with the clipped mass added to the end bins, Q is the kept bins merged
// into `levels` equal groups and spread back evenly over each group's
// non-empty bins (what quantizing to that many levels keeps). The T with
// the smallest KL(P || Q) wins; thresholds keeping fewer bins than levels
// are not tried (they lose nothing to rounding and everything to clipping).
// The bin holding zero is left out of both: zero is always exact (the zero
// point), and the spike of exact zeros behind a Relu would otherwise
// dominate its group's average and favour ever smaller thresholds.
//
//===----------------------------------------------------------------------===//
#include "ember/Quantization/Quantize.h"

#include <algorithm>
#include <cmath>

using namespace ember;

/// KL(P || Q) of the kept bins [a, b) of \p h (see the file comment).
static double klDivergence(const std::vector<uint64_t> &h, size_t a, size_t b,
                           unsigned levels) {
  size_t n = b - a;
  std::vector<double> p(h.begin() + a, h.begin() + b), q(n, 0);
  for (size_t i = 0; i < a; ++i)
    p.front() += double(h[i]);
  for (size_t i = b; i < h.size(); ++i)
    p.back() += double(h[i]);
  for (unsigned l = 0; l < levels; ++l) {
    size_t from = l * n / levels, to = (l + 1) * n / levels;
    double mass = 0;
    size_t nonEmpty = 0;
    for (size_t i = from; i < to; ++i) {
      mass += double(h[a + i]);
      nonEmpty += h[a + i] != 0;
    }
    for (size_t i = from; i < to && nonEmpty; ++i)
      q[i] = h[a + i] ? mass / double(nonEmpty) : 0;
  }
  double sp = 0, sq = 0;
  for (size_t i = 0; i < n; ++i) {
    sp += p[i];
    sq += q[i];
  }
  if (sp == 0 || sq == 0)
    return INFINITY;
  // An empty Q bin under P mass (the clipped ends) costs as a tiny one.
  const double eps = 1e-12;
  double kl = 0;
  for (size_t i = 0; i < n; ++i)
    if (p[i] > 0)
      kl += p[i] / sp * std::log((p[i] / sp) / std::max(q[i] / sq, eps));
  return kl;
}

std::pair<float, float> ember::calibrateKL(const ValueProfile &v,
                                           unsigned levels) {
  size_t bins = v.histogram.size();
  double width = (double(v.max) - v.min) / double(bins);
  if (bins <= levels || width <= 0)
    return {v.min, v.max};
  std::vector<uint64_t> h = v.histogram;
  if (v.min <= 0 && v.max >= 0)
    h[std::min(bins - 1, size_t(std::floor(-double(v.min) / width)))] = 0;
  double absMax = std::max(std::abs(double(v.min)), std::abs(double(v.max)));
  std::pair<float, float> best{v.min, v.max};
  double bestKL = INFINITY;
  for (size_t k = 1; double(k) * width <= absMax + width; ++k) {
    double t = double(k) * width;
    size_t a =
        size_t(std::clamp(std::floor((-t - v.min) / width), 0.0, double(bins)));
    size_t b =
        size_t(std::clamp(std::ceil((t - v.min) / width), 0.0, double(bins)));
    if (b <= a || b - a < levels)
      continue;
    double kl = klDivergence(h, a, b, levels);
    if (kl < bestKL) {
      bestKL = kl;
      best = {float(v.min + double(a) * width),
              float(v.min + double(b) * width)};
    }
  }
  return best;
}
