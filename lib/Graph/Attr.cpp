//===- Attr.cpp - Attribute values ----------------------------------------===//
#include "ember/Graph/Attr.h"

#include "llvm/ADT/Hashing.h"

#include <cstring>
#include <sstream>

using namespace ember;

Attr Attr::makeInt(int64_t v) {
  Attr a;
  a.kind = AttrKind::Int;
  a.i = v;
  return a;
}
Attr Attr::makeFloat(float v) {
  Attr a;
  a.kind = AttrKind::Float;
  a.f = v;
  return a;
}
Attr Attr::makeInts(llvm::ArrayRef<int64_t> v) {
  Attr a;
  a.kind = AttrKind::Ints;
  a.ints.assign(v.begin(), v.end());
  return a;
}
Attr Attr::makeFloats(llvm::ArrayRef<float> v) {
  Attr a;
  a.kind = AttrKind::Floats;
  a.floats.assign(v.begin(), v.end());
  return a;
}
Attr Attr::makeString(llvm::StringRef v) {
  Attr a;
  a.kind = AttrKind::String;
  a.s = v.str();
  return a;
}
Attr Attr::makeElemKind(ElemKind v) {
  Attr a;
  a.kind = AttrKind::ElemKind;
  a.i = int64_t(v);
  return a;
}

bool Attr::operator==(const Attr &o) const {
  if (kind != o.kind)
    return false;
  switch (kind) {
  case AttrKind::Int:
  case AttrKind::ElemKind:
    return i == o.i;
  case AttrKind::Float:
    // Bitwise, so that NaN attributes compare equal to themselves.
    return std::memcmp(&f, &o.f, sizeof(float)) == 0;
  case AttrKind::Ints:
    return ints == o.ints;
  case AttrKind::Floats:
    return floats.size() == o.floats.size() &&
           std::memcmp(floats.data(), o.floats.data(),
                       floats.size() * sizeof(float)) == 0;
  case AttrKind::String:
    return s == o.s;
  }
  return false;
}

static std::string floatToString(float f) {
  std::ostringstream os;
  os.precision(9);
  os << f;
  return os.str();
}

std::string Attr::toString() const {
  switch (kind) {
  case AttrKind::Int:
    return std::to_string(i);
  case AttrKind::ElemKind:
    return elemKindName(ElemKind(i)).str();
  case AttrKind::Float:
    return floatToString(f);
  case AttrKind::Ints: {
    std::string r = "[";
    for (size_t k = 0; k < ints.size(); ++k)
      r += (k ? ", " : "") + std::to_string(ints[k]);
    return r + "]";
  }
  case AttrKind::Floats: {
    std::string r = "[";
    for (size_t k = 0; k < floats.size(); ++k)
      r += (k ? ", " : "") + floatToString(floats[k]);
    return r + "]";
  }
  case AttrKind::String:
    return "\"" + s + "\"";
  }
  return "?";
}

static uint32_t floatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof(u));
  return u;
}

size_t Attr::hash() const {
  switch (kind) {
  case AttrKind::Int:
  case AttrKind::ElemKind:
    return llvm::hash_combine(int(kind), i);
  case AttrKind::Float:
    return llvm::hash_combine(int(kind), floatBits(f));
  case AttrKind::Ints:
    return llvm::hash_combine(int(kind), llvm::hash_combine_range(
                                             ints.begin(), ints.end()));
  case AttrKind::Floats:
  {
    llvm::hash_code h = llvm::hash_value(int(kind));
    for (float v : floats)
      h = llvm::hash_combine(h, floatBits(v));
    return h;
  }
  case AttrKind::String:
    return llvm::hash_combine(int(kind), s);
  }
  return 0;
}
