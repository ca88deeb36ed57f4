//===- GraphTest.cpp - Nodes, builders, verifier and printers -------------===//
#include "ember/Graph/Printer.h"
#include "ember/Graph/Verifier.h"

#include "gtest/gtest.h"

using namespace ember;

namespace {
struct SmallNet {
  Module M;
  Function *F = M.createFunction("net");
  Placeholder *in =
      M.createPlaceholder("x", Type(ElemKind::Float32, {1, 4}), false);
  Placeholder *out =
      M.createPlaceholder("y", Type(ElemKind::Float32, {1, 4}), true);
};
} // namespace

TEST(Graph, TypesAreUniqued) {
  Module M;
  TypeRef a = M.uniqueType(ElemKind::Float32, {2, 3});
  TypeRef b = M.uniqueType(Type(ElemKind::Float32, {2, 3}));
  EXPECT_EQ(a, b);
  EXPECT_NE(a, M.uniqueType(ElemKind::Float32, {3, 2}));
}

TEST(Graph, BuildersInferTypesAndKeepUseLists) {
  SmallNet n;
  auto *relu = n.F->createRelu("r", n.in);
  auto *add = n.F->createAdd("a", relu, relu);
  n.F->createSave("s", add, n.out);
  EXPECT_EQ(*add->getType(), Type(ElemKind::Float32, {1, 4}));
  EXPECT_EQ(relu->getUsers().size(), 2u);
  EXPECT_EQ(n.in->getUsers().size(), 1u);
  EXPECT_FALSE(bool(verifyFunction(*n.F)));

  // Replace-all-uses moves both uses of relu to the input.
  relu->getResult().replaceAllUsesWith(n.in);
  EXPECT_FALSE(relu->hasUsers());
  EXPECT_EQ(n.in->getUsers().size(), 3u);
  n.F->eraseNode(relu);
  EXPECT_EQ(n.in->getUsers().size(), 2u);
  EXPECT_FALSE(bool(verifyFunction(*n.F)));
}

TEST(Graph, InferenceRejectsBadOperands) {
  SmallNet n;
  Constant *c = n.M.createConstant("c", Tensor(ElemKind::Float32, {2, 4}));
  auto bad = n.F->tryCreateAdd("a", n.in, c);
  ASSERT_FALSE(bool(bad));
  std::string msg = llvm::toString(bad.takeError());
  EXPECT_NE(msg.find("must have the same type"), std::string::npos) << msg;

  auto mm = n.F->tryCreateMatMul("m", n.in, c, 0);
  ASSERT_FALSE(bool(mm));
  EXPECT_NE(llvm::toString(mm.takeError()).find("inner dimensions"),
            std::string::npos);

  auto t = n.F->tryCreateTranspose("t", n.in, {0, 0});
  ASSERT_FALSE(bool(t));
  EXPECT_NE(llvm::toString(t.takeError()).find("not a permutation"),
            std::string::npos);
}

TEST(Graph, ConvInference) {
  Module M;
  Function *F = M.createFunction("f");
  auto *x =
      M.createPlaceholder("x", Type(ElemKind::Float32, {1, 4, 9, 9}), false);
  auto *w = M.createConstant("w", Tensor(ElemKind::Float32, {8, 2, 3, 3}));
  auto *b = M.createConstant("b", Tensor(ElemKind::Float32, {8}));
  auto *conv = F->createConv("c", x, w, b, {}, {2, 2}, {1, 1, 1, 1}, {1, 1}, 2,
                             0, 0.f, 0.f);
  EXPECT_EQ(conv->getResult().dims(), (llvm::ArrayRef<dim_t>{1, 8, 5, 5}));
  auto bad = F->tryCreateConv("c2", x, w, b, {}, {1, 1}, {0, 0, 0, 0}, {1, 1},
                              1, 0, 0.f, 0.f);
  ASSERT_FALSE(bool(bad));
  EXPECT_NE(llvm::toString(bad.takeError()).find("channels per group"),
            std::string::npos);
}

TEST(Graph, VerifierNamesTheBrokenNode) {
  SmallNet n;
  auto *relu = n.F->createRelu("r", n.in);
  n.F->createSave("s", relu, n.out);
  // A Save to an input placeholder is invalid.
  n.F->createSave("bad", relu, n.in);
  llvm::Error err = verifyFunction(*n.F);
  ASSERT_TRUE(bool(err));
  std::string msg = llvm::toString(std::move(err));
  EXPECT_NE(msg.find("bad"), std::string::npos) << msg;
}

TEST(Graph, VerifierCatchesTypeMismatchAfterEdit) {
  SmallNet n;
  auto *relu = n.F->createRelu("r", n.in);
  n.F->createSave("s", relu, n.out);
  Constant *big = n.M.createConstant("big", Tensor(ElemKind::Float32, {1, 8}));
  relu->setNthInput(0, big);
  llvm::Error err = verifyFunction(*n.F);
  ASSERT_TRUE(bool(err));
  EXPECT_NE(llvm::toString(std::move(err)).find("inference gives"),
            std::string::npos);
}

TEST(Graph, PrinterAndDot) {
  SmallNet n;
  auto *relu = n.F->createRelu("r", n.in);
  auto *cl = n.F->createClip("c", relu, 0.f, 6.f);
  n.F->createSave("s", cl, n.out);
  std::string text = functionToString(*n.F);
  EXPECT_NE(text.find("%x = Placeholder float<1 x 4> input"), std::string::npos)
      << text;
  EXPECT_NE(text.find("%r = Relu(%x) : float<1 x 4>"), std::string::npos)
      << text;
  EXPECT_NE(text.find("%c = Clip(%r) {Min=0, Max=6} : float<1 x 4>"),
            std::string::npos)
      << text;
  // Operands come before users.
  EXPECT_LT(text.find("%r = Relu"), text.find("%c = Clip"));
  std::string dot;
  llvm::raw_string_ostream os(dot);
  printFunctionDot(*n.F, os);
  EXPECT_NE(os.str().find("digraph"), std::string::npos);
  EXPECT_NE(os.str().find("->"), std::string::npos);
  auto counts = countNodeKinds(*n.F);
  EXPECT_EQ(counts["Relu"], 1u);
  EXPECT_EQ(counts["Save"], 1u);
}

TEST(Graph, OpTableIsConsistent) {
  for (unsigned i = 0; i < kNumOpKinds; ++i) {
    const OpInfo &info = getOpInfo(OpKind(i));
    EXPECT_EQ(lookupOpKind(info.name), OpKind(i));
    EXPECT_NE(info.infer, nullptr);
  }
}
