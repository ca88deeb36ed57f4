//===- KernelTextTest.cpp - Kernel IR text: parser and verifier -----------===//
//
// Hand-written kernels: what parses, what the verifier rejects and with
// which message. Round trips of lowered kernels are checked by every test
// of KernelTest.cpp.
//
//===----------------------------------------------------------------------===//
#include "ember/Kernel/KernelText.h"

#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

using namespace ember;
using namespace ember::kir;

namespace {
const char *kAxpy = R"(kernel axpy
  b0: float @mutable+0 size 64 // x
  b1: float @activations+64 size 64 // y
  l0: float
  parallel for i0 < 16 {
    l0 = ((b0[i0] * 2.5:float) + b1[i0])
    if (l0 < 0:float) {
      b1[i0] = (l0 max -1e-05:float)
    }
    b1[i0] = ((0:float < l0) ? sqrt(l0) : 0:float)
  }
  call lib_kernel(&b0, &b1, 16)
)";

std::string print(const Kernel &k) {
  std::string s;
  llvm::raw_string_ostream os(s);
  k.print(os);
  return os.str();
}

/// The verifier's (or parser's) message for \p text, or "" when it is valid.
std::string problem(const std::string &text) {
  auto ks = parseKernels(text);
  if (!ks)
    return llvm::toString(ks.takeError());
  for (const Kernel &k : *ks)
    if (llvm::Error err = verifyKernel(k))
      return llvm::toString(std::move(err));
  return "";
}

/// kAxpy with the first \p from replaced by \p to.
std::string axpyWith(const std::string &from, const std::string &to) {
  std::string s = kAxpy;
  size_t at = s.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return s.replace(at, from.size(), to);
}

/// Expects \p text to be rejected with a message containing \p what.
void expectProblem(const std::string &text, const std::string &what) {
  std::string msg = problem(text);
  EXPECT_NE(msg.find(what), std::string::npos)
      << "message: '" << msg << "'\nwanted: '" << what << "'\n"
      << text;
}
} // namespace

TEST(KernelText, HandWrittenKernelParsesAndPrintsTheSame) {
  auto ks = parseKernels(kAxpy);
  ASSERT_TRUE(bool(ks)) << llvm::toString(ks.takeError());
  ASSERT_EQ(ks->size(), 1u);
  const Kernel &k = (*ks)[0];
  EXPECT_EQ(k.getName(), "axpy");
  ASSERT_EQ(k.getBuffers().size(), 2u);
  EXPECT_EQ(k.getBuffers()[1].region, Region::Activation);
  EXPECT_EQ(k.getBuffers()[1].offset, 64u);
  EXPECT_EQ(k.getBuffers()[1].name, "y");
  ASSERT_EQ(k.body().size(), 2u);
  EXPECT_TRUE(k.body()[0].parallel);
  EXPECT_EQ(k.body()[1].callee, "lib_kernel");
  EXPECT_EQ(print(k), kAxpy);
  EXPECT_EQ(problem(kAxpy), "");
}

TEST(KernelText, SeveralKernelsInOneText) {
  auto ks = parseKernels(std::string(kAxpy) + kAxpy);
  ASSERT_TRUE(bool(ks)) << llvm::toString(ks.takeError());
  EXPECT_EQ(ks->size(), 2u);
}

TEST(KernelText, ParseErrorsNameTheLineAndTheProblem) {
  expectProblem(axpyWith("+ b1[i0])", "+ b9[i0])"), "line 6: buffer b9 is not");
  expectProblem(axpyWith("max", "maxx"), "unknown operator 'maxx'");
  expectProblem(axpyWith("2.5:float", "2.5:flot"), "unknown kind 'flot'");
  expectProblem(axpyWith("  }\n  call", "  call"), "missing '}'");
  expectProblem("for i0 < 3 {\n}\n", "expected 'kernel NAME'");
  expectProblem(axpyWith("sqrt(l0)", "sqrtt(l0)"),
                "unknown operator or kind 'sqrtt'");
}

TEST(KernelText, VerifierRejectsBrokenTypingAndScoping) {
  expectProblem(axpyWith("2.5:float", "2:i32"), "differ in kind");
  expectProblem(axpyWith("if (l0 < 0:float)", "if l0"),
                "if condition is not bool");
  expectProblem(axpyWith("sqrt(l0) : 0:float", "sqrt(l0) : 0:double"),
                "arms of a select differ");
  expectProblem(axpyWith("b1[i0] = (l0 max -1e-05:float)", "b1[i0] = i32(l0)"),
                "a store of i32 into float b1");
  expectProblem(axpyWith("call lib_kernel(&b0, &b1, 16)", "b1[i0] = b0[i0]"),
                "i0 is used outside its loop");
  expectProblem(
      axpyWith("l0 = ((b0[i0] * 2.5:float) + b1[i0])", "l0 = i32(b1[i0])"),
      "an assignment of i32 to local l0");
  expectProblem(axpyWith("b0[i0] *", "b0[1.5:float] *"),
                "an index is not an integer");
  expectProblem(axpyWith("(l0 max -1e-05:float)", "(l0 ^ l0)"),
                "'^' of float operands");
}
