//===- EmberBundle.hpp - A small RAII wrapper over one bundle --*- C++ -*-===//
//
// Owns the three 64-byte-aligned regions of a bundle, described by its
// EmberBundleInfo, and gives typed access to inputs and outputs by name.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_EXAMPLES_EMBERBUNDLE_HPP
#define EMBER_EXAMPLES_EMBERBUNDLE_HPP

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>

namespace ember {

/// The entry point of a bundle: int NAME(constants, mutables, activations).
using BundleEntry = int (*)(uint8_t *, uint8_t *, uint8_t *);

/// One loaded bundle instance with its own mutable and activation memory.
class Bundle {
public:
  /// \p weightsPath may be empty when the bundle embeds its weights.
  Bundle(const EmberBundleInfo &info, BundleEntry entry,
         const std::string &weightsPath)
      : info_(info), entry_(entry), mutables_(alloc(info.mutableSize)),
        activations_(alloc(info.activationSize)) {
    if (info.abiVersion < 1 || info.abiVersion > EMBER_BUNDLE_ABI_VERSION)
      throw std::runtime_error("bundle ABI version mismatch");
    if (weightsPath.empty()) {
      if (!info.embeddedWeights)
        throw std::runtime_error("this bundle needs its weights file");
      return;
    }
    constants_ = alloc(info.constantSize);
    std::ifstream in(weightsPath, std::ios::binary);
    if (!in.read(reinterpret_cast<char *>(constants_.get()), info.constantSize))
      throw std::runtime_error("cannot read " + weightsPath);
  }

  /// The input or output called \p name, as floats.
  float *tensor(const std::string &name) {
    for (uint32_t i = 0; i < info_.numInputs + info_.numOutputs; ++i) {
      const EmberTensorInfo &t = i < info_.numInputs
                                     ? info_.inputs[i]
                                     : info_.outputs[i - info_.numInputs];
      if (name == t.name)
        return reinterpret_cast<float *>(mutables_.get() + t.offset);
    }
    throw std::runtime_error("no tensor named " + name);
  }

  /// Runs the network once.
  void run() {
    if (entry_(constants_.get(), mutables_.get(), activations_.get()) != 0)
      throw std::runtime_error("the bundle failed");
  }

private:
  struct Free {
    void operator()(uint8_t *p) const { std::free(p); }
  };
  using Region = std::unique_ptr<uint8_t, Free>;
  static Region alloc(uint64_t size) {
    size_t rounded = (size + 63) / 64 * 64;
    auto *p =
        static_cast<uint8_t *>(std::aligned_alloc(64, rounded ? rounded : 64));
    if (!p)
      throw std::bad_alloc();
    std::memset(p, 0, rounded ? rounded : 64);
    return Region(p);
  }

  const EmberBundleInfo &info_;
  BundleEntry entry_;
  Region constants_, mutables_, activations_;
};

} // namespace ember

#endif
