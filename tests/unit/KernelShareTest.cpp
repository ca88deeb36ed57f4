//===- KernelShareTest.cpp - Kernels of one shape share one body ----------===//
//
// The CPU backend compiles one body for kernels whose shape keys are equal
// (backends/CPU/KernelShare.cpp). The key must tell apart every difference
// the code depends on (a constant, a size, how buffers overlap) and nothing
// else (where the buffers lie); a network of repeated layers must compute
// each layer from its own buffers.
//
//===----------------------------------------------------------------------===//
#include "../../backends/CPU/CPU.h"
#include "ember/Importer/ONNXImporter.h"

#include "ONNXBuilder.h"
#include "TestUtils.h"

#include <cmath>

using namespace ember;
using namespace ember::test;

namespace {

/// y[i] = x[i] * scale + 1 over \p n floats, x at byte \p xAt and y at
/// \p yAt of the activations.
kir::Kernel scaleKernel(uint64_t xAt, uint64_t yAt, double scale = 2,
                        int64_t n = 16) {
  kir::Kernel k("scale");
  uint64_t bytes = uint64_t(n) * 4;
  unsigned x =
      k.addBuffer({Region::Activation, xAt, bytes, ElemKind::Float32, "x"});
  unsigned y =
      k.addBuffer({Region::Activation, yAt, bytes, ElemKind::Float32, "y"});
  unsigned i = k.newVar();
  kir::ExprRef v =
      k.binary(kir::BinOp::Mul, k.load(x, k.var(i)), k.constFloat(scale));
  v = k.binary(kir::BinOp::Add, v, k.constFloat(1));
  k.body().push_back(
      kir::Kernel::loop(i, n, true, {kir::Kernel::store(y, k.var(i), v)}));
  return k;
}

} // namespace

TEST(KernelShare, WhereBuffersLieDoesNotChangeTheKey) {
  EXPECT_EQ(cpu::kernelShapeKey(scaleKernel(0, 64)),
            cpu::kernelShapeKey(scaleKernel(4096, 1024)));
}

TEST(KernelShare, WhatTheCodeReadsChangesTheKey) {
  std::string key = cpu::kernelShapeKey(scaleKernel(0, 64));
  // One ulp of a float constant.
  EXPECT_NE(key,
            cpu::kernelShapeKey(scaleKernel(0, 64, std::nextafter(2.0, 3.0))));
  EXPECT_NE(key, cpu::kernelShapeKey(scaleKernel(0, 128, 2, 32)));
  // The same buffers overlapping (y 8 floats after x): one group, and the
  // code must address both from its base.
  EXPECT_NE(key, cpu::kernelShapeKey(scaleKernel(0, 32)));
  // In place: one buffer read and written.
  EXPECT_NE(key, cpu::kernelShapeKey(scaleKernel(0, 0)));
}

TEST(KernelShare, OverlappingBuffersFormOneGroup) {
  kir::Kernel k("groups");
  auto add = [&](Region r, uint64_t at, uint64_t size) {
    return k.addBuffer({r, at, size, ElemKind::Float32,
                        "b" + std::to_string(k.getBuffers().size())});
  };
  add(Region::Activation, 256, 64); // 0: overlaps 2 only
  add(Region::Constant, 256, 64);   // 1: another region
  add(Region::Activation, 300, 64); // 2: overlaps 0 and 3
  add(Region::Activation, 360, 8);  // 3: overlaps 2 only
  add(Region::Activation, 0, 256);  // 4: ends where 0 begins
  cpu::BufferGroups g = cpu::groupBuffers(k);
  EXPECT_EQ(g.groupOf, (std::vector<unsigned>{0, 1, 0, 0, 2}));
  ASSERT_EQ(g.bases.size(), 3u);
  EXPECT_EQ(g.bases[0].offset, 256u);
  EXPECT_EQ(g.bases[1].region, Region::Constant);
  EXPECT_EQ(g.bases[2].offset, 0u);
}

/// Four MatMul, Tanh and shift layers of one shape: their MatMul kernels
/// share a body, each calling it with its own weights' and activations'
/// addresses, and the CPU must agree with the Interpreter on every layer.
TEST(KernelShare, RepeatedLayersMatchTheInterpreter) {
  const int64_t n = 8, d = 32;
  ONNXBuilder b(13);
  b.input("x", {n, d});
  std::string h = "x";
  const float shifts[] = {0.5f, 0.5f, -3.0f, 0.5f};
  for (int l = 0; l < 4; ++l) {
    std::vector<float> w(d * d);
    for (int64_t i = 0; i < d * d; ++i)
      w[i] = float((i * 7 + l * 3) % 11) / 11.0f - 0.45f;
    std::string ln = std::to_string(l);
    b.initializer("w" + ln, {d, d}, w);
    b.initializer("s" + ln, {}, {shifts[l]});
    b.node("MatMul", {h, "w" + ln}, {"m" + ln});
    b.node("Tanh", {"m" + ln}, {"t" + ln});
    b.node("Add", {"t" + ln, "s" + ln}, {"h" + ln});
    h = "h" + ln;
  }
  b.output(h, {n, d});
  std::vector<Tensor> outs;
  for (const char *backend : {"Interpreter", "CPU"}) {
    Module M;
    auto F = importONNXBuffer(b.serialize(), "m", M);
    ASSERT_TRUE(bool(F)) << llvm::toString(F.takeError());
    Tensor x(ElemKind::Float32, {n, d});
    for (int64_t i = 0; i < n * d; ++i)
      x.getHandle<float>().raw(i) = float((i * 5) % 13) / 13.0f - 0.5f;
    auto out = compileAndRun(M, **F, backend, tensors(std::move(x)));
    ASSERT_EQ(out.size(), 1u);
    outs.push_back(std::move(out[0]));
  }
  // Four layers of 32-term float sums and a tanh within a few ulps: errors
  // of order 1e-6 on values of order 1.
  expectNear(outs[1], outs[0], 1e-4f);
}
