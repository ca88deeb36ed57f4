//===- Structured.cpp - Data movement, pooling and softmax as kernels -----===//
#include "KernelRules.h"

#include "glog/logging.h"

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

bool kir::lowerConcat(const ConcatInst &I, const MemoryPlan &plan,
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
  return true;
}

/// The number of window taps along one dim at output position \p o (an
/// Int64 expression) that count: inside [0, size), or with \p countPad
/// inside [-padBegin, size + padEnd) (the lower bound always holds).
static ExprRef tapsAt(Kernel &k, ExprRef o, int64_t stride, int64_t padBegin,
                      int64_t padEnd, int64_t window, dim_t size,
                      bool countPad) {
  ExprRef first = k.add(k.mul(o, stride), k.constInt(-padBegin));
  ExprRef end = k.binary(BinOp::Min, k.add(first, k.constInt(window)),
                         k.constInt(countPad ? size + padEnd : size));
  ExprRef begin = countPad ? first : k.binary(BinOp::Max, first, k.constInt(0));
  return k.binary(BinOp::Max, k.binary(BinOp::Sub, end, begin), k.constInt(0));
}

/// MaxPool (isMax) or AvgPool over NCHW, following the Interpreter's
/// semantics: padding never wins the max; with CountIncludePad, explicit
/// padding counts but positions past it do not. One parallel iteration per
/// output row; each output accumulates its taps in (kh, kw) order in a
/// local. A tap outside the input contributes the identity (-inf or 0)
/// through a select, its load clamped into the input so that it is always
/// in bounds. In the row's interior no column needs a guard or a clamp, so
/// that loop is straight loads and vectorizes; AvgPool divides by a count
/// computed from the window's overlap with the input (or its padding).
static Kernel poolKernel(const Instruction &I, const MemoryPlan &plan,
                         bool isMax) {
  Value *dest = I.getOperand(0).value, *src = I.getOperand(1).value;
  auto xd = src->getType()->dims(), yd = dest->getType()->dims();
  auto kernel = I.attr(0).ints, strides = I.attr(1).ints, pads = I.attr(2).ints;
  bool countPad = !isMax && I.attr(3).i;
  dim_t H = xd[2], W = xd[3], OH = yd[2], OW = yd[3];
  int64_t sw = strides[1], pl = pads[1];
  Kernel k(I.getName());
  unsigned out = k.addBuffer(bufferFor(dest, plan));
  unsigned in = k.addBuffer(bufferFor(src, plan));
  // Bytes (max only) compare in Int32 from the type's lowest value.
  ElemKind ek = dest->getType()->getElemKind();
  bool isInt = ek == ElemKind::Int8 || ek == ElemKind::UInt8;
  unsigned acc = k.addLocal(isInt ? ElemKind::Int32 : ElemKind::Float32);
  unsigned r = k.newVar();
  ExprRef nc = k.binary(BinOp::Div, k.var(r), k.constInt(OH));
  ExprRef oh = k.binary(BinOp::Rem, k.var(r), k.constInt(OH));
  ExprRef init =
      isInt
          ? k.constInt(ek == ElemKind::Int8 ? -128 : 0, ElemKind::Int32)
          : k.constFloat(isMax ? -std::numeric_limits<float>::infinity() : 0.f);
  // Rows: validity and clamped index per kh (loop-invariant in a row).
  std::vector<ExprRef> rowOk, rowBase;
  for (int64_t kh = 0; kh < kernel[0]; ++kh) {
    ExprRef ih = k.add(k.mul(oh, strides[0]), k.constInt(kh - pads[0]));
    rowOk.push_back(k.binary(BinOp::And, k.binary(BinOp::Le, k.constInt(0), ih),
                             k.binary(BinOp::Lt, ih, k.constInt(H))));
    ExprRef ihc = k.binary(BinOp::Min, k.binary(BinOp::Max, ih, k.constInt(0)),
                           k.constInt(H - 1));
    rowBase.push_back(k.add(k.mul(nc, H * W), k.mul(ihc, W)));
  }
  // Interior: outputs whose every column tap lies in [0, W).
  int64_t lo = (pl + sw - 1) / sw;
  int64_t hi = W - (kernel[1] - 1 - pl) <= 0
                   ? 0
                   : (W - (kernel[1] - 1 - pl) + sw - 1) / sw;
  lo = std::min<int64_t>(lo, OW);
  hi = std::max<int64_t>(lo, std::min<int64_t>(hi, OW));
  auto segment = [&](int64_t begin, int64_t end, bool edge) -> Stmt {
    unsigned j = k.newVar();
    ExprRef ow = k.add(k.var(j), k.constInt(begin));
    std::vector<Stmt> body = {Kernel::assign(acc, init)};
    for (int64_t kh = 0; kh < kernel[0]; ++kh)
      for (int64_t kw = 0; kw < kernel[1]; ++kw) {
        ExprRef iw = k.add(k.mul(ow, sw), k.constInt(kw - pl));
        ExprRef ok = rowOk[kh];
        if (edge) {
          ok = k.binary(BinOp::And, ok,
                        k.binary(BinOp::And,
                                 k.binary(BinOp::Le, k.constInt(0), iw),
                                 k.binary(BinOp::Lt, iw, k.constInt(W))));
          iw = k.binary(BinOp::Min, k.binary(BinOp::Max, iw, k.constInt(0)),
                        k.constInt(W - 1));
        }
        ExprRef x = k.load(in, k.add(rowBase[kh], iw));
        x = k.select(ok, isInt ? k.cast(x, ElemKind::Int32) : x, init);
        body.push_back(Kernel::assign(
            acc, k.binary(isMax ? BinOp::Max : BinOp::Add, k.local(acc), x)));
      }
    ExprRef v = k.local(acc);
    if (!isMax) {
      ExprRef rows =
          tapsAt(k, oh, strides[0], pads[0], pads[2], kernel[0], H, countPad);
      ExprRef cols = tapsAt(k, ow, sw, pl, pads[3], kernel[1], W, countPad);
      ExprRef count = k.cast(
          k.binary(BinOp::Max, k.binary(BinOp::Mul, rows, cols), k.constInt(1)),
          ElemKind::Float32);
      v = k.binary(BinOp::Div, v, count);
    }
    if (isInt)
      v = k.cast(v, ek);
    body.push_back(Kernel::store(out, k.add(k.mul(k.var(r), OW), ow), v));
    return Kernel::loop(j, end - begin, false, std::move(body));
  };
  std::vector<Stmt> row;
  if (lo > 0)
    row.push_back(segment(0, lo, true));
  if (hi > lo)
    row.push_back(segment(lo, hi, false));
  if (OW > hi)
    row.push_back(segment(hi, OW, true));
  k.body() = {Kernel::loop(r, xd[0] * xd[1] * OH, true, std::move(row))};
  return k;
}

static Kernel softmaxKernel(const SoftmaxInst &I, const MemoryPlan &plan) {
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

ExprRef kir::matMulBatchOffset(Kernel &k, ExprRef bi,
                               llvm::ArrayRef<dim_t> outBatch,
                               llvm::ArrayRef<dim_t> opBatch,
                               int64_t matrixElems) {
  if (opBatch == outBatch)
    return k.mul(bi, matrixElems);
  ExprRef off = k.constInt(0);
  int64_t outInner = 1, opStride = matrixElems;
  for (size_t d = outBatch.size(); d-- > 0;) {
    if (opBatch[d] != 1 || outBatch[d] == 1)
      off =
          k.add(off, k.mul(k.rem(k.div(bi, outInner), outBatch[d]), opStride));
    outInner *= outBatch[d];
    opStride *= opBatch[d];
  }
  return off;
}

/// Batched C = A * B with a sequential reduction: the portable fallback
/// (backends with a tuned matmul claim MatMul through their hook). Broadcast
/// batch dims and a transposed B are read in place. Backends that take it
/// do not fuse epilogues (Backend::supportsMatMulEpilogue).
static Kernel matMulKernel(const MatMulInst &I, const MemoryPlan &plan) {
  CHECK(I.getEpilogue().empty() && I.getFusedActivation() == 0)
      << "MatMul epilogue on a backend that does not fuse it";
  TypeRef ta = I.getLHS()->getType(), tb = I.getRHS()->getType();
  TypeRef tc = I.getDest()->getType();
  unsigned r = ta->rank();
  bool transB = I.getTransB();
  dim_t m = ta->dims()[r - 2], kk = ta->dims()[r - 1];
  dim_t n = tc->dims()[r - 1];
  dim_t batch = tc->size() / std::max<dim_t>(m * n, 1);
  Kernel k(I.getName());
  unsigned c = k.addBuffer(bufferFor(I.getDest(), plan));
  unsigned a = k.addBuffer(bufferFor(I.getLHS(), plan));
  unsigned b = k.addBuffer(bufferFor(I.getRHS(), plan));
  unsigned acc = k.addLocal(ElemKind::Float32);
  k.body() = loopNest(k, {batch, m, n}, [&](auto v) {
    unsigned p = k.newVar();
    auto outBatch = tc->dims().drop_back(2);
    ExprRef a0 =
        matMulBatchOffset(k, v[0], outBatch, ta->dims().drop_back(2), m * kk);
    ExprRef b0 =
        matMulBatchOffset(k, v[0], outBatch, tb->dims().drop_back(2), kk * n);
    ExprRef ai = k.add(a0, k.add(k.mul(v[1], kk), k.var(p)));
    ExprRef bj = transB ? k.add(k.mul(v[2], kk), k.var(p))
                        : k.add(k.mul(k.var(p), n), v[2]);
    ExprRef ci = k.add(k.mul(v[0], m * n), k.add(k.mul(v[1], n), v[2]));
    return std::vector<Stmt>{
        Kernel::assign(acc, k.constFloat(0)),
        Kernel::loop(p, kk, false,
                     {Kernel::assign(
                         acc, k.binary(BinOp::Add, k.local(acc),
                                       k.binary(BinOp::Mul, k.load(a, ai),
                                                k.load(b, k.add(b0, bj)))))}),
        Kernel::store(c, ci, k.local(acc))};
  });
  return k;
}

bool kir::lowerStridedCopy(const Instruction &I, const MemoryPlan &plan,
                           std::vector<Kernel> &out) {
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

bool kir::lowerPool(const Instruction &I, const MemoryPlan &plan,
                    std::vector<Kernel> &out) {
  return appendKernel(out, poolKernel(I, plan, llvm::isa<MaxPoolInst>(I)));
}

bool kir::lowerSoftmax(const SoftmaxInst &I, const MemoryPlan &plan,
                       std::vector<Kernel> &out) {
  return appendKernel(out, softmaxKernel(I, plan));
}

bool kir::lowerMatMul(const MatMulInst &I, const MemoryPlan &plan,
                      std::vector<Kernel> &out) {
  return appendKernel(out, matMulKernel(I, plan));
}

bool kir::lowerStructured(const Instruction &I, const MemoryPlan &plan,
                          std::vector<Kernel> &out) {
  // Ops.py's lowering entries name each structured op's function.
  switch (I.getKind()) {
  case ValueKind::CopyInst: // an IR instruction, not an op of the table
    return lowerStridedCopy(I, plan, out);
#include "ember/Generated/KernelLowerings.inc"
  default:
    return false;
  }
}
