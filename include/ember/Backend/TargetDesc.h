//===- TargetDesc.h - What kernel-choice rules know of a CPU ----*- C++ -*-===//
//
// One description of the machine code runs on, read from LLVM's view of the
// target (triple, CPU, features) and, for caches, from the host's sysfs when
// the target is the host. Every kernel-choice rule reads this struct and
// nothing else about the machine, so a compile is a function of its inputs
// and options (docs/Architecture.md, "Target description").
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_BACKEND_TARGETDESC_H
#define EMBER_BACKEND_TARGETDESC_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <memory>
#include <string>

namespace llvm {
class TargetMachine;
} // namespace llvm

namespace ember {

/// Which machine to compile for (-target, -mcpu, -mattr). Empty fields mean
/// the host: its triple, its CPU and, when the CPU is the host's, its
/// features.
struct TargetOptions {
  std::string triple;   ///< Target triple; empty: the host's.
  std::string cpu;      ///< CPU name; empty: the host CPU (or generic).
  std::string features; ///< LLVM features ("+avx512f,-amx-tile"), added
                        ///< after the CPU's own.
};

/// Instruction-set extensions kernel rules may ask about.
enum class ISAExt : unsigned {
  FMA,
  AVX2,
  AVX512F,
  AVX512BW,
  AVX512VL,
  AVX512VBMI,
  AVX512VNNI,
  AVXVNNI,
  AVX512BF16,
  AVX512FP16,
  AMXTile,
  AMXInt8,
  AMXBF16,
  NEON,
  DotProd,
  NumExts
};

/// The name -print-target uses for \p e (LLVM's feature name).
llvm::StringRef getISAExtName(ISAExt e);

/// Where the cache sizes of a TargetDesc came from.
enum class CacheSource {
  Sysfs,   ///< /sys/devices/system/cpu/cpu0/cache of the host.
  Default, ///< The documented default for the target's ISA level.
};

/// The target as kernel-choice rules see it.
struct TargetDesc {
  std::string triple;   ///< Normalized triple.
  std::string cpu;      ///< CPU name given to LLVM.
  std::string features; ///< Feature string given to LLVM.
  /// True when code runs where it is compiled (host triple and CPU).
  bool isHost = false;
  /// Width of the widest vector registers float kernels use (bits): 512
  /// with AVX-512F, 256 with AVX, 128 otherwise (SSE2, NEON).
  unsigned vectorBits = 128;
  /// Architectural vector registers at that width: 32 with AVX-512F and on
  /// AArch64, 16 otherwise on x86-64.
  unsigned vectorRegisters = 16;
  /// Data cache bytes per core (L3: the shared size divided by the cores
  /// sharing it); see cacheSource.
  uint64_t l1dBytes = 0, l2Bytes = 0, l3Bytes = 0;
  CacheSource cacheSource = CacheSource::Default;
  /// A bit per ISAExt.
  uint32_t extensions = 0;

  /// Float32 lanes per vector register.
  unsigned floatLanes() const { return vectorBits / 32; }
  bool has(ISAExt e) const { return (extensions >> unsigned(e)) & 1; }
  bool isX86() const;
  bool isAArch64() const;

  /// Resolves \p opts (host defaults for empty fields) and reads the
  /// description; an error names an unknown or unsupported triple, CPU or
  /// feature. Only x86_64 and aarch64 are supported.
  static llvm::Expected<TargetDesc> create(const TargetOptions &opts);

  /// Prints one "field: value" line per field.
  void print(llvm::raw_ostream &os) const;
};

/// An LLVM target machine for \p T's triple, CPU and features (PIC,
/// aggressive optimization): what bundles' code generators emit with.
llvm::Expected<std::unique_ptr<llvm::TargetMachine>>
createTargetMachine(const TargetDesc &T);

/// Cache sizes of the host read from \p sysfsCacheDir (a directory like
/// /sys/devices/system/cpu/cpu0/cache with index*/{level,type,size,
/// shared_cpu_list}) into \p T; false (T unchanged) when L1d or L2 is
/// missing. Exposed for tests.
bool readSysfsCaches(llvm::StringRef sysfsCacheDir, TargetDesc &T);

/// Sets \p T's caches to the documented defaults for its ISA level.
void setDefaultCaches(TargetDesc &T);

} // namespace ember

#endif // EMBER_BACKEND_TARGETDESC_H
