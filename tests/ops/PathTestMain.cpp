//===- PathTestMain.cpp - main() of the CPU path tests --------------------===//
//
// Takes --cpu-simd-width=auto|256|512 (see PathOptions.h) before gtest's
// own flags; a bad value is a one-line error and exit code 2. With
// --require-avx512bf16 it exits 77 (ctest: skipped) on a host without
// AVX512-BF16.
//
//===----------------------------------------------------------------------===//
#include "PathOptions.h"

#include "gtest/gtest.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

using namespace ember;

CodegenOptions &test::pathOptions() {
  static CodegenOptions opts;
  return opts;
}

bool test::narrowKernels() {
  unsigned width = pathOptions().cpu.simdWidth;
  if (width)
    return width < 512;
  auto host = TargetDesc::create(pathOptions().target);
  if (!host) {
    ADD_FAILURE() << llvm::toString(host.takeError());
    return true;
  }
  return host->floatLanes() < 16;
}

int main(int argc, char **argv) {
  ::testing::InitGoogleTest(&argc, argv);
  for (int i = 1; i < argc; ++i) {
    llvm::StringRef arg(argv[i]);
    if (arg == "--require-avx512bf16") {
      auto host = TargetDesc::create(TargetOptions());
      if (!host || !host->has(ISAExt::AVX512BF16)) {
        llvm::consumeError(host.takeError());
        llvm::outs() << "skipped: the host has no AVX512-BF16\n";
        return 77;
      }
      continue;
    }
    if (!arg.consume_front("--cpu-simd-width=")) {
      llvm::errs() << "error: unknown argument '" << argv[i] << "'\n";
      return 2;
    }
    auto width = cpu::parseSimdWidth(arg);
    if (!width) {
      llvm::errs() << "error: " << llvm::toString(width.takeError()) << "\n";
      return 2;
    }
    test::pathOptions().cpu.simdWidth = *width;
  }
  return RUN_ALL_TESTS();
}
