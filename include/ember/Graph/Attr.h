//===- Attr.h - Node and instruction attributes ----------------*- C++ -*-===//
#ifndef EMBER_GRAPH_ATTR_H
#define EMBER_GRAPH_ATTR_H

#include "ember/Base/ElemKind.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <string>
#include <vector>

namespace ember {

/// The value kinds an attribute can hold.
enum class AttrKind : uint8_t { Int, Float, Ints, Floats, String, ElemKind };

/// One attribute value. Which field is meaningful depends on kind; ElemKind
/// attributes store the enum in `i`.
struct Attr {
  AttrKind kind = AttrKind::Int;
  int64_t i = 0;
  float f = 0.f;
  std::vector<int64_t> ints;
  std::vector<float> floats;
  std::string s;

  static Attr makeInt(int64_t v);
  static Attr makeFloat(float v);
  static Attr makeInts(llvm::ArrayRef<int64_t> v);
  static Attr makeFloats(llvm::ArrayRef<float> v);
  static Attr makeString(llvm::StringRef v);
  static Attr makeElemKind(ElemKind v);

  bool operator==(const Attr &o) const;
  bool operator!=(const Attr &o) const { return !(*this == o); }
  /// Renders the value the way the graph and IR printers show it.
  std::string toString() const;
  size_t hash() const;
};

/// The attributes of one node, in op-table order.
using AttrList = llvm::SmallVector<Attr, 4>;

} // namespace ember

#endif // EMBER_GRAPH_ATTR_H
