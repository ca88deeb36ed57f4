//===- TargetDescTest.cpp - The target description from explicit targets -===//
//
// Every field is read from LLVM's model of a named CPU (its implied
// features) plus -mattr, so these hold on any build host. The oracle is the
// vendors' ISA documentation for each CPU.
//
//===----------------------------------------------------------------------===//
#include "ember/Backend/TargetDesc.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

#include <string>

using namespace ember;

namespace {

TargetDesc describe(const char *triple, const char *cpu,
                    const char *features = "") {
  auto T = TargetDesc::create(TargetOptions{triple, cpu, features});
  EXPECT_TRUE(bool(T)) << llvm::toString(T.takeError());
  return T ? *T : TargetDesc();
}

constexpr const char *kX86 = "x86_64-unknown-linux-gnu";

TEST(TargetDescTest, X86_64V3IsAVX2With16Registers) {
  TargetDesc T = describe(kX86, "x86-64-v3");
  EXPECT_EQ(T.vectorBits, 256u);
  EXPECT_EQ(T.floatLanes(), 8u);
  EXPECT_EQ(T.vectorRegisters, 16u);
  EXPECT_TRUE(T.has(ISAExt::AVX2));
  EXPECT_TRUE(T.has(ISAExt::FMA));
  EXPECT_FALSE(T.has(ISAExt::AVX512F));
  EXPECT_FALSE(T.has(ISAExt::NEON));
  EXPECT_FALSE(T.isHost);
  // A cross target takes the AVX2-level defaults.
  EXPECT_EQ(T.cacheSource, CacheSource::Default);
  EXPECT_EQ(T.l1dBytes, 32u << 10);
  EXPECT_EQ(T.l2Bytes, 256u << 10);
}

TEST(TargetDescTest, Znver4HasAVX512VNNIAndBF16ButNoAMX) {
  TargetDesc T = describe(kX86, "znver4");
  EXPECT_EQ(T.vectorBits, 512u);
  EXPECT_EQ(T.floatLanes(), 16u);
  EXPECT_EQ(T.vectorRegisters, 32u);
  for (ISAExt e : {ISAExt::AVX512F, ISAExt::AVX512BW, ISAExt::AVX512VL,
                   ISAExt::AVX512VNNI, ISAExt::AVX512BF16})
    EXPECT_TRUE(T.has(e)) << getISAExtName(e).str();
  for (ISAExt e : {ISAExt::AVX512FP16, ISAExt::AMXTile, ISAExt::AMXInt8,
                   ISAExt::AMXBF16, ISAExt::AVXVNNI})
    EXPECT_FALSE(T.has(e)) << getISAExtName(e).str();
  EXPECT_EQ(T.l2Bytes, 1u << 20);
}

TEST(TargetDescTest, SapphireRapidsHasAMXAndFP16) {
  TargetDesc T = describe(kX86, "sapphirerapids");
  EXPECT_EQ(T.floatLanes(), 16u);
  EXPECT_EQ(T.vectorRegisters, 32u);
  for (ISAExt e :
       {ISAExt::AVX512VNNI, ISAExt::AVXVNNI, ISAExt::AVX512BF16,
        ISAExt::AVX512FP16, ISAExt::AMXTile, ISAExt::AMXInt8, ISAExt::AMXBF16})
    EXPECT_TRUE(T.has(e)) << getISAExtName(e).str();
}

TEST(TargetDescTest, MattrRemovesAVX512AndWhatNeedsIt) {
  TargetDesc T = describe(kX86, "sapphirerapids", "-avx512f");
  EXPECT_EQ(T.floatLanes(), 8u);
  EXPECT_EQ(T.vectorRegisters, 16u);
  EXPECT_FALSE(T.has(ISAExt::AVX512VNNI));
  EXPECT_FALSE(T.has(ISAExt::AVX512FP16));
  EXPECT_TRUE(T.has(ISAExt::AVXVNNI));
  EXPECT_TRUE(T.has(ISAExt::AMXTile));
}

TEST(TargetDescTest, CortexA76HasNEONAndDotProd) {
  TargetDesc T = describe("aarch64-unknown-linux-gnu", "cortex-a76");
  EXPECT_TRUE(T.isAArch64());
  EXPECT_EQ(T.vectorBits, 128u);
  EXPECT_EQ(T.floatLanes(), 4u);
  EXPECT_EQ(T.vectorRegisters, 32u);
  EXPECT_TRUE(T.has(ISAExt::NEON));
  EXPECT_TRUE(T.has(ISAExt::DotProd));
  EXPECT_FALSE(T.has(ISAExt::AVX2));
  // cortex-a72 predates the dot-product instructions.
  EXPECT_FALSE(
      describe("aarch64-unknown-linux-gnu", "cortex-a72").has(ISAExt::DotProd));
}

TEST(TargetDescTest, BadOptionsAreErrors) {
  auto expectError = [](TargetOptions o, const std::string &msg) {
    auto T = TargetDesc::create(o);
    ASSERT_FALSE(bool(T));
    std::string got = llvm::toString(T.takeError());
    EXPECT_NE(got.find(msg), std::string::npos) << got;
  };
  expectError({kX86, "pentium9", ""}, "unknown CPU 'pentium9'");
  expectError({"i686-pc-linux-gnu", "", ""}, "is not supported");
  expectError({kX86, "x86-64", "+avx9"}, "-mattr entry '+avx9'");
  expectError({kX86, "x86-64", "avx2"}, "-mattr entry 'avx2'");
  // An AArch64 feature on x86 is unknown there.
  expectError({kX86, "x86-64", "+dotprod"}, "-mattr entry '+dotprod'");
}

TEST(TargetDescTest, PrintsOneFieldPerLine) {
  std::string text;
  llvm::raw_string_ostream os(text);
  describe(kX86, "x86-64-v3").print(os);
  EXPECT_NE(text.find("\nfloat-lanes: 8\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\nvector-registers: 16\n"), std::string::npos);
  EXPECT_NE(text.find("\nextensions: fma avx2\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("avx512"), std::string::npos) << text;
}

/// Writes a fake sysfs cache directory entry.
void writeIndex(const std::string &dir, int i, const char *level,
                const char *type, const char *size, const char *shared) {
  std::string d = dir + "/index" + std::to_string(i);
  ASSERT_FALSE(llvm::sys::fs::create_directories(d));
  auto put = [&](const char *name, const char *text) {
    std::error_code ec;
    llvm::raw_fd_ostream os(d + "/" + name, ec);
    ASSERT_FALSE(ec);
    os << text << "\n";
  };
  put("level", level);
  put("type", type);
  put("size", size);
  put("shared_cpu_list", shared);
}

TEST(TargetDescTest, SysfsCachesArePerCore) {
  llvm::SmallString<128> dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("ember-sysfs", dir));
  std::string d(dir);
  // Two SMT threads per core; L2 per core; L3 shared by 8 cores (16 CPUs).
  writeIndex(d, 0, "1", "Data", "48K", "0,8");
  writeIndex(d, 1, "1", "Instruction", "32K", "0,8");
  writeIndex(d, 2, "2", "Unified", "2048K", "0,8");
  writeIndex(d, 3, "3", "Unified", "32M", "0-15");
  TargetDesc T;
  ASSERT_TRUE(readSysfsCaches(d, T));
  EXPECT_EQ(T.cacheSource, CacheSource::Sysfs);
  EXPECT_EQ(T.l1dBytes, 48u << 10);
  EXPECT_EQ(T.l2Bytes, 2u << 20);
  EXPECT_EQ(T.l3Bytes, 4u << 20);
  // Without L1d/L2 entries the reader declines.
  TargetDesc U;
  EXPECT_FALSE(readSysfsCaches(d + "/index3", U));
  EXPECT_EQ(U.l1dBytes, 0u);
  llvm::sys::fs::remove_directories(d);
}

} // namespace
