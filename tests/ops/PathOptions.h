//===- PathOptions.h - Code generation options of the path tests -*- C++ -*-//
//
// The CPU path tests (ConvPaths, PoolPaths, MatMulPaths) compile with these
// options: --cpu-simd-width on the test binary's command line sets the
// kernel width for the whole run (ops.wide-simd-paths: 512,
// ops.narrow-simd-paths: 256), and a test forces a conv path or Winograd
// mode for one scope through PathChoice.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_TESTS_OPS_PATHOPTIONS_H
#define EMBER_TESTS_OPS_PATHOPTIONS_H

#include "ember/Backend/CodegenOptions.h"

namespace ember {
namespace test {

/// The options every CPU compile of the path tests uses.
CodegenOptions &pathOptions();

/// True when the CPU compiles of this run take the 8-lane kernels: the
/// host has no AVX-512 and --cpu-simd-width does not force 512, or it
/// forces 256.
bool narrowKernels();

/// Sets pathOptions()' conv path and Winograd mode for one scope.
class PathChoice {
public:
  explicit PathChoice(cpu::ConvPath path,
                      cpu::WinogradMode mode = cpu::WinogradMode::Auto)
      : saved_(pathOptions().cpu) {
    pathOptions().cpu.convPath = path;
    pathOptions().cpu.winograd = mode;
  }
  ~PathChoice() { pathOptions().cpu = saved_; }
  PathChoice(const PathChoice &) = delete;
  PathChoice &operator=(const PathChoice &) = delete;

private:
  CPUCodegenOptions saved_;
};

} // namespace test
} // namespace ember

#endif
