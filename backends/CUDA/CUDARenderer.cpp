//===- CUDARenderer.cpp - Kernel IR to CUDA C -----------------------------===//
//
// A thin renderer. The outermost parallel loop, together with the parallel
// loops perfectly nested in it, becomes one flat index space walked by a
// grid-stride loop (so any launch geometry is correct); everything inside
// is rendered as plain C, one thread per iteration. A kernel with no
// parallel loop runs on a single thread.
//
//===----------------------------------------------------------------------===//
#include "CUDA.h"
#include "Prelude.h"
#include "TiledKernels.h"

#include "ember/Base/ElemAccess.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <utility>

using namespace ember;
using namespace ember::cuda;
using namespace ember::kir;

namespace {
class Renderer {
public:
  Renderer(const Kernel &k, llvm::raw_ostream &os) : k_(k), os_(os) {}
  /// Renders the kernel as SYM; returns the number of threads it needs.
  int64_t run(llvm::StringRef sym);

private:
  static const char *typeName(ScalarKind kind);
  void expr(ExprRef e);
  void cast(ExprRef e);
  void unary(ExprRef e);
  void binary(ExprRef e);
  void constant(ExprRef e);
  void stmts(const std::vector<Stmt> &body, unsigned indent);
  void call(const Stmt &s);

  const Kernel &k_;
  llvm::raw_ostream &os_;
};
} // namespace

const char *Renderer::typeName(ScalarKind kind) {
  // The kinds with arithmetic in kernels. Float16 and BFloat16 travel as
  // their bits (ember_h2f / ember_f2h and ember_bf2f / ember_f2bf convert).
  static const std::pair<ElemKind, const char *> kArithmetic[] = {
      {ElemKind::Float32, "float"},    {ElemKind::Float64, "double"},
      {ElemKind::Int8, "signed char"}, {ElemKind::Int16, "short"},
      {ElemKind::Int32, "int"},        {ElemKind::Int64, "long long"},
      {ElemKind::Bool, "bool"}};
  for (const auto &[k, name] : kArithmetic)
    if (k == kind)
      return name;
  // Kinds without arithmetic here (data movement only): an unsigned integer
  // of the element's size, so copies move whole elements.
  switch (elemSize(kind)) {
  case 8:
    return "unsigned long long";
  case 4:
    return "unsigned int";
  case 2:
    return "unsigned short";
  default:
    return "unsigned char";
  }
}

void Renderer::constant(ExprRef e) {
  switch (e->type) {
  case ElemKind::Float32: {
    float f = float(e->fval);
    if (std::isnan(f))
      os_ << "(EMBER_INF - EMBER_INF)";
    else if (std::isinf(f))
      os_ << (f < 0 ? "(-EMBER_INF)" : "EMBER_INF");
    else
      os_ << llvm::format("%.9ef", double(f));
    return;
  }
  case ElemKind::Float64:
    if (std::isnan(e->fval))
      os_ << "((double)(EMBER_INF - EMBER_INF))";
    else if (std::isinf(e->fval))
      os_ << (e->fval < 0 ? "(-(double)EMBER_INF)" : "((double)EMBER_INF)");
    else
      os_ << llvm::format("%.17e", e->fval);
    return;
  case ElemKind::Float16:
    os_ << "((unsigned short)" << floatToHalf(float(e->fval)) << ")";
    return;
  case ElemKind::BFloat16: {
    uint16_t bits = 0;
    storeElement(&bits, ElemKind::BFloat16, 0, e->fval);
    os_ << "((unsigned short)" << bits << ")";
    return;
  }
  case ElemKind::Int32:
    os_ << "((int)" << e->ival << ")";
    return;
  case ElemKind::Bool:
    os_ << (e->ival ? "true" : "false");
    return;
  case ElemKind::Int8:
  case ElemKind::Int16:
  case ElemKind::UInt8:
  case ElemKind::UInt16:
  case ElemKind::UInt32:
    os_ << "((" << typeName(e->type) << ")" << e->ival << ")";
    return;
  case ElemKind::UInt64:
    os_ << "(" << uint64_t(e->ival) << "ULL)";
    return;
  default:
    if (e->ival == INT64_MIN)
      os_ << "(-9223372036854775807LL - 1)";
    else
      os_ << "(" << e->ival << "LL)";
    return;
  }
}

void Renderer::unary(ExprRef e) {
  bool isF = isFloatKind(e->type);
  bool isD = e->type == ElemKind::Float64;
  switch (e->uop) {
  case UnOp::Neg:
    os_ << "(-("; // never "--": the operand may be a negative literal
    expr(e->a);
    os_ << "))";
    return;
  case UnOp::Abs:
    if (isF)
      break;
    os_ << "ember_max<" << typeName(e->type) << ">("; // |a| = max(a, -a)
    expr(e->a);
    os_ << ", -(";
    expr(e->a);
    os_ << "))";
    return;
  case UnOp::Sigmoid:
    os_ << (isD ? "(1.0 / (1.0 + exp(-(" : "(1.0f / (1.0f + expf(-(");
    expr(e->a);
    os_ << "))))";
    return;
  case UnOp::Relu:
    os_ << "ember_max<" << typeName(e->type) << ">(";
    expr(e->a);
    os_ << ", (" << typeName(e->type) << ")0)";
    return;
  case UnOp::NormCdf:
    os_ << (isD ? "(0.5 * erfc(-0.7071067811865476 * ("
                : "(0.5f * erfcf(-0.70710678f * (");
    expr(e->a);
    os_ << ")))";
    return;
  default:
    break;
  }
  // The C math function, less its 'f' for double.
  llvm::StringRef name = cMathFunction(e->uop);
  os_ << (isD ? name.drop_back() : name) << "(";
  expr(e->a);
  os_ << ")";
}

void Renderer::binary(ExprRef e) {
  bool isF = isFloatKind(e->a->type);
  bool isD = e->a->type == ElemKind::Float64;
  bool isBool = e->a->type == ElemKind::Bool;
  // C promotes narrow integers to int: cast results back to the width.
  bool narrow = !isF && !isBool && elemSize(e->type) < 4;
  auto fn = [&](llvm::StringRef name) {
    os_ << (isD && name.back() == 'f' ? name.drop_back() : name) << "(";
    expr(e->a);
    os_ << ", ";
    expr(e->b);
    os_ << ")";
  };
  auto op = [&](const char *sym) {
    os_ << "(";
    if (narrow)
      os_ << "(" << typeName(e->type) << ")(";
    expr(e->a);
    os_ << " " << sym << " ";
    expr(e->b);
    if (narrow)
      os_ << ")";
    os_ << ")";
  };
  auto minMax = [&](const char *name) {
    os_ << name << "<" << typeName(e->type) << ">(";
    expr(e->a);
    os_ << ", ";
    expr(e->b);
    os_ << ")";
  };
  switch (e->bop) {
  case BinOp::Add:
    return op("+");
  case BinOp::Sub:
    return op("-");
  case BinOp::Mul:
    return op("*");
  case BinOp::Div:
    return op("/");
  case BinOp::Rem:
    return isF ? fn("fmodf") : op("%");
  case BinOp::Max:
    return minMax("ember_max");
  case BinOp::Min:
    return minMax("ember_min");
  case BinOp::Pow:
    return fn("powf");
  case BinOp::Lt:
    return op("<");
  case BinOp::Le:
    return op("<=");
  case BinOp::Eq:
    return op("==");
  case BinOp::And:
    return op(isBool ? "&&" : "&");
  case BinOp::Or:
    return op(isBool ? "||" : "|");
  case BinOp::Xor:
    return op(isBool ? "!=" : "^");
  case BinOp::Shl:
    return op("<<");
  case BinOp::Shr:
    return op(">>");
  }
}

void Renderer::expr(ExprRef e) {
  switch (e->kind) {
  case ExprKind::Const:
    return constant(e);
  case ExprKind::Var:
    os_ << "i" << e->var;
    return;
  case ExprKind::Local:
    os_ << "l" << e->var;
    return;
  case ExprKind::Load:
    os_ << "(";
    if (k_.getBuffers()[e->buffer].kind == ElemKind::Bool)
      os_ << "0 != ";
    os_ << "b" << e->buffer << "[";
    expr(e->a);
    os_ << "])";
    return;
  case ExprKind::Unary:
    return unary(e);
  case ExprKind::Binary:
    return binary(e);
  case ExprKind::Select:
    os_ << "(";
    expr(e->a);
    os_ << " ? ";
    expr(e->b);
    os_ << " : ";
    expr(e->c);
    os_ << ")";
    return;
  case ExprKind::Cast:
    return cast(e);
  }
}

void Renderer::cast(ExprRef e) {
  ScalarKind from = e->a->type, to = e->type;
  auto wrap = [&](const char *pre, const char *post) {
    os_ << pre;
    expr(e->a);
    os_ << post;
  };
  if (to == ElemKind::Bool)
    return wrap("(0 != ", ")");
  if (from == ElemKind::Float16) // to Float32 (Kernel::cast)
    return wrap("ember_h2f(", ")");
  if (to == ElemKind::Float16) // from Float32
    return wrap("ember_f2h(", ")");
  if (from == ElemKind::BFloat16) // to Float32, as Float16
    return wrap("ember_bf2f(", ")");
  if (to == ElemKind::BFloat16)
    return wrap("ember_f2bf(", ")");
  if (isFloatKind(from) && !isFloatKind(to)) {
    os_ << "((" << typeName(to) << ")";
    return wrap(to == ElemKind::UInt64 ? "ember_f2u64(" : "ember_f2i(", "))");
  }
  os_ << "((" << typeName(to) << ")";
  wrap("", ")");
}

void Renderer::call(const Stmt &s) {
  os_ << s.callee << "(";
  for (size_t i = 0; i < s.args.size(); ++i) {
    const CallArg &a = s.args[i];
    os_ << (i ? ", " : "");
    if (!a.isBuffer) {
      expr(a.value);
      continue;
    }
    os_ << "(b" << a.buffer;
    if (a.value) {
      os_ << " + ";
      expr(a.value);
    }
    os_ << ")";
  }
  os_ << ");\n";
}

void Renderer::stmts(const std::vector<Stmt> &body, unsigned indent) {
  for (const Stmt &s : body) {
    os_.indent(indent);
    switch (s.kind) {
    case StmtKind::Loop:
      os_ << "for (long long i" << s.var << " = 0; i" << s.var << " < "
          << s.extent << "LL; ++i" << s.var << ") {\n";
      stmts(s.body, indent + 2);
      os_.indent(indent) << "}\n";
      break;
    case StmtKind::If:
      os_ << "if (";
      expr(s.cond);
      os_ << ") {\n";
      stmts(s.body, indent + 2);
      os_.indent(indent) << "}\n";
      break;
    case StmtKind::Store: {
      bool isBool = k_.getBuffers()[s.buffer].kind == ElemKind::Bool;
      os_ << "b" << s.buffer << "[";
      expr(s.index);
      os_ << "] = " << (isBool ? "(unsigned char)" : "");
      expr(s.value);
      os_ << ";\n";
      break;
    }
    case StmtKind::Assign:
      os_ << "l" << s.var << " = ";
      expr(s.value);
      os_ << ";\n";
      break;
    case StmtKind::Call:
      call(s);
      break;
    }
  }
}

int64_t Renderer::run(llvm::StringRef sym) {
  // The flat parallel index space: the outer parallel loop and the parallel
  // loops perfectly nested in it.
  std::vector<const Stmt *> par;
  const std::vector<Stmt> *body = &k_.body();
  if (const Stmt *s = k_.getParallelLoop()) {
    par.push_back(s);
    while (s->body.size() == 1 && s->body[0].kind == StmtKind::Loop &&
           s->body[0].parallel)
      par.push_back(s = &s->body[0]);
    body = &s->body;
  }
  int64_t total = 1;
  for (const Stmt *s : par)
    total *= s->extent;
  os_ << "extern \"C\" __global__ void __launch_bounds__(" << kBlockSize << ") "
      << sym
      << "(unsigned char *__restrict__ r0, unsigned char *__restrict__ r1, "
         "unsigned char *__restrict__ r2) {\n";
  for (unsigned i = 0; i < k_.getBuffers().size(); ++i) {
    const Buffer &b = k_.getBuffers()[i];
    const char *t =
        b.kind == ElemKind::Bool ? "unsigned char" : typeName(b.kind);
    os_ << "  " << t << " *b" << i << " = (" << t << " *)(r"
        << unsigned(b.region) << " + " << b.offset << "LL);\n";
  }
  // 32-bit thread indices when they cannot overflow (GPU 64-bit division
  // is slow); the stride adds at most kMaxBlocks * kBlockSize past total.
  bool narrow = total + kMaxBlocks * kBlockSize < (int64_t(1) << 31);
  const char *it = narrow ? "int" : "long long";
  const char *sfx = narrow ? "" : "LL";
  os_ << "  for (" << it << " t = (" << it
      << ")blockIdx.x * blockDim.x + threadIdx.x; t < " << total << sfx
      << "; t += (" << it << ")gridDim.x * blockDim.x) {\n";
  int64_t inner = total;
  for (const Stmt *s : par) {
    inner /= s->extent;
    os_ << "    long long i" << s->var << " = (t / " << inner << sfx << ") % "
        << s->extent << sfx << ";\n";
  }
  for (unsigned i = 0; i < k_.getLocals().size(); ++i)
    os_ << "    " << typeName(k_.getLocals()[i]) << " l" << i << " = 0;\n";
  stmts(*body, 4);
  os_ << "  }\n}\n";
  return total;
}

/// True if \p body calls a tiled kernel (TiledKernels.h).
static bool callsTiled(const std::vector<Stmt> &body) {
  return llvm::any_of(body, [](const Stmt &s) {
    return (s.kind == StmtKind::Call && isTiledCall(s.callee)) ||
           callsTiled(s.body);
  });
}

CUDASource cuda::renderCUDA(const CUDAProgram &prog, llvm::StringRef prefix) {
  CUDASource src;
  llvm::raw_string_ostream os(src.text);
  // The activation codes of ember_act, from the one list of them.
#define EMBER_FUSED_ACT(Name, Code)                                            \
  os << "#define EMBER_ACT_" #Name " " #Code "\n";
#include "ember/Graph/FusedActivations.def"
  os << cudaPrelude() << cudaTiledKernels();
  for (size_t i = 0; i < prog.kernels.size(); ++i) {
    LaunchInfo li;
    li.symbol = (prefix + "_k" + llvm::Twine(i)).str();
    // The kernel-IR listing, as comment lines, then the code.
    std::string listing;
    llvm::raw_string_ostream ls(listing);
    prog.kernels[i].print(ls);
    ls.flush();
    os << "\n";
    for (llvm::StringRef rest(listing); !rest.empty();) {
      auto [line, tail] = rest.split('\n');
      os << "// " << line << "\n";
      rest = tail;
    }
    int64_t total = Renderer(prog.kernels[i], os).run(li.symbol);
    li.threads = std::min<int64_t>(kBlockSize, (total + 31) / 32 * 32);
    if (callsTiled(prog.kernels[i].body())) {
      // One tile per block: the parallel loop runs over tiles x
      // kTileThreads, so every lane of a block has the same trip count.
      assert(total % kTileThreads == 0 && "a tiled loop covers whole tiles");
      li.threads = kTileThreads;
      li.usesSharedMemory = true;
      os << "EMBER_EMU_COOPERATIVE(" << li.symbol << ")\n";
    }
    li.blocks =
        std::min<int64_t>(kMaxBlocks, (total + li.threads - 1) / li.threads);
    src.launches.push_back(li);
  }
  os.flush();
  return src;
}
