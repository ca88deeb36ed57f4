//===- OpTestUtils.h - The operator test table harness ---------*- C++ -*-===//
//
// Every operator test builds a one-op (or few-op) function, runs it on each
// backend under test and compares with values computed by hand. Backends
// are the test parameter; a backend that cannot run a case lists it in
// kSkips with the reason.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_TESTS_OPS_OPTESTUTILS_H
#define EMBER_TESTS_OPS_OPTESTUTILS_H

#include "../unit/TestUtils.h"

namespace ember {
namespace test {

/// A test fixture with a fresh module and function per case.
class OpTest : public ::testing::TestWithParam<std::string> {
protected:
  Module M;
  Function *F = M.createFunction("op");

  Placeholder *input(llvm::StringRef name, llvm::ArrayRef<dim_t> dims) {
    return M.createPlaceholder(name, Type(ElemKind::Float32, dims), false);
  }
  Constant *constant(llvm::StringRef name, Tensor t) {
    return M.createConstant(name, std::move(t));
  }
  void save(NodeValue v) {
    auto *p = M.createPlaceholder("out" + std::to_string(numOutputs_++),
                                  *v.getType(), true);
    F->createSave("save", v, p);
  }
  std::vector<Tensor> run(std::vector<Tensor> inputs) {
    return compileAndRun(M, *F, GetParam(), std::move(inputs));
  }

private:
  unsigned numOutputs_ = 0;
};

/// The backends the operator table runs on.
inline std::vector<std::string> opTestBackends() {
#ifdef EMBER_WITH_CUDA
  return {"Interpreter", "CPU", "CUDAHostEmu", "CUDAHostEmuGen"};
#else
  return {"Interpreter", "CPU"};
#endif
}

} // namespace test
} // namespace ember

#endif
