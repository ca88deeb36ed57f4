//===- Profile.h - Per-kernel run times of a compiled function -*- C++ -*-===//
//
// A backend that can time its kernels (the CPU's NAME_profile entry calls a
// timer between kernels) fills a Profile; printProfile turns it into the
// table `model-runner -profile` prints: one row per IR instruction (or
// fused group of instructions), with its time, GFLOP/s and share.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_BACKEND_PROFILE_H
#define EMBER_BACKEND_PROFILE_H

#include "ember/IR/IR.h"

#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

namespace ember {

/// The time one kernel took, summed over the profiled runs.
struct KernelTime {
  std::string name;                         ///< The kernel's name.
  std::vector<const Instruction *> sources; ///< The IR it computes.
  double seconds = 0;
};

/// Kernels in execution order and how many runs their times sum.
struct Profile {
  std::vector<KernelTime> kernels;
  unsigned runs = 0;
};

/// Floating-point operations of one run of \p I: 2 per multiply-add for
/// Conv, MatMul, their integer forms (IntConv, RequantConv, IntMatMul,
/// RequantMatMul: integer operations, counted alike) and Attention's two
/// products (the visible query-key pairs only when causal), 0 for data
/// movement, otherwise one per element of its largest operand.
double countFlops(const Instruction &I);

/// One row of the table: consecutive kernels with the same sources (or one
/// kernel of them).
struct ProfileRow {
  std::string name;  ///< The first source's name (or the kernel's).
  std::string kind;  ///< Instruction kinds, `+`-joined for fused groups.
  std::string shape; ///< The last source's result dims, `1x32x112x112`.
  unsigned kernels = 0;
  double ms = 0;    ///< Per run.
  double flops = 0; ///< Per run.
};

/// The table's rows in execution order; with \p perKernel one row per
/// kernel instead of per group (a convolution's packing kernels apart from
/// its products).
std::vector<ProfileRow> summarizeProfile(const Profile &p,
                                         bool perKernel = false);

/// Prints the table (slowest first when \p byTime) and a total line.
void printProfile(const Profile &p, llvm::raw_ostream &os, bool byTime,
                  bool perKernel = false);

} // namespace ember

#endif // EMBER_BACKEND_PROFILE_H
