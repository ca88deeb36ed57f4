//===- CodegenFlags.cpp - Code generation flags shared by the tools -------===//
#include "CodegenFlags.h"
#include "FlagDecl.h"
#include "PrecisionFlags.h"

#include "ember/Base/Error.h"

using namespace ember;
namespace cl = llvm::cl;

cl::OptionCategory &tools::codegenFlagsCategory() {
  static cl::OptionCategory category("Code generation options");
  return category;
}

static cl::opt<std::string> targetTriple =
    tools::stringFlag(tools::codegenFlagsCategory(), "target", "triple", "",
                      "Target triple (default: the host's)");
static cl::opt<std::string> mcpu =
    tools::stringFlag(tools::codegenFlagsCategory(), "mcpu", "cpu", "",
                      "Target CPU (default: the host CPU and its features)");
static cl::opt<std::string> mattr = tools::stringFlag(
    tools::codegenFlagsCategory(), "mattr", "+feature,-feature", "",
    "Target features added to the CPU's, comma-separated "
    "(e.g. -avx512f drops AVX-512)");
static cl::opt<bool> printTarget(
    "print-target",
    cl::desc("Print the target description kernel choices read (one field "
             "per line) and exit"),
    cl::cat(tools::codegenFlagsCategory()));
static cl::opt<std::string> cpuWinograd = tools::stringFlag(
    tools::codegenFlagsCategory(), "cpu-winograd", "auto|off|f2|f4", "auto",
    "CPU: 3x3 stride-1 convolutions as Winograd F(4x4)/F(2x2) "
    "where the rule picks them (auto), never (off), or always "
    "F(2x2) / F(4x4) where eligible (f2, f4)");
static cl::opt<std::string> cpuConvPath = tools::stringFlag(
    tools::codegenFlagsCategory(), "cpu-conv-path", "auto|panels|channels|rows",
    "auto",
    "CPU: which vector dimension convolutions and pools take: per "
    "layer (auto), pixels (panels), channels (channels), or "
    "convolutions along output rows without im2col (rows)");
static cl::opt<std::string> cpuSimdWidth = tools::stringFlag(
    tools::codegenFlagsCategory(), "cpu-simd-width", "auto|256|512", "auto",
    "CPU: vector width the kernel choices assume: the target's "
    "(auto), or the 8-lane (256) / 16-lane (512) kernels on any "
    "target");
static cl::opt<std::string> cudaArch =
    tools::stringFlag(tools::codegenFlagsCategory(), "cuda-arch", "sm_XX", "",
                      "CUDA bundles: GPU architecture (sm_90)");
static cl::opt<std::string> cudaGemm =
    tools::stringFlag(tools::codegenFlagsCategory(), "cuda-gemm",
                      "auto|cublaslt|generated", "auto",
                      "CUDA: MatMul/Gemm through cuBLASLt or generated kernels "
                      "(auto: cuBLASLt unless tiny)");
static cl::opt<std::string> cudaConv = tools::stringFlag(
    tools::codegenFlagsCategory(), "cuda-conv", "auto|cudnn|generated", "auto",
    "CUDA: Conv through cuDNN or generated kernels (auto: cuDNN "
    "where it can express the op)");
static cl::opt<std::string> cudaMath = tools::stringFlag(
    tools::codegenFlagsCategory(), "cuda-math", "fp32|tf32", "fp32",
    "CUDA: MatMul/Conv arithmetic: fp32 FMA, or TF32 tensor cores "
    "(10-bit mantissa operands, fp32 sums; sm_80 or newer)");
static cl::opt<bool> cudaGraph(
    "cuda-graph",
    cl::desc("CUDA, in process: replay the launches as a CUDA graph (0: "
             "launch kernel by kernel)"),
    cl::init(true), cl::cat(tools::codegenFlagsCategory()));
static cl::opt<bool> cudaSyncEachStep(
    "cuda-sync-each-step",
    cl::desc("CUDA, in process: synchronize after every kernel and library "
             "call and name the one that failed (debugging; no graph)"),
    cl::init(false), cl::cat(tools::codegenFlagsCategory()));

llvm::Expected<CodegenOptions> tools::getCodegenOptions() {
  CodegenOptions o;
  o.target = TargetOptions{targetTriple, mcpu, mattr};
  // Checked here, whatever the backend: a bad name is an error even where
  // the target goes unused (the Interpreter).
  if (auto desc = TargetDesc::create(o.target); !desc)
    return desc.takeError();
  EMBER_ASSIGN_OR_RETURN(o.cpu.winograd, cpu::parseWinogradMode(cpuWinograd));
  EMBER_ASSIGN_OR_RETURN(o.cpu.convPath, cpu::parseConvPath(cpuConvPath));
  EMBER_ASSIGN_OR_RETURN(o.cpu.simdWidth, cpu::parseSimdWidth(cpuSimdWidth));
  o.cuda.arch = cudaArch;
  EMBER_ASSIGN_OR_RETURN(
      o.cuda.gemm, cuda::parseLibChoice("-cuda-gemm", cudaGemm, "cublaslt"));
  EMBER_ASSIGN_OR_RETURN(o.cuda.conv,
                         cuda::parseLibChoice("-cuda-conv", cudaConv, "cudnn"));
  EMBER_ASSIGN_OR_RETURN(o.cuda.math, cuda::parseMathMode(cudaMath));
  o.cuda.graph = cudaGraph;
  o.cuda.syncEachStep = cudaSyncEachStep;
  EMBER_ASSIGN_OR_RETURN(o.precision, tools::getPrecisionOptions());
  return o;
}

static cl::opt<bool> printConvPlans(
    "print-conv-plans",
    cl::desc("Print the path the backend runs each convolution along and "
             "why (the CPU backend's conv plans)"),
    cl::cat(tools::codegenFlagsCategory()));

llvm::raw_ostream *tools::convPlansStream() {
  return printConvPlans ? &llvm::outs() : nullptr;
}

llvm::Expected<bool> tools::printTargetIfAsked(const CodegenOptions &opts,
                                               llvm::raw_ostream &os) {
  if (!printTarget)
    return false;
  EMBER_ASSIGN_OR_RETURN(TargetDesc desc, TargetDesc::create(opts.target));
  desc.print(os);
  return true;
}
