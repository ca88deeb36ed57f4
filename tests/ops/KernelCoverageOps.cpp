//===- KernelCoverageOps.cpp - Kernel-rendering backends vs the Interpreter
//===//
//
// The op families the shared kernel lowering covers, over every element
// kind they accept, run on each kernel-rendering backend (CPU, and the
// CUDA renderer through host emulation) and compared element by element
// with the Interpreter, the reference. Inputs include the awkward values:
// zero and -1 divisors, NaN and infinities, halves for Round, negative and
// out-of-range indices.
//
//===----------------------------------------------------------------------===//
#include "OpTestUtils.h"

#include "ember/Base/ElemAccess.h"

#include <cmath>
#include <functional>

using namespace ember;
using namespace ember::test;

namespace {
const ElemKind kInts[] = {ElemKind::Int8,   ElemKind::UInt8, ElemKind::Int16,
                          ElemKind::UInt16, ElemKind::Int32, ElemKind::UInt32,
                          ElemKind::Int64,  ElemKind::UInt64};
const ElemKind kFloats[] = {ElemKind::Float32, ElemKind::Float16,
                            ElemKind::Float64};

/// One graph input: its type and how element i is filled.
struct InputSpec {
  ElemKind kind;
  std::vector<dim_t> dims;
  std::function<double(dim_t)> value;
};

/// A deterministic mix of small values; unsigned kinds stay non-negative.
double mixed(ElemKind kind, dim_t i, int salt) {
  static const double ints[] = {3, -1, 0, 7, -8, 12, 1, -20, 5, 2, -3, 9};
  static const double floats[] = {0.5,  -1.25, 2.5,     0,    -0.5, 1.5,
                                  -2.5, 3.75,  -0.0625, 1e-3, 7.25, -4};
  double v = isFloatKind(kind) ? floats[(i * 5 + salt) % 12]
                               : ints[(i * 7 + salt) % 12];
  if (kind == ElemKind::UInt8 || kind == ElemKind::UInt16 ||
      kind == ElemKind::UInt32 || kind == ElemKind::UInt64)
    v = std::fabs(v);
  return v;
}

InputSpec in(ElemKind kind, std::vector<dim_t> dims, int salt = 0) {
  return {kind, std::move(dims),
          [kind, salt](dim_t i) { return mixed(kind, i, salt); }};
}

using Builder =
    std::function<void(Function &F, llvm::ArrayRef<Placeholder *> inputs,
                       std::function<void(NodeValue)> save)>;

class KernelCoverageTest : public ::testing::TestWithParam<std::string> {
protected:
  /// Builds the graph for \p backend, runs it on \p specs' inputs.
  std::vector<Tensor> runOn(llvm::StringRef backend,
                            const std::vector<InputSpec> &specs,
                            const Builder &build) {
    Module M;
    Function *F = M.createFunction("op");
    std::vector<Placeholder *> phs;
    std::vector<Tensor> inputs;
    for (size_t n = 0; n < specs.size(); ++n) {
      Type ty(specs[n].kind, specs[n].dims);
      phs.push_back(M.createPlaceholder("in" + std::to_string(n), ty, false));
      Tensor t(ty);
      for (dim_t i = 0; i < t.size(); ++i)
        storeElement(t.data(), ty.getElemKind(), i, specs[n].value(i));
      inputs.push_back(std::move(t));
    }
    unsigned outs = 0;
    build(*F, phs, [&](NodeValue v) {
      auto *p = M.createPlaceholder("out" + std::to_string(outs++),
                                    *v.getType(), true);
      F->createSave("save", v, p);
    });
    return compileAndRun(M, *F, backend, std::move(inputs));
  }

  /// Runs on the backend under test and on the Interpreter; every output
  /// must match (integers and Bool exactly, floats closely, NaN as NaN).
  void check(const std::vector<InputSpec> &specs, const Builder &build,
             const std::string &what) {
    SCOPED_TRACE(what);
    std::vector<Tensor> want = runOn("Interpreter", specs, build);
    std::vector<Tensor> got = runOn(GetParam(), specs, build);
    ASSERT_EQ(got.size(), want.size());
    for (size_t o = 0; o < got.size(); ++o) {
      ASSERT_EQ(got[o].getType(), want[o].getType());
      ElemKind k = got[o].getElemKind();
      // The CPU's inline exp, log, tanh, erf and sigmoid are within 3 ulp
      // of libm (docs/Math.md: 1.8e-7 relative) and GELU adds at most
      // 2^-24 |x| absolute, well inside 1e-6 + 1e-5 |want|.
      double rel = k == ElemKind::Float16 ? 2e-3 : 1e-5;
      for (dim_t i = 0; i < got[o].size(); ++i) {
        if (!isFloatKind(k)) {
          EXPECT_EQ(loadElementInt(got[o].data(), k, i),
                    loadElementInt(want[o].data(), k, i))
              << "output " << o << " element " << i;
          continue;
        }
        double g = loadElement(got[o].data(), k, i);
        double w = loadElement(want[o].data(), k, i);
        if (std::isnan(w) || std::isinf(w)) {
          EXPECT_TRUE(std::isnan(w) ? std::isnan(g) : g == w)
              << "output " << o << " element " << i << ": " << g << " vs " << w;
          continue;
        }
        EXPECT_NEAR(g, w, 1e-6 + rel * std::fabs(w))
            << "output " << o << " element " << i;
      }
    }
  }
};
} // namespace

TEST_P(KernelCoverageTest, IntegerArithmeticEveryKind) {
  for (ElemKind k : kInts)
    check(
        {in(k, {3, 8}), in(k, {3, 8}, 5)},
        [](Function &F, auto x, auto save) {
          save(F.createAdd("add", x[0], x[1]));
          save(F.createSub("sub", x[0], x[1]));
          save(F.createMul("mul", x[0], x[1]));
          save(F.createDiv("div", x[0], x[1]));
          save(F.createMax("max", x[0], x[1]));
          save(F.createMin("min", x[0], x[1]));
          save(F.createMod("mod", x[0], x[1], 0));
          save(F.createMod("fmod", x[0], x[1], 1));
          save(F.createSign("sign", x[0]));
        },
        elemKindName(k).str());
}

TEST_P(KernelCoverageTest, FloatArithmeticAndMathEveryKind) {
  for (ElemKind k : kFloats)
    check(
        {in(k, {2, 12}), in(k, {2, 12}, 3)},
        [](Function &F, auto x, auto save) {
          save(F.createAdd("add", x[0], x[1]));
          save(F.createDiv("div", x[0], x[1]));
          save(F.createMax("max", x[0], x[1]));
          save(F.createMod("fmod", x[0], x[1], 1));
          save(F.createPow("pow", F.createAbs("abs", x[0]), x[1]));
          save(F.createFloor("floor", x[0]));
          save(F.createCeil("ceil", x[0]));
          save(F.createRound("round", x[0]));
          save(F.createErf("erf", x[0]));
          save(F.createSin("sin", x[0]));
          save(F.createCos("cos", x[0]));
          save(F.createTan("tan", x[0]));
          save(F.createAtan("atan", x[0]));
          save(F.createSinh("sinh", x[0]));
          save(F.createCosh("cosh", x[0]));
          save(F.createAsinh("asinh", x[0]));
          save(F.createReciprocal("recip", x[0]));
          save(F.createSoftplus("softplus", x[0]));
          save(F.createSoftsign("softsign", x[0]));
          save(F.createSign("sign", x[0]));
          save(F.createTanh("tanh", x[0]));
          save(F.createSigmoid("sigmoid", x[0]));
          save(F.createGelu("gelu", x[0], 0));
          save(F.createGelu("gelutanh", x[0], 1));
          save(F.createLog("log", F.createAbs("abs", x[0])));
          save(F.createClip("clip", x[0], -1, 2));
        },
        elemKindName(k).str());
}

TEST_P(KernelCoverageTest, InverseTrigInTheirDomains) {
  InputSpec unit{ElemKind::Float32, {6}, [](dim_t i) { return i / 6.0 - 0.4; }};
  InputSpec big{ElemKind::Float32, {6}, [](dim_t i) { return 1.0 + i; }};
  check(
      {unit, big},
      [](Function &F, auto x, auto save) {
        save(F.createAsin("asin", x[0]));
        save(F.createAcos("acos", x[0]));
        save(F.createAtanh("atanh", x[0]));
        save(F.createAcosh("acosh", x[1]));
      },
      "inverse trig");
}

TEST_P(KernelCoverageTest, ComparisonsLogicAndWhere) {
  for (ElemKind k : {ElemKind::Float32, ElemKind::Float16, ElemKind::Int8,
                     ElemKind::UInt32, ElemKind::Int64})
    check(
        {in(k, {24}), in(k, {24}, 1)},
        [](Function &F, auto x, auto save) {
          NodeValue eq = F.createEqual("eq", x[0], x[1]);
          NodeValue gt = F.createGreater("gt", x[0], x[1]);
          save(eq);
          save(gt);
          save(F.createLess("lt", x[0], x[1]));
          save(F.createGreaterOrEqual("ge", x[0], x[1]));
          save(F.createLessOrEqual("le", x[0], x[1]));
          save(F.createAnd("and", eq, gt));
          save(F.createOr("or", eq, gt));
          save(F.createXor("xor", eq, F.createNot("not", gt)));
          save(F.createWhere("where", gt, x[0], x[1]));
        },
        elemKindName(k).str());
}

TEST_P(KernelCoverageTest, NaNAndInfinityClassification) {
  const double inf = INFINITY;
  const double vals[] = {1, NAN, inf, -inf, 0, -2.5};
  for (ElemKind k : kFloats)
    check(
        {{k, {6}, [&](dim_t i) { return vals[i]; }}},
        [](Function &F, auto x, auto save) {
          save(F.createIsNaN("nan", x[0]));
          save(F.createIsInf("inf", x[0], 1, 1));
          save(F.createIsInf("pos", x[0], 1, 0));
          save(F.createIsInf("neg", x[0], 0, 1));
        },
        elemKindName(k).str());
}

TEST_P(KernelCoverageTest, CastsBetweenEveryKind) {
  const double vals[] = {0,   1,    -1,  2.75,  -2.75, 127.5, 300,      -129,
                         1e9, -1e9, NAN, 65504, 1e-8,  70000, INFINITY, -0.0};
  // Appended one by one: gcc 12 warns falsely (-Warray-bounds) about the
  // memmove of a range insert here.
  std::vector<ElemKind> kinds(std::begin(kInts), std::end(kInts));
  for (ElemKind k : kFloats)
    kinds.push_back(k);
  kinds.push_back(ElemKind::Bool);
  for (ElemKind from : kinds)
    check(
        {{from, {16}, [&](dim_t i) { return vals[i]; }}},
        [&](Function &F, auto x, auto save) {
          for (ElemKind to : kinds)
            save(F.createCast("cast", x[0], to));
        },
        elemKindName(from).str());
}

// Float32 and Float64 to integers in runs of 67 (the CPU's vector loop and
// its tail): every lane saturates through Int64 as a scalar cast does, at
// and past +-2^63 (2^63 - 2^39 is the largest Float32 below it), past the
// Int32 and UInt32 ranges, at NaN and at the infinities.
TEST_P(KernelCoverageTest, FloatCastsSaturateInVectors) {
  const double vals[] = {9223372036854775808.0,
                         -9223372036854775808.0,
                         9223371487098961920.0,
                         -9223371487098961920.0,
                         1e30,
                         -1e30,
                         3e9,
                         -3e9,
                         2147483648.0,
                         4294967551.0,
                         NAN,
                         INFINITY,
                         -INFINITY,
                         255.5,
                         -128.5,
                         65535.75,
                         1e19,
                         -1e19,
                         0.5,
                         -0.0};
  constexpr dim_t n = sizeof(vals) / sizeof(vals[0]);
  for (ElemKind from : {ElemKind::Float32, ElemKind::Float64})
    check(
        {{from, {67}, [&](dim_t i) { return vals[(i * 7) % n]; }}},
        [&](Function &F, auto x, auto save) {
          for (ElemKind to : kInts)
            save(F.createCast("cast", x[0], to));
        },
        elemKindName(from).str());
}

TEST_P(KernelCoverageTest, UnsignedBitShifts) {
  for (ElemKind k :
       {ElemKind::UInt8, ElemKind::UInt16, ElemKind::UInt32, ElemKind::UInt64})
    check(
        {{k, {8}, [](dim_t i) { return 200 + i; }},
         {k, {8}, [](dim_t i) { return i * 9; }}},
        [](Function &F, auto x, auto save) {
          save(F.createBitShift("left", x[0], x[1], 1));
          save(F.createBitShift("right", x[0], x[1], 0));
        },
        elemKindName(k).str());
}

TEST_P(KernelCoverageTest, ReductionsArgReductionsAndCumSum) {
  for (ElemKind k : {ElemKind::Float32, ElemKind::Float16, ElemKind::Float64,
                     ElemKind::Int32, ElemKind::UInt8, ElemKind::Int64})
    check(
        {in(k, {3, 4, 5})},
        [](Function &F, auto x, auto save) {
          save(F.createReduceSum("sum", x[0], {1}, 1));
          save(F.createReduceMax("max", x[0], {0, 2}, 0));
          save(F.createReduceMin("min", x[0], {2}, 0));
          save(F.createReduceProd("prod", x[0], {0}, 1));
          save(F.createReduceMean("mean", x[0], {1, 2}, 0));
          save(F.createArgMax("amax", x[0], 1, 1, 0));
          save(F.createArgMax("amaxl", x[0], 2, 0, 1));
          save(F.createArgMin("amin", x[0], 0, 0, 0));
          save(F.createArgMin("aminl", x[0], 1, 1, 1));
          save(F.createCumSum("cs", x[0], 1, 0, 0));
          save(F.createCumSum("csx", x[0], 2, 1, 0));
          save(F.createCumSum("csr", x[0], 0, 0, 1));
          save(F.createCumSum("csxr", x[0], 2, 1, 1));
        },
        elemKindName(k).str());
}

// Float sums and means over trailing axes take the CPU backend's vector
// kernel (Reduce.inc): runs of 99 (whole blocks of 64, vectors of 16 and a
// scalar tail), 20, 297; a run of 11 and non-trailing axes keep the generic
// kernel. The values are multiples of 1/16 (and 1e-3), so any summation
// order agrees within the stated tolerance.
TEST_P(KernelCoverageTest, SumsAndMeansOverTrailingAxes) {
  check(
      {in(ElemKind::Float32, {2, 3, 9, 11})},
      [](Function &F, auto x, auto save) {
        save(F.createReduceMean("plane_mean", x[0], {2, 3}, 1));
        save(F.createReduceMean("plane_mean_flat", x[0], {2, 3}, 0));
        save(F.createReduceSum("all", x[0], {1, 2, 3}, 0));
        save(F.createReduceSum("short_run", x[0], {3}, 1));
        save(F.createReduceMean("not_trailing", x[0], {1, 3}, 0));
      },
      "run99");
  check(
      {in(ElemKind::Float32, {3, 4, 5}, 1)},
      [](Function &F, auto x, auto save) {
        save(F.createReduceSum("sum20", x[0], {1, 2}, 0));
      },
      "run20");
}

// Float minima and maxima over trailing axes take the CPU backend's
// vector kernel too (Reduce.inc, ember_minmax_f32): runs of 99 with each
// row's largest value last (the scalar tail) and its smallest in the 16-wide
// part, a NaN in one row (the result is NaN, as the Interpreter's; the
// generic kernel's too), an infinity in another, runs of 297 and 594; a run of
// 11 keeps the generic kernel.
TEST_P(KernelCoverageTest, MinimaAndMaximaOverTrailingAxes) {
  auto value = [](dim_t i) {
    dim_t row = i / 99, at = i % 99;
    if (at == 98)
      return 50.0 + double(row);
    if (at == 70)
      return -60.0 - double(row);
    if (at == 10 && row == 2)
      return double(NAN);
    if (at == 3 && row == 4)
      return double(INFINITY);
    return mixed(ElemKind::Float32, i, 0);
  };
  check(
      {{ElemKind::Float32, {2, 3, 9, 11}, value}},
      [](Function &F, auto x, auto save) {
        save(F.createReduceMax("max99", x[0], {2, 3}, 1));
        save(F.createReduceMin("min99", x[0], {2, 3}, 0));
        save(F.createReduceMax("max297", x[0], {1, 2, 3}, 0));
        save(F.createReduceMin("min297", x[0], {1, 2, 3}, 0));
        save(F.createReduceMin("min594", x[0], {0, 1, 2, 3}, 0));
        save(F.createReduceMax("max11", x[0], {3}, 1));
      },
      "minmax");
}

TEST_P(KernelCoverageTest, GathersWithNegativeAndOutOfRangeIndices) {
  const double idx[] = {0, -1, 2, 5, -4, 1, 3, -3};
  for (ElemKind ik : {ElemKind::Int64, ElemKind::Int32})
    check(
        {in(ElemKind::Float32, {4, 3, 2}),
         {ik, {2, 2}, [&](dim_t i) { return idx[i]; }},
         {ik, {4, 3, 2}, [&](dim_t i) { return idx[i % 8]; }},
         {ik, {3, 2}, [&](dim_t i) { return idx[(i + 1) % 8]; }}},
        [](Function &F, auto x, auto save) {
          save(F.createGather("g0", x[0], x[1], 0));
          save(F.createGather("g1", x[0], x[1], 1));
          save(F.createGatherElements("ge", x[0], x[2], 1));
          save(F.createGatherND("gnd", x[0], x[3], 0));
        },
        elemKindName(ik).str());
}

TEST_P(KernelCoverageTest, ScattersWithReductions) {
  const double idx[] = {1, -1, 0, 1, 7, 2};
  for (int64_t r = 0; r <= 4; ++r)
    check(
        {in(ElemKind::Float32, {3, 4}),
         {ElemKind::Int64, {3, 2}, [&](dim_t i) { return idx[i]; }},
         in(ElemKind::Float32, {3, 2}, 4),
         {ElemKind::Int64, {2, 1}, [&](dim_t i) { return idx[i + 2]; }},
         in(ElemKind::Float32, {2, 4}, 7)},
        [r](Function &F, auto x, auto save) {
          save(F.createScatterElements("se", x[0], x[1], x[2], 1, r));
          save(F.createScatterND("snd", x[0], x[3], x[4], r));
        },
        "reduction " + std::to_string(r));
}

TEST_P(KernelCoverageTest, TileAndPadModes) {
  for (ElemKind k : {ElemKind::Float32, ElemKind::Int64, ElemKind::Float16})
    check(
        {in(k, {2, 3})},
        [](Function &F, auto x, auto save) {
          save(F.createTile("tile", x[0], {2, 3}));
          save(F.createPad("const", x[0], {1, 2, 0, 1}, 0, 1.5f));
          save(F.createPad("reflect", x[0], {1, 2, 1, 2}, 1, 0));
          save(F.createPad("edge", x[0], {1, 3, 2, 1}, 2, 0));
        },
        elemKindName(k).str());
}

TEST_P(KernelCoverageTest, PoolingInOneTwoAndThreeDims) {
  for (ElemKind k : {ElemKind::Float32, ElemKind::Float64, ElemKind::UInt8})
    check(
        {in(k, {1, 2, 9}), in(k, {1, 2, 5, 6}), in(k, {1, 1, 4, 5, 4})},
        [k](Function &F, auto x, auto save) {
          save(F.createPoolND("max1", x[0], {3}, {2}, {1, 1}, {1}, 0, 0));
          save(F.createPoolND("max2", x[1], {2, 3}, {1, 2}, {0, 1, 1, 1},
                              {2, 1}, 0, 0));
          save(F.createPoolND("max3", x[2], {2, 2, 2}, {1, 2, 1},
                              {0, 0, 0, 1, 1, 1}, {1, 1, 1}, 0, 0));
          if (!isFloatKind(k))
            return;
          save(F.createPoolND("avg1", x[0], {3}, {2}, {1, 1}, {1}, 1, 0));
          save(F.createPoolND("avgpad", x[1], {3, 3}, {2, 2}, {1, 1, 1, 1},
                              {1, 1}, 1, 1));
          save(F.createPoolND("avg3", x[2], {2, 2, 2}, {1, 2, 1},
                              {1, 0, 0, 0, 1, 1}, {1, 1, 1}, 1, 0));
        },
        elemKindName(k).str());
}

TEST_P(KernelCoverageTest, ResizeModes) {
  for (ElemKind k : {ElemKind::Float32, ElemKind::Float64})
    check(
        {in(k, {1, 2, 4, 5})},
        [](Function &F, auto x, auto save) {
          std::vector<float> up = {1, 1, 2, 1.5f}, down = {1, 1, 0.5f, 0.6f};
          std::vector<int64_t> upDims = {1, 2, 8, 7}, downDims = {1, 2, 2, 3};
          for (int64_t nm = 0; nm < 4; ++nm) // nearest modes, asymmetric
            save(F.createResize("nearest", x[0], upDims, up, 0, 1, nm, -0.75f,
                                0, 0));
          // One dim resized, the other kept (one tap along it).
          save(F.createResize("linear_w", x[0], {1, 2, 4, 7}, {1, 1, 1, 1.5f},
                              1, 0, 0, -0.75f, 0, 0));
          save(F.createResize("cubic_h", x[0], {1, 2, 9, 5}, {1, 1, 2.25f, 1},
                              2, 2, 0, -0.75f, 1, 0));
          for (int64_t cm = 0; cm < 4; ++cm) { // coordinate modes
            save(F.createResize("linear", x[0], upDims, up, 1, cm, 0, -0.75f, 0,
                                0));
            save(F.createResize("cubic", x[0], downDims, down, 2, cm, 0, -0.5f,
                                cm == 0, 0));
          }
        },
        elemKindName(k).str());
}

TEST_P(KernelCoverageTest, IntegerPowAndTopK) {
  for (ElemKind k : {ElemKind::Int32, ElemKind::Int64, ElemKind::Int8})
    check(
        {{k, {4, 6}, [](dim_t i) { return double(i % 7) - 3; }},
         {k, {4, 6}, [](dim_t i) { return double(i % 8) - 2; }}},
        [](Function &F, auto x, auto save) {
          save(F.createPow("pow", x[0], x[1]));
        },
        "pow " + elemKindName(k).str());
  const double vals[] = {3, 1, 3, -2, 5, 1, 0, 5, 2, 2, -7, 4};
  for (ElemKind k : {ElemKind::Float32, ElemKind::Int64, ElemKind::Float16})
    check(
        {{k, {2, 6}, [&](dim_t i) { return vals[i]; }}},
        [](Function &F, auto x, auto save) {
          auto *a = F.createTopK("top", x[0], 3, 1, 1);
          save(a->getNthResult(0));
          save(a->getNthResult(1));
          auto *b = F.createTopK("bottom", x[0], 2, 0, 0);
          save(b->getNthResult(0));
          save(b->getNthResult(1));
        },
        "topk " + elemKindName(k).str());
}

// The CPU's last-axis float32 TopK is a heap per row (TopK.inc): long rows
// with many ties (ties go to the lower index), K from 1 to the whole row,
// both orders, against the Interpreter's stable sort.
TEST_P(KernelCoverageTest, TopKLongRowsWithTies) {
  check(
      {{ElemKind::Float32,
        {3, 1000},
        [](dim_t i) {
          return double((i * 7919) % 61) - 30 + (i % 1000 == 999 ? 100 : 0);
        }}},
      [](Function &F, auto x, auto save) {
        for (int64_t k : {1, 17, 500, 1000})
          for (int64_t largest : {0, 1}) {
            auto *t = F.createTopK("top", x[0], k, 1, largest);
            save(t->getNthResult(0));
            save(t->getNthResult(1));
          }
      },
      "topk long rows");
}

TEST_P(KernelCoverageTest, ConvTransposeStridedGroupedDilated) {
  // x [1, 4, 3, 4], w [4, 3, 2, 3] (group 2: M = 6), bias [6].
  check(
      {in(ElemKind::Float32, {1, 4, 3, 4}),
       in(ElemKind::Float32, {4, 3, 2, 3}, 3), in(ElemKind::Float32, {6}, 6),
       in(ElemKind::Float32, {1, 2, 5}), in(ElemKind::Float32, {2, 1, 3}, 1),
       in(ElemKind::Float32, {1}, 2)},
      [](Function &F, auto x, auto save) {
        // H: (3-1)*2 - 1 - 0 + 1*(2-1) + 1 = 5; W: (4-1)*1 - 1 - 1 + 2*2 + 1 =
        // 6
        save(F.createConvTranspose("ct", x[0], x[1], x[2], {2, 1}, {1, 1, 0, 1},
                                   {1, 2}, 2, {1, 6, 5, 6}));
        // 1-D, stride 3: (5-1)*3 + 3 = 15
        save(F.createConvTranspose("ct1", x[3], x[4], x[5], {3}, {0, 0}, {1}, 1,
                                   {1, 1, 15}));
      },
      "conv transpose");
}

INSTANTIATE_TEST_SUITE_P(Backends, KernelCoverageTest, ::testing::ValuesIn([] {
                           std::vector<std::string> b = opTestBackends();
                           b.erase(b.begin()); // the Interpreter is the oracle
                           return b;
                         }()));
