//===- IntegerSignTest.cpp - Neg and Abs of integer tensors ---------------===//
//
// ONNX Neg and Abs take integer tensors; the importer builds 0 - x and
// max(x, 0 - x) for them (ImportMath.cpp). Expected values are written by
// hand; the most negative value is left out (its negation overflows).
//
//===----------------------------------------------------------------------===//
#include "ember/Importer/ONNXImporter.h"

#include "ONNXBuilder.h"
#include "TestUtils.h"

using namespace ember;
using namespace ember::test;

namespace {

Tensor int32Tensor(std::initializer_list<int32_t> v) {
  Tensor t(ElemKind::Int32, {dim_t(v.size())});
  std::copy(v.begin(), v.end(), t.getHandle<int32_t>().begin());
  return t;
}

} // namespace

TEST(IntegerSign, NegAndAbsOfInt32) {
  for (const char *op : {"Neg", "Abs"}) {
    ONNXBuilder b(13);
    b.input("x", {5}, onnx::TensorProto::INT32);
    b.node(op, {"x"}, {"y"}, "n");
    b.output("y", {5}, onnx::TensorProto::INT32);
    for (const std::string &backend : testBackends()) {
      SCOPED_TRACE(backend + " " + op);
      Module M;
      auto F = importONNXBuffer(b.serialize(), "m", M);
      ASSERT_TRUE(bool(F)) << llvm::toString(F.takeError());
      auto outs = compileAndRun(
          M, **F, backend,
          tensors(int32Tensor({3, -7, 0, -2147483647, 2147483647})));
      ASSERT_EQ(outs.size(), 1u);
      Tensor want = std::string(op) == "Neg"
                        ? int32Tensor({-3, 7, 0, 2147483647, -2147483647})
                        : int32Tensor({3, 7, 0, 2147483647, 2147483647});
      ASSERT_EQ(outs[0].getType(), want.getType());
      for (dim_t i = 0; i < 5; ++i)
        EXPECT_EQ(outs[0].getHandle<int32_t>().raw(i),
                  want.getHandle<int32_t>().raw(i))
            << "at " << i;
    }
  }
}
