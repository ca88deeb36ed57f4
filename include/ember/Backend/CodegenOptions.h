//===- CodegenOptions.h - Code generation choices of the backends -*- C++ -*-//
//
// Everything besides the network that steers code generation: the target
// and the per-backend path choices the tools expose as flags (-target,
// -mcpu, -mattr, -cpu-*, -cuda-*; see README). A compile reads these and
// nothing from the environment, so it is a function of its inputs and
// options.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_BACKEND_CODEGENOPTIONS_H
#define EMBER_BACKEND_CODEGENOPTIONS_H

#include "ember/Backend/TargetDesc.h"
#include "ember/Optimizer/Precision.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>

namespace ember {
namespace cpu {

/// Whether eligible 3x3 convolutions run as Winograd convolutions: Auto
/// where the rule says so, Off never, F2 / F4 always as F(2x2, 3x3) /
/// F(4x4, 3x3) where eligible (measurements, tests).
enum class WinogradMode { Auto, Off, F2, F4 };

/// Which vector dimension convolutions and pools take: Auto picks per layer
/// (pools: the separable per-plane kernel where it fits); Panels (pixels as
/// the vector dimension: the panel GEMM, per-plane depthwise and shared
/// pooling kernels) or Channels (channels as the vector lanes: the
/// channel-vector GEMM and depthwise kernels) force one, for tests and
/// measurements; Rows forces the row-direct kernel (pixels in vectors,
/// output channels in registers, no im2col) on every non-depthwise
/// convolution whose input band fits it, and leaves the rest as Auto.
enum class ConvPath { Auto, Panels, Channels, Rows };

/// Parses -cpu-winograd ("auto", "off", "f2" or "f4").
llvm::Expected<WinogradMode> parseWinogradMode(llvm::StringRef s);
/// Parses -cpu-conv-path ("auto", "panels", "channels" or "rows").
llvm::Expected<ConvPath> parseConvPath(llvm::StringRef s);
/// Parses -cpu-simd-width ("auto": 0, "256" or "512").
llvm::Expected<unsigned> parseSimdWidth(llvm::StringRef s);

} // namespace cpu

namespace cuda {

/// Where MatMul and Conv go (-cuda-gemm, -cuda-conv). Auto: the library
/// where it can express the op (and, for MatMul, the product is not tiny);
/// see docs/CUDA.md.
enum class LibChoice { Auto, Library, Generated };

/// Parses "auto" (or ""), \p library ("cublaslt", "cudnn") or "generated";
/// the error names \p flag.
llvm::Expected<LibChoice> parseLibChoice(llvm::StringRef flag,
                                         llvm::StringRef value,
                                         llvm::StringRef library);

/// The arithmetic of MatMul and Conv (-cuda-math): fp32 FMA, or TF32
/// tensor cores (operands rounded to a 10-bit mantissa, fp32 sums; sm_80+).
enum class MathMode { FP32, TF32 };

/// Parses "fp32" (or "") or "tf32".
llvm::Expected<MathMode> parseMathMode(llvm::StringRef value);

} // namespace cuda

/// Choices of the CPU backend.
struct CPUCodegenOptions {
  cpu::WinogradMode winograd = cpu::WinogradMode::Auto;
  cpu::ConvPath convPath = cpu::ConvPath::Auto;
  /// The vector width (bits) the kernel rules and libjit's kernels assume:
  /// 0 takes the target's; 512 forces the 16-lane kernels and tiles on any
  /// target (LLVM splits their vectors where the ISA is narrower), 256 the
  /// 8-lane ones. For tests and measurements.
  unsigned simdWidth = 0;
  /// Packs A of every float MatMul into row tiles, whatever the rule
  /// (matMulPacksLHS) says: tests run the packed path on small shapes.
  bool forcePackMatMulLHS = false;
};

/// Choices of the CUDA backend.
struct CUDACodegenOptions {
  std::string arch; ///< Bundles: sm_XX (empty: sm_90); in process: the GPU's.
  cuda::LibChoice gemm = cuda::LibChoice::Auto; ///< cuBLASLt or generated.
  cuda::LibChoice conv = cuda::LibChoice::Auto; ///< cuDNN or generated.
  cuda::MathMode math = cuda::MathMode::FP32;   ///< -cuda-math.
  /// In-process runs: capture the kernel launches once into a CUDA graph
  /// and replay it (false: launch kernel by kernel).
  bool graph = true;
  /// In-process runs: synchronize after every launch and library call and
  /// name the one that failed (-cuda-sync-each-step; no graph then).
  bool syncEachStep = false;
};

/// Options of Backend::compile and Backend::saveBundle.
struct CodegenOptions {
  TargetOptions target;
  CPUCodegenOptions cpu;
  CUDACodegenOptions cuda;
  /// -precision: which ops read reduced-precision operands (graph pass
  /// convert-precision).
  PrecisionOptions precision;
};

} // namespace ember

#endif // EMBER_BACKEND_CODEGENOPTIONS_H
