//===- CUDATestUtils.h - Networks run on the CUDA host emulation -*- C++
//-*-===//
//
// Shared by the CUDA tests: pseudo-random inputs, a network run on one
// backend, the CUDA backend's per-op choices, and agreement of the host
// emulation backends with the Interpreter.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_TESTS_CUDA_CUDATESTUTILS_H
#define EMBER_TESTS_CUDA_CUDATESTUTILS_H

#include "HostEmulationBackend.h"

#include "../../backends/CUDA/CUDA.h"
#include "../unit/TestUtils.h"

#include "ember/Backend/Pipeline.h"

#include "gtest/gtest.h"

#include <functional>

namespace ember {
namespace test {

/// Builds a network into a module: inputs first, then saved outputs.
using Builder = std::function<void(Module &, Function &)>;

/// Deterministic values in [-1, 1).
inline Tensor pseudoRandom(llvm::ArrayRef<dim_t> dims, unsigned seed) {
  Tensor t(ElemKind::Float32, dims);
  uint32_t s = 2463534242u + seed;
  for (float &v : t.getHandle<float>()) {
    s ^= s << 13, s ^= s >> 17, s ^= s << 5;
    v = float(s % 2000) / 1000.f - 1.f;
  }
  return t;
}

/// Runs \p build on \p backend with \p codegen, each input made by
/// \p make(dims, seed) (pseudo-random by default).
inline std::vector<Tensor>
runOn(const Builder &build, llvm::StringRef backend,
      const CodegenOptions &codegen = CodegenOptions(),
      Tensor (*make)(llvm::ArrayRef<dim_t>, unsigned) = pseudoRandom) {
  Module M;
  Function *F = M.createFunction("net");
  build(M, *F);
  std::vector<Tensor> ins;
  unsigned seed = 0;
  for (Placeholder *p : M.getInputPlaceholders())
    ins.push_back(make(p->getType()->dims(), ++seed));
  return compileAndRun(M, *F, backend, std::move(ins), codegen);
}

/// The CUDA backend's per-op choices for \p build under \p opts.
inline std::vector<std::string> choicesFor(const Builder &build,
                                           const CUDACodegenOptions &opts) {
  registerAllBackends();
  registerCUDAHostEmulation();
  Module M;
  Function *F = M.createFunction("net");
  build(M, *F);
  auto B = getBackend("CUDA");
  EXPECT_TRUE(bool(B));
  auto ir = optimizeAndGenerateIR(*F, **B, CompileOptions());
  if (!ir) {
    ADD_FAILURE() << llvm::toString(ir.takeError());
    return {};
  }
  MemoryPlan plan = planMemory(**ir);
  auto prog = cuda::lowerForCUDA(**ir, plan, opts);
  if (!prog) {
    ADD_FAILURE() << llvm::toString(prog.takeError());
    return {};
  }
  return prog->choices;
}

/// Every backend agrees with the Interpreter within \p tol.
inline void expectAllAgree(const Builder &build, float tol) {
  auto ref = runOn(build, "Interpreter");
  for (const char *b : {"CUDAHostEmu", "CUDAHostEmuGen"}) {
    auto out = runOn(build, b);
    ASSERT_EQ(out.size(), ref.size()) << b;
    for (size_t i = 0; i < out.size(); ++i) {
      SCOPED_TRACE(std::string(b) + " output " + std::to_string(i));
      expectNear(out[i], ref[i], tol);
    }
  }
}

/// Libraries wherever they can run the op (as CUDAHostEmu).
inline CUDACodegenOptions libraries() {
  CUDACodegenOptions o;
  o.gemm = o.conv = cuda::LibChoice::Library;
  return o;
}

inline bool anyContains(const std::vector<std::string> &v, llvm::StringRef s) {
  return llvm::any_of(
      v, [&](const std::string &c) { return llvm::StringRef(c).contains(s); });
}

} // namespace test
} // namespace ember

#endif
