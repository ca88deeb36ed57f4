//===- IndexRuleTest.cpp - Gather/scatter indices out of range ------------===//
//
// The rule of docs/Reliability.md ("Indices out of range"): constant
// indices outside [-n, n-1] are compile-time errors naming the node; in
// range, negative ones count from the end; indices computed at run time
// and still out of range gather 0 and scatter nothing, on every backend.
// The expected values are written by hand, not taken from the Interpreter,
// so that the Interpreter is held to the rule as well.
//
//===----------------------------------------------------------------------===//
#include "ember/Importer/ONNXImporter.h"

#include "ONNXBuilder.h"
#include "TestUtils.h"

using namespace ember;
using namespace ember::test;

namespace {

std::string importError(const ONNXBuilder &b) {
  Module M;
  auto F = importONNXBuffer(b.serialize(), "m", M);
  return F ? "" : llvm::toString(F.takeError());
}

} // namespace

TEST(IndexRule, RunTimeIndicesOutOfRangeGatherZeroAndScatterNothing) {
  const auto I64 = onnx::TensorProto::INT64;
  ONNXBuilder b(16);
  b.input("x1", {4});
  b.input("i1", {5}, I64);
  b.input("x2", {2, 2});
  b.input("i2", {2, 2}, I64);
  b.input("x3", {2, 3});
  b.input("i3", {3, 2}, I64);
  b.input("i4", {3}, I64);
  b.input("u4", {3});
  b.input("i5", {2, 1}, I64);
  b.input("u5", {2});
  b.node("Gather", {"x1", "i1"}, {"y1"});
  ONNXBuilder::attrInt(b.node("GatherElements", {"x2", "i2"}, {"y2"}), "axis",
                       1);
  b.node("GatherND", {"x3", "i3"}, {"y3"});
  b.node("ScatterElements", {"x1", "i4", "u4"}, {"y4"});
  b.node("ScatterND", {"x1", "i5", "u5"}, {"y5"});
  for (const char *y : {"y1", "y2", "y3", "y4", "y5"})
    b.output(y);
  for (const std::string &backend : testBackends()) {
    SCOPED_TRACE(backend);
    Module M;
    auto F = importONNXBuffer(b.serialize(), "m", M);
    ASSERT_TRUE(bool(F)) << llvm::toString(F.takeError());
    auto out = compileAndRun(
        M, **F, backend,
        tensors(makeTensor({4}, {10, 20, 30, 40}),
                int64Tensor({5}, {5, -5, 1, -1, -4}),
                makeTensor({2, 2}, {1, 2, 3, 4}),
                int64Tensor({2, 2}, {0, 2, -3, -1}),
                makeTensor({2, 3}, {1, 2, 3, 4, 5, 6}),
                int64Tensor({3, 2}, {1, 2, 0, 3, -2, -3}),
                int64Tensor({3}, {7, -1, -5}), makeTensor({3}, {1, 2, 3}),
                int64Tensor({2, 1}, {9, -4}), makeTensor({2}, {1, 2})));
    ASSERT_EQ(out.size(), 5u);
    // Out of range: 5, -5 (after adding 4, still below 0).
    expectNear(out[0], makeTensor({5}, {0, 0, 20, 40, 10}), 0);
    expectNear(out[1], makeTensor({2, 2}, {1, 0, 0, 4}), 0);
    // A tuple with one index out of range gathers a zero slice.
    expectNear(out[2], makeTensor({3}, {6, 0, 1}), 0);
    // Updates at 7 and -5 are skipped; -1 writes the last element.
    expectNear(out[3], makeTensor({4}, {10, 20, 30, 2}), 0);
    expectNear(out[4], makeTensor({4}, {2, 20, 30, 40}), 0);
  }
}

TEST(IndexRule, ConstantNegativeIndicesInRangeAreValid) {
  ONNXBuilder b(13);
  b.input("x", {4});
  b.initializerInts("i", {-4, -1, 3, 0});
  b.node("Gather", {"x", "i"}, {"y"}, "g");
  b.output("y");
  for (const std::string &backend : testBackends()) {
    SCOPED_TRACE(backend);
    Module M;
    auto F = importONNXBuffer(b.serialize(), "m", M);
    ASSERT_TRUE(bool(F)) << llvm::toString(F.takeError());
    auto out = compileAndRun(M, **F, backend,
                             tensors(makeTensor({4}, {10, 20, 30, 40})));
    ASSERT_EQ(out.size(), 1u);
    expectNear(out[0], makeTensor({4}, {10, 40, 40, 10}), 0);
  }
}

TEST(IndexRule, ConstantIndicesOutOfRangeAreCompileErrors) {
  {
    ONNXBuilder b(13);
    b.input("x", {4});
    b.initializerInts("i", {3, 100});
    b.node("Gather", {"x", "i"}, {"y"}, "g");
    b.output("y");
    EXPECT_NE(importError(b).find("node 'g' (Gather): constant index 100 is "
                                  "out of range for axis 0 of size 4 (valid: "
                                  "-4 to 3)"),
              std::string::npos)
        << importError(b);
  }
  {
    // batch_dims 1: the tuple's single index addresses dim 1 (size 3).
    ONNXBuilder b(13);
    b.input("x", {2, 3});
    b.initializerInts("i", {2, -4});
    b.graph().mutable_initializer(0)->clear_dims();
    b.graph().mutable_initializer(0)->add_dims(2);
    b.graph().mutable_initializer(0)->add_dims(1);
    auto &n = b.node("GatherND", {"x", "i"}, {"y"}, "gnd");
    ONNXBuilder::attrInt(n, "batch_dims", 1);
    b.output("y");
    EXPECT_NE(importError(b).find("node 'gnd' (GatherND): constant index -4 "
                                  "is out of range for dim 1 of size 3"),
              std::string::npos)
        << importError(b);
  }
}
