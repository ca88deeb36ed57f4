//===- RuntimeInputsTest.cpp - Shape operands fed at run time -------------===//
//
// docs/RuntimeInputs.md: a shape operand that is a graph input is compiled
// for the value the declared output shape implies and checked before each
// run (values giving the same shape run, others fail the call with an error
// naming the node); Trilu's k, CumSum's axis and the axes of a reduction
// without keepdims are genuine run-time values. Expected values
// are written by hand and every backend is held to them.
//
//===----------------------------------------------------------------------===//
#include "ember/Importer/ONNXImporter.h"

#include "ONNXBuilder.h"
#include "TestUtils.h"

#include <cmath>

using namespace ember;
using namespace ember::test;

namespace {

/// 1, 2, ..., n in \p dims.
Tensor iota(llvm::ArrayRef<dim_t> dims) {
  Tensor t(ElemKind::Float32, dims);
  float v = 1;
  for (float &x : t.getHandle<float>())
    x = v++;
  return t;
}

/// Input lists, one per run (Tensor is move-only).
template <typename... Rs> std::vector<std::vector<Tensor>> runs(Rs &&...rs) {
  std::vector<std::vector<Tensor>> v;
  (v.push_back(std::forward<Rs>(rs)), ...);
  return v;
}

/// Compiles \p F once and runs it with each input list of \p runs: the
/// outputs of each run, or its error text.
struct RunResult {
  std::vector<Tensor> outs;
  std::string error;
};
std::vector<RunResult> runEach(Module &M, Function &F,
                               const std::string &backend,
                               std::vector<std::vector<Tensor>> runs) {
  registerAllBackends();
#ifdef EMBER_WITH_CUDA
  if (backend == "CUDAHostEmu")
    registerCUDAHostEmulation();
#endif
  std::vector<RunResult> results;
  auto net = compileFunction(F, *llvm::cantFail(getBackend(backend)),
                             CompileOptions());
  if (!net) {
    ADD_FAILURE() << llvm::toString(net.takeError());
    return results;
  }
  for (std::vector<Tensor> &inputs : runs) {
    Bindings b;
    auto phs = M.getInputPlaceholders();
    for (size_t i = 0; i < phs.size() && i < inputs.size(); ++i)
      b.insert(phs[i], std::move(inputs[i]));
    RunResult r;
    if (llvm::Error err = net->function->run(b))
      r.error = llvm::toString(std::move(err));
    else
      for (Placeholder *p : M.getOutputPlaceholders())
        r.outs.push_back(b.get(p)->clone());
    results.push_back(std::move(r));
  }
  return results;
}

} // namespace

TEST(RuntimeInputs, ReshapeRunsForEveryShapeGivingTheDeclaredOne) {
  ONNXBuilder b(13);
  b.input("x", {2, 3, 4});
  b.input("s", {3}, onnx::TensorProto::INT64);
  b.node("Reshape", {"x", "s"}, {"y"}, "r");
  b.output("y", {4, 3, 2});
  for (const std::string &backend : testBackends()) {
    SCOPED_TRACE(backend);
    Module M;
    auto F = importONNXBuffer(b.serialize(), "m", M);
    ASSERT_TRUE(bool(F)) << llvm::toString(F.takeError());
    auto res =
        runEach(M, **F, backend,
                runs(tensors(iota({2, 3, 4}), int64Tensor({3}, {4, 3, 2})),
                     tensors(iota({2, 3, 4}), int64Tensor({3}, {4, -1, 2})),
                     tensors(iota({2, 3, 4}), int64Tensor({3}, {2, 12, 1}))));
    ASSERT_EQ(res.size(), 3u);
    for (int i = 0; i < 2; ++i) {
      ASSERT_EQ(res[i].outs.size(), 1u) << res[i].error;
      expectNear(res[i].outs[0], iota({4, 3, 2}), 0);
    }
    EXPECT_NE(res[2].error.find("run-time input check: node 'r' (Reshape): "
                                "s = [2, 12, 1]: gives output 'y' "),
              std::string::npos)
        << res[2].error;
    EXPECT_NE(res[2].error.find("the network was compiled for [4, 3, 2]"),
              std::string::npos)
        << res[2].error;
  }
}

TEST(RuntimeInputs, UnsqueezeAxesAreCheckedAtRunTime) {
  ONNXBuilder b(13);
  b.input("x", {3, 2});
  b.input("a", {2}, onnx::TensorProto::INT64);
  b.node("Unsqueeze", {"x", "a"}, {"y"}, "u");
  b.output("y", {1, 3, 1, 2});
  for (const std::string &backend : testBackends()) {
    SCOPED_TRACE(backend);
    Module M;
    auto F = importONNXBuffer(b.serialize(), "m", M);
    ASSERT_TRUE(bool(F)) << llvm::toString(F.takeError());
    auto res = runEach(M, **F, backend,
                       runs(tensors(iota({3, 2}), int64Tensor({2}, {2, 0})),
                            tensors(iota({3, 2}), int64Tensor({2}, {-4, -2})),
                            tensors(iota({3, 2}), int64Tensor({2}, {0, 1})),
                            tensors(iota({3, 2}), int64Tensor({2}, {0, 9}))));
    ASSERT_EQ(res.size(), 4u);
    for (int i = 0; i < 2; ++i) {
      ASSERT_EQ(res[i].outs.size(), 1u) << res[i].error;
      expectNear(res[i].outs[0], iota({1, 3, 1, 2}), 0);
    }
    EXPECT_NE(res[2].error.find("node 'u' (Unsqueeze): a = [0, 1]: gives "
                                "output 'y'"),
              std::string::npos)
        << res[2].error;
    // A value the importer itself rejects is reported with its reason.
    EXPECT_NE(res[3].error.find("node 'u' (Unsqueeze): a = [0, 9]: "),
              std::string::npos)
        << res[3].error;
  }
}

TEST(RuntimeInputs, UndeclaredOutputShapeIsAnImportError) {
  ONNXBuilder b(13);
  b.input("x", {2, 3});
  b.input("s", {2}, onnx::TensorProto::INT64);
  b.node("Reshape", {"x", "s"}, {"y"}, "r");
  b.output("y");
  Module M;
  auto F = importONNXBuffer(b.serialize(), "m", M);
  ASSERT_FALSE(bool(F));
  std::string msg = llvm::toString(F.takeError());
  EXPECT_NE(msg.find("node 'r' (Reshape): input 's' must be a constant (an "
                     "initializer or a Constant node) or implied by the "
                     "declared output shapes: node 'r' (Reshape): output 'y' "
                     "has no declared static shape"),
            std::string::npos)
      << msg;
}

TEST(RuntimeInputs, TriluTakesKAtRunTime) {
  for (int64_t upper : {1, 0}) {
    ONNXBuilder b(14);
    b.input("x", {3, 4});
    b.input("k", {}, onnx::TensorProto::INT64);
    ONNXBuilder::attrInt(b.node("Trilu", {"x", "k"}, {"y"}, "t"), "upper",
                         upper);
    b.output("y", {3, 4});
    for (const std::string &backend : testBackends()) {
      SCOPED_TRACE(backend + (upper ? " upper" : " lower"));
      Module M;
      auto F = importONNXBuffer(b.serialize(), "m", M);
      ASSERT_TRUE(bool(F)) << llvm::toString(F.takeError());
      auto res = runEach(M, **F, backend,
                         runs(tensors(iota({3, 4}), int64Tensor({}, {1})),
                              tensors(iota({3, 4}), int64Tensor({}, {-1}))));
      ASSERT_EQ(res.size(), 2u);
      ASSERT_EQ(res[0].outs.size(), 1u) << res[0].error;
      ASSERT_EQ(res[1].outs.size(), 1u) << res[1].error;
      if (upper) { // keeps j - i >= k
        expectNear(res[0].outs[0],
                   makeTensor({3, 4}, {0, 2, 3, 4, 0, 0, 7, 8, 0, 0, 0, 12}),
                   0);
        expectNear(res[1].outs[0],
                   makeTensor({3, 4}, {1, 2, 3, 4, 5, 6, 7, 8, 0, 10, 11, 12}),
                   0);
      } else { // keeps j - i <= k
        expectNear(res[0].outs[0],
                   makeTensor({3, 4}, {1, 2, 0, 0, 5, 6, 7, 0, 9, 10, 11, 12}),
                   0);
        expectNear(res[1].outs[0],
                   makeTensor({3, 4}, {0, 0, 0, 0, 5, 0, 0, 0, 9, 10, 0, 0}),
                   0);
      }
    }
  }
}

// A Trilu mask or an EyeLike result above the importer's fold limit (2^24
// elements) is computed in the graph from two iotas instead of being built
// at import (a declared 2^31-element shape once made the import loop for
// minutes); the result must be the same as the constant one.
TEST(RuntimeInputs, LargeTriluAndEyeLikeAreComputedInTheGraph) {
  constexpr int64_t n = 4099, m = 4100; // n * m just above 2^24.
  ONNXBuilder b(14);
  b.input("x", {1, n, m});
  b.input("e", {n, m});
  b.initializerInts("k", {1});
  b.node("Trilu", {"x", "k"}, {"t"}, "tri");
  ONNXBuilder::attrInt(b.node("EyeLike", {"e"}, {"i"}, "eye"), "k", -2);
  b.output("t", {1, n, m});
  b.output("i", {n, m});
  Module M;
  auto F = importONNXBuffer(b.serialize(), "m", M);
  ASSERT_TRUE(bool(F)) << llvm::toString(F.takeError());
  for (const auto &c : M.getConstants())
    EXPECT_LT(c->getType()->size(), dim_t(n * m)) << c->getName().str();
  Tensor x = iota({1, n, m});
  auto in = x.getHandle<float>();
  auto res =
      runEach(M, **F, "Interpreter", runs(tensors(x.clone(), iota({n, m}))));
  ASSERT_EQ(res.size(), 1u);
  ASSERT_EQ(res[0].outs.size(), 2u) << res[0].error;
  auto tri = res[0].outs[0].getHandle<float>();
  auto eye = res[0].outs[1].getHandle<float>();
  int64_t wrong = 0;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < m; ++j) {
      float v = in.raw(i * m + j);
      wrong += tri.raw(i * m + j) != (j - i >= 1 ? v : 0.f);
      wrong += eye.raw(i * m + j) != (j - i == -2 ? 1.f : 0.f);
    }
  EXPECT_EQ(wrong, 0);
}

TEST(RuntimeInputs, CumSumTakesItsAxisAtRunTime) {
  ONNXBuilder b(14);
  b.input("x", {2, 3});
  b.input("a", {}, onnx::TensorProto::INT64);
  b.node("CumSum", {"x", "a"}, {"y"}, "c");
  b.output("y", {2, 3});
  for (const std::string &backend : testBackends()) {
    SCOPED_TRACE(backend);
    Module M;
    auto F = importONNXBuffer(b.serialize(), "m", M);
    ASSERT_TRUE(bool(F)) << llvm::toString(F.takeError());
    auto res = runEach(M, **F, backend,
                       runs(tensors(iota({2, 3}), int64Tensor({}, {0})),
                            tensors(iota({2, 3}), int64Tensor({}, {1})),
                            tensors(iota({2, 3}), int64Tensor({}, {-1})),
                            tensors(iota({2, 3}), int64Tensor({}, {2}))));
    ASSERT_EQ(res.size(), 4u);
    for (int i = 0; i < 3; ++i)
      ASSERT_EQ(res[i].outs.size(), 1u) << res[i].error;
    expectNear(res[0].outs[0], makeTensor({2, 3}, {1, 2, 3, 5, 7, 9}), 0);
    expectNear(res[1].outs[0], makeTensor({2, 3}, {1, 3, 6, 4, 9, 15}), 0);
    expectNear(res[2].outs[0], makeTensor({2, 3}, {1, 3, 6, 4, 9, 15}), 0);
    EXPECT_NE(res[3].error.find("run-time input check: node 'c' (CumSum): "
                                "a = [2]: "),
              std::string::npos)
        << res[3].error;
  }
}

TEST(RuntimeInputs, RangeComputesItsValuesAndChecksItsLength) {
  ONNXBuilder b(13);
  for (const char *n : {"start", "limit", "delta"})
    b.input(n, {});
  b.node("Range", {"start", "limit", "delta"}, {"y"}, "r");
  b.output("y", {4});
  auto scalar = [](float v) { return makeTensor({}, {v}); };
  for (const std::string &backend : testBackends()) {
    SCOPED_TRACE(backend);
    Module M;
    auto F = importONNXBuffer(b.serialize(), "m", M);
    ASSERT_TRUE(bool(F)) << llvm::toString(F.takeError());
    auto res = runEach(M, **F, backend,
                       runs(tensors(scalar(1), scalar(5), scalar(1)),
                            tensors(scalar(0), scalar(2), scalar(0.5)),
                            tensors(scalar(0), scalar(10), scalar(1))));
    ASSERT_EQ(res.size(), 3u);
    ASSERT_EQ(res[0].outs.size(), 1u) << res[0].error;
    ASSERT_EQ(res[1].outs.size(), 1u) << res[1].error;
    expectNear(res[0].outs[0], makeTensor({4}, {1, 2, 3, 4}), 0);
    expectNear(res[1].outs[0], makeTensor({4}, {0, 0.5, 1, 1.5}), 0);
    EXPECT_NE(res[2].error.find("gives output 'y' float<10>; the network was "
                                "compiled for [4]"),
              std::string::npos)
        << res[2].error;
  }
}

TEST(RuntimeInputs, RangeLengthIsSuggestedThroughElementwiseOps) {
  // An expanded window function: Range's limit is a cast graph input and
  // only the Cos after it has a declared shape, which the elementwise ops
  // carry back to the Range (and the run-time check confirms).
  ONNXBuilder b(13);
  b.input("s", {});
  b.input("n", {}, onnx::TensorProto::INT64);
  b.input("d", {});
  b.input("k", {});
  ONNXBuilder::attrInt(b.node("Cast", {"n"}, {"nf"}, "c"), "to",
                       onnx::TensorProto::FLOAT);
  b.node("Range", {"s", "nf", "d"}, {"r"}, "range");
  b.node("Mul", {"r", "k"}, {"a"}, "m");
  b.node("Cos", {"a"}, {"y"}, "cos");
  b.output("y", {4});
  auto scalar = [](float v) { return makeTensor({}, {v}); };
  auto cosines = [](std::initializer_list<float> a) {
    std::vector<float> c;
    for (float v : a)
      c.push_back(std::cos(v));
    return makeTensor({4}, {c[0], c[1], c[2], c[3]});
  };
  for (const std::string &backend : testBackends()) {
    SCOPED_TRACE(backend);
    Module M;
    auto F = importONNXBuffer(b.serialize(), "m", M);
    ASSERT_TRUE(bool(F)) << llvm::toString(F.takeError());
    auto res = runEach(
        M, **F, backend,
        runs(tensors(scalar(0), int64Tensor({}, {4}), scalar(1), scalar(0.5)),
             tensors(scalar(1), int64Tensor({}, {9}), scalar(2), scalar(1)),
             tensors(scalar(0), int64Tensor({}, {6}), scalar(1), scalar(1))));
    ASSERT_EQ(res.size(), 3u);
    ASSERT_EQ(res[0].outs.size(), 1u) << res[0].error;
    ASSERT_EQ(res[1].outs.size(), 1u) << res[1].error;
    // Cos of the same float arguments; 1e-6 covers a vectorized cosine.
    expectNear(res[0].outs[0], cosines({0, 0.5, 1, 1.5}), 1e-6);
    expectNear(res[1].outs[0], cosines({1, 3, 5, 7}), 1e-6);
    EXPECT_NE(res[2].error.find("run-time input check: node 'range' (Range): "
                                "s = [0], nf = [6], d = [1]: gives output 'r' "
                                "float<6>; the network was compiled for [4]"),
              std::string::npos)
        << res[2].error;
  }
}

TEST(RuntimeInputs, LSTMSequenceLensMaskStepsAtRunTime) {
  // sequence_lens fed at run time masks the steps per batch entry: with
  // lengths [3, 2], entry 0 is the LSTM over all 3 steps and entry 1 the
  // LSTM over the first 2 (the oracles: the same LSTM without
  // sequence_lens over 3 and over 2 steps).
  auto model = [](bool withLens, dim_t steps) {
    ONNXBuilder b(14);
    b.input("x", {steps, 2, 1});
    b.input("w", {1, 4, 1});
    b.input("r", {1, 4, 1});
    std::vector<std::string> in = {"x", "w", "r"};
    if (withLens) {
      b.input("lens", {2}, onnx::TensorProto::INT32);
      in.insert(in.end(), {"", "lens"});
    }
    ONNXBuilder::attrInt(b.node("LSTM", in, {"", "h"}, "lstm"), "hidden_size",
                         1);
    b.output("h", {1, 2, 1});
    return b.serialize();
  };
  Tensor x = makeTensor({3, 2, 1}, {0.5, -1, 0.25, 2, -0.5, 1});
  Tensor x2 = makeTensor({2, 2, 1}, {0.5, -1, 0.25, 2});
  Tensor w = makeTensor({1, 4, 1}, {0.5, -0.25, 1, 0.75});
  Tensor r = makeTensor({1, 4, 1}, {0.25, 0.5, -0.5, 1});
  auto lens = [](int32_t a, int32_t b) {
    Tensor t(ElemKind::Int32, {2});
    t.getHandle<int32_t>().raw(0) = a;
    t.getHandle<int32_t>().raw(1) = b;
    return t;
  };
  for (const std::string &backend : testBackends()) {
    SCOPED_TRACE(backend);
    Module M0;
    auto F0 = importONNXBuffer(model(false, 3), "m0", M0);
    ASSERT_TRUE(bool(F0)) << llvm::toString(F0.takeError());
    auto want = runEach(M0, **F0, backend,
                        runs(tensors(x.clone(), w.clone(), r.clone())));
    ASSERT_EQ(want[0].outs.size(), 1u) << want[0].error;
    Module M2;
    auto F2 = importONNXBuffer(model(false, 2), "m2", M2);
    ASSERT_TRUE(bool(F2)) << llvm::toString(F2.takeError());
    auto want2 = runEach(M2, **F2, backend,
                         runs(tensors(x2.clone(), w.clone(), r.clone())));
    ASSERT_EQ(want2[0].outs.size(), 1u) << want2[0].error;
    Module M;
    auto F = importONNXBuffer(model(true, 3), "m", M);
    ASSERT_TRUE(bool(F)) << llvm::toString(F.takeError());
    auto res =
        runEach(M, **F, backend,
                runs(tensors(x.clone(), w.clone(), r.clone(), lens(3, 3)),
                     tensors(x.clone(), w.clone(), r.clone(), lens(3, 2))));
    ASSERT_EQ(res.size(), 2u);
    ASSERT_EQ(res[0].outs.size(), 1u) << res[0].error;
    expectNear(res[0].outs[0], want[0].outs[0], 0);
    ASSERT_EQ(res[1].outs.size(), 1u) << res[1].error;
    auto got = res[1].outs[0].getHandle<float>();
    // The same float32 math on values below 1 in magnitude; the graphs
    // differ (the masks), so kernels may fuse differently: a few ulps.
    EXPECT_NEAR(got.raw(0), want[0].outs[0].getHandle<float>().raw(0), 1e-6);
    EXPECT_NEAR(got.raw(1), want2[0].outs[0].getHandle<float>().raw(1), 1e-6);
    EXPECT_NE(got.raw(1), want[0].outs[0].getHandle<float>().raw(1));
  }
}

TEST(RuntimeInputs, ReduceWithoutKeepdimsSelectsItsAxesAtRunTime) {
  // Each axis of x [2, 2, 2] leaves the declared [2, 2]: all three sums are
  // computed and the run-time axes pick one.
  ONNXBuilder b(13);
  b.input("x", {2, 2, 2});
  b.input("a", {1}, onnx::TensorProto::INT64);
  ONNXBuilder::attrInt(b.node("ReduceSum", {"x", "a"}, {"y"}, "r"), "keepdims",
                       0);
  b.output("y", {2, 2});
  for (const std::string &backend : testBackends()) {
    SCOPED_TRACE(backend);
    Module M;
    auto F = importONNXBuffer(b.serialize(), "m", M);
    ASSERT_TRUE(bool(F)) << llvm::toString(F.takeError());
    auto res = runEach(M, **F, backend,
                       runs(tensors(iota({2, 2, 2}), int64Tensor({1}, {0})),
                            tensors(iota({2, 2, 2}), int64Tensor({1}, {1})),
                            tensors(iota({2, 2, 2}), int64Tensor({1}, {-1})),
                            tensors(iota({2, 2, 2}), int64Tensor({1}, {3}))));
    ASSERT_EQ(res.size(), 4u);
    for (int i = 0; i < 3; ++i)
      ASSERT_EQ(res[i].outs.size(), 1u) << res[i].error;
    expectNear(res[0].outs[0], makeTensor({2, 2}, {6, 8, 10, 12}), 0);
    expectNear(res[1].outs[0], makeTensor({2, 2}, {4, 6, 12, 14}), 0);
    expectNear(res[2].outs[0], makeTensor({2, 2}, {3, 7, 11, 15}), 0);
    EXPECT_NE(res[3].error.find("run-time input check: node 'r' "
                                "(ReduceSum): a = [3]: "),
              std::string::npos)
        << res[3].error;
  }
}

TEST(RuntimeInputs, SliceGathersAtRunTimeStartsAndSteps) {
  const auto I64 = onnx::TensorProto::INT64;
  ONNXBuilder b(13);
  b.input("x", {3, 4});
  for (const char *n : {"starts", "ends", "axes", "steps"})
    b.input(n, {1}, I64);
  b.node("Slice", {"x", "starts", "ends", "axes", "steps"}, {"y"}, "s");
  b.output("y", {3, 2});
  auto run = [](int64_t s, int64_t e, int64_t a, int64_t st) {
    return tensors(iota({3, 4}), int64Tensor({1}, {s}), int64Tensor({1}, {e}),
                   int64Tensor({1}, {a}), int64Tensor({1}, {st}));
  };
  for (const std::string &backend : testBackends()) {
    SCOPED_TRACE(backend);
    Module M;
    auto F = importONNXBuffer(b.serialize(), "m", M);
    ASSERT_TRUE(bool(F)) << llvm::toString(F.takeError());
    auto res =
        runEach(M, **F, backend,
                runs(run(1, 3, 1, 1), run(-3, -1, -1, 1), run(3, 1, 1, -1),
                     run(9, -9, 1, -2), run(0, 4, 1, 1), run(1, 3, 0, 1)));
    ASSERT_EQ(res.size(), 6u);
    for (int i = 0; i < 4; ++i)
      ASSERT_EQ(res[i].outs.size(), 1u) << i << ": " << res[i].error;
    Tensor cols12 = makeTensor({3, 2}, {2, 3, 6, 7, 10, 11});
    expectNear(res[0].outs[0], cols12, 0);
    expectNear(res[1].outs[0], cols12, 0);
    expectNear(res[2].outs[0], makeTensor({3, 2}, {4, 3, 8, 7, 12, 11}), 0);
    // Starts and ends out of range are clamped: columns 3 and 1.
    expectNear(res[3].outs[0], makeTensor({3, 2}, {4, 2, 8, 6, 12, 10}), 0);
    EXPECT_NE(res[4].error.find("gives output 'y' float<3 x 4>; the network "
                                "was compiled for [3, 2]"),
              std::string::npos)
        << res[4].error;
    EXPECT_NE(res[5].error.find("gives output 'y' float<2 x 4>"),
              std::string::npos)
        << res[5].error;
  }
}

/// A Pad node with pads (and, in constant mode, the value) as graph inputs.
static ONNXBuilder padModel(const char *mode, bool withValue) {
  ONNXBuilder b(13);
  b.input("x", {4});
  b.input("p", {2}, onnx::TensorProto::INT64);
  std::vector<std::string> ins = {"x", "p"};
  if (withValue) {
    b.input("v", {});
    ins.push_back("v");
  }
  onnx::AttributeProto *a = b.node("Pad", ins, {"y"}, "pad").add_attribute();
  a->set_name("mode");
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(mode);
  b.output("y", {7});
  return b;
}

TEST(RuntimeInputs, PadTakesItsPadsAtRunTime) {
  ONNXBuilder b = padModel("reflect", false);
  for (const std::string &backend : testBackends()) {
    SCOPED_TRACE(backend);
    Module M;
    auto F = importONNXBuffer(b.serialize(), "m", M);
    ASSERT_TRUE(bool(F)) << llvm::toString(F.takeError());
    // Two pads of one output length place the input differently; a third
    // gives another length and fails the call.
    auto res = runEach(M, **F, backend,
                       runs(tensors(iota({4}), int64Tensor({2}, {2, 1})),
                            tensors(iota({4}), int64Tensor({2}, {1, 2})),
                            tensors(iota({4}), int64Tensor({2}, {1, 1}))));
    ASSERT_EQ(res.size(), 3u);
    ASSERT_EQ(res[0].outs.size(), 1u) << res[0].error;
    ASSERT_EQ(res[1].outs.size(), 1u) << res[1].error;
    expectNear(res[0].outs[0], makeTensor({7}, {3, 2, 1, 2, 3, 4, 3}), 0);
    expectNear(res[1].outs[0], makeTensor({7}, {2, 1, 2, 3, 4, 3, 2}), 0);
    EXPECT_NE(res[2].error.find("run-time input check: node 'pad' (Pad)"),
              std::string::npos)
        << res[2].error;
  }
}

TEST(RuntimeInputs, PadTakesItsConstantValueAtRunTime) {
  ONNXBuilder b = padModel("constant", true);
  auto scalar = [](float v) { return makeTensor({}, {v}); };
  for (const std::string &backend : testBackends()) {
    SCOPED_TRACE(backend);
    Module M;
    auto F = importONNXBuffer(b.serialize(), "m", M);
    ASSERT_TRUE(bool(F)) << llvm::toString(F.takeError());
    auto res =
        runEach(M, **F, backend,
                runs(tensors(iota({4}), int64Tensor({2}, {0, 3}), scalar(-1)),
                     tensors(iota({4}), int64Tensor({2}, {3, 0}), scalar(9))));
    ASSERT_EQ(res.size(), 2u);
    ASSERT_EQ(res[0].outs.size(), 1u) << res[0].error;
    ASSERT_EQ(res[1].outs.size(), 1u) << res[1].error;
    expectNear(res[0].outs[0], makeTensor({7}, {1, 2, 3, 4, -1, -1, -1}), 0);
    expectNear(res[1].outs[0], makeTensor({7}, {9, 9, 9, 1, 2, 3, 4}), 0);
  }
}

/// A 1-D float tensor holding \p v.
static Tensor vecTensor(const std::vector<float> &v) {
  Tensor t(ElemKind::Float32, {dim_t(v.size())});
  std::copy(v.begin(), v.end(), t.getHandle<float>().begin());
  return t;
}

/// Resize of x [1, 1, 4, 3] to [1, 1, 2, 5] with \p mode and \p coord;
/// scales a graph input, or the initializer \p constScales when given.
static ONNXBuilder resizeModel(const char *mode, const char *coord,
                               const std::vector<float> &constScales) {
  ONNXBuilder b(13);
  b.input("x", {1, 1, 4, 3});
  if (constScales.empty())
    b.input("s", {4});
  else
    b.initializer("s", {4}, constScales);
  onnx::NodeProto &n = b.node("Resize", {"x", "", "s"}, {"y"}, "rs");
  for (auto [name, value] :
       {std::pair{"mode", mode},
        std::pair{"coordinate_transformation_mode", coord}}) {
    onnx::AttributeProto *a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s(value);
  }
  b.output("y", {1, 1, 2, 5});
  return b;
}

// The oracle is the Interpreter's Resize node, built when the scales are a
// constant; the run-time form computes the taps in the graph in float32,
// hence the tolerance.
TEST(RuntimeInputs, ResizeTakesItsScalesAtRunTime) {
  const std::vector<std::vector<float>> scales = {{1, 1, 0.6f, 1.7f},
                                                  {1, 1, 0.5f, 1.9f}};
  for (auto [mode, coord] :
       {std::pair{"linear", "half_pixel"}, std::pair{"cubic", "align_corners"},
        std::pair{"nearest", "asymmetric"},
        std::pair{"linear", "pytorch_half_pixel"}}) {
    std::vector<Tensor> want;
    for (const std::vector<float> &s : scales) {
      Module M;
      auto F =
          importONNXBuffer(resizeModel(mode, coord, s).serialize(), "m", M);
      ASSERT_TRUE(bool(F)) << llvm::toString(F.takeError());
      auto outs =
          compileAndRun(M, **F, "Interpreter", tensors(iota({1, 1, 4, 3})));
      ASSERT_EQ(outs.size(), 1u);
      want.push_back(std::move(outs[0]));
    }
    ONNXBuilder b = resizeModel(mode, coord, {});
    for (const std::string &backend : testBackends()) {
      SCOPED_TRACE(backend + " " + mode + " " + coord);
      Module M;
      auto F = importONNXBuffer(b.serialize(), "m", M);
      ASSERT_TRUE(bool(F)) << llvm::toString(F.takeError());
      auto res = runEach(
          M, **F, backend,
          runs(tensors(iota({1, 1, 4, 3}), vecTensor(scales[0])),
               tensors(iota({1, 1, 4, 3}), vecTensor(scales[1])),
               tensors(iota({1, 1, 4, 3}), makeTensor({4}, {1, 1, 1, 1}))));
      ASSERT_EQ(res.size(), 3u);
      for (int i = 0; i < 2; ++i) {
        ASSERT_EQ(res[i].outs.size(), 1u) << res[i].error;
        expectNear(res[i].outs[0], want[i], 1e-5f);
      }
      EXPECT_NE(res[2].error.find("run-time input check: node 'rs' (Resize)"),
                std::string::npos)
          << res[2].error;
    }
  }
}

/// A bool tensor of \p dims holding \p v.
static Tensor boolTensor(llvm::ArrayRef<dim_t> dims,
                         std::initializer_list<bool> v) {
  Tensor t(ElemKind::Bool, dims);
  std::copy(v.begin(), v.end(), t.getHandle<bool>().begin());
  return t;
}

TEST(RuntimeInputs, CompressSelectsTheDeclaredCountAtRunTime) {
  ONNXBuilder b(13);
  b.input("x", {4, 2});
  b.input("c", {4}, onnx::TensorProto::BOOL);
  ONNXBuilder::attrInt(b.node("Compress", {"x", "c"}, {"y"}, "cp"), "axis", 0);
  b.output("y", {2, 2});
  for (const std::string &backend : testBackends()) {
    SCOPED_TRACE(backend);
    Module M;
    auto F = importONNXBuffer(b.serialize(), "m", M);
    ASSERT_TRUE(bool(F)) << llvm::toString(F.takeError());
    auto res =
        runEach(M, **F, backend,
                runs(tensors(iota({4, 2}), boolTensor({4}, {0, 1, 0, 1})),
                     tensors(iota({4, 2}), boolTensor({4}, {1, 0, 1, 0})),
                     tensors(iota({4, 2}), boolTensor({4}, {1, 1, 1, 0}))));
    ASSERT_EQ(res.size(), 3u);
    ASSERT_EQ(res[0].outs.size(), 1u) << res[0].error;
    ASSERT_EQ(res[1].outs.size(), 1u) << res[1].error;
    expectNear(res[0].outs[0], makeTensor({2, 2}, {3, 4, 7, 8}), 0);
    expectNear(res[1].outs[0], makeTensor({2, 2}, {1, 2, 5, 6}), 0);
    EXPECT_NE(res[2].error.find("run-time input check: node 'cp' (Compress)"),
              std::string::npos)
        << res[2].error;
  }
}

TEST(RuntimeInputs, NonZeroFindsTheDeclaredCountAtRunTime) {
  ONNXBuilder b(13);
  b.input("x", {2, 3});
  b.node("NonZero", {"x"}, {"y"}, "nz");
  b.output("y", {2, 2}, onnx::TensorProto::INT64);
  for (const std::string &backend : testBackends()) {
    SCOPED_TRACE(backend);
    Module M;
    auto F = importONNXBuffer(b.serialize(), "m", M);
    ASSERT_TRUE(bool(F)) << llvm::toString(F.takeError());
    auto res = runEach(M, **F, backend,
                       runs(tensors(makeTensor({2, 3}, {0, 5, 0, 0, 0, -1})),
                            tensors(makeTensor({2, 3}, {2, 0, 0, 0, 3, 0})),
                            tensors(makeTensor({2, 3}, {1, 1, 1, 0, 0, 0}))));
    ASSERT_EQ(res.size(), 3u);
    ASSERT_EQ(res[0].outs.size(), 1u) << res[0].error;
    ASSERT_EQ(res[1].outs.size(), 1u) << res[1].error;
    // Rows: the row indices, then the column indices, of the nonzeros.
    auto want = [](std::initializer_list<int64_t> v) {
      return int64Tensor({2, 2}, v);
    };
    expectNear(res[0].outs[0], want({0, 1, 1, 2}), 0);
    expectNear(res[1].outs[0], want({0, 1, 0, 1}), 0);
    EXPECT_NE(res[2].error.find("run-time input check: node 'nz' (NonZero)"),
              std::string::npos)
        << res[2].error;
  }
}

TEST(RuntimeInputs, ReverseSequenceTakesItsLengthsAtRunTime) {
  ONNXBuilder b(13);
  b.input("x", {3, 2}); // [time, batch]
  b.input("l", {2}, onnx::TensorProto::INT64);
  b.node("ReverseSequence", {"x", "l"}, {"y"}, "rv");
  b.output("y", {3, 2});
  for (const std::string &backend : testBackends()) {
    SCOPED_TRACE(backend);
    Module M;
    auto F = importONNXBuffer(b.serialize(), "m", M);
    ASSERT_TRUE(bool(F)) << llvm::toString(F.takeError());
    auto res = runEach(M, **F, backend,
                       runs(tensors(iota({3, 2}), int64Tensor({2}, {3, 1})),
                            tensors(iota({3, 2}), int64Tensor({2}, {2, 9}))));
    ASSERT_EQ(res.size(), 2u);
    ASSERT_EQ(res[0].outs.size(), 1u) << res[0].error;
    ASSERT_EQ(res[1].outs.size(), 1u) << res[1].error;
    // Batch 0 is 1, 3, 5 and batch 1 is 2, 4, 6 along time; a length past
    // the time extent reverses all of it.
    expectNear(res[0].outs[0], makeTensor({3, 2}, {5, 2, 3, 4, 1, 6}), 0);
    expectNear(res[1].outs[0], makeTensor({3, 2}, {3, 6, 1, 4, 5, 2}), 0);
  }
}
