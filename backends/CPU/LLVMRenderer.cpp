//===- LLVMRenderer.cpp - Kernel IR to LLVM IR ----------------------------===//
//
// A thin renderer: every kernel becomes one function whose loops are plain
// counted loops; LLVM's O3 pipeline does the vectorization and unrolling.
//
//===----------------------------------------------------------------------===//
#include "CPU.h"

#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/MDBuilder.h"

#include <limits>

using namespace ember;
using namespace ember::kir;

namespace {
class Renderer {
public:
  Renderer(const Kernel &k, llvm::Module &M)
      : k_(k), M_(M), ctx_(M.getContext()), b_(ctx_) {}

  /// The kernel with its buffers at constant offsets from the three region
  /// bases.
  llvm::Function *run();
  /// The kernel with its buffer groups' bases as arguments.
  llvm::Function *runShared(llvm::StringRef name);

private:
  llvm::Type *typeOf(ScalarKind kind) {
    switch (kind) {
    case ElemKind::Float32:
      return b_.getFloatTy();
    case ElemKind::Float16:
      return b_.getHalfTy();
    case ElemKind::Float64:
      return b_.getDoubleTy();
    case ElemKind::Int32:
      return b_.getInt32Ty();
    case ElemKind::Int64:
      return b_.getInt64Ty();
    default:
      // Kinds without arithmetic here (data movement only): an integer of
      // the element's size, so copies move whole elements.
      return b_.getIntNTy(8 * elemSize(kind));
    }
  }
  /// The in-register type: Bool is i1.
  llvm::Type *valueType(ScalarKind kind) {
    return kind == ElemKind::Bool ? b_.getInt1Ty() : typeOf(kind);
  }
  llvm::Value *address(unsigned buffer, llvm::Value *index);
  /// Emits the body into fn_, whose arguments begin and end bound the
  /// split loop.
  void emitBody(llvm::Value *begin, llvm::Value *end);
  void setAliasScopes();
  /// Tags a load or store of \p buffer with its alias scopes.
  void tagAccess(llvm::Instruction *access, unsigned buffer) {
    if (buffer < scopes_.size()) {
      access->setMetadata(llvm::LLVMContext::MD_alias_scope, scopes_[buffer]);
      access->setMetadata(llvm::LLVMContext::MD_noalias, noalias_[buffer]);
    }
  }
  llvm::Value *emit(ExprRef e);
  llvm::Value *emitUnary(ExprRef e);
  llvm::Value *emitBinary(ExprRef e);
  llvm::Value *emitCast(llvm::Value *v, ScalarKind from, ScalarKind to);
  llvm::Value *emitWidenBF16(llvm::Value *bits);
  llvm::Value *emitRoundToBF16(llvm::Value *f);
  llvm::Value *emitFPToInt64Sat(llvm::Value *v);
  void emitStmts(const std::vector<Stmt> &body);
  void emitLoop(const Stmt &s, llvm::Value *begin, llvm::Value *end);
  void emitCall(const Stmt &s);
  llvm::Value *intrinsic(llvm::Intrinsic::ID id,
                         llvm::ArrayRef<llvm::Value *> a) {
    return b_.CreateIntrinsic(id, {a[0]->getType()}, a);
  }
  /// Calls the C math library's \p name (float) or name without the
  /// trailing 'f' (double) on \p a.
  llvm::Value *libm(llvm::StringRef name, llvm::Value *a) {
    llvm::Type *t = a->getType();
    std::string fn = t->isDoubleTy() ? name.drop_back().str() : name.str();
    return b_.CreateCall(M_.getOrInsertFunction(fn, t, t), {a});
  }

  const Kernel &k_;
  llvm::Module &M_;
  llvm::LLVMContext &ctx_;
  llvm::IRBuilder<> b_;
  llvm::Function *fn_ = nullptr;
  llvm::Value *bases_[3] = {};
  /// Shared bodies: each buffer's group base argument and offset in it.
  std::vector<llvm::Value *> groupBase_;
  std::vector<uint64_t> groupOffset_;
  std::vector<llvm::Value *> vars_, locals_;
  std::vector<llvm::MDNode *> scopes_, noalias_;
};
} // namespace

llvm::Value *Renderer::address(unsigned buffer, llvm::Value *index) {
  const Buffer &buf = k_.getBuffers()[buffer];
  llvm::Value *base =
      groupBase_.empty()
          ? b_.CreateConstInBoundsGEP1_64(
                b_.getInt8Ty(), bases_[unsigned(buf.region)], buf.offset)
          : b_.CreateConstInBoundsGEP1_64(b_.getInt8Ty(), groupBase_[buffer],
                                          groupOffset_[buffer]);
  if (!index)
    return base;
  return b_.CreateInBoundsGEP(typeOf(buf.kind), base, index);
}

/// Buffers of one kernel whose byte ranges are disjoint cannot alias (the
/// lowering keeps every access inside its buffer): each buffer gets an
/// alias scope, and its accesses are marked noalias with every disjoint
/// buffer's scope, so loops that read one buffer and write another need no
/// run-time overlap checks to vectorize.
void Renderer::setAliasScopes() {
  const auto &bufs = k_.getBuffers();
  if (bufs.size() < 2)
    return;
  llvm::MDBuilder md(ctx_);
  llvm::MDNode *domain = md.createAnonymousAliasScopeDomain(k_.getName());
  std::vector<llvm::MDNode *> scope;
  for (const Buffer &b : bufs)
    scope.push_back(md.createAnonymousAliasScope(domain, b.name));
  for (size_t i = 0; i < bufs.size(); ++i) {
    llvm::SmallVector<llvm::Metadata *, 8> others;
    for (size_t j = 0; j < bufs.size(); ++j) {
      const Buffer &a = bufs[i], &b = bufs[j];
      bool disjoint = a.region != b.region || a.offset + a.size <= b.offset ||
                      b.offset + b.size <= a.offset;
      if (j != i && disjoint)
        others.push_back(scope[j]);
    }
    scopes_.push_back(llvm::MDNode::get(ctx_, {scope[i]}));
    noalias_.push_back(llvm::MDNode::get(ctx_, others));
  }
}

/// The Float32 value of BFloat16 bits \p bits (i16): its upper half.
llvm::Value *Renderer::emitWidenBF16(llvm::Value *bits) {
  llvm::Value *w = b_.CreateShl(b_.CreateZExt(bits, b_.getInt32Ty()), 16);
  return b_.CreateBitCast(w, b_.getFloatTy());
}

/// Float32 \p f as BFloat16 bits (i16), rounded to nearest even with
/// integer arithmetic (no target needs bf16 instructions or a libcall);
/// NaN stays a quiet NaN of the same sign, as storeElement rounds.
llvm::Value *Renderer::emitRoundToBF16(llvm::Value *f) {
  llvm::Type *i32 = b_.getInt32Ty();
  llvm::Value *bits = b_.CreateBitCast(f, i32);
  llvm::Value *odd =
      b_.CreateAnd(b_.CreateLShr(bits, 16), llvm::ConstantInt::get(i32, 1));
  llvm::Value *bias = b_.CreateAdd(odd, llvm::ConstantInt::get(i32, 0x7fff));
  llvm::Value *rounded = b_.CreateLShr(b_.CreateAdd(bits, bias), 16);
  llvm::Value *quiet =
      b_.CreateOr(b_.CreateLShr(bits, 16), llvm::ConstantInt::get(i32, 0x40));
  llvm::Value *r = b_.CreateSelect(b_.CreateFCmpUNO(f, f), quiet, rounded);
  return b_.CreateTrunc(r, b_.getInt16Ty());
}

llvm::Value *Renderer::emitFPToInt64Sat(llvm::Value *v) {
  // llvm.fptosi.sat's value, built from an in-range fptosi and selects:
  // x86 unrolls the vector intrinsic to one scalar conversion per lane,
  // while these stay vectors (vcvttps2qq with AVX512-DQ).
  llvm::Type *ft = v->getType();
  llvm::Type *i64 = ft->getWithNewType(b_.getInt64Ty());
  auto fp = [&](double d) { return llvm::ConstantFP::get(ft, d); };
  auto i = [&](int64_t n) { return llvm::ConstantInt::get(i64, n); };
  // -2^63 is exact in Float32 and Float64; 2^63 and past it saturate.
  llvm::Value *low = fp(-9223372036854775808.0);
  llvm::Value *big = b_.CreateFCmpOGE(v, fp(9223372036854775808.0));
  llvm::Value *nan = b_.CreateFCmpUNO(v, v);
  llvm::Value *c = b_.CreateSelect(b_.CreateFCmpOGT(v, low), v, low);
  c = b_.CreateSelect(big, fp(0), c);
  llvm::Value *s = b_.CreateFPToSI(c, i64);
  s = b_.CreateSelect(big, i(std::numeric_limits<int64_t>::max()), s);
  return b_.CreateSelect(nan, i(0), s);
}

llvm::Value *Renderer::emitCast(llvm::Value *v, ScalarKind from,
                                ScalarKind to) {
  // Kernel::cast routes BFloat16 through Float32 only.
  if (from == ElemKind::BFloat16)
    return emitWidenBF16(v);
  if (to == ElemKind::BFloat16)
    return emitRoundToBF16(v);
  llvm::Type *t = valueType(to);
  bool fromF = isFloatKind(from), toF = isFloatKind(to);
  bool fromU = from == ElemKind::Bool || isUnsignedKind(from);
  if (to == ElemKind::Bool)
    return fromF ? b_.CreateFCmpUNE(v, llvm::ConstantFP::get(v->getType(), 0))
                 : b_.CreateICmpNE(v, llvm::ConstantInt::get(v->getType(), 0));
  if (fromF && toF)
    return b_.CreateFPCast(v, t);
  if (fromF) {
    // Through Int64, saturating (NaN gives 0), then wrapped to the width;
    // UInt64 takes values of 2^63 and more unsigned.
    llvm::Type *i64 = b_.getInt64Ty();
    llvm::Type *ft = v->getType()->getScalarType();
    // Half cannot hold 2^63, the bounds emitFPToInt64Sat selects on.
    if (to != ElemKind::UInt64 && (ft->isFloatTy() || ft->isDoubleTy()))
      return b_.CreateTrunc(emitFPToInt64Sat(v), t);
    llvm::Value *s = b_.CreateIntrinsic(llvm::Intrinsic::fptosi_sat,
                                        {i64, v->getType()}, {v});
    if (to == ElemKind::UInt64) {
      llvm::Value *u = b_.CreateIntrinsic(llvm::Intrinsic::fptoui_sat,
                                          {i64, v->getType()}, {v});
      llvm::Value *big = b_.CreateFCmpOGE(
          v, llvm::ConstantFP::get(v->getType(), 9223372036854775808.0));
      s = b_.CreateSelect(big, u, s);
    }
    return b_.CreateTrunc(s, t);
  }
  if (toF)
    return fromU ? b_.CreateUIToFP(v, t) : b_.CreateSIToFP(v, t);
  return fromU ? b_.CreateZExtOrTrunc(v, t) : b_.CreateSExtOrTrunc(v, t);
}

llvm::Value *Renderer::emitUnary(ExprRef e) {
  llvm::Value *a = emit(e->a);
  bool isF = isFloatKind(e->type);
  switch (e->uop) {
  case UnOp::Neg:
    return isF ? b_.CreateFNeg(a) : b_.CreateNeg(a);
  case UnOp::Abs:
    if (isF)
      return intrinsic(llvm::Intrinsic::fabs, {a});
    return b_.CreateIntrinsic(llvm::Intrinsic::abs, {a->getType()},
                              {a, b_.getFalse()});
  case UnOp::Exp:
    return cpu::emitFastExp(b_, a);
  case UnOp::Log:
    if (llvm::Value *v = cpu::emitFastLog(b_, a))
      return v;
    return intrinsic(llvm::Intrinsic::log, {a});
  case UnOp::Sqrt:
    return intrinsic(llvm::Intrinsic::sqrt, {a});
  case UnOp::Tanh:
    if (llvm::Value *v = cpu::emitFastTanh(b_, a))
      return v;
    break;
  case UnOp::Floor:
    return intrinsic(llvm::Intrinsic::floor, {a});
  case UnOp::Ceil:
    return intrinsic(llvm::Intrinsic::ceil, {a});
  case UnOp::Round:
    return intrinsic(llvm::Intrinsic::roundeven, {a});
  case UnOp::Erf:
    if (llvm::Value *v = cpu::emitFastErf(b_, a))
      return v;
    break;
  case UnOp::NormCdf: {
    if (llvm::Value *v = cpu::emitFastNormCdf(b_, a))
      return v;
    llvm::Value *z = b_.CreateFMul(
        a, llvm::ConstantFP::get(a->getType(), -0.70710678118654752));
    return b_.CreateFMul(libm("erfcf", z),
                         llvm::ConstantFP::get(a->getType(), 0.5));
  }
  case UnOp::Sigmoid: {
    llvm::Value *one = llvm::ConstantFP::get(a->getType(), 1.0);
    llvm::Value *ex = cpu::emitFastExp(b_, b_.CreateFNeg(a));
    return b_.CreateFDiv(one, b_.CreateFAdd(one, ex));
  }
  case UnOp::Relu: {
    llvm::Value *zero = llvm::Constant::getNullValue(a->getType());
    llvm::Value *pos =
        isF ? b_.CreateFCmpOGT(a, zero) : b_.CreateICmpSGT(a, zero);
    return b_.CreateSelect(pos, a, zero);
  }
  default: // the trigonometric and hyperbolic functions
    break;
  }
  // Tanh and Erf where no fast form applies, and the functions above.
  return libm(cMathFunction(e->uop), a);
}

llvm::Value *Renderer::emitBinary(ExprRef e) {
  llvm::Value *a = emit(e->a), *b = emit(e->b);
  bool isF = isFloatKind(e->a->type);
  bool isU = isUnsignedKind(e->a->type) || e->a->type == ElemKind::Bool;
  auto lt = [&](llvm::Value *x, llvm::Value *y) {
    return isF   ? b_.CreateFCmpOLT(x, y)
           : isU ? b_.CreateICmpULT(x, y)
                 : b_.CreateICmpSLT(x, y);
  };
  switch (e->bop) {
  case BinOp::Add:
    return isF ? b_.CreateFAdd(a, b) : b_.CreateAdd(a, b);
  case BinOp::Sub:
    return isF ? b_.CreateFSub(a, b) : b_.CreateSub(a, b);
  case BinOp::Mul:
    return isF ? b_.CreateFMul(a, b) : b_.CreateMul(a, b);
  case BinOp::Div:
    return isF ? b_.CreateFDiv(a, b)
               : (isU ? b_.CreateUDiv(a, b) : b_.CreateSDiv(a, b));
  case BinOp::Rem:
    return isF ? b_.CreateFRem(a, b)
               : (isU ? b_.CreateURem(a, b) : b_.CreateSRem(a, b));
  case BinOp::Max: // (a < b) ? b : a, like std::max
    return b_.CreateSelect(lt(a, b), b, a);
  case BinOp::Min: // (b < a) ? b : a, like std::min
    return b_.CreateSelect(lt(b, a), b, a);
  case BinOp::Pow:
    return intrinsic(llvm::Intrinsic::pow, {a, b});
  case BinOp::Lt:
    return lt(a, b);
  case BinOp::Le:
    return isF   ? b_.CreateFCmpOLE(a, b)
           : isU ? b_.CreateICmpULE(a, b)
                 : b_.CreateICmpSLE(a, b);
  case BinOp::Eq:
    return isF ? b_.CreateFCmpOEQ(a, b) : b_.CreateICmpEQ(a, b);
  case BinOp::And:
    return b_.CreateAnd(a, b);
  case BinOp::Or:
    return b_.CreateOr(a, b);
  case BinOp::Xor:
    return b_.CreateXor(a, b);
  case BinOp::Shl:
    return b_.CreateShl(a, b);
  case BinOp::Shr:
    return isU ? b_.CreateLShr(a, b) : b_.CreateAShr(a, b);
  }
  return nullptr;
}

llvm::Value *Renderer::emit(ExprRef e) {
  switch (e->kind) {
  case ExprKind::Const:
    if (isFloatKind(e->type))
      return llvm::ConstantFP::get(valueType(e->type), e->fval);
    return llvm::ConstantInt::get(valueType(e->type), e->ival, true);
  case ExprKind::Var:
    return vars_[e->var];
  case ExprKind::Local:
    return b_.CreateLoad(valueType(e->type), locals_[e->var]);
  case ExprKind::Load: {
    ScalarKind kind = k_.getBuffers()[e->buffer].kind;
    llvm::LoadInst *v =
        b_.CreateLoad(typeOf(kind), address(e->buffer, emit(e->a)));
    tagAccess(v, e->buffer);
    if (kind == ElemKind::Bool)
      return b_.CreateICmpNE(v, b_.getInt8(0));
    return v;
  }
  case ExprKind::Unary:
    return emitUnary(e);
  case ExprKind::Binary:
    return emitBinary(e);
  case ExprKind::Select:
    return b_.CreateSelect(emit(e->a), emit(e->b), emit(e->c));
  case ExprKind::Cast:
    return emitCast(emit(e->a), e->a->type, e->type);
  }
  return nullptr;
}

void Renderer::emitLoop(const Stmt &s, llvm::Value *begin, llvm::Value *end) {
  llvm::BasicBlock *pre = b_.GetInsertBlock();
  auto *head = llvm::BasicBlock::Create(ctx_, "loop", fn_);
  auto *body = llvm::BasicBlock::Create(ctx_, "body", fn_);
  auto *exit = llvm::BasicBlock::Create(ctx_, "exit", fn_);
  b_.CreateBr(head);
  b_.SetInsertPoint(head);
  llvm::PHINode *iv = b_.CreatePHI(b_.getInt64Ty(), 2, "i");
  iv->addIncoming(begin, pre);
  b_.CreateCondBr(b_.CreateICmpSLT(iv, end), body, exit);
  b_.SetInsertPoint(body);
  vars_[s.var] = iv;
  emitStmts(s.body);
  iv->addIncoming(b_.CreateNSWAdd(iv, b_.getInt64(1)), b_.GetInsertBlock());
  b_.CreateBr(head);
  b_.SetInsertPoint(exit);
}

void Renderer::emitCall(const Stmt &s) {
  llvm::Function *callee = M_.getFunction(s.callee);
  assert(callee && "library kernel missing from the module");
  llvm::FunctionType *ft = callee->getFunctionType();
  std::vector<llvm::Value *> args;
  for (size_t i = 0; i < s.args.size(); ++i) {
    const CallArg &a = s.args[i];
    llvm::Type *pt = ft->getParamType(i);
    llvm::Value *v;
    if (a.isBuffer)
      v = address(a.buffer, a.value ? emit(a.value) : nullptr);
    else
      v = emit(a.value);
    if (pt->isPointerTy() && !v->getType()->isPointerTy())
      v = b_.CreateIntToPtr(v, pt);
    else if (pt->isIntegerTy() && v->getType() != pt)
      v = b_.CreateSExtOrTrunc(v, pt);
    args.push_back(v);
  }
  b_.CreateCall(callee, args);
}

void Renderer::emitStmts(const std::vector<Stmt> &body) {
  for (const Stmt &s : body) {
    switch (s.kind) {
    case StmtKind::Loop:
      emitLoop(s, b_.getInt64(0), b_.getInt64(s.extent));
      break;
    case StmtKind::Store: {
      ScalarKind kind = k_.getBuffers()[s.buffer].kind;
      llvm::Value *v = emit(s.value);
      if (kind == ElemKind::Bool)
        v = b_.CreateZExt(v, b_.getInt8Ty());
      tagAccess(b_.CreateStore(v, address(s.buffer, emit(s.index))), s.buffer);
      break;
    }
    case StmtKind::Assign: {
      llvm::Value *v = emit(s.value);
      // A float sum or product into a local (a reduction's accumulator) may
      // be reassociated, so the vectorizer keeps partial sums in lanes. The
      // order is fixed by the compiled code: results do not depend on the
      // thread count.
      ExprRef e = s.value;
      if (e->kind == ExprKind::Binary && isFloatKind(e->type) &&
          (e->bop == BinOp::Add || e->bop == BinOp::Mul) &&
          e->a->kind == ExprKind::Local && e->a->var == s.var)
        if (auto *inst = llvm::dyn_cast<llvm::Instruction>(v))
          inst->setHasAllowReassoc(true);
      b_.CreateStore(v, locals_[s.var]);
      break;
    }
    case StmtKind::If: {
      auto *then = llvm::BasicBlock::Create(ctx_, "then", fn_);
      auto *join = llvm::BasicBlock::Create(ctx_, "join", fn_);
      b_.CreateCondBr(emit(s.cond), then, join);
      b_.SetInsertPoint(then);
      emitStmts(s.body);
      b_.CreateBr(join);
      b_.SetInsertPoint(join);
      break;
    }
    case StmtKind::Call:
      emitCall(s);
      break;
    }
  }
}

llvm::Function *Renderer::run() {
  llvm::Type *ptr = b_.getPtrTy(), *i64 = b_.getInt64Ty();
  auto *ft =
      llvm::FunctionType::get(b_.getVoidTy(), {ptr, ptr, ptr, i64, i64}, false);
  fn_ = llvm::Function::Create(ft, llvm::GlobalValue::InternalLinkage,
                               "kernel." + k_.getName(), M_);
  // One call per kernel and run: inlining into the entry gains nothing and
  // would hide the kernels from profilers.
  fn_->addFnAttr(llvm::Attribute::NoInline);
  for (unsigned i = 0; i < 3; ++i) {
    bases_[i] = fn_->getArg(i);
    fn_->addParamAttr(i, llvm::Attribute::NoAlias);
  }
  emitBody(fn_->getArg(3), fn_->getArg(4));
  return fn_;
}

llvm::Function *Renderer::runShared(llvm::StringRef name) {
  cpu::BufferGroups groups = cpu::groupBuffers(k_);
  const unsigned n = groups.bases.size();
  fn_ = llvm::Function::Create(cpu::sharedBodyType(k_, ctx_),
                               llvm::GlobalValue::InternalLinkage, name, M_);
  fn_->addFnAttr(llvm::Attribute::NoInline);
  // Groups never overlap, so each base is the only way to its bytes.
  for (unsigned i = 0; i < n; ++i)
    fn_->addParamAttr(i, llvm::Attribute::NoAlias);
  const auto &bufs = k_.getBuffers();
  for (unsigned i = 0; i < bufs.size(); ++i) {
    unsigned g = groups.groupOf[i];
    groupBase_.push_back(fn_->getArg(g));
    groupOffset_.push_back(bufs[i].offset - groups.bases[g].offset);
  }
  emitBody(fn_->getArg(n), fn_->getArg(n + 1));
  return fn_;
}

void Renderer::emitBody(llvm::Value *begin, llvm::Value *end) {
  b_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", fn_));
  setAliasScopes();
  vars_.assign(k_.getNumVars(), nullptr);
  for (ScalarKind kind : k_.getLocals())
    locals_.push_back(b_.CreateAlloca(valueType(kind)));
  if (const Stmt *par = k_.getParallelLoop()) {
    // Single-iteration parallel loops around the split one run at 0.
    for (; par != cpu::splitLoop(k_); par = &par->body[0])
      vars_[par->var] = b_.getInt64(0);
    emitLoop(*par, begin, end);
  } else {
    emitStmts(k_.body());
  }
  b_.CreateRetVoid();
}

llvm::Function *cpu::renderKernel(const Kernel &k, llvm::Module &M) {
  return Renderer(k, M).run();
}

llvm::FunctionType *cpu::sharedBodyType(const Kernel &k,
                                        llvm::LLVMContext &ctx) {
  llvm::SmallVector<llvm::Type *, 8> params(groupBuffers(k).bases.size(),
                                            llvm::PointerType::get(ctx, 0));
  params.append(2, llvm::Type::getInt64Ty(ctx));
  return llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), params, false);
}

llvm::Function *cpu::renderSharedBody(const Kernel &k, llvm::Module &M,
                                      llvm::StringRef name) {
  return Renderer(k, M).runShared(name);
}

llvm::Function *cpu::renderKernelCalling(const Kernel &k, llvm::Function *body,
                                         llvm::Module &M) {
  llvm::IRBuilder<> b(M.getContext());
  llvm::Type *ptr = b.getPtrTy(), *i64 = b.getInt64Ty();
  auto *ft =
      llvm::FunctionType::get(b.getVoidTy(), {ptr, ptr, ptr, i64, i64}, false);
  auto *fn = llvm::Function::Create(ft, llvm::GlobalValue::InternalLinkage,
                                    "kernel." + k.getName(), M);
  fn->addFnAttr(llvm::Attribute::NoInline);
  b.SetInsertPoint(llvm::BasicBlock::Create(M.getContext(), "entry", fn));
  llvm::SmallVector<llvm::Value *, 8> args;
  for (const cpu::BufferGroups::Base &g : cpu::groupBuffers(k).bases)
    args.push_back(b.CreateConstInBoundsGEP1_64(
        b.getInt8Ty(), fn->getArg(unsigned(g.region)), g.offset));
  args.append({fn->getArg(3), fn->getArg(4)});
  b.CreateCall(body, args);
  b.CreateRetVoid();
  return fn;
}

/// The loop a kernel's [begin, end) bounds: its outermost parallel loop,
/// or, while that has a single iteration (a batch of 1) and its body is one
/// parallel loop, that inner loop, so that threads split real work.
const Stmt *cpu::splitLoop(const Kernel &k) {
  const Stmt *par = k.getParallelLoop();
  while (par && par->extent == 1 && par->body.size() == 1 &&
         par->body[0].kind == StmtKind::Loop && par->body[0].parallel)
    par = &par->body[0];
  return par;
}

int64_t cpu::kernelExtent(const Kernel &k) {
  const Stmt *par = splitLoop(k);
  return par ? par->extent : 1;
}
