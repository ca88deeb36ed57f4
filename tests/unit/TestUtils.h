//===- TestUtils.h - Helpers shared by the tests ---------------*- C++ -*-===//
#ifndef EMBER_TESTS_TESTUTILS_H
#define EMBER_TESTS_TESTUTILS_H

#include "ember/Backend/Pipeline.h"

#include "gtest/gtest.h"

#ifdef EMBER_WITH_CUDA
#include "../cuda/HostEmulationBackend.h"
#endif

namespace ember {
namespace test {

/// Compiles \p F for \p backend with \p codegen, binds \p inputs to the
/// module's input placeholders in order, runs once (on \p threads threads
/// where more than one) and returns the outputs in order.
inline std::vector<Tensor> compileAndRun(
    Module &M, Function &F, llvm::StringRef backend, std::vector<Tensor> inputs,
    const CodegenOptions &codegen = CodegenOptions(), unsigned threads = 1) {
  registerAllBackends();
#ifdef EMBER_WITH_CUDA
  if (backend.starts_with("CUDAHostEmu"))
    registerCUDAHostEmulation();
#endif
  auto B = getBackend(backend);
  if (!B) {
    ADD_FAILURE() << llvm::toString(B.takeError());
    return {};
  }
  CompileOptions opts;
  opts.codegen = codegen;
  opts.passes.verifyEach = true; // name the pass if one breaks the graph
  auto net = compileFunction(F, **B, opts);
  if (!net) {
    ADD_FAILURE() << llvm::toString(net.takeError());
    return {};
  }
  if (threads > 1)
    if (llvm::Error err = net->function->setNumThreads(threads)) {
      ADD_FAILURE() << llvm::toString(std::move(err));
      return {};
    }
  Bindings b;
  auto phs = M.getInputPlaceholders();
  EXPECT_EQ(phs.size(), inputs.size());
  for (size_t i = 0; i < phs.size() && i < inputs.size(); ++i)
    b.insert(phs[i], std::move(inputs[i]));
  if (llvm::Error err = net->function->run(b)) {
    ADD_FAILURE() << llvm::toString(std::move(err));
    return {};
  }
  std::vector<Tensor> outs;
  for (Placeholder *p : M.getOutputPlaceholders())
    outs.push_back(b.get(p)->clone());
  return outs;
}

/// A float tensor of \p dims holding \p values.
/// \p value as a Constant named \p name when \p constant, else as an
/// input Placeholder whose value is appended to \p inputs (compileAndRun
/// feeds inputs in the order their Placeholders were made).
inline NodeValue constantOrInput(Module &M, llvm::StringRef name, Tensor value,
                                 bool constant, std::vector<Tensor> &inputs) {
  if (constant)
    return M.createConstant(name, std::move(value));
  auto *p = M.createPlaceholder(name, value.getType(), false);
  inputs.push_back(std::move(value));
  return p;
}

inline Tensor makeTensor(llvm::ArrayRef<dim_t> dims,
                         std::initializer_list<float> values) {
  Tensor t(ElemKind::Float32, dims);
  EXPECT_EQ(size_t(t.size()), values.size());
  std::copy(values.begin(), values.end(), t.getHandle<float>().begin());
  return t;
}

/// Moves tensors into a vector (Tensor is move-only).
template <typename... Ts> std::vector<Tensor> tensors(Ts &&...ts) {
  std::vector<Tensor> v;
  (v.push_back(std::move(ts)), ...);
  return v;
}

/// Expects every element of \p a within \p tol of \p b.
inline void expectNear(const Tensor &a, const Tensor &b, float tol) {
  ASSERT_EQ(a.getType(), b.getType())
      << a.getType().toString() << " vs " << b.getType().toString();
  for (dim_t i = 0; i < a.size(); ++i)
    EXPECT_NEAR(a.elementAsDouble(i), b.elementAsDouble(i), tol)
        << "at element " << i;
}

/// The directory of the source tree (set by CMake).
inline std::string sourceDir() { return EMBER_SOURCE_DIR; }

/// The backends an end-to-end test runs on: the Interpreter, the CPU and,
/// where CUDA is built, its host emulation.
inline std::vector<std::string> testBackends() {
#ifdef EMBER_WITH_CUDA
  return {"Interpreter", "CPU", "CUDAHostEmu"};
#else
  return {"Interpreter", "CPU"};
#endif
}

/// An Int64 tensor of \p dims holding \p v.
inline Tensor int64Tensor(llvm::ArrayRef<dim_t> dims,
                          std::initializer_list<int64_t> v) {
  Tensor t(ElemKind::Int64, dims);
  EXPECT_EQ(size_t(t.size()), v.size());
  std::copy(v.begin(), v.end(), t.getHandle<int64_t>().begin());
  return t;
}

} // namespace test
} // namespace ember

#endif
