//===- AttentionLayoutTest.cpp - Attention through its head perms ---------===//
//
// Heads as exporters lay them out around attention: Q, K and V come split
// as [B, T, H, D] (BERT, GPT), sequence first as [T, B*H, D] (ViT's
// nn.MultiheadAttention) or as windows (Swin), reach the products through
// Transposes and leave through the merge Transpose. fuse-attention must
// turn those Transposes into the Attention's QPerm/KPerm/VPerm/OutPerm, and
// the Interpreter's and the CPU's kernels must read and write the heads
// through them: each graph runs unfused on the Interpreter (the oracle)
// and fused on the Interpreter and the CPU, and no Transpose may be left.
// A kernel that ignored a perm would read other heads' rows (whole-unit
// errors), so the tolerance is AttentionTest's: 2e-5 of max|y|, for the
// reasons given there.
//
// Also: the graph and IR text parsers reject perms that move the head dim
// or have the wrong rank with an error naming the attribute, and the
// perms survive both text round trips.
//
//===----------------------------------------------------------------------===//
#include "AttentionTestUtils.h"

#include "ember/Graph/Printer.h"
#include "ember/IR/IRGen.h"
#include "ember/IR/IRParser.h"
#include "ember/IR/IRPrinter.h"
#include "ember/IR/Scheduler.h"

#include <sstream>

using namespace ember;
using namespace ember::test;

namespace {
using Ints = std::vector<int64_t>;

struct LayoutCase {
  const char *name;
  Ints in;                           ///< the dims Q, K and V are given in
  Ints qPerm, kPerm, vPerm, outPerm; ///< outPerm empty: no merge Transpose
  bool transB; ///< kPerm gives K [.., T, D] (TransB), else K^T [.., D, T]
  bool causal, padding;
};

std::string dimsText(const Ints &d) {
  std::string s;
  for (int64_t x : d)
    s += (s.empty() ? "" : " x ") + std::to_string(x);
  return s;
}

std::string listText(const Ints &d) {
  std::string s;
  for (int64_t x : d)
    s += (s.empty() ? "" : ", ") + std::to_string(x);
  return "[" + s + "]";
}

Ints permute(const Ints &d, const Ints &p) {
  Ints out;
  for (int64_t i : p)
    out.push_back(d[i]);
  return out;
}

/// The Where of a causal mask over scores \p sd into %w from %\p from.
std::string causalText(const Ints &sd, const char *from) {
  size_t r = sd.size();
  int64_t t = sd[r - 1];
  Ints md(r, 1);
  md[r - 2] = md[r - 1] = t;
  std::string v;
  for (int64_t i = 0; i < t; ++i)
    for (int64_t j = 0; j < t; ++j)
      v += std::string(v.empty() ? "" : ", ") + (j > i ? "1" : "0");
  return "  %cm = Constant bool<" + dimsText(md) + "> [" + v +
         "]\n  %cb = Broadcast(%cm) {Dims=" + listText(sd) +
         "}\n  %f = Splat() {Dims=" + listText(sd) +
         ", ElemTy=float, Value=-3.40282347e+38}\n"
         "  %w = Where(%cb, %f, %" +
         from + ")\n";
}

/// The Add of a padding mask [B', 1, .., 1, T] over scores \p sd into %a
/// from %u: batch index b masks its last b + 1 keys.
std::string paddingText(const Ints &sd) {
  size_t r = sd.size();
  int64_t t = sd[r - 1];
  Ints md(r, 1);
  md[0] = sd[0];
  md[r - 1] = t;
  std::string v;
  for (int64_t b = 0; b < sd[0]; ++b)
    for (int64_t j = 0; j < t; ++j)
      v += std::string(v.empty() ? "" : ", ") +
           (j >= t - (b % 4 + 1) ? "-10000" : "0");
  return "  %pm = Constant float<" + dimsText(md) + "> [" + v +
         "]\n  %pb = Broadcast(%pm) {Dims=" + listText(sd) +
         "}\n  %a = Add(%u, %pb)\n";
}

std::string layoutGraph(const LayoutCase &c) {
  Ints q = permute(c.in, c.qPerm);
  size_t r = q.size();
  Ints sd = q, od = q;
  sd[r - 1] = q[r - 2];
  Ints y = c.outPerm.empty() ? od : permute(od, c.outPerm);
  std::ostringstream os;
  os << "function f {\n";
  for (const char *n : {"xq", "xk", "xv"})
    os << "  %" << n << " = Placeholder float<" << dimsText(c.in)
       << "> input\n";
  os << "  %y = Placeholder float<" << dimsText(y) << "> output\n"
     << "  %q = Transpose(%xq) {Shuffle=" << listText(c.qPerm) << "}\n"
     << "  %k = Transpose(%xk) {Shuffle=" << listText(c.kPerm) << "}\n"
     << "  %v = Transpose(%xv) {Shuffle=" << listText(c.vPerm) << "}\n"
     << "  %s = MatMul(%q, %k) {TransB=" << (c.transB ? 1 : 0) << "}\n"
     << "  %c = Splat() {Dims=" << listText(sd)
     << ", ElemTy=float, Value=0.125}\n"
     << "  %u = Mul(%s, %c)\n";
  const char *x = "u";
  if (c.padding) {
    os << paddingText(sd);
    x = "a";
  }
  if (c.causal) {
    os << causalText(sd, x);
    x = "w";
  }
  os << "  %p = Softmax(%" << x << ") {Axis=" << r - 1 << "}\n"
     << "  %o = MatMul(%p, %v)\n";
  if (c.outPerm.empty())
    os << "  Save(%o, %y)\n}\n";
  else
    os << "  %ot = Transpose(%o) {Shuffle=" << listText(c.outPerm) << "}\n"
       << "  Save(%ot, %y)\n}\n";
  return os.str();
}

class AttentionLayout : public ::testing::TestWithParam<LayoutCase> {};

TEST_P(AttentionLayout, HeadsInPlace) {
  std::string text = layoutGraph(GetParam());
  std::vector<Tensor> inputs = randomInputs(text);
  auto ref = runAttention(text, "Interpreter", getMinimalPipeline(), inputs);
  ASSERT_TRUE(bool(ref)) << llvm::toString(ref.takeError()) << "\n" << text;
  for (const char *backend : {"Interpreter", "CPU"}) {
    unsigned fused = 0, transposes = 0;
    auto got = runAttention(text, backend, std::nullopt, inputs,
                            NodeKind::Attention, &fused, &transposes);
    ASSERT_TRUE(bool(got)) << backend << ": "
                           << llvm::toString(got.takeError());
    EXPECT_EQ(fused, 1u) << backend << ": the pattern was not fused";
    EXPECT_EQ(transposes, 0u) << backend << ": a head Transpose is left";
    compareAttention((*got)[0], (*ref)[0], false, backend);
  }
}

// Odd T and head dims
// that are not a multiple of 16 reach the kernel's partial vectors; T
// above 64 gives several query blocks.
const LayoutCase kLayouts[] = {
    // BERT: [B, T, H, D] split by [0, 2, 1, 3], K^T by [0, 2, 3, 1].
    {"bert_padding",
     {2, 37, 3, 64},
     {0, 2, 1, 3},
     {0, 2, 3, 1},
     {0, 2, 1, 3},
     {0, 2, 1, 3},
     false,
     false,
     true},
    // K read through TransB after the same split as Q.
    {"bert_transb",
     {2, 37, 3, 64},
     {0, 2, 1, 3},
     {0, 2, 1, 3},
     {0, 2, 1, 3},
     {0, 2, 1, 3},
     true,
     false,
     true},
    // GPT: causal and a padding mask at once, D 80 (a partial vector).
    {"gpt_causal_padding",
     {2, 70, 2, 80},
     {0, 2, 1, 3},
     {0, 2, 3, 1},
     {0, 2, 1, 3},
     {0, 2, 1, 3},
     false,
     true,
     true},
    // ViT's nn.MultiheadAttention: [T, B*H, D] by [1, 0, 2] and back.
    {"vit_seq_first",
     {67, 6, 32},
     {1, 0, 2},
     {1, 2, 0},
     {1, 0, 2},
     {1, 0, 2},
     false,
     false,
     false},
    // The same as rank 4 [T, B*H, 1, D], merged back to [T, B*H, 1, D].
    {"vit_seq_first_rank4",
     {19, 6, 1, 32},
     {1, 2, 0, 3},
     {1, 2, 3, 0},
     {1, 2, 0, 3},
     {2, 0, 1, 3},
     false,
     false,
     false},
    // Swin's windows [windows, T, H, D] with 49 tokens.
    {"swin_windows",
     {2, 49, 3, 32},
     {0, 2, 1, 3},
     {0, 2, 3, 1},
     {0, 2, 1, 3},
     {0, 2, 1, 3},
     false,
     false,
     false},
    // No merge after: the result stays [B, H, T, D]; D 20.
    {"no_out_perm_d20",
     {1, 40, 2, 20},
     {0, 2, 1, 3},
     {0, 2, 3, 1},
     {0, 2, 1, 3},
     {},
     false,
     true,
     false},
};

INSTANTIATE_TEST_SUITE_P(Layouts, AttentionLayout,
                         ::testing::ValuesIn(kLayouts),
                         [](const ::testing::TestParamInfo<LayoutCase> &info) {
                           return std::string(info.param.name);
                         });

/// An Attention over Q, K, V of [2, 5, 3, 4] with attributes \p attrs.
std::string attentionText(const std::string &attrs) {
  return "function f {\n"
         "  %q = Placeholder float<2 x 5 x 3 x 4> input\n"
         "  %k = Placeholder float<2 x 5 x 3 x 4> input\n"
         "  %v = Placeholder float<2 x 5 x 3 x 4> input\n"
         "  %y = Placeholder float<2 x 5 x 3 x 4> output\n"
         "  %a = Attention(%q, %k, %v) {" +
         attrs + "}\n  Save(%a, %y)\n}\n";
}

const char *const kPerms = "Scale=0.5, Causal=0, QPerm=[0, 2, 1, 3], "
                           "KPerm=[0, 2, 1, 3], VPerm=[0, 2, 1, 3], "
                           "OutPerm=[0, 2, 1, 3]";

TEST(AttentionLayoutText, GraphTextRoundTripsAndRejectsBadPerms) {
  const std::pair<const char *, const char *> bad[] = {
      {"QPerm=[0, 2, 3, 1]", "QPerm [0, 2, 3, 1] is not"},
      {"KPerm=[1, 0, 2]", "KPerm [1, 0, 2] is not"},
      {"VPerm=[0, 0, 1, 3]", "VPerm [0, 0, 1, 3] is not"},
      {"OutPerm=[0, 2, 1, 4]", "OutPerm [0, 2, 1, 4] is not"}};
  for (const auto &[attr, what] : bad) {
    Module M;
    auto F = parseFunction(attentionText(attr), M);
    ASSERT_FALSE(bool(F)) << attr;
    std::string msg = llvm::toString(F.takeError());
    EXPECT_NE(msg.find(what), std::string::npos) << msg;
  }
  Module M;
  auto F = parseFunction(attentionText(kPerms), M);
  ASSERT_TRUE(bool(F)) << llvm::toString(F.takeError());
  std::string text = functionToString(**F);
  EXPECT_NE(text.find(kPerms), std::string::npos) << text;
  Module M2;
  auto again = parseFunction(text, M2);
  ASSERT_TRUE(bool(again)) << llvm::toString(again.takeError());
  EXPECT_EQ(functionToString(**again), text);
}

TEST(AttentionLayoutText, IRRoundTripsAndRejectsBadPerms) {
  Module M;
  auto F = parseFunction(attentionText(kPerms), M);
  ASSERT_TRUE(bool(F)) << llvm::toString(F.takeError());
  auto ir = generateIR(**F, scheduleFunction(**F));
  ASSERT_TRUE(bool(ir)) << llvm::toString(ir.takeError());
  std::string text = irToString(**ir);
  ASSERT_NE(text.find(kPerms), std::string::npos) << text;
  auto again = parseIR(text, "attn.ir");
  ASSERT_TRUE(bool(again)) << llvm::toString(again.takeError());
  EXPECT_EQ(irToString(*again->function), text);
  std::string bad = text;
  size_t at = bad.find("KPerm=[0, 2, 1, 3]");
  bad.replace(at, 18, "KPerm=[2, 0, 3, 1]");
  auto rejected = parseIR(bad, "attn.ir");
  ASSERT_FALSE(bool(rejected)) << bad;
  std::string msg = llvm::toString(rejected.takeError());
  EXPECT_NE(msg.find("KPerm [2, 0, 3, 1] is not"), std::string::npos) << msg;
}

} // namespace
