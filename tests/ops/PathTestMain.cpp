//===- PathTestMain.cpp - main() of the CPU path tests --------------------===//
//
// Takes, before gtest's own flags:
//  --cpu-simd-width=auto|256|512 (see PathOptions.h);
//  --cpu-features=LLVM-FEATURES, added to the target's (e.g. "-amx-tile"
//    to take the vdpbf16ps kernels on an AMX host);
//  --require-avx512bf16 / --require-amx-bf16: exit 77 (ctest: skipped) on
//    a host without AVX512-BF16 / AMX-BF16;
//  --refuse-amx: make Linux refuse the AMX tile state to this process
//    (a seccomp filter fails arch_prctl(ARCH_REQ_XCOMP_PERM)), so that the
//    AMX kernels take their fallback.
// A bad value is a one-line error and exit code 2.
//
//===----------------------------------------------------------------------===//
#include "PathOptions.h"

#include "gtest/gtest.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#if defined(__linux__) && defined(__x86_64__)
#include <cerrno>
#include <cstddef>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#endif

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

/// True when the host (with --cpu-features) has \p ext.
static bool hostHas(ISAExt ext) {
  auto host = TargetDesc::create(test::pathOptions().target);
  if (!host) {
    llvm::consumeError(host.takeError());
    return false;
  }
  return host->has(ext);
}

/// Installs a seccomp filter under which arch_prctl(ARCH_REQ_XCOMP_PERM,
/// ...) fails with EPERM and every other system call passes.
static bool refuseAMX() {
#if defined(__linux__) && defined(__x86_64__)
  const unsigned archReqXcompPerm = 0x1023;
  struct sock_filter prog[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_arch_prctl, 0, 3),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, args[0])),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, archReqXcompPerm, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog fprog = {sizeof prog / sizeof prog[0], prog};
  return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 &&
         prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fprog) == 0;
#else
  return false;
#endif
}

/// Applies one of the flags above; false on an unknown or bad one.
static bool applyFlag(llvm::StringRef arg) {
  if (arg.consume_front("--cpu-features=")) {
    test::pathOptions().target.features = arg.str();
    return true;
  }
  if (arg == "--refuse-amx") {
    if (refuseAMX())
      return true;
    llvm::errs() << "error: could not install the seccomp filter\n";
    return false;
  }
  if (!arg.consume_front("--cpu-simd-width=")) {
    llvm::errs() << "error: unknown argument '" << arg << "'\n";
    return false;
  }
  auto width = cpu::parseSimdWidth(arg);
  if (!width) {
    llvm::errs() << "error: " << llvm::toString(width.takeError()) << "\n";
    return false;
  }
  test::pathOptions().cpu.simdWidth = *width;
  return true;
}

int main(int argc, char **argv) {
  ::testing::InitGoogleTest(&argc, argv);
  for (int i = 1; i < argc; ++i) {
    llvm::StringRef arg(argv[i]);
    if (arg == "--require-avx512bf16" || arg == "--require-amx-bf16")
      continue; // checked below, after --cpu-features
    if (!applyFlag(arg))
      return 2;
  }
  for (int i = 1; i < argc; ++i) {
    llvm::StringRef arg(argv[i]);
    if (arg == "--require-avx512bf16" && !hostHas(ISAExt::AVX512BF16)) {
      llvm::outs() << "skipped: the host has no AVX512-BF16\n";
      return 77;
    }
    if (arg == "--require-amx-bf16" &&
        !(hostHas(ISAExt::AMXTile) && hostHas(ISAExt::AMXBF16))) {
      llvm::outs() << "skipped: the host has no AMX-BF16\n";
      return 77;
    }
  }
  return RUN_ALL_TESTS();
}
