//===- AttentionTest.cpp - Fused attention against the unfused graph ------===//
//
// Attention graphs as exporters write them (MatMul, scale, mask, Softmax,
// MatMul) run three ways on the same inputs: on the Interpreter with the
// minimal pipeline (the unfused chain, the oracle), on the Interpreter with
// the default pipeline (its Attention kernel) and on the CPU (libjit's
// blocked online-softmax kernel). The default pipeline must have fused the
// pattern into one Attention. Shapes cover key counts that are not a
// multiple of the CPU's key block, a single query, head dims 16/20/32/64/80,
// several query blocks, causal and padding masks, a full-size bias, swin's
// shifted-window bias and window mask (one and two images), both K layouts
// and batch 2.
//
// Tolerance: 2e-5 of max|y|. The fused kernels sum the dot products in
// another order and the CPU's exp is within 2 ulp of expf; the results
// are weighted means of V, so the error stays a few ulps of max|V| (a
// wrong block recurrence is off by whole percents).
//
//===----------------------------------------------------------------------===//
#include "AttentionTestUtils.h"

#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <random>
#include <sstream>

using namespace ember;
using namespace ember::test;

namespace {
enum class MaskKind { None, Padding, Causal, Bias, PaddingInf, ShiftedWindow };

struct Case {
  const char *name;
  int64_t b, h, tq, tk, d, dv;
  MaskKind mask;
  bool transB;         ///< K [.., Tk, D] through TransB, else K^T [.., D, Tk]
  int64_t windows = 1; ///< ShiftedWindow: b is images x windows
};

std::string dims(std::initializer_list<int64_t> d) {
  std::string s;
  for (int64_t x : d)
    s += (s.empty() ? "" : " x ") + std::to_string(x);
  return s;
}

std::string list(std::initializer_list<int64_t> d) {
  std::string s;
  for (int64_t x : d)
    s += (s.empty() ? "" : ", ") + std::to_string(x);
  return "[" + s + "]";
}

/// Padding mask values: key j of batch b is masked for the last b + 2 keys
/// (all keys of batch 1 when \p all1), with \p fill.
std::string paddingValues(const Case &c, const char *fill, bool all1) {
  std::string s;
  for (int64_t b = 0; b < c.b; ++b)
    for (int64_t j = 0; j < c.tk; ++j) {
      bool masked = j >= c.tk - (b + 2) || (all1 && b == 1);
      s += std::string(s.empty() ? "" : ", ") + (masked ? fill : "0");
    }
  return "[" + s + "]";
}

/// The attention graph of \p c in the printer's text format; with
/// \p weights the softmax's result is an output too (fuse-attention then
/// leaves the ScaledSoftmax alone).
std::string attentionGraph(const Case &c, bool weights) {
  std::ostringstream os;
  std::string sd = list({c.b, c.h, c.tq, c.tk});
  os << "function f {\n"
     << "  %q = Placeholder float<" << dims({c.b, c.h, c.tq, c.d})
     << "> input\n";
  if (c.transB)
    os << "  %k = Placeholder float<" << dims({c.b, c.h, c.tk, c.d})
       << "> input\n";
  else
    os << "  %k = Placeholder float<" << dims({c.b, c.h, c.d, c.tk})
       << "> input\n";
  os << "  %v = Placeholder float<" << dims({c.b, c.h, c.tk, c.dv})
     << "> input\n"
     << "  %y = Placeholder float<" << dims({c.b, c.h, c.tq, c.dv})
     << "> output\n";
  if (weights)
    os << "  %yp = Placeholder float<" << dims({c.b, c.h, c.tq, c.tk})
       << "> output\n";
  os << "  %s = MatMul(%q, %k) {TransB=" << (c.transB ? 1 : 0) << "}\n"
     << "  %c = Splat() {Dims=" << sd
     << ", ElemTy=float, Value=" << 1.0 / std::sqrt(double(c.d)) << "}\n"
     << "  %t = Mul(%s, %c)\n";
  switch (c.mask) {
  case MaskKind::None:
    os << "  %u = Softmax(%t) {Axis=3}\n";
    break;
  case MaskKind::Padding:
  case MaskKind::PaddingInf: {
    bool inf = c.mask == MaskKind::PaddingInf;
    os << "  %m = Constant float<" << dims({c.b, 1, 1, c.tk}) << "> "
       << paddingValues(c, inf ? "-inf" : "-10000", inf) << "\n"
       << "  %mb = Broadcast(%m) {Dims=" << sd << "}\n"
       << "  %a = Add(%t, %mb)\n  %u = Softmax(%a) {Axis=3}\n";
    break;
  }
  case MaskKind::Causal: {
    std::string v;
    for (int64_t i = 0; i < c.tq; ++i)
      for (int64_t j = 0; j < c.tk; ++j)
        v += std::string(v.empty() ? "" : ", ") + (j > i ? "1" : "0");
    os << "  %m = Constant bool<" << dims({1, 1, c.tq, c.tk}) << "> [" << v
       << "]\n  %mb = Broadcast(%m) {Dims=" << sd << "}\n"
       << "  %f = Splat() {Dims=" << sd
       << ", ElemTy=float, Value=-3.40282347e+38}\n"
       << "  %a = Where(%mb, %f, %t)\n  %u = Softmax(%a) {Axis=3}\n";
    break;
  }
  case MaskKind::Bias:
    os << "  %m = Constant float<" << dims({1, c.h, c.tq, c.tk}) << ">\n"
       << "  %mb = Broadcast(%m) {Dims=" << sd << "}\n"
       << "  %a = Add(%t, %mb)\n  %u = Softmax(%a) {Axis=3}\n";
    break;
  case MaskKind::ShiftedWindow: {
    // Swin's shifted windows: the position bias, then the window mask
    // added to the scores viewed as [images, windows, H, Tq, Tk].
    int64_t nw = c.windows, imgs = c.b / nw;
    std::string s5 = list({imgs, nw, c.h, c.tq, c.tk});
    os << "  %m = Constant float<" << dims({1, c.h, c.tq, c.tk}) << ">\n"
       << "  %mb = Broadcast(%m) {Dims=" << sd << "}\n"
       << "  %a0 = Add(%t, %mb)\n"
       << "  %a5 = Reshape(%a0) {Dims=" << s5 << "}\n"
       << "  %w = Constant float<" << dims({1, nw, 1, c.tq, c.tk}) << ">\n"
       << "  %wb = Broadcast(%w) {Dims=" << s5 << "}\n"
       << "  %a1 = Add(%a5, %wb)\n"
       << "  %a = Reshape(%a1) {Dims=" << sd << "}\n"
       << "  %u = Softmax(%a) {Axis=3}\n";
    break;
  }
  }
  os << "  %o = MatMul(%u, %v)\n  Save(%o, %y)\n";
  if (weights)
    os << "  Save(%u, %yp)\n";
  os << "}\n";
  return os.str();
}

class AttentionFusion : public ::testing::TestWithParam<Case> {};

// Batch 1 of the fully masked case has every key at -inf: the unfused
// Softmax gives NaN there (exp(-inf - -inf)), and so must the fused
// kernels; batch 0 is finite and compared as usual.
TEST_P(AttentionFusion, MatchesUnfusedInterpreter) {
  const Case &c = GetParam();
  std::string text = attentionGraph(c, /*weights=*/false);
  std::vector<Tensor> inputs = randomInputs(text);
  auto ref = runAttention(text, "Interpreter", getMinimalPipeline(), inputs);
  ASSERT_TRUE(bool(ref)) << llvm::toString(ref.takeError());
  for (const char *backend : {"Interpreter", "CPU"}) {
    unsigned fused = 0;
    auto got = runAttention(text, backend, std::nullopt, inputs,
                            NodeKind::Attention, &fused);
    ASSERT_TRUE(bool(got)) << backend << ": "
                           << llvm::toString(got.takeError());
    EXPECT_EQ(fused, 1u) << backend << ": the pattern was not fused";
    compareAttention((*got)[0], (*ref)[0], c.mask == MaskKind::PaddingInf,
                     backend);
  }
}

// The weights are an output too: the scale and mask still fold into one
// ScaledSoftmax (its row kernel on the CPU), the products stay.
TEST_P(AttentionFusion, ScaledSoftmaxMatchesUnfused) {
  const Case &c = GetParam();
  std::string text = attentionGraph(c, /*weights=*/true);
  std::vector<Tensor> inputs = randomInputs(text);
  auto ref = runAttention(text, "Interpreter", getMinimalPipeline(), inputs);
  ASSERT_TRUE(bool(ref)) << llvm::toString(ref.takeError());
  for (const char *backend : {"Interpreter", "CPU"}) {
    unsigned fused = 0;
    auto got = runAttention(text, backend, std::nullopt, inputs,
                            NodeKind::ScaledSoftmax, &fused);
    ASSERT_TRUE(bool(got)) << backend << ": "
                           << llvm::toString(got.takeError());
    EXPECT_EQ(fused, 1u) << backend << ": the softmax was not fused";
    for (size_t i = 0; i < 2; ++i)
      compareAttention((*got)[i], (*ref)[i], c.mask == MaskKind::PaddingInf,
                       std::string(backend) + " output " + std::to_string(i));
  }
}

const Case kCases[] = {
    {"bert_t37_d64_b2", 2, 3, 37, 37, 64, 64, MaskKind::Padding, true},
    {"single_query", 2, 2, 1, 9, 32, 32, MaskKind::Padding, true},
    {"single_key", 1, 2, 5, 1, 32, 32, MaskKind::None, true},
    {"gpt_causal_d80", 1, 2, 70, 70, 80, 80, MaskKind::Causal, false},
    {"gpt_causal_long", 1, 1, 200, 200, 64, 64, MaskKind::Causal, true},
    {"swin_bias_d32", 2, 2, 49, 49, 32, 32, MaskKind::Bias, true},
    {"swin_shifted_1img", 4, 3, 49, 49, 32, 32, MaskKind::ShiftedWindow, true,
     4},
    {"swin_shifted_2img", 6, 2, 49, 49, 32, 32, MaskKind::ShiftedWindow, true,
     3},
    {"vit_no_mask", 1, 4, 130, 130, 64, 64, MaskKind::None, false},
    // The last block of queries (36 rows) runs with fewer query vectors.
    {"short_last_block", 1, 2, 100, 100, 64, 64, MaskKind::Padding, true},
    {"odd_dims", 2, 1, 19, 23, 20, 36, MaskKind::Padding, true},
    {"fully_masked_row", 2, 2, 17, 17, 16, 16, MaskKind::PaddingInf, true},
};

INSTANTIATE_TEST_SUITE_P(Shapes, AttentionFusion, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<Case> &info) {
                           return std::string(info.param.name);
                         });

} // namespace
