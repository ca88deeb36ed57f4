//===- AttentionTest.cpp - Fused attention against the unfused graph ------===//
//
// Attention graphs as exporters write them (MatMul, scale, mask, Softmax,
// MatMul) run three ways on the same inputs: on the Interpreter with the
// minimal pipeline (the unfused chain, the oracle), on the Interpreter with
// the default pipeline (its Attention kernel) and on the CPU (libjit's
// blocked online-softmax kernel). The default pipeline must have fused the
// pattern into one Attention. Shapes cover key counts that are not a
// multiple of the CPU's key block, a single query, head dims 16/20/32/64/80,
// several query blocks, causal and padding masks, a full-size bias, both K
// layouts and batch 2.
//
// Tolerance: 2e-5 of max|y|. The fused kernels sum the dot products in
// another order and the CPU's exp is within 2 ulp of expf; the results
// are weighted means of V, so the error stays a few ulps of max|V| (a
// wrong block recurrence is off by whole percents).
//
//===----------------------------------------------------------------------===//
#include "OptTestUtils.h"

#include "ember/Graph/Parser.h"

#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <random>
#include <sstream>

using namespace ember;
using namespace ember::test;

namespace {
enum class MaskKind { None, Padding, Causal, Bias, PaddingInf };

struct Case {
  const char *name;
  int64_t b, h, tq, tk, d, dv;
  MaskKind mask;
  bool transB; ///< K [.., Tk, D] through TransB, else K^T [.., D, Tk]
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
  }
  os << "  %o = MatMul(%u, %v)\n  Save(%o, %y)\n";
  if (weights)
    os << "  Save(%u, %yp)\n";
  os << "}\n";
  return os.str();
}

/// Compiles \p text for backend \p backend with \p P (default: the
/// default pipeline), runs it on \p inputs and returns its outputs;
/// \p count receives the number of \p kind nodes in the optimized graph.
llvm::Expected<std::vector<Tensor>>
run(const std::string &text, const char *backend, std::optional<Pipeline> P,
    const std::vector<Tensor> &inputs, NodeKind kind = NodeKind::Attention,
    unsigned *count = nullptr, unsigned *transposes = nullptr) {
  registerAllBackends();
  Module M;
  EMBER_ASSIGN_OR_RETURN(Function * F, parseFunction(text, M));
  EMBER_ASSIGN_OR_RETURN(const Backend *B, getBackend(backend));
  CompileOptions opts;
  opts.pipeline = P;
  opts.passes.verifyEach = true;
  EMBER_ASSIGN_OR_RETURN(CompiledNetwork net, compileFunction(*F, *B, opts));
  if (count) {
    *count = 0;
    for (const auto &n : F->getNodes())
      *count += n->getKind() == kind;
  }
  if (transposes) {
    *transposes = 0;
    for (const auto &n : F->getNodes())
      *transposes += n->getKind() == NodeKind::Transpose;
  }
  Bindings b;
  auto phs = M.getInputPlaceholders();
  for (size_t i = 0; i < phs.size(); ++i)
    b.insert(phs[i], inputs[i].clone());
  b.allocateOutputs(M);
  EMBER_RETURN_IF_ERR(net.function->run(b));
  std::vector<Tensor> outs;
  for (Placeholder *p : M.getOutputPlaceholders())
    outs.push_back(b.get(p)->clone());
  return outs;
}

/// Random inputs in [-2, 2) for the graph \p text.
std::vector<Tensor> randomInputs(const std::string &text) {
  std::mt19937 gen(11);
  std::vector<Tensor> inputs;
  Module M;
  auto F = parseFunction(text, M);
  EXPECT_TRUE(bool(F)) << llvm::toString(F.takeError()) << "\n" << text;
  for (Placeholder *p : M.getInputPlaceholders()) {
    inputs.emplace_back(*p->getType());
    inputs.back().randomize(-2.f, 2.f, gen);
  }
  return inputs;
}

/// Expects \p got to match \p ref within 2e-5 of max|ref|; with
/// \p nanHalf the second half of ref (batch 1 of a fully masked case)
/// must be NaN in both.
void compare(const Tensor &got, const Tensor &ref, bool nanHalf,
             const std::string &what) {
  if (!nanHalf) {
    expectRelClose(got, ref, 2e-5, what);
    return;
  }
  dim_t half = ref.size() / 2;
  double scale = 0, worst = 0;
  for (dim_t i = 0; i < half; ++i) {
    scale = std::max(scale, std::fabs(ref.elementAsDouble(i)));
    worst = std::max(
        worst, std::fabs(got.elementAsDouble(i) - ref.elementAsDouble(i)));
  }
  EXPECT_LE(worst, 2e-5 * scale) << what;
  for (dim_t i = half; i < ref.size(); ++i) {
    ASSERT_TRUE(std::isnan(ref.elementAsDouble(i))) << what << " " << i;
    ASSERT_TRUE(std::isnan(got.elementAsDouble(i))) << what << " " << i;
  }
}

class AttentionFusion : public ::testing::TestWithParam<Case> {};

// Batch 1 of the fully masked case has every key at -inf: the unfused
// Softmax gives NaN there (exp(-inf - -inf)), and so must the fused
// kernels; batch 0 is finite and compared as usual.
TEST_P(AttentionFusion, MatchesUnfusedInterpreter) {
  const Case &c = GetParam();
  std::string text = attentionGraph(c, /*weights=*/false);
  std::vector<Tensor> inputs = randomInputs(text);
  auto ref = run(text, "Interpreter", getMinimalPipeline(), inputs);
  ASSERT_TRUE(bool(ref)) << llvm::toString(ref.takeError());
  for (const char *backend : {"Interpreter", "CPU"}) {
    unsigned fused = 0;
    auto got =
        run(text, backend, std::nullopt, inputs, NodeKind::Attention, &fused);
    ASSERT_TRUE(bool(got)) << backend << ": "
                           << llvm::toString(got.takeError());
    EXPECT_EQ(fused, 1u) << backend << ": the pattern was not fused";
    compare((*got)[0], (*ref)[0], c.mask == MaskKind::PaddingInf, backend);
  }
}

// The weights are an output too: the scale and mask still fold into one
// ScaledSoftmax (its row kernel on the CPU), the products stay.
TEST_P(AttentionFusion, ScaledSoftmaxMatchesUnfused) {
  const Case &c = GetParam();
  std::string text = attentionGraph(c, /*weights=*/true);
  std::vector<Tensor> inputs = randomInputs(text);
  auto ref = run(text, "Interpreter", getMinimalPipeline(), inputs);
  ASSERT_TRUE(bool(ref)) << llvm::toString(ref.takeError());
  for (const char *backend : {"Interpreter", "CPU"}) {
    unsigned fused = 0;
    auto got = run(text, backend, std::nullopt, inputs, NodeKind::ScaledSoftmax,
                   &fused);
    ASSERT_TRUE(bool(got)) << backend << ": "
                           << llvm::toString(got.takeError());
    EXPECT_EQ(fused, 1u) << backend << ": the softmax was not fused";
    for (size_t i = 0; i < 2; ++i)
      compare((*got)[i], (*ref)[i], c.mask == MaskKind::PaddingInf,
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
    {"vit_no_mask", 1, 4, 130, 130, 64, 64, MaskKind::None, false},
    {"odd_dims", 2, 1, 19, 23, 20, 36, MaskKind::Padding, true},
    {"fully_masked_row", 2, 2, 17, 17, 16, 16, MaskKind::PaddingInf, true},
};

INSTANTIATE_TEST_SUITE_P(Shapes, AttentionFusion, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<Case> &info) {
                           return std::string(info.param.name);
                         });

/// Heads as exporters lay them out around attention: Q, K and V come as
/// \p in and reach the products through Transposes \p qPerm, \p kPerm
/// (to K^T [.., D, Tk]) and \p vPerm, the result leaves through
/// \p outPerm. The fusion reads and writes the heads in place: no
/// Transpose may be left, on the Interpreter or the CPU.
struct LayoutCase {
  const char *name;
  std::vector<int64_t> in, qPerm, kPerm, vPerm, outPerm;
  bool causal;
};

std::string permuted(const std::vector<int64_t> &d,
                     const std::vector<int64_t> &p) {
  std::string s;
  for (int64_t i : p)
    s += (s.empty() ? "" : " x ") + std::to_string(d[i]);
  return s;
}

std::string ints(const std::vector<int64_t> &d) {
  std::string s;
  for (int64_t x : d)
    s += (s.empty() ? "" : ", ") + std::to_string(x);
  return "[" + s + "]";
}

std::string layoutGraph(const LayoutCase &c) {
  std::vector<int64_t> q = c.in;
  for (size_t i = 0; i < q.size(); ++i)
    q[i] = c.in[c.qPerm[i]];
  size_t r = q.size();
  int64_t t = q[r - 2];
  std::vector<int64_t> sd = q, od;
  sd[r - 1] = t;
  for (int64_t i : c.outPerm)
    od.push_back(q[i]);
  std::ostringstream os;
  os << "function f {\n";
  for (const char *n : {"xq", "xk", "xv"})
    os << "  %" << n << " = Placeholder float<" << permuted(c.in, {0, 1, 2, 3})
       << "> input\n";
  os << "  %y = Placeholder float<" << permuted(od, {0, 1, 2, 3})
     << "> output\n"
     << "  %q = Transpose(%xq) {Shuffle=" << ints(c.qPerm) << "}\n"
     << "  %kt = Transpose(%xk) {Shuffle=" << ints(c.kPerm) << "}\n"
     << "  %v = Transpose(%xv) {Shuffle=" << ints(c.vPerm) << "}\n"
     << "  %s = MatMul(%q, %kt)\n"
     << "  %c = Splat() {Dims=" << ints(sd) << ", ElemTy=float, Value=0.125}\n"
     << "  %" << (c.causal ? "u" : "a") << " = Mul(%s, %c)\n";
  if (c.causal) {
    std::string v;
    for (int64_t i = 0; i < t; ++i)
      for (int64_t j = 0; j < t; ++j)
        v += std::string(v.empty() ? "" : ", ") + (j > i ? "1" : "0");
    os << "  %m = Constant bool<1 x 1 x " << t << " x " << t << "> [" << v
       << "]\n  %mb = Broadcast(%m) {Dims=" << ints(sd) << "}\n"
       << "  %f = Splat() {Dims=" << ints(sd)
       << ", ElemTy=float, Value=-3.40282347e+38}\n"
       << "  %a = Where(%mb, %f, %u)\n";
  }
  os << "  %p = Softmax(%a) {Axis=" << r - 1 << "}\n"
     << "  %o = MatMul(%p, %v)\n"
     << "  %ot = Transpose(%o) {Shuffle=" << ints(c.outPerm) << "}\n"
     << "  Save(%ot, %y)\n}\n";
  return os.str();
}

class AttentionLayout : public ::testing::TestWithParam<LayoutCase> {};

TEST_P(AttentionLayout, HeadsInPlace) {
  std::string text = layoutGraph(GetParam());
  std::vector<Tensor> inputs = randomInputs(text);
  auto ref = run(text, "Interpreter", getMinimalPipeline(), inputs);
  ASSERT_TRUE(bool(ref)) << llvm::toString(ref.takeError()) << "\n" << text;
  for (const char *backend : {"Interpreter", "CPU"}) {
    unsigned fused = 0, transposes = 0;
    auto got = run(text, backend, std::nullopt, inputs, NodeKind::Attention,
                   &fused, &transposes);
    ASSERT_TRUE(bool(got)) << backend << ": "
                           << llvm::toString(got.takeError());
    EXPECT_EQ(fused, 1u) << backend << ": the pattern was not fused";
    EXPECT_EQ(transposes, 0u) << backend << ": a head Transpose is left";
    compare((*got)[0], (*ref)[0], false, backend);
  }
}

// Rank 4 throughout (the ViT case as [T, B*H, 1, D]: sequence first, the
// batch and heads one axis). BERT and GPT split [B, T, H, D]; Swin's
// windows are [windows, T, H, D] with 49 tokens; batch 2 and odd T.
const LayoutCase kLayouts[] = {
    {"bert",
     {2, 37, 3, 64},
     {0, 2, 1, 3},
     {0, 2, 3, 1},
     {0, 2, 1, 3},
     {0, 2, 1, 3},
     false},
    {"gpt_causal",
     {2, 70, 2, 80},
     {0, 2, 1, 3},
     {0, 2, 3, 1},
     {0, 2, 1, 3},
     {0, 2, 1, 3},
     true},
    {"vit_seq_first",
     {19, 6, 1, 32},
     {1, 2, 0, 3},
     {1, 2, 3, 0},
     {1, 2, 0, 3},
     {2, 0, 1, 3},
     false},
    {"swin_windows",
     {2, 49, 3, 32},
     {0, 2, 1, 3},
     {0, 2, 3, 1},
     {0, 2, 1, 3},
     {0, 2, 1, 3},
     false},
};

INSTANTIATE_TEST_SUITE_P(Layouts, AttentionLayout,
                         ::testing::ValuesIn(kLayouts),
                         [](const ::testing::TestParamInfo<LayoutCase> &info) {
                           return std::string(info.param.name);
                         });

} // namespace
