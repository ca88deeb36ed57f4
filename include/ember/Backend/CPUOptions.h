//===- CPUOptions.h - Code generation choices of the CPU backend -*- C++
//-*-===//
//
// Process-wide settings the CPU backend reads when it lowers a function
// (JIT compile and bundles alike). The tools set them from -cpu-* flags;
// tests set them to run both paths of a choice.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_BACKEND_CPUOPTIONS_H
#define EMBER_BACKEND_CPUOPTIONS_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

namespace ember {
namespace cpu {

/// Whether eligible 3x3 convolutions run as Winograd convolutions
/// (docs/Performance.md): Auto where the rule says so, Off never, F2 / F4
/// always as F(2x2, 3x3) / F(4x4, 3x3) where eligible (measurements, tests).
enum class WinogradMode { Auto, Off, F2, F4 };

/// Sets the mode for every later compile in this process (default: Auto).
void setWinogradMode(WinogradMode mode);
WinogradMode getWinogradMode();

/// Parses the value of -cpu-winograd ("auto", "off", "f2" or "f4").
llvm::Expected<WinogradMode> parseWinogradMode(llvm::StringRef s);

} // namespace cpu
} // namespace ember

#endif // EMBER_BACKEND_CPUOPTIONS_H
