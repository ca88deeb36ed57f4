//===- Kernel.cpp - Kernel IR builders and printer ------------------------===//
#include "ember/Kernel/Kernel.h"
#include "KernelNames.h"

#include <charconv>
#include <cmath>
#include <iterator>
#include <limits>

#include "llvm/Support/raw_ostream.h"

using namespace ember;
using namespace ember::kir;

const Stmt *Kernel::getParallelLoop() const {
  if (body_.size() != 1 || body_[0].kind != StmtKind::Loop ||
      !body_[0].parallel)
    return nullptr;
  return &body_[0];
}

unsigned Kernel::addBuffer(const Buffer &b) {
  for (unsigned i = 0; i < buffers_.size(); ++i)
    if (buffers_[i].region == b.region && buffers_[i].offset == b.offset &&
        buffers_[i].kind == b.kind && buffers_[i].size == b.size)
      return i;
  buffers_.push_back(b);
  return buffers_.size() - 1;
}

unsigned Kernel::addLocal(ScalarKind kind) {
  locals_.push_back(kind);
  return locals_.size() - 1;
}

ExprRef Kernel::make(Expr e) {
  exprs_.push_back(e);
  return &exprs_.back();
}

ExprRef Kernel::constInt(int64_t v, ScalarKind k) {
  Expr e{ExprKind::Const, k, {}};
  e.ival = v;
  e.fval = double(v);
  return make(e);
}

ExprRef Kernel::constFloat(double v, ScalarKind k) {
  Expr e{ExprKind::Const, k, {}};
  e.fval = v;
  // The integer view saturates: converting an infinity (a max pool's
  // start value), a NaN or a value past int64's range is undefined.
  if (std::isnan(v))
    e.ival = 0;
  else if (v >= 0x1p63)
    e.ival = std::numeric_limits<int64_t>::max();
  else if (v < -0x1p63)
    e.ival = std::numeric_limits<int64_t>::min();
  else
    e.ival = int64_t(v);
  return make(e);
}

ExprRef Kernel::var(unsigned v) {
  Expr e{ExprKind::Var, ScalarKind::Int64, {}};
  e.var = v;
  return make(e);
}

ExprRef Kernel::local(unsigned id) {
  Expr e{ExprKind::Local, locals_[id], {}};
  e.var = id;
  return make(e);
}

ExprRef Kernel::load(unsigned buffer, ExprRef index) {
  Expr e{ExprKind::Load, buffers_[buffer].kind, {}};
  e.buffer = buffer;
  e.a = index;
  return make(e);
}

ExprRef Kernel::unary(UnOp op, ExprRef a) {
  Expr e{ExprKind::Unary, a->type, {}};
  e.uop = op;
  e.a = a;
  return make(e);
}

static bool isCompare(BinOp op) {
  return op == BinOp::Lt || op == BinOp::Le || op == BinOp::Eq;
}

ExprRef Kernel::binary(BinOp op, ExprRef a, ExprRef b) {
  Expr e{ExprKind::Binary, isCompare(op) ? ScalarKind::Bool : a->type, {}};
  e.bop = op;
  e.a = a;
  e.b = b;
  return make(e);
}

ExprRef Kernel::select(ExprRef c, ExprRef a, ExprRef b) {
  Expr e{ExprKind::Select, a->type, {}};
  e.a = c;
  e.b = a;
  e.c = b;
  return make(e);
}

ExprRef Kernel::cast(ExprRef a, ScalarKind to) {
  if (a->type == to)
    return a;
  auto half = [](ScalarKind k) {
    return k == ScalarKind::Float16 || k == ScalarKind::BFloat16;
  };
  if ((half(to) && a->type != ScalarKind::Float32) ||
      (half(a->type) && to != ScalarKind::Float32))
    return cast(cast(a, ScalarKind::Float32), to);
  Expr e{ExprKind::Cast, to, {}};
  e.a = a;
  return make(e);
}

static bool isConstInt(ExprRef e, int64_t v) {
  return e->kind == ExprKind::Const && e->type == ScalarKind::Int64 &&
         e->ival == v;
}

ExprRef Kernel::add(ExprRef a, ExprRef b) {
  if (isConstInt(a, 0))
    return b;
  if (isConstInt(b, 0))
    return a;
  if (a->kind == ExprKind::Const && b->kind == ExprKind::Const)
    return constInt(a->ival + b->ival);
  return binary(BinOp::Add, a, b);
}

ExprRef Kernel::div(ExprRef a, int64_t d) {
  return binary(BinOp::Div, a, constInt(d));
}

ExprRef Kernel::rem(ExprRef a, int64_t d) {
  return binary(BinOp::Rem, a, constInt(d));
}

ExprRef Kernel::mul(ExprRef a, int64_t b) {
  if (b == 0)
    return constInt(0);
  if (b == 1)
    return a;
  if (a->kind == ExprKind::Const)
    return constInt(a->ival * b);
  return binary(BinOp::Mul, a, constInt(b));
}

/// A statement of kind \p kind with every other field at its default.
static Stmt stmtOf(StmtKind kind) {
  Stmt s;
  s.kind = kind;
  return s;
}

Stmt Kernel::loop(unsigned var, int64_t extent, bool parallel,
                  std::vector<Stmt> body) {
  Stmt s = stmtOf(StmtKind::Loop);
  s.var = var;
  s.extent = extent;
  s.parallel = parallel;
  s.body = std::move(body);
  return s;
}

Stmt Kernel::store(unsigned buffer, ExprRef index, ExprRef value) {
  Stmt s = stmtOf(StmtKind::Store);
  s.buffer = buffer;
  s.index = index;
  s.value = value;
  return s;
}

Stmt Kernel::assign(unsigned local, ExprRef value) {
  Stmt s = stmtOf(StmtKind::Assign);
  s.var = local;
  s.value = value;
  return s;
}

Stmt Kernel::ifThen(ExprRef cond, std::vector<Stmt> body) {
  Stmt s = stmtOf(StmtKind::If);
  s.cond = cond;
  s.body = std::move(body);
  return s;
}

Stmt Kernel::call(llvm::StringRef callee, std::vector<CallArg> args) {
  Stmt s = stmtOf(StmtKind::Call);
  s.callee = callee.str();
  s.args = std::move(args);
  return s;
}

//===----------------------------------------------------------------------===//
// Printing
//===----------------------------------------------------------------------===//

static const char *const kUnOpNames[] = {
    "neg",   "abs",  "exp",   "log",  "sqrt",  "tanh",  "sigmoid", "relu",
    "floor", "ceil", "round", "erf",  "sin",   "cos",   "tan",     "asin",
    "acos",  "atan", "sinh",  "cosh", "asinh", "acosh", "atanh",   "normcdf"};
static_assert(std::size(kUnOpNames) == unsigned(UnOp::NormCdf) + 1,
              "one name per UnOp");

static const char *const kUnOpCMath[] = {
    "",       "fabsf", "expf",  "logf",  "sqrtf",  "tanhf",  "",       "",
    "floorf", "ceilf", "rintf", "erff",  "sinf",   "cosf",   "tanf",   "asinf",
    "acosf",  "atanf", "sinhf", "coshf", "asinhf", "acoshf", "atanhf", ""};
static_assert(std::size(kUnOpCMath) == std::size(kUnOpNames),
              "one C function (or none) per UnOp");

llvm::StringRef kir::cMathFunction(UnOp op) { return kUnOpCMath[unsigned(op)]; }

static const char *const kBinOpNames[] = {"+",   "-",   "*",  "/",  "%",  "max",
                                          "min", "pow", "<",  "<=", "==", "&&",
                                          "||",  "^",   "<<", ">>"};
static_assert(std::size(kBinOpNames) == unsigned(BinOp::Shr) + 1,
              "one name per BinOp");

llvm::StringRef kir::unOpName(UnOp op) { return kUnOpNames[unsigned(op)]; }
llvm::StringRef kir::binOpName(BinOp op) { return kBinOpNames[unsigned(op)]; }

std::optional<UnOp> kir::parseUnOp(llvm::StringRef name) {
  for (unsigned i = 0; i < std::size(kUnOpNames); ++i)
    if (name == kUnOpNames[i])
      return UnOp(i);
  return std::nullopt;
}

std::optional<BinOp> kir::parseBinOp(llvm::StringRef name) {
  for (unsigned i = 0; i < std::size(kBinOpNames); ++i)
    if (name == kBinOpNames[i])
      return BinOp(i);
  return std::nullopt;
}

/// A constant as the parser reads it back exactly: the shortest decimal
/// that round-trips the double, then the kind unless it is Int64 (index
/// arithmetic, the common case).
static void printConst(ExprRef e, llvm::raw_ostream &os) {
  char buf[64];
  auto r = isFloatKind(e->type)
               ? std::to_chars(buf, buf + sizeof(buf), e->fval)
               : std::to_chars(buf, buf + sizeof(buf), e->ival);
  os << llvm::StringRef(buf, r.ptr - buf);
  if (e->type != ScalarKind::Int64)
    os << ":" << elemKindName(e->type);
}

static void printExpr(ExprRef e, llvm::raw_ostream &os) {
  switch (e->kind) {
  case ExprKind::Const:
    printConst(e, os);
    return;
  case ExprKind::Var:
    os << "i" << e->var;
    return;
  case ExprKind::Local:
    os << "l" << e->var;
    return;
  case ExprKind::Load:
    os << "b" << e->buffer << "[";
    printExpr(e->a, os);
    os << "]";
    return;
  case ExprKind::Unary:
    os << unOpName(e->uop) << "(";
    printExpr(e->a, os);
    os << ")";
    return;
  case ExprKind::Binary:
    os << "(";
    printExpr(e->a, os);
    os << " " << binOpName(e->bop) << " ";
    printExpr(e->b, os);
    os << ")";
    return;
  case ExprKind::Select:
    os << "(";
    printExpr(e->a, os);
    os << " ? ";
    printExpr(e->b, os);
    os << " : ";
    printExpr(e->c, os);
    os << ")";
    return;
  case ExprKind::Cast:
    os << elemKindName(e->type) << "(";
    printExpr(e->a, os);
    os << ")";
    return;
  }
}

static void printStmts(const std::vector<Stmt> &body, unsigned indent,
                       llvm::raw_ostream &os) {
  for (const Stmt &s : body) {
    os.indent(indent);
    switch (s.kind) {
    case StmtKind::Loop:
      os << (s.parallel ? "parallel " : "") << "for i" << s.var << " < "
         << s.extent << " {\n";
      printStmts(s.body, indent + 2, os);
      os.indent(indent) << "}\n";
      break;
    case StmtKind::If:
      os << "if ";
      printExpr(s.cond, os);
      os << " {\n";
      printStmts(s.body, indent + 2, os);
      os.indent(indent) << "}\n";
      break;
    case StmtKind::Store:
      os << "b" << s.buffer << "[";
      printExpr(s.index, os);
      os << "] = ";
      printExpr(s.value, os);
      os << "\n";
      break;
    case StmtKind::Assign:
      os << "l" << s.var << " = ";
      printExpr(s.value, os);
      os << "\n";
      break;
    case StmtKind::Call:
      os << "call " << s.callee << "(";
      for (size_t i = 0; i < s.args.size(); ++i) {
        os << (i ? ", " : "");
        if (s.args[i].isBuffer)
          os << "&b" << s.args[i].buffer;
        else
          printExpr(s.args[i].value, os);
      }
      os << ")\n";
      break;
    }
  }
}

void Kernel::print(llvm::raw_ostream &os) const {
  os << "kernel " << name_ << "\n";
  for (unsigned i = 0; i < buffers_.size(); ++i)
    os << "  b" << i << ": " << elemKindName(buffers_[i].kind) << " @"
       << regionName(buffers_[i].region) << "+" << buffers_[i].offset
       << " size " << buffers_[i].size << " // " << buffers_[i].name << "\n";
  for (unsigned i = 0; i < locals_.size(); ++i)
    os << "  l" << i << ": " << elemKindName(locals_[i]) << "\n";
  printStmts(body_, 2, os);
}
