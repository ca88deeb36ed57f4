//===- ElemAccess.h - Kind-generic element loads and stores -----*- C++ -*-===//
//
// Reads and writes one element of any plain element kind as a double. The
// Interpreter's kind-generic kernels and the tensor utilities use these;
// float16 is converted to and from IEEE binary16 here.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_BASE_ELEMACCESS_H
#define EMBER_BASE_ELEMACCESS_H

#include "ember/Base/ElemKind.h"

namespace ember {

/// Converts IEEE binary16 bits to float.
float halfToFloat(uint16_t h);
/// Converts a float to IEEE binary16 bits (round to nearest even).
uint16_t floatToHalf(float f);

/// Element \p i of an array of \p kind at \p base, as a double. Int64 and
/// UInt64 values above 2^53 lose precision.
double loadElement(const void *base, ElemKind kind, int64_t i);

/// Stores \p v into element \p i of an array of \p kind at \p base. Integer
/// kinds truncate toward zero (NaN gives 0); Bool stores v != 0.
void storeElement(void *base, ElemKind kind, int64_t i, double v);

/// Whether \p kind holds \p v exactly: storing it and loading it back gives
/// \p v (false for NaN, fractions in integer kinds, values out of range).
bool holdsExactly(ElemKind kind, double v);

/// Element \p i as an int64 without a round trip through double (integer,
/// Bool and float kinds).
int64_t loadElementInt(const void *base, ElemKind kind, int64_t i);

} // namespace ember

#endif // EMBER_BASE_ELEMACCESS_H
