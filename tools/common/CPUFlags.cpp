//===- CPUFlags.cpp - CPU backend flags shared by the tools ---------------===//
#include "CPUFlags.h"

#include "ember/Backend/CPUOptions.h"

using namespace ember;
namespace cl = llvm::cl;

cl::OptionCategory &tools::cpuFlagsCategory() {
  static cl::OptionCategory category("CPU backend options");
  return category;
}

static cl::opt<std::string> cpuWinograd(
    "cpu-winograd",
    cl::desc("CPU: 3x3 stride-1 convolutions as Winograd F(4x4)/F(2x2) "
             "where the rule picks them (auto), never (off), or always "
             "F(2x2) / F(4x4) where eligible (f2, f4)"),
    cl::init("auto"), cl::value_desc("auto|off|f2|f4"),
    cl::cat(tools::cpuFlagsCategory()));

llvm::Error tools::applyCPUFlags() {
  auto mode = cpu::parseWinogradMode(cpuWinograd);
  if (!mode)
    return mode.takeError();
  cpu::setWinogradMode(*mode);
  return llvm::Error::success();
}
