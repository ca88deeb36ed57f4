//===- TypeQuant.cpp - Quantization parameters of a Type ----------------===//
#include "ember/Base/Error.h"
#include "ember/Base/Type.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

using namespace ember;

bool TypeQuant::operator==(const TypeQuant &o) const {
  // Bitwise, so that a type equals itself whatever its scales hold.
  return axis == o.axis && zeros == o.zeros &&
         scales.size() == o.scales.size() &&
         std::memcmp(scales.data(), o.scales.data(),
                     scales.size() * sizeof(float)) == 0;
}

/// Nine significant digits: every float prints to a text that parses back
/// to the same float.
static std::string floatText(float f) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.9g", f);
  return buf;
}

template <typename T, typename Fn>
static std::string listText(llvm::ArrayRef<T> values, Fn text) {
  std::string s = "[";
  for (size_t i = 0; i < values.size(); ++i)
    s += (i ? ", " : "") + text(values[i]);
  return s + "]";
}

std::string ember::quantToString(const TypeQuant &q) {
  auto intText = [](int32_t v) { return std::to_string(v); };
  if (q.isPerTensor() && q.scales.size() == 1 && q.zeros.size() == 1)
    return "{scale=" + floatText(q.scales[0]) + ",zero=" + intText(q.zeros[0]) +
           "}";
  return "{axis=" + std::to_string(q.axis) +
         ",scale=" + listText(llvm::ArrayRef<float>(q.scales), floatText) +
         ",zero=" + listText(llvm::ArrayRef<int32_t>(q.zeros), intText) + "}";
}

/// Parses "A, B, ..." or, with \p list, "[A, B, ...]" into \p out.
template <typename T, typename Fn>
static bool parseValues(llvm::StringRef text, bool list,
                        llvm::SmallVectorImpl<T> &out, Fn one) {
  text = text.trim();
  if (list && !(text.consume_front("[") && text.consume_back("]")))
    return false;
  llvm::SmallVector<llvm::StringRef, 8> parts;
  text.split(parts, ',');
  for (llvm::StringRef p : parts) {
    T v;
    if (!one(p.trim(), v))
      return false;
    out.push_back(v);
  }
  return !out.empty();
}

bool ember::parseQuantSuffix(llvm::StringRef q, TypeQuant &out) {
  if (!q.consume_front("{") || !q.consume_back("}"))
    return false;
  bool perAxis = q.consume_front("axis=");
  if (perAxis) {
    auto [a, rest] = q.split(',');
    if (a.trim().getAsInteger(10, out.axis))
      return false;
    q = rest;
  }
  auto [s, z] = q.split(",zero=");
  auto parseFloat = [](llvm::StringRef t, float &v) {
    std::string str = t.str();
    char *end = nullptr;
    v = std::strtof(str.c_str(), &end);
    return !str.empty() && end == str.c_str() + str.size();
  };
  auto parseZero = [](llvm::StringRef t, int32_t &v) {
    int64_t w;
    if (t.getAsInteger(10, w) || w < INT32_MIN || w > INT32_MAX)
      return false;
    v = int32_t(w);
    return true;
  };
  return s.consume_front("scale=") &&
         parseValues(s, perAxis, out.scales, parseFloat) &&
         parseValues(z, perAxis, out.zeros, parseZero);
}

/// Int8, UInt8 and Int32: the kinds whose values may be quantized.
static bool isQuantizableKind(ElemKind k) {
  return k == ElemKind::Int8 || k == ElemKind::UInt8 || k == ElemKind::Int32;
}

llvm::Error ember::checkQuantType(const Type &ty) {
  const TypeQuant *q = ty.getQuant();
  if (!q)
    return llvm::Error::success();
  if (!isQuantizableKind(ty.getElemKind()))
    return makeErrorF("type {0}: only Int8, UInt8 and Int32 are quantized",
                      ty.toString());
  if (q->scales.size() != q->zeros.size())
    return makeErrorF("type {0}: {1} scales for {2} zero points", ty.toString(),
                      q->scales.size(), q->zeros.size());
  // A header states each scale as a C literal, and a value dequantized
  // with an infinite or NaN scale has no meaning.
  for (float s : q->scales)
    if (!std::isfinite(s))
      return makeErrorF("type {0}: scale {1} is not finite", ty.toString(), s);
  if (q->isPerTensor()) {
    if (q->scales.size() != 1)
      return makeErrorF("type {0}: a per-tensor type has one scale",
                        ty.toString());
    return llvm::Error::success();
  }
  if (q->axis < 0 || q->axis >= int32_t(ty.rank()))
    return makeErrorF("type {0}: axis {1} is out of range for rank {2}",
                      ty.toString(), q->axis, ty.rank());
  if (dim_t(q->scales.size()) != ty.dims()[q->axis])
    return makeErrorF("type {0}: {1} scales for dim {2} of {3}", ty.toString(),
                      q->scales.size(), q->axis, ty.dims()[q->axis]);
  return llvm::Error::success();
}
