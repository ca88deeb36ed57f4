//===- DeviceCallTest.cpp - Prelude calls are checked against DeviceABI.h -===//
//
// EMBER_CUDA_CALL reads a prelude function's parameters from its
// declaration in DeviceABI.h; a call with the wrong count or kind of
// arguments stops the compile at the call's construction (a lowering bug),
// and a prelude definition that differs from its declaration does not
// build in the host emulation.
//
//===----------------------------------------------------------------------===//
#include "HostEmulationBackend.h"

#include "../../backends/CUDA/DeviceCall.h"
#include "../../backends/CUDA/Prelude.h"
#include "../../backends/CUDA/TiledKernels.h"

#include "llvm/ADT/StringExtras.h"

#include "gtest/gtest.h"

#include <dlfcn.h>

using namespace ember;
using kir::CallArg;

namespace {

CallArg buf(unsigned b) { return CallArg{true, b, nullptr}; }
CallArg val(kir::ExprRef e) { return CallArg{false, 0, e}; }

/// A kernel with D, A, B and bias buffers of float and an int32 buffer.
struct GemmKernel {
  kir::Kernel k{"gemm"};
  unsigned d, a, b, bias, i32;
  GemmKernel() {
    d = k.addBuffer({Region::Activation, 0, 64, ElemKind::Float32, "d"});
    a = k.addBuffer({Region::Activation, 64, 64, ElemKind::Float32, "a"});
    b = k.addBuffer({Region::Activation, 128, 64, ElemKind::Float32, "b"});
    bias = k.addBuffer({Region::Constant, 0, 16, ElemKind::Float32, "bias"});
    i32 = k.addBuffer({Region::Activation, 192, 64, ElemKind::Int32, "i"});
  }
  /// ember_gemm_f32's arguments with buffer \p second for A and \p epi.
  std::vector<CallArg> args(unsigned second, kir::ExprRef epi) {
    return {buf(d),
            buf(second),
            buf(b),
            buf(bias),
            val(k.constInt(4)),
            val(k.constInt(4)),
            val(k.constInt(4)),
            val(epi),
            val(k.constInt(0))};
  }
};

} // namespace

TEST(CUDADeviceCall, AMatchingCallIsBuilt) {
  GemmKernel g;
  kir::Stmt call =
      EMBER_CUDA_CALL(g.k, ember_gemm_f32, g.args(g.a, g.k.constInt(1)));
  EXPECT_EQ(call.kind, kir::StmtKind::Call);
  EXPECT_EQ(call.callee, "ember_gemm_f32");
  EXPECT_EQ(call.args.size(), 9u);
}

TEST(CUDADeviceCall, MismatchesStopTheCompile) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  GemmKernel g;
  auto call = [&](std::vector<CallArg> args) {
    return EMBER_CUDA_CALL(g.k, ember_gemm_f32, args);
  };
  std::vector<CallArg> short8 = g.args(g.a, g.k.constInt(1));
  short8.pop_back();
  EXPECT_DEATH(call(short8), "wrong number of arguments");
  EXPECT_DEATH(call(g.args(g.i32, g.k.constInt(1))),
               "argument 1 of kernel gemm: i32, expected float");
  EXPECT_DEATH(call(g.args(g.a, g.k.constFloat(1))),
               "argument 7 of kernel gemm: float, expected i64");
}

TEST(CUDADeviceCall, APreludeDefinitionMustMatchItsDeclaration) {
  // The text renderCUDA starts every source with.
  std::string src;
#define EMBER_FUSED_ACT(Name, Code)                                            \
  src += "#define EMBER_ACT_" #Name " " #Code "\n";
#include "ember/Graph/FusedActivations.def"
  src += std::string(cuda::cudaPrelude()) + cuda::cudaTiledKernels();
  auto built = test::buildCUDAForHost(src);
  ASSERT_TRUE(bool(built)) << llvm::toString(built.takeError());
  dlclose(*built);
  // ember_gemm_f32 taking its epilogue as int: a second overload.
  std::string from =
      "long long k, long long epi,\n               long long idx";
  size_t at = src.find(from);
  ASSERT_NE(at, std::string::npos);
  src.replace(at, from.size(), "long long k, int epi,\n long long idx");
  auto bad = test::buildCUDAForHost(src);
  ASSERT_FALSE(bool(bad));
  llvm::consumeError(bad.takeError());
}
