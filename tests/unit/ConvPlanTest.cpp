//===- ConvPlanTest.cpp - The CPU backend's convolution plans -------------===//
//
// -print-conv-plans shows the path the CPU lowering takes for each
// convolution; these cases pin the rules that do not depend on measured
// weights (depthwise, Winograd's eligibility, pointwise in place, forced
// paths) on an AVX-512 and an AVX2 target, and the error of a backend
// without plans.
//
//===----------------------------------------------------------------------===//
#include "ember/Backend/Backend.h"
#include "ember/IR/IRParser.h"

#include "TestUtils.h"

#include "gtest/gtest.h"

using namespace ember;

namespace {

/// Four convolutions: depthwise 3x3, dense 3x3 stride 1 (Winograd-eligible
/// with its constant filter), pointwise 1x1, and dense 3x3 whose filter is
/// an input (never Winograd: its transform is made at compile time).
constexpr const char *kConvs = R"(function plans
declare {
  %x = weight float<1 x 64 x 56 x 56> mutable input
  %wr = weight float<64 x 64 x 3 x 3> mutable input
  %y = weight float<1 x 64 x 56 x 56> mutable output
  %wd = weight float<64 x 1 x 3 x 3> const
  %w3 = weight float<64 x 64 x 3 x 3> const
  %w1 = weight float<64 x 64 x 1 x 1> const
  %b = weight float<64> const
}
code {
  %a.res = allocactivation float<1 x 64 x 56 x 56>
  %dw = conv @out %a.res, @in %x, @in %wd, @in %b {Strides=[1, 1], Pads=[1, 1, 1, 1], Dilations=[1, 1], Group=64, FusedActivation=0, FusedAlpha=0, FusedBeta=0}
  %b.res = allocactivation float<1 x 64 x 56 x 56>
  %dense = conv @out %b.res, @in %a.res, @in %w3, @in %b {Strides=[1, 1], Pads=[1, 1, 1, 1], Dilations=[1, 1], Group=1, FusedActivation=0, FusedAlpha=0, FusedBeta=0}
  deallocactivation @out %a.res
  %c.res = allocactivation float<1 x 64 x 56 x 56>
  %point = conv @out %c.res, @in %b.res, @in %w1, @in %b {Strides=[1, 1], Pads=[0, 0, 0, 0], Dilations=[1, 1], Group=1, FusedActivation=0, FusedAlpha=0, FusedBeta=0}
  deallocactivation @out %b.res
  %rt = conv @out %y, @in %c.res, @in %wr, @in %b {Strides=[1, 1], Pads=[1, 1, 1, 1], Dilations=[1, 1], Group=1, FusedActivation=0, FusedAlpha=0, FusedBeta=0}
  deallocactivation @out %c.res
}
)";

/// Grouped convolutions: ResNeXt's first stage (32 groups of 4 channels),
/// its last (32 groups of 32), and two groups of 512 channels on rows of
/// 224 (whose band of input rows exceeds the row-direct kernel's buffer).
constexpr const char *kGrouped = R"(function grouped
declare {
  %x = weight float<1 x 128 x 56 x 56> mutable input
  %x4 = weight float<1 x 1024 x 7 x 7> mutable input
  %xw = weight float<1 x 1024 x 8 x 224> mutable input
  %y = weight float<1 x 128 x 56 x 56> mutable output
  %y4 = weight float<1 x 1024 x 7 x 7> mutable output
  %yw = weight float<1 x 1024 x 8 x 224> mutable output
  %w = weight float<128 x 4 x 3 x 3> const
  %w4 = weight float<1024 x 32 x 3 x 3> const
  %ww = weight float<1024 x 512 x 3 x 3> const
  %b = weight float<128> const
  %b4 = weight float<1024> const
}
code {
  %narrow = conv @out %y, @in %x, @in %w, @in %b {Strides=[1, 1], Pads=[1, 1, 1, 1], Dilations=[1, 1], Group=32, FusedActivation=0, FusedAlpha=0, FusedBeta=0}
  %wide = conv @out %y4, @in %x4, @in %w4, @in %b4 {Strides=[1, 1], Pads=[1, 1, 1, 1], Dilations=[1, 1], Group=32, FusedActivation=0, FusedAlpha=0, FusedBeta=0}
  %huge = conv @out %yw, @in %xw, @in %ww, @in %b4 {Strides=[1, 1], Pads=[1, 1, 1, 1], Dilations=[1, 1], Group=2, FusedActivation=0, FusedAlpha=0, FusedBeta=0}
}
)";

/// The plan lines of \p ir (kConvs by default) for \p backend, keyed by
/// conv name.
std::map<std::string, std::string> plans(llvm::StringRef backend,
                                         const CodegenOptions &opts,
                                         std::string *error = nullptr,
                                         const char *ir = kConvs) {
  registerAllBackends();
  auto parsed = parseIR(ir, "plans.ir");
  EXPECT_TRUE(bool(parsed)) << llvm::toString(parsed.takeError());
  if (!parsed)
    return {};
  auto B = getBackend(backend);
  EXPECT_TRUE(bool(B)) << llvm::toString(B.takeError());
  if (!B)
    return {};
  std::string text;
  llvm::raw_string_ostream os(text);
  if (llvm::Error err = (*B)->printConvPlans(*parsed->function, opts, os)) {
    std::string msg = llvm::toString(std::move(err));
    if (error)
      *error = msg;
    else
      ADD_FAILURE() << msg;
    return {};
  }
  std::map<std::string, std::string> byName;
  llvm::SmallVector<llvm::StringRef> lines;
  llvm::StringRef(os.str()).split(lines, '\n', -1, false);
  for (llvm::StringRef line : lines) {
    auto name = line.drop_front(llvm::StringRef("conv '").size()).split('\'');
    byName[name.first.str()] = line.str();
  }
  return byName;
}

CodegenOptions onCPU(const char *cpu) {
  CodegenOptions o;
  o.target = TargetOptions{"x86_64-unknown-linux-gnu", cpu, ""};
  return o;
}

bool has(const std::string &line, const char *part) {
  return line.find(part) != std::string::npos;
}

} // namespace

TEST(ConvPlan, RulesWithoutMeasuredWeights) {
  for (const char *cpu : {"sapphirerapids", "znver4", "haswell"}) {
    SCOPED_TRACE(cpu);
    auto p = plans("CPU", onCPU(cpu));
    ASSERT_EQ(p.size(), 4u);
    EXPECT_TRUE(has(p["dw"], ": depthwise: ")) << p["dw"];
    EXPECT_TRUE(has(p["dense"], ": winograd F(")) << p["dense"];
    EXPECT_TRUE(has(p["point"], ": pixel-panels (in place): ") ||
                has(p["point"], ": channel-vectors: "))
        << p["point"];
    EXPECT_TRUE(has(p["point"], " 0 MB copied")) << p["point"];
    EXPECT_FALSE(has(p["rt"], "winograd")) << p["rt"];
    // The shapes and the work are printed: 64*64*9*56*56 MACs.
    EXPECT_TRUE(has(p["dense"], "[1, 64, 56, 56] * [64, 64, 3, 3] stride 1x1 "
                                "group 1 -> [1, 64, 56, 56]: "))
        << p["dense"];
    EXPECT_TRUE(has(p["rt"], ": 116 M MACs")) << p["rt"];
  }
}

TEST(ConvPlan, VectorWorkFollowsTheTargetsLanes) {
  // The depthwise plan issues one multiply-add per lane: 16 lanes with
  // AVX-512, 8 with AVX2 — twice the vector work.
  auto wide = plans("CPU", onCPU("sapphirerapids"));
  auto narrow = plans("CPU", onCPU("haswell"));
  EXPECT_TRUE(has(wide["dw"], "1.81 M MACs as 0.113 M vector MACs"))
      << wide["dw"];
  EXPECT_TRUE(has(narrow["dw"], "1.81 M MACs as 0.226 M vector MACs"))
      << narrow["dw"];
}

TEST(ConvPlan, ForcedPathsAreTakenAndSaidSo) {
  CodegenOptions o = onCPU("sapphirerapids");
  o.cpu.winograd = cpu::WinogradMode::Off;
  o.cpu.convPath = cpu::ConvPath::Panels;
  auto p = plans("CPU", o);
  EXPECT_TRUE(has(p["dense"], ": pixel-panels (im2col): ")) << p["dense"];
  EXPECT_TRUE(has(p["dense"], "forced by -cpu-conv-path=panels")) << p["dense"];
  // im2col copies K x pixels floats: 576 * 3136 * 4 bytes.
  EXPECT_TRUE(has(p["dense"], "7.23 MB copied")) << p["dense"];
  EXPECT_TRUE(has(p["dw"], ": depthwise: ")) << p["dw"];

  o.cpu.convPath = cpu::ConvPath::Channels;
  p = plans("CPU", o);
  EXPECT_TRUE(has(p["dense"], ": channel-vectors: ")) << p["dense"];
  EXPECT_TRUE(has(p["point"], "forced by -cpu-conv-path=channels"))
      << p["point"];

  o.cpu.winograd = cpu::WinogradMode::F2;
  p = plans("CPU", o);
  EXPECT_TRUE(has(p["dense"], ": winograd F(2x2,3x3): ")) << p["dense"];
  EXPECT_TRUE(has(p["dense"], "forced by -cpu-winograd")) << p["dense"];
  EXPECT_FALSE(has(p["rt"], "winograd")) << p["rt"];
}

TEST(ConvPlan, GroupsOfFewChannelsRunAlongRows) {
  for (const char *cpu : {"sapphirerapids", "znver4", "haswell"}) {
    SCOPED_TRACE(cpu);
    CodegenOptions o = onCPU(cpu);
    auto p = plans("CPU", o, nullptr, kGrouped);
    ASSERT_EQ(p.size(), 3u);
    // 4 channels per group fill neither channel vectors nor 6-channel
    // blocks; rows of 56 fill 7/8 of their vectors.
    EXPECT_TRUE(has(p["narrow"], ": pixel-rows: ")) << p["narrow"];
    EXPECT_TRUE(has(p["narrow"], "auto: a grouped convolution")) << p["narrow"];
    // 32 channels per group fill channel vectors; rows of 7 would compute
    // 16 pixels for 7.
    EXPECT_FALSE(has(p["wide"], ": pixel-rows: ")) << p["wide"];
    EXPECT_FALSE(has(p["huge"], ": pixel-rows: ")) << p["huge"];
    o.cpu.convPath = cpu::ConvPath::Rows;
    p = plans("CPU", o, nullptr, kGrouped);
    EXPECT_TRUE(has(p["wide"], ": pixel-rows: ")) << p["wide"];
    EXPECT_TRUE(has(p["wide"], "forced by -cpu-conv-path=rows")) << p["wide"];
    // Forced, a band that does not fit leaves the GEMM choice automatic.
    EXPECT_FALSE(has(p["huge"], ": pixel-rows: ")) << p["huge"];
    EXPECT_TRUE(has(p["huge"], "auto: ")) << p["huge"];
  }
}

TEST(ConvPlan, BackendsWithoutPlansSaySo) {
  std::string error;
  auto p = plans("Interpreter", CodegenOptions(), &error);
  EXPECT_TRUE(p.empty());
  EXPECT_EQ(error, "-print-conv-plans: backend Interpreter does not choose "
                   "among convolution paths (the CPU backend does)");
}
