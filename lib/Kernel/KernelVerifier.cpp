//===- KernelVerifier.cpp - Typing and scoping rules of kernels -----------===//
//
// The rules every renderer assumes without checking: a renderer that met a
// kernel breaking one would emit wrong code or crash in LLVM, so lowering
// bugs are caught here, with the kernel's name, instead.
//
//===----------------------------------------------------------------------===//
#include "KernelNames.h"
#include "ember/Kernel/KernelText.h"

#include "ember/Base/Error.h"

#include "llvm/ADT/SmallBitVector.h"

using namespace ember;
using namespace ember::kir;

namespace {

/// Unary operators defined on integers as well as floats.
bool takesIntegers(UnOp op) {
  return op == UnOp::Neg || op == UnOp::Abs || op == UnOp::Relu;
}

/// Binary operators defined on floats (the rest are integer or Bool only).
bool takesFloats(BinOp op) {
  switch (op) {
  case BinOp::And:
  case BinOp::Or:
  case BinOp::Xor:
  case BinOp::Shl:
  case BinOp::Shr:
    return false;
  default:
    return true;
  }
}

class KernelVerifier {
public:
  explicit KernelVerifier(const Kernel &k) : k_(k), inScope_(k.getNumVars()) {}

  llvm::Error run() { return stmts(k_.body()); }

private:
  const Kernel &k_;
  llvm::SmallBitVector inScope_;

  llvm::Error error(const llvm::Twine &msg) const {
    return makeError("kernel '" + k_.getName() + "': " + msg);
  }
  llvm::Error buffer(unsigned b) const {
    return b < k_.getBuffers().size()
               ? llvm::Error::success()
               : error("buffer b" + llvm::Twine(b) + " is not declared");
  }
  llvm::Error index(ExprRef e) {
    if (llvm::Error err = expr(e))
      return err;
    return isIntegerKind(e->type) ? llvm::Error::success()
                                  : error("an index is not an integer");
  }
  llvm::Error expr(ExprRef e);
  llvm::Error operation(ExprRef e);
  llvm::Error stmt(const Stmt &s);
  llvm::Error stmts(const std::vector<Stmt> &body) {
    for (const Stmt &s : body)
      if (llvm::Error err = stmt(s))
        return err;
    return llvm::Error::success();
  }
};

llvm::Error KernelVerifier::expr(ExprRef e) {
  switch (e->kind) {
  case ExprKind::Const:
    return llvm::Error::success();
  case ExprKind::Var:
    if (e->var >= inScope_.size() || !inScope_[e->var])
      return error("loop variable i" + llvm::Twine(e->var) +
                   " is used outside its loop");
    return llvm::Error::success();
  case ExprKind::Local:
    if (e->var >= k_.getLocals().size())
      return error("local l" + llvm::Twine(e->var) + " is not declared");
    return llvm::Error::success();
  case ExprKind::Load:
    if (llvm::Error err = buffer(e->buffer))
      return err;
    return index(e->a);
  default:
    return operation(e);
  }
}

/// Unary, Binary, Select and Cast.
llvm::Error KernelVerifier::operation(ExprRef e) {
  for (ExprRef sub : {e->a, e->b, e->c})
    if (sub)
      if (llvm::Error err = expr(sub))
        return err;
  switch (e->kind) {
  case ExprKind::Unary:
    if (!isFloatKind(e->a->type) && !takesIntegers(e->uop))
      return error(unOpName(e->uop) + " of a non-float operand");
    return llvm::Error::success();
  case ExprKind::Binary:
    if (e->a->type != e->b->type)
      return error("operands of '" + binOpName(e->bop) +
                   "' differ in kind: " + elemKindName(e->a->type) + " and " +
                   elemKindName(e->b->type));
    if (isFloatKind(e->a->type) && !takesFloats(e->bop))
      return error("'" + binOpName(e->bop) + "' of float operands");
    return llvm::Error::success();
  case ExprKind::Select:
    if (e->a->type != ScalarKind::Bool)
      return error("a select's condition is not bool");
    if (e->b->type != e->c->type)
      return error("the arms of a select differ in kind");
    return llvm::Error::success();
  default: // Cast
    return llvm::Error::success();
  }
}

llvm::Error KernelVerifier::stmt(const Stmt &s) {
  switch (s.kind) {
  case StmtKind::Loop: {
    if (s.var >= inScope_.size())
      return error("loop variable i" + llvm::Twine(s.var) +
                   " is not allocated");
    if (inScope_[s.var])
      return error("loop variable i" + llvm::Twine(s.var) +
                   " is reused by a nested loop");
    if (s.extent < 0)
      return error("a loop has a negative trip count");
    inScope_.set(s.var);
    llvm::Error err = stmts(s.body);
    inScope_.reset(s.var);
    return err;
  }
  case StmtKind::If:
    if (llvm::Error err = expr(s.cond))
      return err;
    if (s.cond->type != ScalarKind::Bool)
      return error("an if condition is not bool");
    return stmts(s.body);
  case StmtKind::Store:
    if (llvm::Error err = buffer(s.buffer))
      return err;
    if (llvm::Error err = index(s.index))
      return err;
    if (llvm::Error err = expr(s.value))
      return err;
    if (s.value->type != k_.getBuffers()[s.buffer].kind)
      return error("a store of " + elemKindName(s.value->type) + " into " +
                   elemKindName(k_.getBuffers()[s.buffer].kind) + " b" +
                   llvm::Twine(s.buffer));
    return llvm::Error::success();
  case StmtKind::Assign:
    if (s.var >= k_.getLocals().size())
      return error("local l" + llvm::Twine(s.var) + " is not declared");
    if (llvm::Error err = expr(s.value))
      return err;
    if (s.value->type != k_.getLocals()[s.var])
      return error("an assignment of " + elemKindName(s.value->type) +
                   " to local l" + llvm::Twine(s.var));
    return llvm::Error::success();
  case StmtKind::Call:
    for (const CallArg &a : s.args)
      if (llvm::Error err = a.isBuffer ? buffer(a.buffer) : expr(a.value))
        return err;
    return llvm::Error::success();
  }
  return llvm::Error::success();
}

} // namespace

llvm::Error kir::verifyKernel(const Kernel &k) {
  return KernelVerifier(k).run();
}
