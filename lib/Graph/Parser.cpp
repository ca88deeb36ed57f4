//===- Parser.cpp - Reading the graph printer's text format ---------------===//
#include "ember/Graph/Parser.h"

#include "ember/Base/ElemAccess.h"

#include "ember/Graph/QuantTypes.h"
#include "ember/Graph/Verifier.h"

#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringMap.h"

#include <cmath>
#include <random>

using namespace ember;

namespace {
/// The largest type the parser accepts (the importer's element limit).
constexpr int64_t kMaxTypeElements = int64_t(1) << 31;

/// True when \p dims hold more than kMaxTypeElements elements (checked
/// before each multiplication, so the product cannot overflow).
bool exceedsTypeElements(llvm::ArrayRef<dim_t> dims) {
  int64_t elements = 1;
  for (dim_t d : dims) {
    if (int64_t(d) > kMaxTypeElements ||
        (d && elements > kMaxTypeElements / int64_t(d)))
      return true;
    elements *= int64_t(d);
  }
  return false;
}
/// The largest Constant the parser fills with values itself (64 MiB of
/// float): larger ones must come from a model, not a text.
constexpr int64_t kMaxFilledElements = int64_t(1) << 24;

/// A cursor over one line with the small lexing steps the format needs.
class Cursor {
public:
  explicit Cursor(llvm::StringRef s) : s_(s.trim()) {}
  bool empty() const { return s_.empty(); }
  llvm::StringRef rest() const { return s_; }
  bool eat(llvm::StringRef tok) {
    s_ = s_.ltrim();
    bool ok = s_.consume_front(tok);
    s_ = s_.ltrim();
    return ok;
  }
  /// Characters up to (not including) the first of \p stops.
  llvm::StringRef until(llvm::StringRef stops) {
    size_t n = s_.find_first_of(stops);
    llvm::StringRef r = s_.take_front(n);
    s_ = s_.drop_front(r.size());
    return r.trim();
  }
  /// A type: up to '>', plus a quantization suffix "{...}" if present.
  llvm::StringRef typeText() {
    s_ = s_.ltrim();
    size_t end = s_.find('>');
    if (end == llvm::StringRef::npos)
      return until("");
    ++end;
    if (s_.drop_front(end).starts_with("{"))
      end = std::min(s_.size(), s_.find('}', end) + 1);
    llvm::StringRef r = s_.take_front(end);
    s_ = s_.drop_front(end);
    return r;
  }
  llvm::StringRef word() {
    s_ = s_.ltrim();
    return until(" \t,()[]{}=:");
  }

private:
  llvm::StringRef s_;
};

class Parser {
public:
  explicit Parser(Module &M) : M_(M), gen_(0) {}
  llvm::Expected<Function *> parse(llvm::StringRef text);

private:
  llvm::Error statement(Cursor &c);
  llvm::Error storage(llvm::StringRef name, llvm::StringRef kind, Cursor &c);
  llvm::Error opNode(llvm::StringRef name, Cursor &c);
  llvm::Expected<NodeValue> operand(llvm::StringRef text);
  llvm::Expected<AttrList> attrs(OpKind kind, Cursor &c);

  Module &M_;
  Function *F_ = nullptr;
  llvm::StringMap<Node *> values_;
  std::mt19937 gen_;
  /// Constants written without values (filled with random ones).
  llvm::SmallPtrSet<const Constant *, 8> filled_;
};
} // namespace

llvm::Expected<Type> ember::parseType(llvm::StringRef text) {
  text = text.trim();
  size_t lt = text.find('<'), gt = text.find('>');
  if (lt == llvm::StringRef::npos || gt == llvm::StringRef::npos || gt < lt)
    return makeErrorF("malformed type '{0}'", text);
  std::optional<ElemKind> kind = parseElemKind(text.take_front(lt));
  if (!kind)
    return makeErrorF("unknown element kind in type '{0}'", text);
  llvm::SmallVector<dim_t, kMaxRank> dims;
  llvm::SmallVector<llvm::StringRef, kMaxRank> parts;
  llvm::StringRef dimText = text.slice(lt + 1, gt);
  if (!dimText.trim().empty())
    dimText.split(parts, 'x');
  if (parts.size() > kMaxRank)
    return makeErrorF("type '{0}' has rank {1}, more than the maximum {2}",
                      text, parts.size(), kMaxRank);
  for (llvm::StringRef p : parts) {
    dim_t d;
    if (p.trim().getAsInteger(10, d) || d < 0)
      return makeErrorF("bad dimension '{0}' in type '{1}'", p.trim(), text);
    dims.push_back(d);
  }
  if (exceedsTypeElements(dims))
    return makeErrorF("type '{0}' has more than {1} elements", text,
                      kMaxTypeElements);
  llvm::StringRef q = text.drop_front(gt + 1).trim();
  if (q.empty())
    return Type(*kind, dims);
  TypeQuant quant;
  if (!parseQuantSuffix(q, quant))
    return makeErrorF("bad quantization in type '{0}'", text);
  Type ty(*kind, dims, std::move(quant));
  EMBER_RETURN_IF_ERR(checkQuantType(ty));
  return ty;
}

/// An integer attribute value; doubles would overflow int64_t silently.
static llvm::Expected<int64_t> parseInteger(llvm::StringRef s) {
  s = s.trim();
  int64_t v;
  if (s.getAsInteger(10, v))
    return makeErrorF("bad integer '{0}'", s);
  return v;
}

static llvm::Expected<double> parseNumber(llvm::StringRef s) {
  s = s.trim();
  if (s == "inf")
    return INFINITY;
  if (s == "-inf")
    return -INFINITY;
  if (s == "nan")
    return NAN;
  double v;
  if (s.getAsDouble(v))
    return makeErrorF("bad number '{0}'", s);
  return v;
}

/// Reads "[a, b, ...]", each item with \p parse.
template <typename T>
static llvm::Expected<std::vector<T>>
list(Cursor &c, llvm::Expected<T> (*parse)(llvm::StringRef)) {
  if (!c.eat("["))
    return makeError("expected '['");
  std::vector<T> r;
  while (!c.eat("]")) {
    EMBER_ASSIGN_OR_RETURN(T v, parse(c.until(",]")));
    r.push_back(v);
    c.eat(",");
    if (c.empty())
      return makeError("unterminated list");
  }
  return r;
}

llvm::Expected<Function *> Parser::parse(llvm::StringRef text) {
  llvm::SmallVector<llvm::StringRef, 64> lines;
  text.split(lines, '\n');
  for (size_t i = 0; i < lines.size(); ++i) {
    Cursor c(lines[i]);
    if (c.empty() || c.rest().starts_with("//") || c.rest().starts_with("#"))
      continue;
    llvm::Error err = llvm::Error::success();
    if (c.eat("function")) {
      if (F_)
        err = makeError("only one function per text");
      else
        F_ = M_.createFunction(c.word());
    } else if (c.eat("}")) {
      break;
    } else if (!F_) {
      err = makeError("expected 'function NAME {'");
    } else {
      err = statement(c);
    }
    if (err)
      return makeErrorF("line {0}: {1}", i + 1, errorToString(std::move(err)));
  }
  if (!F_)
    return makeError("no function in text");
  // A printed graph has no constant values: a scale or zero point written
  // without them takes the ones its quantized result states, so that
  // print(parse(print(F))) reads back.
  for (auto &n : F_->getNodes())
    fillQuantOperands(*n, [&](const Constant *k) { return filled_.count(k); });
  EMBER_RETURN_IF_ERR(verifyFunction(*F_));
  return F_;
}

llvm::Error Parser::statement(Cursor &c) {
  llvm::StringRef name;
  if (c.eat("%")) {
    name = c.until("=");
    if (!c.eat("="))
      return makeError("expected '=' after the value name");
    if (values_.count(name))
      return makeErrorF("value %{0} is defined twice", name);
  }
  Cursor probe = c;
  llvm::StringRef kind = probe.word();
  if (kind == "Placeholder" || kind == "Constant") {
    c.word();
    return storage(name, kind, c);
  }
  return opNode(name, c);
}

llvm::Error Parser::storage(llvm::StringRef name, llvm::StringRef kind,
                            Cursor &c) {
  EMBER_ASSIGN_OR_RETURN(Type ty, parseType(c.typeText()));
  if (kind == "Placeholder") {
    llvm::StringRef role = c.word();
    if (role != "input" && role != "output")
      return makeErrorF("placeholder %{0} must be 'input' or 'output'", name);
    values_[name] = M_.createPlaceholder(name, ty, role == "output");
    return llvm::Error::success();
  }
  if (ty.size() > kMaxFilledElements)
    return makeErrorF("constant %{0} has more than {1} elements, the most a "
                      "text constant may hold",
                      name, kMaxFilledElements);
  Tensor t(ty);
  bool filled = c.empty();
  if (filled) {
    t.randomize(-1.f, 1.f, gen_);
  } else {
    EMBER_ASSIGN_OR_RETURN(std::vector<double> v, list(c, parseNumber));
    if (v.size() != 1 && v.size() != size_t(t.size()))
      return makeErrorF("constant %{0} has {1} values, its type holds {2}",
                        name, v.size(), t.size());
    ElemKind ek = ty.getElemKind();
    if (ek != ElemKind::Float32 && ek != ElemKind::Bool)
      return makeErrorF(
          "constant %{0}: values can only be given for float and bool", name);
    for (dim_t i = 0; i < t.size(); ++i)
      storeElement(t.data(), ek, i, v.size() == 1 ? v[0] : v[i]);
  }
  Constant *k = M_.createConstant(name, std::move(t));
  if (filled)
    filled_.insert(k);
  values_[name] = k;
  return llvm::Error::success();
}

llvm::Expected<NodeValue> Parser::operand(llvm::StringRef text) {
  text = text.trim();
  if (!text.consume_front("%"))
    return makeErrorF("expected an operand '%name', got '{0}'", text);
  auto [name, res] = text.rsplit('#');
  unsigned resNo = 0;
  if (res.empty() || res.getAsInteger(10, resNo))
    name = text, resNo = 0;
  auto it = values_.find(name);
  if (it == values_.end())
    return makeErrorF("unknown value %{0}", name);
  if (resNo >= it->second->getNumResults())
    return makeErrorF("%{0} has no result {1}", name, resNo);
  return NodeValue(it->second, resNo);
}

static llvm::Expected<Attr> attrValue(AttrKind kind, Cursor &c) {
  switch (kind) {
  case AttrKind::Int: {
    EMBER_ASSIGN_OR_RETURN(int64_t v, parseInteger(c.until(",}")));
    return Attr::makeInt(v);
  }
  case AttrKind::Float: {
    EMBER_ASSIGN_OR_RETURN(double v, parseNumber(c.until(",}")));
    return Attr::makeFloat(float(v));
  }
  case AttrKind::Ints: {
    EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> v, list(c, parseInteger));
    return Attr::makeInts(std::move(v));
  }
  case AttrKind::Floats: {
    EMBER_ASSIGN_OR_RETURN(std::vector<double> v, list(c, parseNumber));
    return Attr::makeFloats(std::vector<float>(v.begin(), v.end()));
  }
  case AttrKind::String: {
    llvm::StringRef s = c.until(",}");
    if (!s.consume_front("\"") || !s.consume_back("\""))
      return makeErrorF("expected a quoted string, got '{0}'", s);
    return Attr::makeString(s);
  }
  case AttrKind::ElemKind: {
    llvm::StringRef s = c.until(",}");
    std::optional<ElemKind> k = parseElemKind(s);
    if (!k)
      return makeErrorF("unknown element kind '{0}'", s);
    return Attr::makeElemKind(*k);
  }
  }
  return makeError("unknown attribute kind");
}

llvm::Expected<AttrList> Parser::attrs(OpKind kind, Cursor &c) {
  const OpInfo &info = getOpInfo(kind);
  AttrList list;
  for (const AttrInfo &a : info.attrs) {
    Attr zero;
    zero.kind = a.kind;
    list.push_back(zero);
  }
  if (!c.eat("{"))
    return list;
  while (!c.eat("}")) {
    llvm::StringRef name = c.word();
    if (!c.eat("="))
      return makeErrorF("expected '=' after attribute {0}", name);
    unsigned idx = 0;
    while (idx < info.attrs.size() && name != info.attrs[idx].name)
      ++idx;
    if (idx == info.attrs.size())
      return makeErrorF("{0} has no attribute '{1}'", info.name, name);
    EMBER_ASSIGN_OR_RETURN(list[idx], attrValue(info.attrs[idx].kind, c));
    c.eat(",");
    if (c.empty())
      return makeError("unterminated attribute list");
  }
  return list;
}

llvm::Error Parser::opNode(llvm::StringRef name, Cursor &c) {
  llvm::StringRef kindName = c.word();
  std::optional<OpKind> kind = lookupOpKind(kindName);
  if (!kind)
    return makeErrorF("unknown op '{0}'", kindName);
  if (!c.eat("("))
    return makeErrorF("expected '(' after {0}", kindName);
  llvm::SmallVector<NodeValue, 4> ins;
  while (!c.eat(")")) {
    EMBER_ASSIGN_OR_RETURN(NodeValue v, operand(c.until(",)")));
    ins.push_back(v);
    c.eat(",");
    if (c.empty())
      return makeError("unterminated operand list");
  }
  EMBER_ASSIGN_OR_RETURN(AttrList attrList, attrs(*kind, c));
  if (name.empty())
    name = kindName; // Save has no result name
  Node *n = nullptr;
  if (c.eat(":")) {
    llvm::SmallVector<TypeRef, 1> types;
    while (!c.empty()) {
      EMBER_ASSIGN_OR_RETURN(Type t, parseType(c.typeText()));
      types.push_back(M_.uniqueType(t));
      c.eat(",");
    }
    n = F_->createNodeWithTypes(*kind, name, ins, types, std::move(attrList));
  } else {
    EMBER_ASSIGN_OR_RETURN(
        n, F_->tryCreateNode(*kind, name, ins, std::move(attrList)));
    // An inferred result must obey the limit a written type does (a Tile of
    // a large input otherwise prints a type that does not parse back).
    for (unsigned r = 0; r < n->getNumResults(); ++r)
      if (exceedsTypeElements(n->getNthResult(r).dims())) {
        F_->eraseNode(n);
        return makeErrorF("%{0}: the result has more than {1} elements", name,
                          kMaxTypeElements);
      }
  }
  if (n->getNumResults())
    values_[name] = n;
  return llvm::Error::success();
}

llvm::Expected<Function *> ember::parseFunction(llvm::StringRef text,
                                                Module &M) {
  return Parser(M).parse(text);
}
