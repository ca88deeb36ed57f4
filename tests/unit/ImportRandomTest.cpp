//===- ImportRandomTest.cpp - Random ops drawn at compile time ------------===//
//
// RandomUniform/RandomNormal(Like) and Bernoulli are constants drawn from
// Ember's generator seeded by the node's seed: the same values on every
// compile of a model, other values for another seed, and the law the op
// names (bounds, moments, the probabilities Bernoulli reads at run time).
// The moments are checked on 4096 draws with bounds of at least 6 standard
// errors, so a correct generator fails them with negligible probability;
// the seed is fixed, so each check is deterministic anyway.
//
//===----------------------------------------------------------------------===//
#include "ember/Importer/ONNXImporter.h"

#include "ONNXBuilder.h"
#include "TestUtils.h"

#include <cmath>

using namespace ember;
using namespace ember::test;

namespace {
constexpr int64_t kN = 4096;

/// A model whose output y is \p op over x [kN] (a *Like op or Bernoulli)
/// or with the attribute shape [kN] (no input), seeded \p seed.
std::string randomModel(const std::string &op, float seed, float a = 0,
                        float b = 1) {
  ONNXBuilder m(15);
  bool like = op != "RandomUniform" && op != "RandomNormal";
  if (like)
    m.input("x", {kN});
  auto &n = m.node(
      op, like ? std::vector<std::string>{"x"} : std::vector<std::string>{},
      {"y"}, "draw");
  ONNXBuilder::attrFloat(n, "seed", seed);
  if (op.find("Uniform") != std::string::npos) {
    ONNXBuilder::attrFloat(n, "low", a);
    ONNXBuilder::attrFloat(n, "high", b);
  } else if (op.find("Normal") != std::string::npos) {
    ONNXBuilder::attrFloat(n, "mean", a);
    ONNXBuilder::attrFloat(n, "scale", b);
  }
  if (!like)
    ONNXBuilder::attrInts(n, "shape", {kN});
  m.output("y", {kN});
  return m.serialize();
}

/// The values of y for input x (ignored by ops without one).
std::vector<double> draw(const std::string &model, float x = 0.5f) {
  Module M;
  auto F = importONNXBuffer(model, "m.onnx", M);
  EXPECT_TRUE(bool(F)) << llvm::toString(F.takeError());
  if (!F)
    return {};
  std::vector<Tensor> in;
  if (!M.getInputPlaceholders().empty()) {
    Tensor t(ElemKind::Float32, {kN});
    auto h = t.getHandle<float>();
    std::fill(h.begin(), h.end(), x);
    in.push_back(std::move(t));
  }
  auto out = compileAndRun(M, **F, "CPU", std::move(in));
  std::vector<double> v;
  for (dim_t i = 0; i < out[0].size(); ++i)
    v.push_back(out[0].elementAsDouble(i));
  return v;
}

double mean(const std::vector<double> &v) {
  double s = 0;
  for (double x : v)
    s += x;
  return s / double(v.size());
}

double stddev(const std::vector<double> &v) {
  double m = mean(v), s = 0;
  for (double x : v)
    s += (x - m) * (x - m);
  return std::sqrt(s / double(v.size()));
}
} // namespace

TEST(ImportRandom, UniformDrawsStayInBoundsWithTheirMoments) {
  auto v = draw(randomModel("RandomUniform", 3.f, -2.f, 3.f));
  ASSERT_EQ(v.size(), size_t(kN));
  for (double x : v)
    ASSERT_TRUE(x >= -2 && x < 3) << x;
  // Mean 0.5, standard deviation 5 / sqrt(12) = 1.44 (standard error of
  // the mean 0.023).
  EXPECT_NEAR(mean(v), 0.5, 0.15);
  EXPECT_NEAR(stddev(v), 5 / std::sqrt(12.0), 0.1);
}

TEST(ImportRandom, NormalDrawsHaveTheirMeanAndScale) {
  auto v = draw(randomModel("RandomNormalLike", 1.f, 4.f, 2.f));
  ASSERT_EQ(v.size(), size_t(kN));
  EXPECT_NEAR(mean(v), 4.0, 0.2); // standard error 0.031
  EXPECT_NEAR(stddev(v), 2.0, 0.15);
}

TEST(ImportRandom, TheSeedDecidesTheValues) {
  auto a = draw(randomModel("RandomUniformLike", 7.f));
  EXPECT_EQ(a, draw(randomModel("RandomUniformLike", 7.f)));
  EXPECT_NE(a, draw(randomModel("RandomUniformLike", 8.f)));
}

TEST(ImportRandom, BernoulliFollowsItsRunTimeProbabilities) {
  std::string model = randomModel("Bernoulli", 5.f);
  for (float p : {0.f, 1.f, 0.25f}) {
    auto v = draw(model, p);
    ASSERT_EQ(v.size(), size_t(kN));
    for (double x : v)
      ASSERT_TRUE(x == 0 || x == 1) << x;
    // p = 0.25: standard error 0.0068.
    EXPECT_NEAR(mean(v), p, 0.05) << "p = " << p;
  }
}
