//===- BF16PathBounds.h - Options and bound of the bf16 path tests -*- C++ -*-//
//
// The BFloat16 Conv and MatMul path tests compile with the path tests'
// options under -precision=bf16 and bound a Float32 sum of n exact terms
// by gamma(n) = n u / (1 - n u), u = 2^-24, times the sum of their
// magnitudes (each file states how it applies the bound).
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_TESTS_OPS_BF16PATHBOUNDS_H
#define EMBER_TESTS_OPS_BF16PATHBOUNDS_H

#include "PathOptions.h"

#include <cmath>

namespace ember {
namespace test {

/// pathOptions() with -precision=bf16.
inline CodegenOptions bf16PathOptions() {
  CodegenOptions opts = pathOptions();
  opts.precision.precision = FloatPrecision::BF16;
  return opts;
}

/// gamma(n) for Float32 sums of n terms.
inline double gamma(dim_t n) {
  double nu = double(n) * std::ldexp(1.0, -24);
  return nu / (1 - nu);
}

} // namespace test
} // namespace ember

#endif
