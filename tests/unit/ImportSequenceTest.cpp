//===- ImportSequenceTest.cpp - Sequences resolved at import --------------===//
//
// docs/ControlFlow.md "Sequences": the Sequence ops are resolved while
// importing into the tensors they select, split or concatenate. Expected
// values are written by hand (the ONNX definitions); every backend is held
// to them. Refusals (run-time positions, positions out of range, sequence
// graph outputs, a tensor op fed a sequence) are one-line errors.
//
//===----------------------------------------------------------------------===//
#include "ember/Importer/ONNXImporter.h"

#include "ONNXBuilder.h"
#include "TestUtils.h"

using namespace ember;
using namespace ember::test;

namespace {

/// 0, 1, ..., n - 1 in \p dims, plus \p offset.
Tensor counting(llvm::ArrayRef<dim_t> dims, float offset = 0) {
  Tensor t(ElemKind::Float32, dims);
  float v = offset;
  for (float &x : t.getHandle<float>())
    x = v++;
  return t;
}

/// The import error of \p b's model, or "" when it imports.
std::string importError(const ONNXBuilder &b) {
  Module M;
  auto F = importONNXBuffer(b.serialize(), "m", M);
  return F ? "" : llvm::toString(F.takeError());
}

} // namespace

// x [2, 5] split along axis 1 into parts of 2 (2, 2, 1); y [2, 1] inserted
// at the front; the last part erased; the rest concatenated along axis 1:
// [y, x[:, 0:2], x[:, 2:4]], a sequence of 3.
TEST(ImportSequence, SplitInsertEraseConcat) {
  ONNXBuilder b(13);
  b.input("x", {2, 5});
  b.input("y", {2, 1});
  b.initializerInts("two", {2});
  b.graph().mutable_initializer()->rbegin()->clear_dims(); // a scalar split
  b.initializerInts("front", {0});
  b.graph().mutable_initializer()->rbegin()->clear_dims();
  ONNXBuilder::attrInt(b.node("SplitToSequence", {"x", "two"}, {"s0"}, "split"),
                       "axis", 1);
  b.node("SequenceInsert", {"s0", "y", "front"}, {"s1"}, "insert");
  b.node("SequenceErase", {"s1"}, {"s2"}, "erase");
  ONNXBuilder::attrInt(b.node("ConcatFromSequence", {"s2"}, {"z"}, "concat"),
                       "axis", 1);
  b.node("SequenceLength", {"s2"}, {"n"}, "len");
  b.output("z", {2, 5});
  b.output("n", {}, onnx::TensorProto::INT64);
  for (const std::string &backend : testBackends()) {
    SCOPED_TRACE(backend);
    Module M;
    auto F = importONNXBuffer(b.serialize(), "m", M);
    ASSERT_TRUE(bool(F)) << llvm::toString(F.takeError());
    auto outs = compileAndRun(M, **F, backend,
                              tensors(counting({2, 5}), counting({2, 1}, 100)));
    ASSERT_EQ(outs.size(), 2u);
    expectNear(outs[0], makeTensor({2, 5}, {100, 0, 1, 2, 3, 101, 5, 6, 7, 8}),
               0);
    EXPECT_EQ(outs[1].getHandle<int64_t>().raw(0), 3);
  }
}

// SplitToSequence without split and keepdims 0 gives the rows of x; they
// are stacked back along a new last axis (a transpose) by ConcatFromSequence
// with new_axis 1; SequenceAt -1 takes the last row.
TEST(ImportSequence, UnbindAndStack) {
  ONNXBuilder b(13);
  b.input("x", {3, 2});
  b.initializerInts("last", {-1});
  b.graph().mutable_initializer()->rbegin()->clear_dims();
  auto &split = b.node("SplitToSequence", {"x"}, {"rows"}, "unbind");
  ONNXBuilder::attrInt(split, "keepdims", 0);
  auto &stack = b.node("ConcatFromSequence", {"rows"}, {"t"}, "stack");
  ONNXBuilder::attrInt(stack, "axis", -1);
  ONNXBuilder::attrInt(stack, "new_axis", 1);
  b.node("SequenceAt", {"rows", "last"}, {"r"}, "at");
  b.output("t", {2, 3});
  b.output("r", {2});
  for (const std::string &backend : testBackends()) {
    SCOPED_TRACE(backend);
    Module M;
    auto F = importONNXBuffer(b.serialize(), "m", M);
    ASSERT_TRUE(bool(F)) << llvm::toString(F.takeError());
    auto outs = compileAndRun(M, **F, backend, tensors(counting({3, 2})));
    ASSERT_EQ(outs.size(), 2u);
    expectNear(outs[0], makeTensor({2, 3}, {0, 2, 4, 1, 3, 5}), 0);
    expectNear(outs[1], makeTensor({2}, {4, 5}), 0);
  }
}

TEST(ImportSequence, CleanErrors) {
  { // A position fed at run time.
    ONNXBuilder b(13);
    b.input("x", {2});
    b.input("p", {}, onnx::TensorProto::INT64);
    b.node("SequenceConstruct", {"x", "x"}, {"s"}, "make");
    b.node("SequenceAt", {"s", "p"}, {"y"}, "at");
    b.output("y", {2});
    EXPECT_NE(importError(b).find("node 'at' (SequenceAt): input 'p' must be "
                                  "a constant"),
              std::string::npos)
        << importError(b);
  }
  { // A position past the end.
    ONNXBuilder b(13);
    b.input("x", {2});
    b.initializerInts("p", {2});
    b.node("SequenceConstruct", {"x", "x"}, {"s"}, "make");
    b.node("SequenceAt", {"s", "p"}, {"y"}, "at");
    b.output("y", {2});
    EXPECT_NE(importError(b).find("position 2 is outside a sequence of 2"),
              std::string::npos)
        << importError(b);
  }
  { // A tensor op fed a sequence.
    ONNXBuilder b(13);
    b.input("x", {2});
    b.node("SequenceConstruct", {"x"}, {"s"}, "make");
    b.node("Relu", {"s"}, {"y"}, "relu");
    b.output("y", {2});
    EXPECT_NE(importError(b).find("input 's' is a sequence"), std::string::npos)
        << importError(b);
  }
  { // A sequence as a graph output.
    ONNXBuilder b(13);
    b.input("x", {2});
    b.node("SequenceConstruct", {"x"}, {"s"}, "make");
    b.output("s", {2});
    EXPECT_NE(importError(b).find("value 's' is a sequence"),
              std::string::npos)
        << importError(b);
  }
  { // Parts that do not add up to the dimension.
    ONNXBuilder b(13);
    b.input("x", {5});
    b.initializerInts("sizes", {2, 2});
    b.node("SplitToSequence", {"x", "sizes"}, {"s"}, "split");
    b.node("SequenceLength", {"s"}, {"n"}, "len");
    b.output("n", {}, onnx::TensorProto::INT64);
    EXPECT_NE(importError(b).find("split sizes add up to 4, not the "
                                  "dimension 5"),
              std::string::npos)
        << importError(b);
  }
}
