//===- CodegenOptions.cpp - Parsing the code generation flags -------------===//
#include "ember/Backend/CodegenOptions.h"

#include "ember/Base/Error.h"

using namespace ember;

llvm::Expected<cpu::WinogradMode> cpu::parseWinogradMode(llvm::StringRef s) {
  if (s == "auto")
    return WinogradMode::Auto;
  if (s == "off")
    return WinogradMode::Off;
  if (s == "f2")
    return WinogradMode::F2;
  if (s == "f4")
    return WinogradMode::F4;
  return makeErrorF("-cpu-winograd '{0}' is not auto, off, f2 or f4", s);
}

llvm::Expected<cpu::ConvPath> cpu::parseConvPath(llvm::StringRef s) {
  if (s == "auto")
    return ConvPath::Auto;
  if (s == "panels")
    return ConvPath::Panels;
  if (s == "channels")
    return ConvPath::Channels;
  if (s == "rows")
    return ConvPath::Rows;
  return makeErrorF(
      "-cpu-conv-path '{0}' is not auto, panels, channels or rows", s);
}

llvm::Expected<unsigned> cpu::parseSimdWidth(llvm::StringRef s) {
  if (s == "auto")
    return 0u;
  if (s == "256")
    return 256u;
  if (s == "512")
    return 512u;
  return makeErrorF("-cpu-simd-width '{0}' is not auto, 256 or 512", s);
}

llvm::Expected<cuda::LibChoice> cuda::parseLibChoice(llvm::StringRef flag,
                                                     llvm::StringRef value,
                                                     llvm::StringRef library) {
  if (value.empty() || value == "auto")
    return LibChoice::Auto;
  if (value == library)
    return LibChoice::Library;
  if (value == "generated")
    return LibChoice::Generated;
  return makeErrorF("{0} '{1}' is not auto, {2} or generated", flag, value,
                    library);
}

llvm::Expected<cuda::MathMode> cuda::parseMathMode(llvm::StringRef value) {
  if (value.empty() || value == "fp32")
    return MathMode::FP32;
  if (value == "tf32")
    return MathMode::TF32;
  return makeErrorF("-cuda-math '{0}' is not fp32 or tf32", value);
}
