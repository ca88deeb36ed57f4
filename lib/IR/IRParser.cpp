//===- IRParser.cpp - Reads the textual IR back ---------------------------===//
//
// A line-oriented recursive-descent parser for the format printIR writes.
// Each line of the declare and code sections is one weight or instruction.
//
//===----------------------------------------------------------------------===//
#include "ember/IR/IRParser.h"

#include "ember/Base/Error.h"
#include "ember/IR/IRGen.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"

#include <cstdlib>

using namespace ember;

namespace {
/// A cursor over one line with the primitive token readers.
class LineLexer {
public:
  explicit LineLexer(llvm::StringRef line) : rest_(line) {}

  /// True at the end of the line or at a trailing comment.
  bool atEnd() {
    skipSpace();
    return rest_.empty() || rest_.starts_with("//");
  }
  /// Consumes \p s if the line continues with it (after spaces).
  bool consume(llvm::StringRef s) {
    skipSpace();
    return rest_.consume_front(s);
  }
  /// Consumes \p s if the line continues with it right here (no spaces).
  bool consumeAttached(llvm::StringRef s) { return rest_.consume_front(s); }
  /// A run of characters up to a space, a comma or one of \p stops.
  llvm::StringRef word(llvm::StringRef stops = "") {
    skipSpace();
    size_t n = 0;
    while (n < rest_.size() && !llvm::StringRef(" \t,").contains(rest_[n]) &&
           !stops.contains(rest_[n]))
      ++n;
    llvm::StringRef w = rest_.take_front(n);
    rest_ = rest_.drop_front(n);
    return w;
  }
  /// Skips a leading run of digits (an instruction number).
  void skipNumber() {
    skipSpace();
    rest_ = rest_.drop_while([](char c) { return c >= '0' && c <= '9'; });
  }
  /// Everything up to the next \p c (not consumed); nullopt if absent.
  std::optional<llvm::StringRef> until(char c) {
    size_t n = rest_.find(c);
    if (n == llvm::StringRef::npos)
      return std::nullopt;
    llvm::StringRef w = rest_.take_front(n);
    rest_ = rest_.drop_front(n);
    return w;
  }
  /// A value name after '%': plain, or quoted with \" and \\ escapes.
  std::optional<std::string> name() {
    if (!consume("%"))
      return std::nullopt;
    if (!rest_.consume_front("\"")) {
      llvm::StringRef w = word("{}");
      return w.empty() ? std::nullopt : std::optional<std::string>(w.str());
    }
    std::string s;
    while (!rest_.empty() && rest_.front() != '"') {
      if (rest_.front() == '\\' && rest_.size() > 1)
        rest_ = rest_.drop_front();
      s += rest_.front();
      rest_ = rest_.drop_front();
    }
    if (!rest_.consume_front("\""))
      return std::nullopt;
    return s;
  }

private:
  void skipSpace() { rest_ = rest_.ltrim(" \t"); }
  llvm::StringRef rest_;
};

std::optional<int64_t> toInt(llvm::StringRef s) {
  long long v;
  if (s.getAsInteger(10, v))
    return std::nullopt;
  return int64_t(v);
}

std::optional<float> toFloat(llvm::StringRef s) {
  if (s.empty())
    return std::nullopt;
  std::string str = s.str();
  char *end = nullptr;
  float f = std::strtof(str.c_str(), &end);
  if (end != str.c_str() + str.size())
    return std::nullopt;
  return f;
}

/// A type as Type::toString writes it: kind<d0 x d1 ...>, followed by its
/// quantization {...} (parseQuantSuffix) if it has one.
std::optional<Type> parseType(LineLexer &lex) {
  std::optional<ElemKind> kind = parseElemKind(lex.word("<"));
  if (!kind || !lex.consume("<"))
    return std::nullopt;
  llvm::SmallVector<dim_t, 6> dims;
  while (!lex.consume(">")) {
    if (!dims.empty() && !lex.consume("x"))
      return std::nullopt;
    std::optional<int64_t> d = toInt(lex.word(">"));
    if (!d || *d < 0 || dims.size() == kMaxRank)
      return std::nullopt;
    dims.push_back(dim_t(*d));
  }
  if (!lex.consumeAttached("{"))
    return Type(*kind, dims);
  std::optional<llvm::StringRef> body = lex.until('}');
  TypeQuant q;
  if (!body || !lex.consume("}") ||
      !parseQuantSuffix(("{" + *body + "}").str(), q))
    return std::nullopt;
  Type ty(*kind, dims, std::move(q));
  if (llvm::Error e = checkQuantType(ty)) {
    llvm::consumeError(std::move(e));
    return std::nullopt;
  }
  return ty;
}

/// A list "[a, b, ...]" of items read by \p item.
template <typename T, typename Fn>
std::optional<std::vector<T>> parseList(LineLexer &lex, Fn item) {
  std::vector<T> v;
  if (!lex.consume("["))
    return std::nullopt;
  if (lex.consume("]"))
    return v;
  do {
    std::optional<T> x = item(lex.word("]"));
    if (!x)
      return std::nullopt;
    v.push_back(*x);
  } while (lex.consume(","));
  if (!lex.consume("]"))
    return std::nullopt;
  return v;
}

/// One attribute value of kind \p kind as Attr::toString writes it.
std::optional<Attr> parseAttrValue(LineLexer &lex, AttrKind kind) {
  switch (kind) {
  case AttrKind::Int:
    if (auto v = toInt(lex.word("}")))
      return Attr::makeInt(*v);
    return std::nullopt;
  case AttrKind::Float:
    if (auto v = toFloat(lex.word("}")))
      return Attr::makeFloat(*v);
    return std::nullopt;
  case AttrKind::ElemKind:
    if (auto v = parseElemKind(lex.word("}")))
      return Attr::makeElemKind(*v);
    return std::nullopt;
  case AttrKind::Ints:
    if (auto v = parseList<int64_t>(lex, toInt))
      return Attr::makeInts(*v);
    return std::nullopt;
  case AttrKind::Floats:
    if (auto v = parseList<float>(lex, toFloat))
      return Attr::makeFloats(*v);
    return std::nullopt;
  case AttrKind::String: {
    if (!lex.consume("\""))
      return std::nullopt;
    std::optional<llvm::StringRef> s = lex.until('"');
    if (!s || !lex.consume("\""))
      return std::nullopt;
    return Attr::makeString(*s);
  }
  }
  return std::nullopt;
}

/// The table op whose printed (lower-case) name is \p name.
std::optional<OpKind> opKindByPrintedName(llvm::StringRef name) {
  static const llvm::StringMap<OpKind> map = [] {
    llvm::StringMap<OpKind> m;
    for (unsigned i = 0; i < kNumOpKinds; ++i)
      m[llvm::StringRef(getOpInfo(OpKind(i)).name).lower()] = OpKind(i);
    return m;
  }();
  auto it = map.find(name);
  if (it == map.end())
    return std::nullopt;
  return it->second;
}

/// Builds one IRFunction from the lines of its text.
class Parser {
public:
  Parser(llvm::StringRef bufferName, const Module *constants)
      : bufferName_(bufferName), constants_(constants) {}

  llvm::Expected<ParsedIR> run(llvm::StringRef text);

private:
  llvm::Error error(const llvm::Twine &msg) const {
    return makeError(bufferName_ + ":" + llvm::Twine(lineNo_) + ": " + msg);
  }
  llvm::Error parseWeight(LineLexer &lex);
  llvm::Error parseInstr(LineLexer &lex);
  llvm::Error parseTableInstr(LineLexer &lex, OpKind op,
                              const std::string &name);
  llvm::Expected<Operand> parseOperand(LineLexer &lex);
  llvm::Expected<TypeRef> type(LineLexer &lex) {
    std::optional<Type> ty = parseType(lex);
    if (!ty)
      return error("expected a type such as float<1 x 3>");
    // Reject sizes whose byte count could overflow before anything is
    // computed from them.
    double bytes = elemSize(ty->getElemKind());
    for (dim_t d : ty->dims())
      bytes *= double(d);
    if (bytes > double(kMaxTypeBytes))
      return error("type " + ty->toString() + " is larger than 2^40 bytes");
    return F_->getType(*ty);
  }
  static constexpr uint64_t kMaxTypeBytes = uint64_t(1) << 40;
  /// The largest constant the parser fills with zeros itself.
  static constexpr uint64_t kMaxZeroPayloadBytes = uint64_t(1) << 30;
  llvm::Error define(const std::string &name, Value *v) {
    if (!values_.try_emplace(name, v).second)
      return error("value %" + name + " is defined twice");
    if (v->getName() != name)
      return error("value name %" + name + " is reserved");
    return llvm::Error::success();
  }

  std::string bufferName_;
  const Module *constants_;
  unsigned lineNo_ = 0;
  std::unique_ptr<Module> M_;
  std::unique_ptr<IRFunction> F_;
  llvm::StringMap<Value *> values_;
};
} // namespace

llvm::Error Parser::parseWeight(LineLexer &lex) {
  std::optional<std::string> name = lex.name();
  if (!name || !lex.consume("=") || lex.word() != "weight")
    return error("expected '%name = weight TYPE const|mutable ...'");
  EMBER_ASSIGN_OR_RETURN(TypeRef ty, type(lex));
  llvm::StringRef kind = lex.word();
  WeightVar *w = nullptr;
  if (kind == "const") {
    const Tensor *payload = nullptr;
    if (constants_)
      for (auto &c : constants_->getConstants())
        if (c->getName() == *name && *c->getType() == *ty)
          payload = &c->getPayload();
    if (!payload && ty->sizeInBytes() > kMaxZeroPayloadBytes)
      return error("constant %" + *name +
                   " is too large for a zero payload (over 1 GiB)");
    if (!payload)
      payload = &M_->createConstant(*name, Tensor(*ty))->getPayload();
    w = F_->createWeightVar(*name, ty, WeightKind::Constant, payload, false);
  } else if (kind == "mutable") {
    llvm::StringRef io = lex.word();
    if (io != "input" && io != "output")
      return error("a mutable weight must be 'input' or 'output'");
    w = F_->createWeightVar(*name, ty, WeightKind::Mutable, nullptr,
                            io == "output");
  } else {
    return error("weight kind must be 'const' or 'mutable', not '" + kind +
                 "'");
  }
  if (!lex.atEnd())
    return error("unexpected text after the weight");
  return define(*name, w);
}

llvm::Expected<Operand> Parser::parseOperand(LineLexer &lex) {
  llvm::StringRef roleName = lex.word();
  std::optional<OperandRole> role;
  for (OperandRole r : {OperandRole::In, OperandRole::Out, OperandRole::InOut})
    if (roleName == operandRoleName(r))
      role = r;
  if (!role)
    return error("expected an operand role @in, @out or @inout, not '" +
                 roleName + "'");
  std::optional<std::string> name = lex.name();
  if (!name)
    return error("expected %name after " + roleName);
  auto it = values_.find(*name);
  if (it == values_.end())
    return error("use of undefined value %" + *name);
  if (!it->second->getType())
    return error("%" + *name + " is an instruction, not a buffer");
  return Operand{it->second, *role};
}

llvm::Error Parser::parseTableInstr(LineLexer &lex, OpKind op,
                                    const std::string &name) {
  llvm::SmallVector<Operand, 6> ops;
  while (!lex.atEnd() && !lex.consume("{")) {
    if (!ops.empty() && !lex.consume(","))
      return error("expected ',' between operands");
    EMBER_ASSIGN_OR_RETURN(Operand o, parseOperand(lex));
    ops.push_back(o);
  }
  const OpInfo &info = getOpInfo(op);
  AttrList attrs;
  for (unsigned i = 0; i < info.attrs.size(); ++i) {
    if (i && !lex.consume(","))
      return error("expected ',' between attributes");
    if (lex.word("=") != info.attrs[i].name || !lex.consume("="))
      return error(llvm::Twine("expected attribute ") + info.attrs[i].name +
                   " of " + info.name);
    std::optional<Attr> a = parseAttrValue(lex, info.attrs[i].kind);
    if (!a)
      return error(llvm::Twine("bad value for attribute ") +
                   info.attrs[i].name);
    attrs.push_back(*a);
  }
  if (!info.attrs.empty() && !lex.consume("}"))
    return error("expected '}' after the attributes");
  if (!lex.atEnd())
    return error("unexpected text after the instruction");
  return define(name, F_->createOpInstr(*instrKindForOp(op), name, ops,
                                        std::move(attrs)));
}

llvm::Error Parser::parseInstr(LineLexer &lex) {
  lex.skipNumber(); // The optional instruction number.
  if (lex.consume("deallocactivation")) {
    EMBER_ASSIGN_OR_RETURN(Operand o, parseOperand(lex));
    auto *a = llvm::dyn_cast<AllocActivationInst>(o.value);
    if (!a || o.role != OperandRole::Out || !lex.atEnd())
      return error("expected 'deallocactivation @out %alloc'");
    F_->createDeallocActivation(a);
    return llvm::Error::success();
  }
  std::optional<std::string> name = lex.name();
  if (!name || !lex.consume("="))
    return error("expected '%name = KIND ...' or 'deallocactivation'");
  llvm::StringRef kind = lex.word();
  if (kind == "allocactivation") {
    EMBER_ASSIGN_OR_RETURN(TypeRef ty, type(lex));
    if (!lex.atEnd())
      return error("unexpected text after the allocation");
    return define(*name, F_->createAllocActivation(*name, ty));
  }
  if (kind == "tensorview") {
    EMBER_ASSIGN_OR_RETURN(TypeRef ty, type(lex));
    EMBER_ASSIGN_OR_RETURN(Operand src, parseOperand(lex));
    std::optional<int64_t> off;
    if (lex.consume("{Offset="))
      off = toInt(lex.word("}"));
    if (src.role != OperandRole::In || !off || !lex.consume("}") ||
        !lex.atEnd())
      return error("expected 'tensorview TYPE @in %src {Offset=N}'");
    return define(*name, F_->createTensorView(*name, src.value, ty, *off));
  }
  if (kind == "copy") {
    EMBER_ASSIGN_OR_RETURN(Operand dest, parseOperand(lex));
    if (!lex.consume(","))
      return error("expected ',' between operands");
    EMBER_ASSIGN_OR_RETURN(Operand src, parseOperand(lex));
    if (dest.role != OperandRole::Out || src.role != OperandRole::In ||
        !lex.atEnd())
      return error("expected 'copy @out %dest, @in %src'");
    return define(*name, F_->createCopy(*name, dest.value, src.value));
  }
  std::optional<OpKind> op = opKindByPrintedName(kind);
  if (!op || !instrKindForOp(*op))
    return error("unknown instruction kind '" + kind + "'");
  return parseTableInstr(lex, *op, *name);
}

llvm::Expected<ParsedIR> Parser::run(llvm::StringRef text) {
  enum class Section { Top, Declare, Code, Memory, Done } sec = Section::Top;
  M_ = std::make_unique<Module>();
  llvm::SmallVector<llvm::StringRef, 0> lines;
  text.split(lines, '\n');
  for (llvm::StringRef raw : lines) {
    ++lineNo_;
    llvm::StringRef line = raw.trim();
    if (line.empty() || line.starts_with("//"))
      continue;
    LineLexer lex(line);
    if (sec == Section::Top) {
      if (!F_ && line.consume_front("function ")) {
        F_ = std::make_unique<IRFunction>(line.trim(), M_.get());
        continue;
      }
      if (F_ && line == "declare {") {
        sec = Section::Declare;
        continue;
      }
      if (F_ && line == "code {") {
        sec = Section::Code;
        continue;
      }
      if (F_ && line == "memory {") {
        sec = Section::Memory;
        continue;
      }
      return error(F_ ? "expected 'declare {', 'code {' or 'memory {'"
                      : "expected 'function NAME'");
    }
    if (line == "}") {
      sec = Section::Top;
      continue;
    }
    if (sec == Section::Declare)
      EMBER_RETURN_IF_ERR(parseWeight(lex));
    else if (sec == Section::Code)
      EMBER_RETURN_IF_ERR(parseInstr(lex));
  }
  if (!F_)
    return error("no 'function NAME' line");
  if (sec != Section::Top)
    return error("missing '}' at the end of a section");
  if (llvm::Error err = verifyIR(*F_))
    return makeError(bufferName_ +
                     ": invalid IR: " + errorToString(std::move(err)));
  return ParsedIR{std::move(M_), std::move(F_)};
}

llvm::Expected<ParsedIR> ember::parseIR(llvm::StringRef text,
                                        llvm::StringRef bufferName,
                                        const Module *constants) {
  Parser p(bufferName, constants);
  return p.run(text);
}
