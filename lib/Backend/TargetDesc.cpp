//===- TargetDesc.cpp - What kernel-choice rules know of a CPU ------------===//
//
// Vector width, register count and extensions follow from LLVM's subtarget
// (the CPU's implied features plus -mattr): they are ISA facts, not tuning,
// so they are read from feature bits rather than from TargetTransformInfo,
// whose register width is a tuning preference (256 bits on several AVX-512
// CPUs). Caches: LLVM's TargetTransformInfo reports one fixed size for every
// x86 CPU and none for AArch64, so the host's come from sysfs and a cross
// target's from a documented default per ISA level.
//
//===----------------------------------------------------------------------===//
#include "ember/Backend/TargetDesc.h"

#include "ember/Base/Error.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"
#include "llvm/TargetParser/Triple.h"

#include <memory>

using namespace ember;

namespace {
/// An ISAExt, the LLVM feature that provides it and its architecture.
struct ExtInfo {
  ISAExt ext;
  const char *feature;
  llvm::Triple::ArchType arch;
};

constexpr llvm::Triple::ArchType kX86 = llvm::Triple::x86_64;
constexpr llvm::Triple::ArchType kArm = llvm::Triple::aarch64;

const ExtInfo kExts[] = {
    {ISAExt::FMA, "fma", kX86},
    {ISAExt::AVX2, "avx2", kX86},
    {ISAExt::AVX512F, "avx512f", kX86},
    {ISAExt::AVX512BW, "avx512bw", kX86},
    {ISAExt::AVX512VL, "avx512vl", kX86},
    {ISAExt::AVX512VBMI, "avx512vbmi", kX86},
    {ISAExt::AVX512VNNI, "avx512vnni", kX86},
    {ISAExt::AVXVNNI, "avxvnni", kX86},
    {ISAExt::AVX512BF16, "avx512bf16", kX86},
    {ISAExt::AVX512FP16, "avx512fp16", kX86},
    {ISAExt::AMXTile, "amx-tile", kX86},
    {ISAExt::AMXInt8, "amx-int8", kX86},
    {ISAExt::AMXBF16, "amx-bf16", kX86},
    {ISAExt::NEON, "neon", kArm},
    {ISAExt::DotProd, "dotprod", kArm},
};
static_assert(std::size(kExts) == size_t(ISAExt::NumExts),
              "one kExts row per ISAExt, in order");
} // namespace

llvm::StringRef ember::getISAExtName(ISAExt e) {
  return kExts[unsigned(e)].feature;
}

bool TargetDesc::isX86() const {
  return llvm::Triple(triple).getArch() == kX86;
}

bool TargetDesc::isAArch64() const {
  return llvm::Triple(triple).getArch() == kArm;
}

/// Registers the targets bundles may be built for (once per process).
static void initTargets() {
  static bool done = [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    llvm::InitializeNativeTargetAsmParser();
    LLVMInitializeAArch64TargetInfo();
    LLVMInitializeAArch64Target();
    LLVMInitializeAArch64TargetMC();
    LLVMInitializeAArch64AsmPrinter();
    return true;
  }();
  (void)done;
}

/// Checks that every entry of \p features is +NAME or -NAME of a feature
/// \p sti knows (LLVM would only warn and ignore it).
static llvm::Error checkFeatures(const llvm::MCSubtargetInfo &sti,
                                 llvm::StringRef features,
                                 llvm::StringRef triple) {
  llvm::SmallVector<llvm::StringRef, 8> parts;
  features.split(parts, ',', -1, /*KeepEmpty=*/false);
  for (llvm::StringRef f : parts) {
    llvm::StringRef name = f.drop_front();
    bool known = llvm::any_of(
        sti.getAllProcessorFeatures(),
        [&](const llvm::SubtargetFeatureKV &kv) { return name == kv.Key; });
    if ((!f.starts_with("+") && !f.starts_with("-")) || !known)
      return makeErrorF("-mattr entry '{0}' is not +FEATURE or -FEATURE of a "
                        "feature of '{1}'",
                        f, triple);
  }
  return llvm::Error::success();
}

/// Fills the resolved triple, CPU and features of \p T from \p opts.
static void resolveNames(const TargetOptions &opts, TargetDesc &T) {
  std::string hostTriple = llvm::sys::getProcessTriple();
  T.triple =
      opts.triple.empty() ? hostTriple : llvm::Triple::normalize(opts.triple);
  llvm::Triple t(T.triple);
  bool hostArch = t.getArch() == llvm::Triple(hostTriple).getArch();
  std::string hostCPU = llvm::sys::getHostCPUName().str();
  T.cpu = opts.cpu.empty() ? (hostArch ? hostCPU : "generic") : opts.cpu;
  T.isHost = hostArch && T.cpu == hostCPU;
  llvm::SubtargetFeatures f;
  // The host CPU's name alone misses what the host disables or adds.
  if (T.isHost)
    for (auto &kv : llvm::sys::getHostCPUFeatures())
      f.AddFeature(kv.first(), kv.second);
  llvm::SmallVector<llvm::StringRef, 8> extra;
  llvm::StringRef(opts.features).split(extra, ',', -1, false);
  for (llvm::StringRef e : extra)
    f.AddFeature(e);
  T.features = f.getString();
}

/// Reads vector width, registers and extensions from \p sti.
static void readISA(const llvm::MCSubtargetInfo &sti, TargetDesc &T) {
  llvm::Triple::ArchType arch = llvm::Triple(T.triple).getArch();
  for (const ExtInfo &e : kExts)
    if (e.arch == arch && sti.checkFeatures(std::string("+") + e.feature))
      T.extensions |= 1u << unsigned(e.ext);
  if (arch == kArm) {
    // NEON's 32 128-bit registers; SVE's length is unknown at compile time.
    T.vectorBits = 128;
    T.vectorRegisters = 32;
  } else if (T.has(ISAExt::AVX512F)) {
    T.vectorBits = 512;
    T.vectorRegisters = 32;
  } else {
    T.vectorBits = sti.checkFeatures("+avx") ? 256 : 128;
    T.vectorRegisters = 16;
  }
}

llvm::Expected<TargetDesc> TargetDesc::create(const TargetOptions &opts) {
  initTargets();
  TargetDesc T;
  resolveNames(opts, T);
  std::string err;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(T.triple, err);
  if (!target)
    return makeErrorF("unknown target '{0}': {1}", T.triple, err);
  llvm::Triple::ArchType arch = llvm::Triple(T.triple).getArch();
  if (arch != kX86 && arch != kArm)
    return makeErrorF("target '{0}' is not supported (x86_64 and aarch64 are)",
                      T.triple);
  std::unique_ptr<llvm::MCSubtargetInfo> probe(
      target->createMCSubtargetInfo(T.triple, "", ""));
  if (!probe || !probe->isCPUStringValid(T.cpu))
    return makeErrorF("unknown CPU '{0}' for target '{1}'", T.cpu, T.triple);
  EMBER_RETURN_IF_ERR(checkFeatures(*probe, opts.features, T.triple));
  std::unique_ptr<llvm::MCSubtargetInfo> sti(
      target->createMCSubtargetInfo(T.triple, T.cpu, T.features));
  readISA(*sti, T);
  if (!T.isHost || !readSysfsCaches("/sys/devices/system/cpu/cpu0/cache", T))
    setDefaultCaches(T);
  return T;
}

llvm::Expected<std::unique_ptr<llvm::TargetMachine>>
ember::createTargetMachine(const TargetDesc &T) {
  initTargets();
  std::string err;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(T.triple, err);
  if (!target)
    return makeErrorF("unknown target '{0}': {1}", T.triple, err);
  llvm::TargetOptions opts;
  std::unique_ptr<llvm::TargetMachine> TM(target->createTargetMachine(
      T.triple, T.cpu, T.features, opts, llvm::Reloc::PIC_, std::nullopt,
      llvm::CodeGenOptLevel::Aggressive));
  if (!TM)
    return makeErrorF("cannot create a target machine for '{0}'", T.triple);
  return TM;
}

void ember::setDefaultCaches(TargetDesc &T) {
  // The smallest per-core sizes among common CPUs of each level, so that
  // blocking chosen from them fits everywhere the code may run:
  // AVX-512 servers and desktops have 1-2 MiB of L2, AVX2-level x86 and
  // AArch64 cores 256 KiB and up; every one has at least 32 KiB of L1d
  // and 1 MiB of L3 per core.
  T.l1dBytes = 32 << 10;
  T.l2Bytes = T.has(ISAExt::AVX512F) ? 1 << 20 : 256 << 10;
  T.l3Bytes = 1 << 20;
  T.cacheSource = CacheSource::Default;
}

/// The first line of \p path, trimmed ("" if unreadable).
static std::string readLine(const llvm::Twine &path) {
  auto buf = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buf)
    return "";
  return (*buf)->getBuffer().split('\n').first.trim().str();
}

/// Bytes of a sysfs size ("48K", "2048K", "1M"); 0 if malformed.
static uint64_t parseSize(llvm::StringRef s) {
  uint64_t scale = 1;
  if (s.consume_back("K"))
    scale = 1 << 10;
  else if (s.consume_back("M"))
    scale = 1 << 20;
  else if (s.consume_back("G"))
    scale = 1 << 30;
  uint64_t n = 0;
  return s.getAsInteger(10, n) ? 0 : n * scale;
}

/// CPUs in a sysfs CPU list ("0-3,8-11"); at least 1.
static unsigned countCPUs(llvm::StringRef list) {
  unsigned n = 0;
  llvm::SmallVector<llvm::StringRef, 4> ranges;
  list.split(ranges, ',', -1, false);
  for (llvm::StringRef r : ranges) {
    auto [lo, hi] = r.split('-');
    unsigned a = 0, b = 0;
    if (lo.getAsInteger(10, a))
      continue;
    n += hi.empty() || hi.getAsInteger(10, b) || b < a ? 1 : b - a + 1;
  }
  return std::max(n, 1u);
}

bool ember::readSysfsCaches(llvm::StringRef dir, TargetDesc &T) {
  uint64_t l1d = 0, l2 = 0, l3 = 0;
  unsigned threadsPerCore = 1, l2Sharers = 1, l3Sharers = 1;
  for (unsigned i = 0; i < 16; ++i) {
    llvm::SmallString<128> d(dir);
    llvm::sys::path::append(d, "index" + llvm::Twine(i));
    if (!llvm::sys::fs::is_directory(d))
      continue;
    std::string level = readLine(d + "/level"), type = readLine(d + "/type");
    uint64_t size = parseSize(readLine(d + "/size"));
    unsigned sharers = countCPUs(readLine(d + "/shared_cpu_list"));
    if (level == "1" && type == "Data")
      l1d = size, threadsPerCore = sharers;
    else if (level == "2" && type != "Instruction")
      l2 = size, l2Sharers = sharers;
    else if (level == "3" && type != "Instruction")
      l3 = size, l3Sharers = sharers;
  }
  if (!l1d || !l2)
    return false;
  // Per core: SMT siblings share a core's L1d and count as one core.
  auto perCore = [&](uint64_t bytes, unsigned sharers) {
    return bytes / std::max(1u, sharers / threadsPerCore);
  };
  T.l1dBytes = l1d;
  T.l2Bytes = perCore(l2, l2Sharers);
  T.l3Bytes = l3 ? perCore(l3, l3Sharers) : 0;
  T.cacheSource = CacheSource::Sysfs;
  return true;
}

void TargetDesc::print(llvm::raw_ostream &os) const {
  os << "triple: " << triple << "\n";
  os << "cpu: " << cpu << "\n";
  os << "features: " << (features.empty() ? "(the CPU's)" : features) << "\n";
  os << "host: " << (isHost ? "yes" : "no") << "\n";
  os << "vector-bits: " << vectorBits << "\n";
  os << "float-lanes: " << floatLanes() << "\n";
  os << "vector-registers: " << vectorRegisters << "\n";
  os << "l1d-bytes: " << l1dBytes << "\n";
  os << "l2-bytes: " << l2Bytes << "\n";
  os << "l3-bytes: " << l3Bytes << "\n";
  os << "cache-source: "
     << (cacheSource == CacheSource::Sysfs ? "sysfs" : "default") << "\n";
  os << "extensions:";
  for (const ExtInfo &e : kExts)
    if (has(e.ext))
      os << " " << e.feature;
  os << "\n";
}
