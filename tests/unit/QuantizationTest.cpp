//===- QuantizationTest.cpp - Profiles, schemas and KL calibration --------===//
#include "ember/Quantization/Quantize.h"

#include "llvm/Support/FileSystem.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <random>

using namespace ember;

static uint64_t total(const ValueProfile &v) {
  return std::accumulate(v.histogram.begin(), v.histogram.end(), uint64_t(0));
}

TEST(QuantProfile, RangeGrowsAndRebinsKeepingCounts) {
  std::vector<float> a(1000), b(500);
  for (size_t i = 0; i < a.size(); ++i)
    a[i] = float(i) / 999; // [0, 1]
  for (size_t i = 0; i < b.size(); ++i)
    b[i] = -float(i) / 499; // [-1, 0]
  ValueProfile v;
  v.add(a.data(), a.size());
  EXPECT_EQ(v.min, 0.f);
  EXPECT_EQ(v.max, 1.f);
  ASSERT_EQ(v.histogram.size(), kProfileBins);
  EXPECT_EQ(total(v), 1000u);
  float nan = NAN;
  v.add(&nan, 1); // NaN is skipped
  v.add(b.data(), b.size());
  EXPECT_EQ(v.min, -1.f);
  EXPECT_EQ(v.max, 1.f);
  EXPECT_EQ(total(v), 1500u);
  // The first run's counts moved to the upper half, none lost.
  uint64_t upper = std::accumulate(v.histogram.begin() + kProfileBins / 2,
                                   v.histogram.end(), uint64_t(0));
  EXPECT_GE(upper, 1000u);
  EXPECT_LE(upper, 1001u); // b's 0 lands in the first upper bin
}

TEST(QuantProfile, YamlRoundTrip) {
  QuantProfile p;
  std::vector<float> x = {-2.5f, 0.f, 1.25f, 7.f};
  p.values["a/b"].add(x.data(), x.size());
  p.inputs = 3;
  llvm::SmallString<128> path;
  ASSERT_FALSE(llvm::sys::fs::createTemporaryFile("profile", "yaml", path));
  ASSERT_FALSE(bool(writeProfile(p, path)));
  llvm::Expected<QuantProfile> back = readProfile(path);
  llvm::sys::fs::remove(path);
  ASSERT_TRUE(bool(back)) << llvm::toString(back.takeError());
  EXPECT_EQ(back->inputs, 3u);
  const ValueProfile &v = back->values.at("a/b");
  EXPECT_EQ(v.min, -2.5f);
  EXPECT_EQ(v.max, 7.f);
  EXPECT_EQ(v.histogram, p.values["a/b"].histogram);
}

TEST(QuantSchemas, Formulas) {
  ValueProfile v;
  v.min = -1;
  v.max = 3;
  QuantizationOptions o;
  QuantParams a = activationParams(v, o);
  EXPECT_FLOAT_EQ(a.scale, 4.f / 255);
  EXPECT_EQ(a.zero, -64); // round(-128 + 1 / (4/255)) = round(-64.25)
  EXPECT_EQ(a.kind, ElemKind::Int8);
  o.schema = QuantSchema::Symmetric;
  QuantParams s = activationParams(v, o);
  EXPECT_FLOAT_EQ(s.scale, 3.f / 127);
  EXPECT_EQ(s.zero, 0);
  o.schema = QuantSchema::Power2;
  EXPECT_EQ(activationParams(v, o).scale, 0.03125f); // 3/127 rounded up
  o.schema = QuantSchema::SymmetricUInt8;
  EXPECT_EQ(activationParams(v, o).kind, ElemKind::Int8); // lo < 0
  v.min = 2; // widened to hold zero: [0, 3]
  QuantParams u = activationParams(v, o);
  EXPECT_EQ(u.kind, ElemKind::UInt8);
  EXPECT_FLOAT_EQ(u.scale, 3.f / 255);
  EXPECT_EQ(u.zero, 0);
  EXPECT_FLOAT_EQ(weightScale(0.5f, QuantSchema::Asymmetric), 0.5f / 127);
  EXPECT_EQ(weightScale(0.f, QuantSchema::Symmetric), 1.f);
}

TEST(QuantCalibration, KLClipsARareOutlierAndKeepsAUniformRange) {
  std::mt19937 gen(1);
  std::normal_distribution<float> normal(0.f, 1.f);
  std::vector<float> x(200000);
  for (float &e : x)
    e = std::abs(normal(gen)); // a Relu-like, long-tailed value
  x[0] = 100.f;
  ValueProfile v;
  v.add(x.data(), x.size());
  auto [lo, hi] = calibrateKL(v, 256);
  EXPECT_EQ(lo, v.min); // nothing below is clipped
  EXPECT_GT(hi, 2.f);
  EXPECT_LT(hi, 20.f);
  std::uniform_real_distribution<float> uniform(-1.f, 1.f);
  for (float &e : x)
    e = uniform(gen);
  ValueProfile u;
  u.add(x.data(), x.size());
  auto [ulo, uhi] = calibrateKL(u, 256);
  EXPECT_LT(ulo, -0.9f);
  EXPECT_GT(uhi, 0.9f);
}
