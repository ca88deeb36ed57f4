//===- LibDesc.h - Library-op descriptors built by field name --*- C++ -*-===//
//
// The host library (host/LibOps.h) reads an op as an array of int64 whose
// fields are named there once (EMBER_GEMM_*, EMBER_CONV_*). The lowering
// fills them by those names through LibDesc, which checks when the
// descriptor is taken that every field of the op's layout was set exactly
// once: a field added to LibOps.h and forgotten here, or set twice, is a
// lowering bug caught when the network is compiled.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_BACKENDS_CUDA_LIBDESC_H
#define EMBER_BACKENDS_CUDA_LIBDESC_H

#include "ember/Backend/Backend.h"

#include "glog/logging.h"

#include <cstdint>
#include <vector>

namespace ember {
namespace cuda {

/// One descriptor of \c fields int64 fields, field 0 the op kind.
class LibDesc {
public:
  LibDesc(int64_t kind, unsigned fields) : d_(fields, 0), set_(fields, 0) {
    set(0, kind);
  }
  /// Sets field \p field to \p v.
  LibDesc &set(unsigned field, int64_t v) {
    CHECK(field < d_.size() && !set_[field])
        << "library descriptor field " << field << " out of range or set twice";
    d_[field] = v;
    set_[field] = 1;
    return *this;
  }
  /// Sets the two fields at \p field to \p v's region and byte offset.
  LibDesc &setOperand(unsigned field, Value *v, const MemoryPlan &plan) {
    Placement p = plan.locate(v);
    return set(field, int64_t(p.region)).set(field + 1, int64_t(p.offset));
  }
  /// The descriptor, once every field is set.
  std::vector<int64_t> take() {
    for (size_t i = 0; i < set_.size(); ++i)
      CHECK(set_[i]) << "library descriptor field " << i << " not set";
    return std::move(d_);
  }

private:
  std::vector<int64_t> d_;
  std::vector<uint8_t> set_;
};

} // namespace cuda
} // namespace ember

#endif // EMBER_BACKENDS_CUDA_LIBDESC_H
