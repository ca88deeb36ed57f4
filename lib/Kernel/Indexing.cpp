//===- Indexing.cpp - Gathers, scatters, tiles, scans as kernels ----------===//
//
// Data-dependent indexing follows the Interpreter (backends/Interpreter/
// Indexing.cpp): a negative index counts from the end, and one still out
// of range gathers 0 and scatters nothing. Loads always use an in-range
// index, so an out-of-range one never touches memory outside its buffer.
//
//===----------------------------------------------------------------------===//
#include "KernelRules.h"

using namespace ember;
using namespace ember::kir;

namespace {
/// An index loaded from an Int32/Int64 buffer, normalized for a dim of
/// \p n: `value` (0 when out of range) and `valid`.
struct Index {
  ExprRef value, valid;
};

Index normIndex(Kernel &k, ExprRef raw, dim_t n) {
  ExprRef v = k.cast(raw, ScalarKind::Int64);
  ExprRef zero = k.constInt(0);
  v = k.select(k.binary(BinOp::Lt, v, zero), k.add(v, k.constInt(n)), v);
  ExprRef valid = k.binary(BinOp::And, k.binary(BinOp::Le, zero, v),
                           k.binary(BinOp::Lt, v, k.constInt(n)));
  return {k.select(valid, v, zero), valid};
}

dim_t product(llvm::ArrayRef<dim_t> dims, size_t from, size_t to) {
  dim_t p = 1;
  for (size_t i = from; i < to; ++i)
    p *= dims[i];
  return p;
}

/// Dims of \p t, with a scalar seen as one element.
llvm::SmallVector<dim_t, kMaxRank> loopDims(TypeRef t) {
  llvm::SmallVector<dim_t, kMaxRank> d(t->dims());
  if (d.empty())
    d.push_back(1);
  return d;
}

Kernel gather(const GatherInst &I, const MemoryPlan &plan) {
  TypeRef xt = I.getData()->getType();
  unsigned axis = I.getAxis();
  dim_t n = xt->dims()[axis], m = I.getIndices()->getType()->size();
  dim_t outer = product(xt->dims(), 0, axis);
  dim_t inner = product(xt->dims(), axis + 1, xt->rank());
  Kernel k(I.getName());
  unsigned out = k.addBuffer(bufferFor(I.getDest(), plan));
  unsigned x = k.addBuffer(bufferFor(I.getData(), plan));
  unsigned ix = k.addBuffer(bufferFor(I.getIndices(), plan));
  ScalarKind kind = xt->getElemKind();
  k.body() = loopNest(k, {outer, m, inner}, [&](llvm::ArrayRef<ExprRef> c) {
    Index j = normIndex(k, k.load(ix, c[1]), n);
    ExprRef src = k.add(k.mul(k.add(k.mul(c[0], n), j.value), inner), c[2]);
    ExprRef dst = k.add(k.mul(k.add(k.mul(c[0], m), c[1]), inner), c[2]);
    ExprRef v = k.select(j.valid, k.load(x, src), constOf(k, 0, kind));
    return std::vector<Stmt>{Kernel::store(out, dst, v)};
  });
  return k;
}

Kernel gatherElements(const GatherElementsInst &I, const MemoryPlan &plan) {
  TypeRef xt = I.getData()->getType(), it = I.getIndices()->getType();
  unsigned axis = I.getAxis();
  auto xs = xt->strides(), is = it->strides();
  Kernel k(I.getName());
  unsigned out = k.addBuffer(bufferFor(I.getDest(), plan));
  unsigned x = k.addBuffer(bufferFor(I.getData(), plan));
  unsigned ix = k.addBuffer(bufferFor(I.getIndices(), plan));
  ScalarKind kind = xt->getElemKind();
  k.body() = loopNest(k, it->dims(), [&](llvm::ArrayRef<ExprRef> c) {
    ExprRef flat = k.constInt(0), src = k.constInt(0);
    for (size_t d = 0; d < c.size(); ++d)
      flat = k.add(flat, k.mul(c[d], is[d]));
    Index j = normIndex(k, k.load(ix, flat), xt->dims()[axis]);
    for (size_t d = 0; d < c.size(); ++d)
      src = k.add(src, k.mul(d == axis ? j.value : c[d], xs[d]));
    ExprRef v = k.select(j.valid, k.load(x, src), constOf(k, 0, kind));
    return std::vector<Stmt>{Kernel::store(out, flat, v)};
  });
  return k;
}

/// The GatherND/ScatterND tuple geometry over data \p xt with \p b batch
/// dims and indices \p it: tuple t of `last` components addresses a slice
/// of `slice` elements at offset(t).
struct Tuples {
  dim_t last, count, perBatch, slice, batchStride;
  llvm::SmallVector<dim_t, kMaxRank> dims, strides;

  Tuples(TypeRef xt, TypeRef it, int64_t b) {
    llvm::ArrayRef<dim_t> xd = xt->dims();
    last = it->dims().back();
    count = last ? it->size() / last : 0;
    dim_t batch = product(xd, 0, b);
    perBatch = batch ? count / batch : 0;
    slice = product(xd, b + last, xd.size());
    batchStride = product(xd, b, xd.size());
    for (dim_t j = 0; j < last; ++j) {
      dims.push_back(xd[b + j]);
      strides.push_back(product(xd, b + j + 1, xd.size()));
    }
  }

  /// The element offset of tuple \p t and whether all its components are
  /// in range.
  Index offset(Kernel &k, unsigned ix, ExprRef t) const {
    ExprRef off =
        k.mul(k.binary(BinOp::Div, t, k.constInt(perBatch)), batchStride);
    ExprRef valid = k.constInt(1, ScalarKind::Bool);
    for (dim_t j = 0; j < last; ++j) {
      Index c = normIndex(k, k.load(ix, k.add(k.mul(t, last), k.constInt(j))),
                          dims[j]);
      off = k.add(off, k.mul(c.value, strides[j]));
      valid = k.binary(BinOp::And, valid, c.valid);
    }
    return {k.select(valid, off, k.constInt(0)), valid};
  }
};

Kernel gatherND(const GatherNDInst &I, const MemoryPlan &plan) {
  TypeRef xt = I.getData()->getType();
  Tuples tp(xt, I.getIndices()->getType(), I.getBatchDims());
  Kernel k(I.getName());
  unsigned out = k.addBuffer(bufferFor(I.getDest(), plan));
  unsigned x = k.addBuffer(bufferFor(I.getData(), plan));
  unsigned ix = k.addBuffer(bufferFor(I.getIndices(), plan));
  ScalarKind kind = xt->getElemKind();
  k.body() = loopNest(k, {tp.count, tp.slice}, [&](llvm::ArrayRef<ExprRef> c) {
    Index off = tp.offset(k, ix, c[0]);
    ExprRef v = k.select(off.valid, k.load(x, k.add(off.value, c[1])),
                         constOf(k, 0, kind));
    return std::vector<Stmt>{
        Kernel::store(out, k.add(k.mul(c[0], tp.slice), c[1]), v)};
  });
  return k;
}

/// Copies \p src into \p dest when they are different buffers.
void copyInto(const Instruction &I, Value *dest, Value *src,
              const MemoryPlan &plan, std::vector<Kernel> &out) {
  Buffer d = bufferFor(dest, plan), s = bufferFor(src, plan);
  if (d.region == s.region && d.offset == s.offset)
    return;
  Kernel k((I.getName() + ".copy").str());
  unsigned o = k.addBuffer(d), in = k.addBuffer(s);
  k.body() = loopNest(k, {dest->getType()->size()}, [&](auto c) {
    return std::vector<Stmt>{Kernel::store(o, c[0], k.load(in, c[0]))};
  });
  out.push_back(std::move(k));
}

/// Writes update \p u into element \p at of \p dest under \p reduction
/// (0 none, 1 add, 2 mul, 3 max, 4 min).
Stmt scatterStore(Kernel &k, unsigned dest, ExprRef at, ExprRef u,
                  int64_t reduction) {
  ScalarKind kind = k.getBuffers()[dest].kind;
  if (reduction == 0)
    return Kernel::store(dest, at, u);
  static const BinOp ops[] = {BinOp::Add, BinOp::Add, BinOp::Mul, BinOp::Max,
                              BinOp::Min};
  ScalarKind ck = computeKind(kind);
  ExprRef v =
      k.binary(ops[reduction], k.cast(k.load(dest, at), ck), k.cast(u, ck));
  return Kernel::store(dest, at, k.cast(v, kind));
}

/// The updates run one after the other (later ones win, reductions
/// accumulate), so the scatter kernel has no parallel loop.
void scatterElements(const ScatterElementsInst &I, const MemoryPlan &plan,
                     std::vector<Kernel> &out) {
  copyInto(I, I.getDest(), I.getData(), plan, out);
  TypeRef dt = I.getDest()->getType(), it = I.getIndices()->getType();
  unsigned axis = I.getAxis();
  auto ds = dt->strides(), is = it->strides();
  Kernel k(I.getName());
  unsigned d = k.addBuffer(bufferFor(I.getDest(), plan));
  unsigned ix = k.addBuffer(bufferFor(I.getIndices(), plan));
  unsigned u = k.addBuffer(bufferFor(I.getUpdates(), plan));
  llvm::SmallVector<unsigned, kMaxRank> vars;
  ExprRef flat = k.constInt(0);
  for (size_t i = 0; i < it->rank(); ++i) {
    vars.push_back(k.newVar());
    flat = k.add(flat, k.mul(k.var(vars[i]), is[i]));
  }
  Index j = normIndex(k, k.load(ix, flat), dt->dims()[axis]);
  ExprRef at = k.constInt(0);
  for (size_t i = 0; i < it->rank(); ++i)
    at = k.add(at, k.mul(i == axis ? j.value : k.var(vars[i]), ds[i]));
  std::vector<Stmt> body = {Kernel::ifThen(
      j.valid, {scatterStore(k, d, at, k.load(u, flat), I.getReduction())})};
  for (int i = int(it->rank()) - 1; i >= 0; --i)
    body = {Kernel::loop(vars[i], it->dims()[i], false, std::move(body))};
  k.body() = std::move(body);
  out.push_back(std::move(k));
}

void scatterND(const ScatterNDInst &I, const MemoryPlan &plan,
               std::vector<Kernel> &out) {
  copyInto(I, I.getDest(), I.getData(), plan, out);
  Tuples tp(I.getDest()->getType(), I.getIndices()->getType(), 0);
  Kernel k(I.getName());
  unsigned d = k.addBuffer(bufferFor(I.getDest(), plan));
  unsigned ix = k.addBuffer(bufferFor(I.getIndices(), plan));
  unsigned u = k.addBuffer(bufferFor(I.getUpdates(), plan));
  unsigned t = k.newVar(), s = k.newVar();
  Index off = tp.offset(k, ix, k.var(t));
  ExprRef ui = k.add(k.mul(k.var(t), tp.slice), k.var(s));
  Stmt store = scatterStore(k, d, k.add(off.value, k.var(s)), k.load(u, ui),
                            I.getReduction());
  k.body() = {Kernel::loop(
      t, tp.count, false,
      {Kernel::ifThen(off.valid,
                      {Kernel::loop(s, tp.slice, false, {store})})})};
  out.push_back(std::move(k));
}

Kernel tile(const TileInst &I, const MemoryPlan &plan) {
  TypeRef xt = I.getInput()->getType();
  auto xs = xt->strides();
  auto os = I.getDest()->getType()->strides();
  Kernel k(I.getName());
  unsigned out = k.addBuffer(bufferFor(I.getDest(), plan));
  unsigned x = k.addBuffer(bufferFor(I.getInput(), plan));
  k.body() = loopNest(k, loopDims(I.getDest()->getType()), [&](auto c) {
    ExprRef src = k.constInt(0), dst = k.constInt(0);
    for (size_t d = 0; d < xt->rank(); ++d) {
      ExprRef cd = xt->dims()[d] == 1
                       ? k.constInt(0)
                       : k.binary(BinOp::Rem, c[d], k.constInt(xt->dims()[d]));
      src = k.add(src, k.mul(cd, xs[d]));
      dst = k.add(dst, k.mul(c[d], os[d]));
    }
    return std::vector<Stmt>{Kernel::store(out, dst, k.load(x, src))};
  });
  return k;
}

/// Edge (mode 2) or reflect (mode 1) Pad: each coordinate maps to an
/// input coordinate, as padSource does in the Interpreter.
} // namespace

Kernel kir::mirrorPadKernel(const PadInst &I, const MemoryPlan &plan) {
  TypeRef xt = I.getInput()->getType();
  auto xs = xt->strides();
  auto os = I.getDest()->getType()->strides();
  auto pads = I.getPads();
  bool edge = I.getMode() == 2;
  Kernel k(I.getName());
  unsigned out = k.addBuffer(bufferFor(I.getDest(), plan));
  unsigned x = k.addBuffer(bufferFor(I.getInput(), plan));
  k.body() = loopNest(k, I.getDest()->getType()->dims(), [&](auto c) {
    ExprRef src = k.constInt(0), dst = k.constInt(0);
    for (size_t d = 0; d < xt->rank(); ++d) {
      dim_t n = xt->dims()[d];
      ExprRef s = k.add(c[d], k.constInt(-pads[d]));
      ExprRef zero = k.constInt(0), last = k.constInt(n - 1);
      if (n == 1) {
        s = zero;
      } else if (edge) {
        s = k.select(k.binary(BinOp::Lt, s, zero), zero,
                     k.select(k.binary(BinOp::Lt, last, s), last, s));
      } else {
        ExprRef period = k.constInt(2 * (n - 1));
        s = k.binary(BinOp::Rem, k.add(k.binary(BinOp::Rem, s, period), period),
                     period);
        s = k.select(k.binary(BinOp::Lt, s, k.constInt(n)), s,
                     k.binary(BinOp::Sub, period, s));
      }
      src = k.add(src, k.mul(s, xs[d]));
      dst = k.add(dst, k.mul(c[d], os[d]));
    }
    return std::vector<Stmt>{Kernel::store(out, dst, k.load(x, src))};
  });
  return k;
}

namespace {

/// ArgMax/ArgMin along one axis: a sequential scan per (outer, inner)
/// position keeping the best value and its index.
Kernel argReduce(const Instruction &I, bool isMax, const MemoryPlan &plan) {
  Value *dest = I.getOperand(0).value, *src = I.getOperand(1).value;
  TypeRef xt = src->getType();
  unsigned axis = I.attr(0).i;
  bool lastIndex = I.attr(2).i;
  dim_t n = xt->dims()[axis];
  dim_t outer = product(xt->dims(), 0, axis);
  dim_t inner = product(xt->dims(), axis + 1, xt->rank());
  Kernel k(I.getName());
  unsigned out = k.addBuffer(bufferFor(dest, plan));
  unsigned x = k.addBuffer(bufferFor(src, plan));
  ScalarKind ck = computeKind(xt->getElemKind());
  unsigned best = k.addLocal(ScalarKind::Int64), bv = k.addLocal(ck);
  k.body() = loopNest(k, {outer, inner}, [&](llvm::ArrayRef<ExprRef> c) {
    ExprRef base = k.add(k.mul(c[0], n * inner), c[1]);
    unsigned j = k.newVar();
    ExprRef idx = k.add(k.var(j), k.constInt(1));
    ExprRef v = k.cast(k.load(x, k.add(base, k.mul(idx, inner))), ck);
    ExprRef cur = k.local(bv);
    ExprRef better =
        isMax ? k.binary(BinOp::Lt, cur, v) : k.binary(BinOp::Lt, v, cur);
    if (lastIndex)
      better = k.binary(BinOp::Or, better, k.binary(BinOp::Eq, v, cur));
    ExprRef dst = k.add(k.mul(c[0], inner), c[1]);
    return std::vector<Stmt>{
        Kernel::assign(bv, k.cast(k.load(x, base), ck)),
        Kernel::assign(best, k.constInt(0)),
        Kernel::loop(
            j, n - 1, false,
            {Kernel::assign(best, k.select(better, idx, k.local(best))),
             Kernel::assign(bv, k.select(better, v, cur))}),
        Kernel::store(out, dst,
                      k.cast(k.local(best), dest->getType()->getElemKind()))};
  });
  return k;
}

/// Running sum along the axis, per (outer, inner) position.
Kernel cumSum(const CumSumInst &I, const MemoryPlan &plan) {
  TypeRef xt = I.getInput()->getType();
  unsigned axis = I.getAxis();
  dim_t n = xt->dims()[axis];
  dim_t outer = product(xt->dims(), 0, axis);
  dim_t inner = product(xt->dims(), axis + 1, xt->rank());
  ScalarKind kind = xt->getElemKind();
  ScalarKind ak = isFloatKind(kind)            ? computeKind(kind)
                  : kind == ScalarKind::UInt64 ? kind
                                               : ScalarKind::Int64;
  Kernel k(I.getName());
  unsigned out = k.addBuffer(bufferFor(I.getDest(), plan));
  unsigned x = k.addBuffer(bufferFor(I.getInput(), plan));
  unsigned acc = k.addLocal(ak);
  k.body() = loopNest(k, {outer, inner}, [&](llvm::ArrayRef<ExprRef> c) {
    unsigned s = k.newVar();
    ExprRef pos = I.getReverse()
                      ? k.add(k.constInt(n - 1),
                              k.binary(BinOp::Sub, k.constInt(0), k.var(s)))
                      : k.var(s);
    ExprRef idx = k.add(k.add(k.mul(c[0], n * inner), k.mul(pos, inner)), c[1]);
    ExprRef v = k.cast(k.load(x, idx), ak);
    ExprRef sum = k.binary(BinOp::Add, k.local(acc), v);
    std::vector<Stmt> body;
    if (I.getExclusive())
      body = {Kernel::store(out, idx, k.cast(k.local(acc), kind)),
              Kernel::assign(acc, sum)};
    else
      body = {Kernel::assign(acc, sum),
              Kernel::store(out, idx, k.cast(k.local(acc), kind))};
    return std::vector<Stmt>{Kernel::assign(acc, constOf(k, 0, ak)),
                             Kernel::loop(s, n, false, std::move(body))};
  });
  return k;
}
/// TopK by ranks: element i of a row goes to position rank(i), the number
/// of elements that sort before it (better, or equal at a lower index, as
/// a stable sort orders them), when that rank is below K.
Kernel topK(const TopKInst &I, const MemoryPlan &plan) {
  TypeRef xt = I.getInput()->getType();
  unsigned axis = I.getAxis();
  dim_t n = xt->dims()[axis], kk = I.getK();
  dim_t outer = product(xt->dims(), 0, axis);
  dim_t inner = product(xt->dims(), axis + 1, xt->rank());
  Kernel k(I.getName());
  unsigned vals = k.addBuffer(bufferFor(I.getDestValues(), plan));
  unsigned idxs = k.addBuffer(bufferFor(I.getDestIndices(), plan));
  unsigned x = k.addBuffer(bufferFor(I.getInput(), plan));
  ScalarKind ck = computeKind(xt->getElemKind());
  unsigned rank = k.addLocal(ScalarKind::Int64);
  k.body() = loopNest(k, {outer, inner, n}, [&](llvm::ArrayRef<ExprRef> c) {
    ExprRef base = k.add(k.mul(c[0], n * inner), c[1]);
    ExprRef xi = k.cast(k.load(x, k.add(base, k.mul(c[2], inner))), ck);
    unsigned j = k.newVar();
    ExprRef xj = k.cast(k.load(x, k.add(base, k.mul(k.var(j), inner))), ck);
    ExprRef better = I.getLargest() ? k.binary(BinOp::Lt, xi, xj)
                                    : k.binary(BinOp::Lt, xj, xi);
    ExprRef before = k.binary(BinOp::Or, better,
                              k.binary(BinOp::And, k.binary(BinOp::Eq, xj, xi),
                                       k.binary(BinOp::Lt, k.var(j), c[2])));
    ExprRef r = k.local(rank);
    ExprRef at = k.add(k.mul(k.add(k.mul(c[0], kk), r), inner), c[1]);
    return std::vector<Stmt>{
        Kernel::assign(rank, k.constInt(0)),
        Kernel::loop(j, n, false,
                     {Kernel::assign(
                         rank, k.select(before, k.add(r, k.constInt(1)), r))}),
        Kernel::ifThen(
            k.binary(BinOp::Lt, r, k.constInt(kk)),
            {Kernel::store(
                 vals, at,
                 k.cast(xi, I.getDestValues()->getType()->getElemKind())),
             Kernel::store(
                 idxs, at,
                 k.cast(c[2], I.getDestIndices()->getType()->getElemKind()))})};
  });
  return k;
}
} // namespace

/// True when \p I's first result has no element: nothing to write.
static bool writesNothing(const Instruction &I) {
  return I.getOperand(0).value->getType()->size() == 0;
}

/// The rule of an op lowered to the one kernel \p build makes: nothing to
/// write for an empty result; with \p needsInput, no rule for an empty
/// first input (a gather from nothing).
template <class InstT>
static bool oneKernel(const InstT &I, const MemoryPlan &plan,
                      std::vector<Kernel> &out,
                      Kernel (*build)(const InstT &, const MemoryPlan &),
                      bool needsInput = false) {
  if (writesNothing(I))
    return true;
  if (needsInput && I.getOperand(1).value->getType()->size() == 0)
    return false;
  return appendKernel(out, build(I, plan));
}

bool kir::lowerGather(const GatherInst &I, const MemoryPlan &plan,
                      std::vector<Kernel> &out) {
  return oneKernel(I, plan, out, gather, /*needsInput=*/true);
}

bool kir::lowerGatherElements(const GatherElementsInst &I,
                              const MemoryPlan &plan,
                              std::vector<Kernel> &out) {
  return oneKernel(I, plan, out, gatherElements, /*needsInput=*/true);
}

bool kir::lowerGatherND(const GatherNDInst &I, const MemoryPlan &plan,
                        std::vector<Kernel> &out) {
  return oneKernel(I, plan, out, gatherND, /*needsInput=*/true);
}

bool kir::lowerScatterElements(const ScatterElementsInst &I,
                               const MemoryPlan &plan,
                               std::vector<Kernel> &out) {
  if (!writesNothing(I))
    scatterElements(I, plan, out);
  return true;
}

bool kir::lowerScatterND(const ScatterNDInst &I, const MemoryPlan &plan,
                         std::vector<Kernel> &out) {
  if (!writesNothing(I))
    scatterND(I, plan, out);
  return true;
}

bool kir::lowerTile(const TileInst &I, const MemoryPlan &plan,
                    std::vector<Kernel> &out) {
  return oneKernel(I, plan, out, tile);
}

bool kir::lowerArgReduce(const Instruction &I, const MemoryPlan &plan,
                         std::vector<Kernel> &out) {
  if (writesNothing(I))
    return true;
  if (I.getOperand(1).value->getType()->size() == 0)
    return false;
  out.push_back(argReduce(I, llvm::isa<ArgMaxInst>(I), plan));
  return true;
}

bool kir::lowerTopK(const TopKInst &I, const MemoryPlan &plan,
                    std::vector<Kernel> &out) {
  return oneKernel(I, plan, out, topK);
}

bool kir::lowerCumSum(const CumSumInst &I, const MemoryPlan &plan,
                      std::vector<Kernel> &out) {
  return oneKernel(I, plan, out, cumSum);
}
