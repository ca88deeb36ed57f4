//===- RunSmall.h - Running a small fuzz input ------------------*- C++ -*-===//
//
// The run step of ember-fuzz-model, shared with FuzzRegressionTest so that
// a regression input is taken through exactly what the fuzzer ran: when
// the plan is small, compile for the backend and run with the tools'
// run-time input checks on inputs in [0, 1).
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_TESTS_FUZZ_RUNSMALL_H
#define EMBER_TESTS_FUZZ_RUNSMALL_H

#include "ember/Backend/Pipeline.h"

#include <memory>
#include <random>

namespace ember {
namespace fuzz {

/// Plans above this many bytes are compiled but not run: the Interpreter
/// under ASan takes seconds for a few hundred million operations, and the
/// run checks the kernels' handling of odd shapes, which small ones show.
constexpr size_t kMaxRunBytes = size_t(2) << 20;

/// Compiles \p ir for \p B and runs it on inputs in [0, 1) (seed 0) when
/// its plan is at most kMaxRunBytes: the compile allocates the regions,
/// and a legal model may need gigabytes (the element limit is per tensor).
/// Returns the compile's or the run's error; success when not run.
inline llvm::Error runSmall(const Module &M, const Backend &B,
                            std::unique_ptr<IRFunction> ir,
                            const MemoryPlan &plan) {
  if (plan.constantSize + plan.mutableSize + plan.activationSize > kMaxRunBytes)
    return llvm::Error::success();
  auto fn = B.compile(M, std::move(ir), plan, CodegenOptions());
  if (!fn)
    return fn.takeError();
  std::unique_ptr<CompiledFunction> run = withInputChecks(M, std::move(*fn));
  Bindings b;
  std::mt19937 gen(0);
  for (Placeholder *ph : M.getInputPlaceholders()) {
    Tensor t(*ph->getType());
    t.randomize(0.f, 1.f, gen);
    b.insert(ph, std::move(t));
  }
  return run->run(b);
}

} // namespace fuzz
} // namespace ember

#endif // EMBER_TESTS_FUZZ_RUNSMALL_H
