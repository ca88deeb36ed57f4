//===- Structured.cpp - Data movement, pooling and softmax as kernels -----===//
#include "KernelRules.h"

#include <limits>

using namespace ember;
using namespace ember::kir;

/// Builds a loop nest over \p dims whose innermost body is made by \p inner
/// from the loop variables. Every loop of the nest is parallel: each
/// innermost body writes its own outputs (the CPU splits the outermost loop;
/// the CUDA renderer flattens the whole nest into threads).
std::vector<Stmt> kir::loopNest(
    Kernel &k, llvm::ArrayRef<dim_t> dims,
    llvm::function_ref<std::vector<Stmt>(llvm::ArrayRef<ExprRef>)> inner) {
  llvm::SmallVector<unsigned, kMaxRank> vars;
  llvm::SmallVector<ExprRef, kMaxRank> exprs;
  for (size_t i = 0; i < dims.size(); ++i) {
    vars.push_back(k.newVar());
    exprs.push_back(k.var(vars.back()));
  }
  std::vector<Stmt> body = inner(exprs);
  for (int i = int(dims.size()) - 1; i >= 0; --i)
    body = {Kernel::loop(vars[i], dims[i], /*parallel=*/true, std::move(body))};
  return body;
}

/// Copies the output-shaped nest: out[flat] = in[sum(coord * inStrides)].
static Kernel stridedCopy(const Instruction &I, const MemoryPlan &plan,
                          llvm::ArrayRef<dim_t> inStrides) {
  Kernel k(I.getName());
  Value *dest = I.getOperand(0).value, *src = I.getOperand(1).value;
  unsigned out = k.addBuffer(bufferFor(dest, plan));
  unsigned in = k.addBuffer(bufferFor(src, plan));
  llvm::SmallVector<dim_t, kMaxRank> dims(dest->getType()->dims());
  auto outStrides = dest->getType()->strides();
  if (dims.empty()) { // a scalar
    dims.push_back(1);
    outStrides.push_back(1);
  }
  llvm::SmallVector<dim_t, kMaxRank> strides(inStrides);
  strides.resize(dims.size(), 0);
  k.body() = loopNest(k, dims, [&](llvm::ArrayRef<ExprRef> c) {
    ExprRef oi = k.constInt(0), ii = k.constInt(0);
    for (size_t d = 0; d < c.size(); ++d) {
      oi = k.add(oi, k.mul(c[d], outStrides[d]));
      ii = k.add(ii, k.mul(c[d], strides[d]));
    }
    return std::vector<Stmt>{Kernel::store(out, oi, k.load(in, ii))};
  });
  return k;
}

static void lowerConcat(const ConcatInst &I, const MemoryPlan &plan,
                        std::vector<Kernel> &out) {
  TypeRef ty = I.getDest()->getType();
  int64_t axis = I.getAxis();
  dim_t outer = 1, inner = 1;
  for (int64_t i = 0; i < axis; ++i)
    outer *= ty->dims()[i];
  for (unsigned i = axis + 1; i < ty->rank(); ++i)
    inner *= ty->dims()[i];
  dim_t rowOut = ty->dims()[axis] * inner, offset = 0;
  unsigned n = 0;
  for (Value *v : I.getInputs()) {
    dim_t rowIn = v->getType()->dims()[axis] * inner;
    Kernel k((I.getName() + "." + llvm::Twine(n++)).str());
    unsigned o = k.addBuffer(bufferFor(I.getDest(), plan));
    unsigned in = k.addBuffer(bufferFor(v, plan));
    k.body() = loopNest(k, {outer, rowIn}, [&](llvm::ArrayRef<ExprRef> c) {
      ExprRef oi = k.add(k.add(k.mul(c[0], rowOut), k.constInt(offset)), c[1]);
      ExprRef ii = k.add(k.mul(c[0], rowIn), c[1]);
      return std::vector<Stmt>{Kernel::store(o, oi, k.load(in, ii))};
    });
    offset += rowIn;
    if (rowIn)
      out.push_back(std::move(k));
  }
}

/// MaxPool (isMax) or AvgPool over NCHW, following the Interpreter's
/// semantics: padding never wins the max; with CountIncludePad, explicit
/// padding counts but positions past it do not.
static Kernel lowerPool(const Instruction &I, const MemoryPlan &plan,
                        bool isMax) {
  Value *dest = I.getOperand(0).value, *src = I.getOperand(1).value;
  auto xd = src->getType()->dims(), yd = dest->getType()->dims();
  auto kernel = I.attr(0).ints, strides = I.attr(1).ints, pads = I.attr(2).ints;
  bool countPad = !isMax && I.attr(3).i;
  dim_t H = xd[2], W = xd[3];
  Kernel k(I.getName());
  unsigned out = k.addBuffer(bufferFor(dest, plan));
  unsigned in = k.addBuffer(bufferFor(src, plan));
  unsigned acc = k.addLocal(ElemKind::Float32);
  unsigned cnt = k.addLocal(ElemKind::Float32);
  k.body() = loopNest(k, {xd[0] * xd[1], yd[2], yd[3]}, [&](auto c) {
    std::vector<Stmt> s;
    float init = isMax ? -std::numeric_limits<float>::infinity() : 0.f;
    s.push_back(Kernel::assign(acc, k.constFloat(init)));
    s.push_back(Kernel::assign(cnt, k.constFloat(0)));
    unsigned kh = k.newVar(), kw = k.newVar();
    ExprRef ih =
        k.add(k.mul(c[1], strides[0]), k.add(k.var(kh), k.constInt(-pads[0])));
    ExprRef iw =
        k.add(k.mul(c[2], strides[1]), k.add(k.var(kw), k.constInt(-pads[1])));
    auto inRange = [&](ExprRef e, dim_t hi) {
      return k.binary(BinOp::And, k.binary(BinOp::Le, k.constInt(0), e),
                      k.binary(BinOp::Lt, e, k.constInt(hi)));
    };
    ExprRef inside = k.binary(BinOp::And, inRange(ih, H), inRange(iw, W));
    ExprRef idx = k.add(k.mul(c[0], H * W), k.add(k.mul(ih, W), iw));
    ExprRef x = k.load(in, idx);
    ExprRef one = k.constFloat(1);
    std::vector<Stmt> body;
    body.push_back(Kernel::assign(
        acc, k.select(inside,
                      isMax ? k.binary(BinOp::Max, k.local(acc), x)
                            : k.binary(BinOp::Add, k.local(acc), x),
                      k.local(acc))));
    ExprRef counted = inside;
    if (countPad)
      counted = k.binary( // ih >= -pads[0] and iw >= -pads[1] always hold
          BinOp::And, k.binary(BinOp::Lt, ih, k.constInt(H + pads[2])),
          k.binary(BinOp::Lt, iw, k.constInt(W + pads[3])));
    body.push_back(Kernel::assign(
        cnt, k.select(counted, k.binary(BinOp::Add, k.local(cnt), one),
                      k.local(cnt))));
    // Guard the load: the select alone would read out of bounds.
    std::vector<Stmt> guarded = {Kernel::ifThen(inside, {body[0]}), body[1]};
    s.push_back(Kernel::loop(kh, kernel[0], false,
                             {Kernel::loop(kw, kernel[1], false, guarded)}));
    ExprRef o =
        k.add(k.mul(c[0], yd[2] * yd[3]), k.add(k.mul(c[1], yd[3]), c[2]));
    ExprRef v = k.local(acc);
    if (!isMax)
      v = k.binary(BinOp::Div, v, k.binary(BinOp::Max, k.local(cnt), one));
    s.push_back(Kernel::store(out, o, v));
    return s;
  });
  return k;
}

static Kernel lowerSoftmax(const SoftmaxInst &I, const MemoryPlan &plan) {
  TypeRef t = I.getInput()->getType();
  int64_t axis = I.getAxis();
  dim_t len = t->dims()[axis], inner = 1;
  for (unsigned i = axis + 1; i < t->rank(); ++i)
    inner *= t->dims()[i];
  dim_t outer = t->size() / std::max<dim_t>(len * inner, 1);
  Kernel k(I.getName());
  unsigned out = k.addBuffer(bufferFor(I.getDest(), plan));
  unsigned in = k.addBuffer(bufferFor(I.getInput(), plan));
  unsigned mx = k.addLocal(ElemKind::Float32);
  unsigned sum = k.addLocal(ElemKind::Float32);
  k.body() = loopNest(k, {outer, inner}, [&](auto c) {
    ExprRef base = k.add(k.mul(c[0], len * inner), c[1]);
    auto at = [&](unsigned v) { return k.add(base, k.mul(k.var(v), inner)); };
    unsigned a = k.newVar(), b = k.newVar(), d = k.newVar();
    ExprRef e = k.unary(UnOp::Exp,
                        k.binary(BinOp::Sub, k.load(in, at(b)), k.local(mx)));
    std::vector<Stmt> s;
    s.push_back(Kernel::assign(
        mx, k.constFloat(-std::numeric_limits<float>::infinity())));
    s.push_back(
        Kernel::loop(a, len, false,
                     {Kernel::assign(mx, k.binary(BinOp::Max, k.local(mx),
                                                  k.load(in, at(a))))}));
    s.push_back(Kernel::assign(sum, k.constFloat(0)));
    s.push_back(
        Kernel::loop(b, len, false,
                     {Kernel::store(out, at(b), e),
                      Kernel::assign(sum, k.binary(BinOp::Add, k.local(sum),
                                                   k.load(out, at(b))))}));
    s.push_back(
        Kernel::loop(d, len, false,
                     {Kernel::store(out, at(d),
                                    k.binary(BinOp::Div, k.load(out, at(d)),
                                             k.local(sum)))}));
    return s;
  });
  return k;
}

/// Batched C = A * B with a sequential reduction: the portable fallback
/// (backends with a tuned matmul claim MatMul through their hook).
static Kernel lowerMatMul(const MatMulInst &I, const MemoryPlan &plan) {
  TypeRef ta = I.getLHS()->getType(), tb = I.getRHS()->getType();
  unsigned r = ta->rank();
  dim_t m = ta->dims()[r - 2], kk = ta->dims()[r - 1], n = tb->dims()[r - 1];
  dim_t batch = ta->size() / std::max<dim_t>(m * kk, 1);
  Kernel k(I.getName());
  unsigned c = k.addBuffer(bufferFor(I.getDest(), plan));
  unsigned a = k.addBuffer(bufferFor(I.getLHS(), plan));
  unsigned b = k.addBuffer(bufferFor(I.getRHS(), plan));
  unsigned acc = k.addLocal(ElemKind::Float32);
  k.body() = loopNest(k, {batch, m, n}, [&](auto v) {
    unsigned p = k.newVar();
    ExprRef ai = k.add(k.mul(v[0], m * kk), k.add(k.mul(v[1], kk), k.var(p)));
    ExprRef bi = k.add(k.mul(v[0], kk * n), k.add(k.mul(k.var(p), n), v[2]));
    ExprRef ci = k.add(k.mul(v[0], m * n), k.add(k.mul(v[1], n), v[2]));
    return std::vector<Stmt>{
        Kernel::assign(acc, k.constFloat(0)),
        Kernel::loop(
            p, kk, false,
            {Kernel::assign(acc, k.binary(BinOp::Add, k.local(acc),
                                          k.binary(BinOp::Mul, k.load(a, ai),
                                                   k.load(b, bi))))}),
        Kernel::store(c, ci, k.local(acc))};
  });
  return k;
}

bool kir::lowerStructured(const Instruction &I, const MemoryPlan &plan,
                          std::vector<Kernel> &out) {
  switch (I.getKind()) {
  case ValueKind::CopyInst:
  case ValueKind::TransposeInst:
  case ValueKind::BroadcastInst: {
    TypeRef in = I.getOperand(1).value->getType();
    auto inStrides = in->strides();
    llvm::SmallVector<dim_t, kMaxRank> strides(inStrides);
    if (auto *t = llvm::dyn_cast<TransposeInst>(&I)) {
      strides.clear();
      for (int64_t p : t->getShuffle())
        strides.push_back(inStrides[p]);
    } else if (llvm::isa<BroadcastInst>(I)) {
      for (unsigned i = 0; i < in->rank(); ++i)
        if (in->dims()[i] == 1)
          strides[i] = 0;
    }
    if (I.getOperand(0).value->getType()->size())
      out.push_back(stridedCopy(I, plan, strides));
    return true;
  }
  case ValueKind::ConcatInst:
    lowerConcat(llvm::cast<ConcatInst>(I), plan, out);
    return true;
  case ValueKind::MaxPoolInst:
    out.push_back(lowerPool(I, plan, /*isMax=*/true));
    return true;
  case ValueKind::AvgPoolInst:
    out.push_back(lowerPool(I, plan, /*isMax=*/false));
    return true;
  case ValueKind::SoftmaxInst:
    out.push_back(lowerSoftmax(llvm::cast<SoftmaxInst>(I), plan));
    return true;
  case ValueKind::MatMulInst:
    out.push_back(lowerMatMul(llvm::cast<MatMulInst>(I), plan));
    return true;
  default:
    return lowerReduction(I, plan, out) || lowerIndexing(I, plan, out) ||
           lowerWindow(I, plan, out);
  }
}
