//===- KernelParser.cpp - Reads the text Kernel::print writes -------------===//
//
// A line-oriented recursive-descent parser. Every expression is built with
// the Kernel builders, so types are derived exactly as the lowering derives
// them; only constants carry their kind in the text.
//
//===----------------------------------------------------------------------===//
#include "KernelNames.h"
#include "ember/Kernel/KernelText.h"

#include "ember/Base/Error.h"

#include <charconv>

using namespace ember;
using namespace ember::kir;

namespace {

class KernelParser {
public:
  explicit KernelParser(llvm::StringRef text) {
    text.split(lines_, '\n', -1, /*KeepEmpty=*/true);
  }
  llvm::Expected<std::vector<Kernel>> parseAll();

private:
  llvm::SmallVector<llvm::StringRef, 64> lines_;
  size_t line_ = 0;     ///< Index of the line being read.
  llvm::StringRef cur_; ///< What is left of it.
  Kernel *k_ = nullptr;

  llvm::Error error(const llvm::Twine &msg) const {
    return makeError("kernel text line " + llvm::Twine(line_ + 1) + ": " + msg);
  }
  bool atEnd() const { return line_ >= lines_.size(); }
  /// Moves to the next non-blank line; false at the end of the text.
  bool nextLine();
  bool consume(llvm::StringRef tok) {
    cur_ = cur_.ltrim(' ');
    return cur_.consume_front(tok);
  }
  llvm::Error expect(llvm::StringRef tok) {
    return consume(tok) ? llvm::Error::success()
                        : error("expected '" + tok + "' at '" + cur_ + "'");
  }
  llvm::Expected<uint64_t> number();
  llvm::Expected<unsigned> id(char prefix, size_t limit, const char *what);
  llvm::Expected<ExprRef> expr();
  llvm::Expected<ExprRef> parenthesized();
  llvm::Expected<ExprRef> constant();
  llvm::Expected<ExprRef> applied(llvm::StringRef name);
  llvm::Error declarations();
  llvm::Expected<std::vector<Stmt>> block(bool nested);
  llvm::Expected<Stmt> statement();
  llvm::Expected<Stmt> loop(bool parallel);
  llvm::Expected<Stmt> call();
};

bool KernelParser::nextLine() {
  while (++line_ < lines_.size()) {
    cur_ = lines_[line_].trim();
    if (!cur_.empty())
      return true;
  }
  return false;
}

llvm::Expected<uint64_t> KernelParser::number() {
  cur_ = cur_.ltrim(' ');
  size_t n = 0;
  while (n < cur_.size() && std::isdigit(static_cast<unsigned char>(cur_[n])))
    ++n;
  uint64_t v = 0;
  if (n == 0 || cur_.take_front(n).getAsInteger(10, v))
    return error("expected a number at '" + cur_ + "'");
  cur_ = cur_.drop_front(n);
  return v;
}

llvm::Expected<unsigned> KernelParser::id(char prefix, size_t limit,
                                          const char *what) {
  cur_ = cur_.ltrim(' ');
  if (!cur_.consume_front(llvm::StringRef(&prefix, 1)))
    return error(llvm::Twine("expected a ") + what + " at '" + cur_ + "'");
  EMBER_ASSIGN_OR_RETURN(uint64_t v, number());
  if (v >= limit)
    return error(llvm::Twine(what) + " " + llvm::Twine(prefix) +
                 llvm::Twine(v) + " is not declared");
  return unsigned(v);
}

/// A literal: digits, sign, point, exponent, inf or nan, then an optional
/// ':kind' (Int64 without one).
llvm::Expected<ExprRef> KernelParser::constant() {
  size_t n = cur_.find_first_of(" ),]");
  llvm::StringRef tok = cur_.take_front(n);
  cur_ = cur_.drop_front(tok.size());
  auto [lit, kindName] = tok.split(':');
  ScalarKind kind = ScalarKind::Int64;
  if (!kindName.empty()) {
    auto k = parseElemKind(kindName);
    if (!k)
      return error("unknown kind '" + kindName + "'");
    kind = *k;
  }
  const char *end = lit.data() + lit.size();
  if (isFloatKind(kind)) {
    double v = 0;
    auto r = std::from_chars(lit.data(), end, v);
    if (r.ec != std::errc() || r.ptr != end)
      return error("bad float literal '" + lit + "'");
    return k_->constFloat(v, kind);
  }
  int64_t v = 0;
  auto r = std::from_chars(lit.data(), end, v);
  if (r.ec != std::errc() || r.ptr != end)
    return error("bad integer literal '" + lit + "'");
  return k_->constInt(v, kind);
}

/// '(' a op b ')' or '(' c '?' a ':' b ')'.
llvm::Expected<ExprRef> KernelParser::parenthesized() {
  EMBER_ASSIGN_OR_RETURN(ExprRef a, expr());
  if (consume("?")) {
    EMBER_ASSIGN_OR_RETURN(ExprRef t, expr());
    if (llvm::Error e = expect(":"))
      return e;
    EMBER_ASSIGN_OR_RETURN(ExprRef f, expr());
    if (llvm::Error e = expect(")"))
      return e;
    return k_->select(a, t, f);
  }
  cur_ = cur_.ltrim(' ');
  llvm::StringRef tok = cur_.take_until([](char c) { return c == ' '; });
  auto op = parseBinOp(tok);
  if (!op)
    return error("unknown operator '" + tok + "'");
  cur_ = cur_.drop_front(tok.size());
  EMBER_ASSIGN_OR_RETURN(ExprRef b, expr());
  if (llvm::Error e = expect(")"))
    return e;
  return k_->binary(*op, a, b);
}

/// name '(' expr ')': a unary operator or a conversion to a kind.
llvm::Expected<ExprRef> KernelParser::applied(llvm::StringRef name) {
  EMBER_ASSIGN_OR_RETURN(ExprRef a, expr());
  if (llvm::Error e = expect(")"))
    return e;
  if (auto op = parseUnOp(name))
    return k_->unary(*op, a);
  if (auto kind = parseElemKind(name))
    return k_->cast(a, *kind);
  return error("unknown operator or kind '" + name + "'");
}

llvm::Expected<ExprRef> KernelParser::expr() {
  cur_ = cur_.ltrim(' ');
  if (cur_.empty())
    return error("expected an expression");
  if (cur_.consume_front("("))
    return parenthesized();
  char c0 = cur_[0];
  // "i3" is a loop variable, "i32(" a conversion to that kind.
  size_t idEnd = 1;
  while (idEnd < cur_.size() && std::isdigit((unsigned char)cur_[idEnd]))
    ++idEnd;
  bool digitNext = idEnd > 1 && (idEnd == cur_.size() || cur_[idEnd] != '(');
  if (c0 == 'i' && digitNext) {
    EMBER_ASSIGN_OR_RETURN(unsigned v, id('i', k_->getNumVars(), "loop var"));
    return k_->var(v);
  }
  if (c0 == 'l' && digitNext) {
    EMBER_ASSIGN_OR_RETURN(unsigned v,
                           id('l', k_->getLocals().size(), "local"));
    return k_->local(v);
  }
  if (c0 == 'b' && digitNext) {
    EMBER_ASSIGN_OR_RETURN(unsigned b,
                           id('b', k_->getBuffers().size(), "buffer"));
    if (llvm::Error e = expect("["))
      return e;
    EMBER_ASSIGN_OR_RETURN(ExprRef index, expr());
    if (llvm::Error e = expect("]"))
      return e;
    return k_->load(b, index);
  }
  size_t paren = cur_.find('(');
  llvm::StringRef name = cur_.take_front(paren);
  if (paren != llvm::StringRef::npos && !name.empty() &&
      llvm::all_of(name,
                   [](char c) { return std::isalnum((unsigned char)c); }) &&
      !std::isdigit((unsigned char)c0) && name != "inf" && name != "nan") {
    cur_ = cur_.drop_front(paren + 1);
    return applied(name);
  }
  return constant();
}

/// "bN: KIND @REGION+OFFSET size BYTES // NAME" and "lN: KIND" lines.
llvm::Error KernelParser::declarations() {
  while (nextLine()) {
    llvm::StringRef head = cur_.take_until([](char c) { return c == ':'; });
    bool numbered = head.size() > 1 && (head[0] == 'b' || head[0] == 'l') &&
                    llvm::all_of(head.drop_front(1), [](char c) {
                      return std::isdigit(static_cast<unsigned char>(c));
                    });
    if (!numbered || !cur_.drop_front(head.size()).starts_with(": "))
      return llvm::Error::success();
    bool isLocal = head[0] == 'l';
    cur_ = cur_.drop_front(head.size() + 1).ltrim(' ');
    llvm::StringRef kindName = cur_.take_until([](char c) { return c == ' '; });
    auto kind = parseElemKind(kindName);
    if (!kind)
      return error("unknown kind '" + kindName + "'");
    cur_ = cur_.drop_front(kindName.size());
    size_t expected =
        isLocal ? k_->getLocals().size() : k_->getBuffers().size();
    if (head.drop_front(1) != std::to_string(expected))
      return error("declarations must be numbered in order from 0");
    if (isLocal) {
      k_->addLocal(*kind);
      continue;
    }
    if (llvm::Error e = expect("@"))
      return e;
    llvm::StringRef rname = cur_.take_until([](char c) { return c == '+'; });
    std::optional<Region> region;
    for (Region r : {Region::Constant, Region::Mutable, Region::Activation})
      if (regionName(r) == rname)
        region = r;
    if (!region)
      return error("unknown region '" + rname + "'");
    cur_ = cur_.drop_front(rname.size() + 1);
    Buffer b{*region, 0, 0, *kind, ""};
    EMBER_ASSIGN_OR_RETURN(b.offset, number());
    if (llvm::Error e = expect("size"))
      return e;
    EMBER_ASSIGN_OR_RETURN(b.size, number());
    if (consume("//"))
      b.name = cur_.trim().str();
    if (k_->addBuffer(b) != expected)
      return error("buffer b" + llvm::Twine(expected) +
                   " repeats an earlier one");
  }
  return llvm::Error::success();
}

llvm::Expected<Stmt> KernelParser::loop(bool parallel) {
  EMBER_ASSIGN_OR_RETURN(unsigned v, id('i', ~0u, "loop var"));
  while (k_->getNumVars() <= v)
    k_->newVar();
  if (llvm::Error e = expect("<"))
    return e;
  EMBER_ASSIGN_OR_RETURN(uint64_t extent, number());
  if (llvm::Error e = expect("{"))
    return e;
  EMBER_ASSIGN_OR_RETURN(std::vector<Stmt> body, block(true));
  return Kernel::loop(v, int64_t(extent), parallel, std::move(body));
}

llvm::Expected<Stmt> KernelParser::call() {
  llvm::StringRef callee =
      cur_.ltrim(' ').take_until([](char c) { return c == '('; });
  cur_ = cur_.ltrim(' ').drop_front(callee.size());
  if (llvm::Error e = expect("("))
    return e;
  std::vector<CallArg> args;
  while (!consume(")")) {
    if (!args.empty())
      if (llvm::Error e = expect(","))
        return e;
    if (consume("&")) {
      EMBER_ASSIGN_OR_RETURN(unsigned b,
                             id('b', k_->getBuffers().size(), "buffer"));
      args.push_back({true, b, nullptr});
      continue;
    }
    EMBER_ASSIGN_OR_RETURN(ExprRef v, expr());
    args.push_back({false, 0, v});
  }
  return Kernel::call(callee.trim(), std::move(args));
}

llvm::Expected<Stmt> KernelParser::statement() {
  if (consume("parallel for "))
    return loop(true);
  if (consume("for "))
    return loop(false);
  if (consume("call "))
    return call();
  if (consume("if ")) {
    EMBER_ASSIGN_OR_RETURN(ExprRef cond, expr());
    if (llvm::Error e = expect("{"))
      return e;
    EMBER_ASSIGN_OR_RETURN(std::vector<Stmt> body, block(true));
    return Kernel::ifThen(cond, std::move(body));
  }
  if (cur_.starts_with("b")) {
    EMBER_ASSIGN_OR_RETURN(ExprRef target, expr());
    if (target->kind != ExprKind::Load)
      return error("expected a store 'bN[index] = value'");
    if (llvm::Error e = expect("="))
      return e;
    EMBER_ASSIGN_OR_RETURN(ExprRef value, expr());
    return Kernel::store(target->buffer, target->a, value);
  }
  EMBER_ASSIGN_OR_RETURN(unsigned l, id('l', k_->getLocals().size(), "local"));
  if (llvm::Error e = expect("="))
    return e;
  EMBER_ASSIGN_OR_RETURN(ExprRef value, expr());
  return Kernel::assign(l, value);
}

/// Statements up to the closing '}' (\p nested) or the next kernel / the
/// end of the text; the current line is the one before the first.
llvm::Expected<std::vector<Stmt>> KernelParser::block(bool nested) {
  std::vector<Stmt> body;
  while (nested ? nextLine() : !atEnd()) {
    if (nested && cur_ == "}") {
      cur_ = "";
      return body;
    }
    if (!nested && cur_.starts_with("kernel "))
      return body;
    EMBER_ASSIGN_OR_RETURN(Stmt s, statement());
    if (!cur_.trim().empty())
      return error("unexpected '" + cur_ + "' after the statement");
    body.push_back(std::move(s));
    if (!nested)
      nextLine();
  }
  if (nested)
    return error("missing '}'");
  return body;
}

llvm::Expected<std::vector<Kernel>> KernelParser::parseAll() {
  std::vector<Kernel> kernels;
  line_ = size_t(-1);
  nextLine();
  while (!atEnd()) {
    if (!cur_.consume_front("kernel "))
      return error("expected 'kernel NAME'");
    kernels.emplace_back(cur_.trim());
    k_ = &kernels.back();
    if (llvm::Error e = declarations())
      return e;
    EMBER_ASSIGN_OR_RETURN(k_->body(), block(false));
  }
  return kernels;
}

} // namespace

llvm::Expected<std::vector<Kernel>> kir::parseKernels(llvm::StringRef text) {
  KernelParser p(text);
  return p.parseAll();
}
