//===- Kernel.h - The shared kernel-level IR -------------------*- C++ -*-===//
//
// A Kernel is a small loop program over planned buffers: loop nests (a loop
// whose iterations are independent is marked parallel, so a CPU renderer can
// split the outermost one across threads and a GPU renderer can map a
// perfect nest of them to blocks and threads), integer
// index arithmetic, loads and stores at a buffer's region + byte offset,
// scalar ALU ops, kernel-local scalar variables (for reductions), guarded
// statements and calls to a backend's library kernels. Backends only render
// kernels; lowering planned IR to kernels is shared (LowerToKernel.h).
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_KERNEL_KERNEL_H
#define EMBER_KERNEL_KERNEL_H

#include "ember/IR/MemoryPlanner.h"

#include <deque>
#include <string>
#include <vector>

namespace ember {
namespace kir {

/// A buffer a kernel reads or writes: a planned region and byte offset.
struct Buffer {
  Region region;
  uint64_t offset; ///< Bytes from the region base.
  uint64_t size;   ///< Bytes.
  ElemKind kind;   ///< Element kind of loads and stores.
  std::string name;
};

/// Scalar value kinds. Index arithmetic is Int64; Bool is 0/1 in a byte.
/// Every plain kind may be loaded, stored, selected and cast; Float16 has
/// no arithmetic of its own (rules compute in Float32 and cast back), and
/// the unsigned kinds compare, divide and convert as unsigned.
using ScalarKind = ElemKind;

/// True for the unsigned integer kinds (UInt8 ... UInt64).
inline bool isUnsignedKind(ScalarKind k) {
  return k == ScalarKind::UInt8 || k == ScalarKind::UInt16 ||
         k == ScalarKind::UInt32 || k == ScalarKind::UInt64;
}

/// Expression kinds.
enum class ExprKind : uint8_t {
  Const,  ///< ival (integer kinds) or fval (floats)
  Var,    ///< loop variable `var` (Int64)
  Local,  ///< kernel-local variable `var`
  Load,   ///< buffers[buffer][index]
  Unary,  ///< uop(a)
  Binary, ///< bop(a, b)
  Select, ///< a ? b : c (a is Bool)
  Cast,   ///< a converted to `type`
};

/// Unary operators (Float32/Float64 unless noted; Neg, Abs and Relu take
/// integers too). Round rounds halves to even.
enum class UnOp : uint8_t {
  Neg,
  Abs,
  Exp,
  Log,
  Sqrt,
  Tanh,
  Sigmoid,
  Relu,
  Floor,
  Ceil,
  Round,
  Erf,
  Sin,
  Cos,
  Tan,
  Asin,
  Acos,
  Atan,
  Sinh,
  Cosh,
  Asinh,
  Acosh,
  Atanh,
  /// The standard normal CDF Phi(x) = erfc(-x / sqrt 2) / 2 (GELU's erf
  /// form is x Phi(x)).
  NormCdf,
};

/// The C math library's float function computing \p op (e.g. "sinf"; a
/// renderer drops the 'f' for double), or "" where C has none (Neg,
/// Sigmoid, Relu). Round's is rintf: halves to even in the default
/// rounding mode.
llvm::StringRef cMathFunction(UnOp op);

/// Binary operators. Comparisons give Bool; Div/Rem on integers follow C
/// (the lowering guards division by zero where ONNX asks). And, Or and Xor
/// are logical on Bool and bitwise on integers; Shl/Shr shift integers
/// (Shr is logical on unsigned kinds) by less than the bit width (the
/// lowering guards larger shifts).
enum class BinOp : uint8_t {
  Add,
  Sub,
  Mul,
  Div,
  Rem,
  Max,
  Min,
  Pow,
  Lt,
  Le,
  Eq,
  And,
  Or,
  Xor,
  Shl,
  Shr,
};

struct Expr;
/// Expressions are owned by their Kernel and shared freely.
using ExprRef = const Expr *;

/// One node of an expression tree.
struct Expr {
  ExprKind kind;
  ScalarKind type;
  union {
    UnOp uop;
    BinOp bop;
  };
  int64_t ival = 0;
  double fval = 0;
  unsigned var = 0;    ///< Var/Local id
  unsigned buffer = 0; ///< Load
  ExprRef a = nullptr, b = nullptr, c = nullptr;
};

/// Statement kinds.
enum class StmtKind : uint8_t {
  Loop,   ///< for var in [0, extent): body
  Store,  ///< buffers[buffer][index] = value
  Assign, ///< local var = value
  If,     ///< if (cond) body
  Call,   ///< callee(args): a backend library kernel
};

/// An argument of a Call: a buffer's address or a scalar expression.
struct CallArg {
  bool isBuffer;
  unsigned buffer;
  ExprRef value;
};

/// One statement.
struct Stmt {
  StmtKind kind;
  unsigned var = 0;   ///< Loop variable or Local id
  int64_t extent = 0; ///< Loop trip count
  bool parallel = false;
  unsigned buffer = 0; ///< Store
  ExprRef index = nullptr, value = nullptr, cond = nullptr;
  std::vector<Stmt> body; ///< Loop, If
  std::string callee;     ///< Call
  std::vector<CallArg> args;
};

/// A kernel: buffers, locals, and a body. When the body is a single
/// parallel loop its iterations are independent and may run in any order.
class Kernel {
public:
  explicit Kernel(llvm::StringRef name) : name_(name.str()) {}
  Kernel(Kernel &&) = default;
  Kernel &operator=(Kernel &&) = default;

  llvm::StringRef getName() const { return name_; }
  const std::vector<Buffer> &getBuffers() const { return buffers_; }
  /// The buffers, for a backend that relocates a region after lowering
  /// (two entries must not become equal: addBuffer would have merged them).
  std::vector<Buffer> &buffers() { return buffers_; }
  const std::vector<ScalarKind> &getLocals() const { return locals_; }
  unsigned getNumVars() const { return numVars_; }
  std::vector<Stmt> &body() { return body_; }
  const std::vector<Stmt> &body() const { return body_; }
  /// The outermost loop when the body is exactly one parallel loop.
  const Stmt *getParallelLoop() const;
  /// The IR instructions whose work this kernel does (several for a fused
  /// loop), for profiles and diagnostics.
  llvm::ArrayRef<const Instruction *> getSources() const { return sources_; }
  void setSources(std::vector<const Instruction *> s) {
    sources_ = std::move(s);
  }

  /// Adds (or finds) a buffer and returns its index.
  unsigned addBuffer(const Buffer &b);
  /// Declares a local scalar of \p kind.
  unsigned addLocal(ScalarKind kind);
  /// A fresh loop variable id.
  unsigned newVar() { return numVars_++; }

  // Expression builders.
  ExprRef constInt(int64_t v, ScalarKind k = ScalarKind::Int64);
  ExprRef constFloat(double v, ScalarKind k = ScalarKind::Float32);
  ExprRef var(unsigned v);
  ExprRef local(unsigned id);
  ExprRef load(unsigned buffer, ExprRef index);
  ExprRef unary(UnOp op, ExprRef a);
  ExprRef binary(BinOp op, ExprRef a, ExprRef b);
  ExprRef select(ExprRef c, ExprRef a, ExprRef b);
  /// Converts \p a to \p to. Float to integer truncates toward zero, with
  /// NaN giving 0 and values beyond Int64 saturating, then wraps to the
  /// target width; anything to Bool is x != 0. Float16 converts only to and
  /// from Float32: other conversions go through Float32 here.
  ExprRef cast(ExprRef a, ScalarKind to);
  /// Index helpers that fold constants.
  ExprRef add(ExprRef a, ExprRef b);
  ExprRef mul(ExprRef a, int64_t b);
  /// a / d and a % d (integer) for a constant \p d.
  ExprRef div(ExprRef a, int64_t d);
  ExprRef rem(ExprRef a, int64_t d);

  // Statement builders.
  static Stmt loop(unsigned var, int64_t extent, bool parallel,
                   std::vector<Stmt> body);
  static Stmt store(unsigned buffer, ExprRef index, ExprRef value);
  static Stmt assign(unsigned local, ExprRef value);
  static Stmt ifThen(ExprRef cond, std::vector<Stmt> body);
  static Stmt call(llvm::StringRef callee, std::vector<CallArg> args);

  /// Prints the kernel as readable pseudo-code.
  void print(llvm::raw_ostream &os) const;

private:
  ExprRef make(Expr e);
  std::string name_;
  std::vector<Buffer> buffers_;
  std::vector<ScalarKind> locals_;
  unsigned numVars_ = 0;
  std::deque<Expr> exprs_;
  std::vector<Stmt> body_;
  std::vector<const Instruction *> sources_;
};

} // namespace kir
} // namespace ember

#endif // EMBER_KERNEL_KERNEL_H
