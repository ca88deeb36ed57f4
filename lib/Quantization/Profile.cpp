//===- Profile.cpp - Profile accumulation and its YAML form ---------------===//
//
// The YAML is written and read with LLVM's YAMLTraits. Ranges print with
// six significant digits (LLVM's float format): the quantization scales
// derived from them do not need more.
//
//===----------------------------------------------------------------------===//
#include "ember/Quantization/Profile.h"

#include "ember/Base/Error.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/YAMLTraits.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

using namespace ember;

namespace {
/// One histogram count (LLVM's YAML sequences need a type of our own).
struct Count {
  uint64_t n = 0;
};
/// One value as the file holds it.
struct YamlValue {
  std::string name;
  float min = 0, max = 0;
  std::vector<Count> histogram;
};
/// The file.
struct YamlProfile {
  unsigned version = 1;
  unsigned bins = kProfileBins;
  uint64_t inputs = 0;
  std::vector<YamlValue> values;
};
} // namespace

LLVM_YAML_IS_FLOW_SEQUENCE_VECTOR(Count)
LLVM_YAML_IS_SEQUENCE_VECTOR(YamlValue)

namespace llvm {
namespace yaml {
template <> struct ScalarTraits<Count> {
  static void output(const Count &c, void *ctx, raw_ostream &os) {
    ScalarTraits<uint64_t>::output(c.n, ctx, os);
  }
  static StringRef input(StringRef s, void *ctx, Count &c) {
    return ScalarTraits<uint64_t>::input(s, ctx, c.n);
  }
  static QuotingType mustQuote(StringRef) { return QuotingType::None; }
};
template <> struct MappingTraits<YamlValue> {
  static void mapping(IO &io, YamlValue &v) {
    io.mapRequired("name", v.name);
    io.mapRequired("min", v.min);
    io.mapRequired("max", v.max);
    io.mapRequired("histogram", v.histogram);
  }
};
template <> struct MappingTraits<YamlProfile> {
  static void mapping(IO &io, YamlProfile &p) {
    io.mapRequired("version", p.version);
    io.mapRequired("bins", p.bins);
    io.mapRequired("inputs", p.inputs);
    io.mapRequired("values", p.values);
  }
};
} // namespace yaml
} // namespace llvm

/// The bin of \p x in \p n bins over [lo, lo + n * width).
static size_t binOf(float x, float lo, double width, size_t n) {
  if (width <= 0)
    return 0;
  double b = std::floor((double(x) - lo) / width);
  return size_t(std::clamp(b, 0.0, double(n - 1)));
}

void ValueProfile::add(const float *data, size_t n) {
  float lo = INFINITY, hi = -INFINITY;
  for (size_t i = 0; i < n; ++i)
    if (!std::isnan(data[i])) {
      lo = std::min(lo, data[i]);
      hi = std::max(hi, data[i]);
    }
  if (lo > hi)
    return; // nothing but NaN
  if (histogram.empty()) {
    histogram.assign(kProfileBins, 0);
    min = lo;
    max = hi;
  } else if (lo < min || hi > max) {
    float nlo = std::min(lo, min), nhi = std::max(hi, max);
    double oldW = (double(max) - min) / kProfileBins,
           newW = (double(nhi) - nlo) / kProfileBins;
    std::vector<uint64_t> rebinned(kProfileBins, 0);
    for (size_t b = 0; b < kProfileBins; ++b)
      rebinned[binOf(float(min + (b + 0.5) * oldW), nlo, newW, kProfileBins)] +=
          histogram[b];
    histogram = std::move(rebinned);
    min = nlo;
    max = nhi;
  }
  double w = (double(max) - min) / kProfileBins;
  for (size_t i = 0; i < n; ++i)
    if (!std::isnan(data[i]))
      ++histogram[binOf(data[i], min, w, kProfileBins)];
}

llvm::Error ember::writeProfile(const QuantProfile &p, llvm::StringRef path) {
  YamlProfile y;
  y.inputs = p.inputs;
  for (const auto &[name, v] : p.values) {
    if (v.histogram.empty())
      continue;
    YamlValue yv{name, v.min, v.max, {}};
    for (uint64_t n : v.histogram)
      yv.histogram.push_back({n});
    y.values.push_back(std::move(yv));
  }
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec)
    return makeErrorF("cannot write profile '{0}': {1}", path, ec.message());
  llvm::yaml::Output out(os);
  out << y;
  return llvm::Error::success();
}

/// Collects the YAML parser's first diagnostic as one line.
static void keepFirst(const llvm::SMDiagnostic &d, void *ctx) {
  auto *msg = static_cast<std::string *>(ctx);
  if (msg->empty())
    *msg =
        "line " + std::to_string(d.getLineNo()) + ": " + d.getMessage().str();
}

/// \p x as %g prints it.
static std::string shortFloat(float x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", double(x));
  return buf;
}

static llvm::Error checkValue(const YamlValue &v, unsigned bins,
                              llvm::StringRef path) {
  if (!std::isfinite(v.min) || !std::isfinite(v.max) || v.min > v.max)
    return makeErrorF("profile '{0}': value '{1}' has the range [{2}, {3}], "
                      "not a finite interval",
                      path, v.name, shortFloat(v.min), shortFloat(v.max));
  if (v.histogram.size() != bins)
    return makeErrorF("profile '{0}': value '{1}' has {2} histogram bins, "
                      "not {3}",
                      path, v.name, v.histogram.size(), bins);
  return llvm::Error::success();
}

llvm::Expected<QuantProfile> ember::readProfile(llvm::StringRef path) {
  auto buf = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buf)
    return makeErrorF("cannot read profile '{0}': {1}", path,
                      buf.getError().message());
  std::string diag;
  YamlProfile y;
  y.version = 0;
  llvm::yaml::Input in((*buf)->getBuffer(), nullptr, keepFirst, &diag);
  in >> y;
  if (in.error() || !diag.empty())
    return makeErrorF("profile '{0}' is not a valid profile: {1}", path,
                      diag.empty() ? in.error().message() : diag);
  if (y.version != 1)
    return makeErrorF("profile '{0}' has version {1}; this Ember reads 1", path,
                      y.version);
  if (y.bins != kProfileBins)
    return makeErrorF("profile '{0}' has {1} bins; this Ember uses {2}", path,
                      y.bins, kProfileBins);
  QuantProfile p;
  p.inputs = y.inputs;
  for (YamlValue &v : y.values) {
    EMBER_RETURN_IF_ERR(checkValue(v, y.bins, path));
    if (p.values.count(v.name))
      return makeErrorF("profile '{0}' lists value '{1}' twice", path, v.name);
    ValueProfile &pv = p.values[v.name];
    pv.min = v.min;
    pv.max = v.max;
    for (Count c : v.histogram)
      pv.histogram.push_back(c.n);
  }
  return p;
}
