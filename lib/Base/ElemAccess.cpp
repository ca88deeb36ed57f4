//===- ElemAccess.cpp - Kind-generic element loads and stores -------------===//
#include "ember/Base/ElemAccess.h"

#include "llvm/Support/ErrorHandling.h"

#include <cmath>
#include <cstring>
#include <limits>

using namespace ember;

float ember::halfToFloat(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else { // Subnormal: value = mant * 2^-24.
      float f = std::ldexp(float(mant), -24);
      return sign ? -f : f;
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp + 112) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t ember::floatToHalf(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint16_t sign = (x >> 16) & 0x8000;
  uint32_t absx = x & 0x7fffffffu;
  if (absx >= 0x7f800000u) // Inf or NaN.
    return sign | 0x7c00 | (absx > 0x7f800000u ? 0x200 : 0);
  if (absx >= 0x477ff000u) // Rounds to a value beyond the largest half.
    return sign | 0x7c00;
  if (absx < 0x38800000u) { // Subnormal half or zero: round mant * 2^24.
    float a;
    std::memcpy(&a, &absx, 4);
    return sign | uint16_t(std::nearbyint(a * 16777216.f));
  }
  uint32_t mant = absx & 0x7fffff, exp = (absx >> 23) - 112;
  uint32_t h = (exp << 10) | (mant >> 13);
  uint32_t rest = mant & 0x1fff;
  if (rest > 0x1000 || (rest == 0x1000 && (h & 1)))
    ++h; // Carries into the exponent correctly.
  return sign | uint16_t(h);
}

template <typename T> static T at(const void *base, int64_t i) {
  T v;
  std::memcpy(&v, static_cast<const char *>(base) + i * sizeof(T), sizeof(T));
  return v;
}

template <typename T> static void put(void *base, int64_t i, T v) {
  std::memcpy(static_cast<char *>(base) + i * sizeof(T), &v, sizeof(T));
}

double ember::loadElement(const void *base, ElemKind kind, int64_t i) {
  switch (kind) {
  case ElemKind::Float32:
    return at<float>(base, i);
  case ElemKind::Float64:
    return at<double>(base, i);
  case ElemKind::Float16:
    return halfToFloat(at<uint16_t>(base, i));
  case ElemKind::BFloat16: {
    uint32_t bits = uint32_t(at<uint16_t>(base, i)) << 16;
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
  }
  case ElemKind::UInt64: // values of 2^63 and more are not negative
    return double(at<uint64_t>(base, i));
  default:
    return double(loadElementInt(base, kind, i));
  }
}

int64_t ember::loadElementInt(const void *base, ElemKind kind, int64_t i) {
  switch (kind) {
  case ElemKind::Int8:
  case ElemKind::Int8Q:
    return at<int8_t>(base, i);
  case ElemKind::UInt8:
  case ElemKind::UInt8Q:
  case ElemKind::Bool:
    return at<uint8_t>(base, i);
  case ElemKind::Int16:
    return at<int16_t>(base, i);
  case ElemKind::UInt16:
    return at<uint16_t>(base, i);
  case ElemKind::Int32:
  case ElemKind::Int32Q:
    return at<int32_t>(base, i);
  case ElemKind::UInt32:
    return at<uint32_t>(base, i);
  case ElemKind::Int64:
    return at<int64_t>(base, i);
  case ElemKind::UInt64:
    return int64_t(at<uint64_t>(base, i));
  default: {
    double d = loadElement(base, kind, i);
    return std::isnan(d) ? 0 : int64_t(d);
  }
  }
}

/// Converts to integer type T, truncating toward zero; NaN gives 0 and
/// out-of-range values wrap like a two's-complement conversion from int64.
template <typename T> static T toInt(double v) {
  if (std::isnan(v))
    return 0;
  if (v >= 9.2233720368547758e18)
    return T(std::numeric_limits<int64_t>::max());
  if (v <= -9.2233720368547758e18)
    return T(std::numeric_limits<int64_t>::min());
  return T(int64_t(v));
}

void ember::storeElement(void *base, ElemKind kind, int64_t i, double v) {
  switch (kind) {
  case ElemKind::Float32:
    return put<float>(base, i, float(v));
  case ElemKind::Float64:
    return put<double>(base, i, v);
  case ElemKind::Float16:
    return put<uint16_t>(base, i, floatToHalf(float(v)));
  case ElemKind::BFloat16: {
    float f = float(v);
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    if (std::isnan(f)) // a quiet NaN of the same sign, not a carry into it
      return put<uint16_t>(base, i, uint16_t((bits >> 16) | 0x40));
    bits += 0x7fff + ((bits >> 16) & 1);
    return put<uint16_t>(base, i, uint16_t(bits >> 16));
  }
  case ElemKind::Bool:
    return put<uint8_t>(base, i, v != 0);
  case ElemKind::Int8:
  case ElemKind::Int8Q:
    return put<int8_t>(base, i, toInt<int8_t>(v));
  case ElemKind::UInt8:
  case ElemKind::UInt8Q:
    return put<uint8_t>(base, i, toInt<uint8_t>(v));
  case ElemKind::Int16:
    return put<int16_t>(base, i, toInt<int16_t>(v));
  case ElemKind::UInt16:
    return put<uint16_t>(base, i, toInt<uint16_t>(v));
  case ElemKind::Int32:
  case ElemKind::Int32Q:
    return put<int32_t>(base, i, toInt<int32_t>(v));
  case ElemKind::UInt32:
    return put<uint32_t>(base, i, toInt<uint32_t>(v));
  case ElemKind::Int64:
    return put<int64_t>(base, i, toInt<int64_t>(v));
  case ElemKind::UInt64:
    return put<uint64_t>(
        base, i,
        v >= 1.8446744073709552e19   ? ~uint64_t(0) // saturates (no UB)
        : v >= 9.2233720368547758e18 ? uint64_t(v)
                                     : uint64_t(toInt<int64_t>(v)));
  }
  llvm_unreachable("storeElement: unknown element kind");
}

bool ember::holdsExactly(ElemKind kind, double v) {
  if (std::isnan(v))
    return false;
  // Above these, int64 conversion is undefined; 2^63 itself rounds from
  // INT64_MAX as a double, so it is out of range too.
  if (isIntegerKind(kind) &&
      (v >= 9.2233720368547758e18 || v < -9.2233720368547758e18))
    return false;
  uint64_t slot = 0;
  storeElement(&slot, kind, 0, v);
  return loadElement(&slot, kind, 0) == v;
}
