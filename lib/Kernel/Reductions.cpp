//===- Reductions.cpp - Reductions, slices, pads, shuffles as kernels ----===//
#include "KernelRules.h"

#include "glog/logging.h"

#include <limits>

using namespace ember;
using namespace ember::kir;

namespace {
/// How one reduction combines values, starts and finishes.
struct ReduceKind {
  BinOp combine;
  float init;
  bool mean;
};

std::optional<ReduceKind> reduceKindOf(ValueKind kind) {
  float inf = std::numeric_limits<float>::infinity();
  switch (kind) {
  case ValueKind::ReduceSumInst:
    return ReduceKind{BinOp::Add, 0.f, false};
  case ValueKind::ReduceMeanInst:
    return ReduceKind{BinOp::Add, 0.f, true};
  case ValueKind::ReduceProdInst:
    return ReduceKind{BinOp::Mul, 1.f, false};
  case ValueKind::ReduceMaxInst:
    return ReduceKind{BinOp::Max, -inf, false};
  case ValueKind::ReduceMinInst:
    return ReduceKind{BinOp::Min, inf, false};
  default:
    return std::nullopt;
  }
}

/// out[kept coords] = combine over the reduced coords of in[...]. The
/// kept dims form a parallel nest; the reduced dims are sequential inner
/// loops accumulating in a local. The output's flat index is the row-major
/// index over the kept dims (size-1 KeepDims axes do not change it).
Kernel reduceKernel(const Instruction &I, const ReduceKind &rk,
                    const MemoryPlan &plan) {
  Value *dest = I.getOperand(0).value, *src = I.getOperand(1).value;
  TypeRef in = src->getType();
  llvm::ArrayRef<int64_t> axes = I.attr(0).ints;
  auto inStrides = in->strides();
  llvm::SmallVector<unsigned, kMaxRank> kept, reduced;
  dim_t count = 1;
  for (unsigned d = 0; d < in->rank(); ++d) {
    if (llvm::is_contained(axes, int64_t(d))) {
      reduced.push_back(d);
      count *= in->dims()[d];
    } else {
      kept.push_back(d);
    }
  }
  // Floats accumulate in their compute kind, integers in 64 bits.
  ScalarKind kind = in->getElemKind();
  bool isF = isFloatKind(kind);
  ScalarKind ak = isF                    ? computeKind(kind)
                  : isUnsignedKind(kind) ? ScalarKind::UInt64
                                         : ScalarKind::Int64;
  ExprRef init;
  Kernel k(I.getName());
  if (isF || rk.combine == BinOp::Add || rk.combine == BinOp::Mul) {
    init = constOf(k, rk.init, ak);
  } else { // integer max/min start from the input kind's extreme
    bool isMax = rk.combine == BinOp::Max;
    unsigned bits = 8 * elemSize(kind);
    int64_t v;
    if (isUnsignedKind(kind))
      v = isMax ? 0 : (bits == 64 ? -1 : (int64_t(1) << bits) - 1);
    else if (bits == 64)
      v = isMax ? std::numeric_limits<int64_t>::min()
                : std::numeric_limits<int64_t>::max();
    else
      v = isMax ? -(int64_t(1) << (bits - 1)) : (int64_t(1) << (bits - 1)) - 1;
    init = k.constInt(v, ak);
  }
  unsigned out = k.addBuffer(bufferFor(dest, plan));
  unsigned inBuf = k.addBuffer(bufferFor(src, plan));
  unsigned acc = k.addLocal(ak);
  // Output strides over the kept dims.
  llvm::SmallVector<dim_t, kMaxRank> outStrides(kept.size(), 1);
  for (int i = int(kept.size()) - 2; i >= 0; --i)
    outStrides[i] = outStrides[i + 1] * in->dims()[kept[i + 1]];
  // One flat parallel loop over the kept coordinates (a global average
  // pool at batch 1 then splits over channels, not over the one image).
  unsigned flat = k.newVar();
  llvm::SmallVector<unsigned, kMaxRank> redVars;
  for (size_t i = 0; i < reduced.size(); ++i)
    redVars.push_back(k.newVar());
  dim_t numKept = 1;
  ExprRef inIdx = k.constInt(0);
  for (size_t i = 0; i < kept.size(); ++i) {
    numKept *= in->dims()[kept[i]];
    ExprRef coord = k.var(flat);
    if (outStrides[i] != 1)
      coord = k.binary(BinOp::Div, coord, k.constInt(outStrides[i]));
    if (i > 0)
      coord = k.binary(BinOp::Rem, coord, k.constInt(in->dims()[kept[i]]));
    inIdx = k.add(inIdx, k.mul(coord, inStrides[kept[i]]));
  }
  for (size_t i = 0; i < reduced.size(); ++i)
    inIdx = k.add(inIdx, k.mul(k.var(redVars[i]), inStrides[reduced[i]]));
  ExprRef x = k.cast(k.load(inBuf, inIdx), ak);
  ExprRef combined = k.binary(rk.combine, k.local(acc), x);
  // A float maximum or minimum is NaN once a NaN is met, as the
  // Interpreter's: Max and Min keep the accumulator when a compare with a
  // NaN fails, so the NaN is taken here and then kept.
  if (isF && (rk.combine == BinOp::Max || rk.combine == BinOp::Min))
    combined = k.select(k.binary(BinOp::Eq, x, x), combined, x);
  std::vector<Stmt> inner = {Kernel::assign(acc, combined)};
  for (int i = int(reduced.size()) - 1; i >= 0; --i)
    inner = {Kernel::loop(redVars[i], in->dims()[reduced[i]], false,
                          std::move(inner))};
  ExprRef result = k.local(acc);
  if (rk.mean)
    result = k.binary(BinOp::Div, result, constOf(k, double(count), ak));
  result = k.cast(result, dest->getType()->getElemKind());
  std::vector<Stmt> body;
  body.push_back(Kernel::assign(acc, init));
  body.insert(body.end(), inner.begin(), inner.end());
  body.push_back(Kernel::store(out, k.var(flat), result));
  // A full reduction is one iteration.
  body = {Kernel::loop(flat, numKept, true, std::move(body))};
  k.body() = std::move(body);
  return k;
}

/// Output channel j*G+i is input channel i*(C/G)+j: a copy over
/// [N, C/G, G, rest] reading with strides [C*rest, rest, (C/G)*rest, 1].
Kernel channelShuffleKernel(const ChannelShuffleInst &I,
                            const MemoryPlan &plan) {
  TypeRef t = I.getInput()->getType();
  dim_t n = t->dims()[0], c = t->dims()[1], g = I.getGroup();
  dim_t rest = t->size() / std::max<dim_t>(n * c, 1);
  Kernel k(I.getName());
  unsigned out = k.addBuffer(bufferFor(I.getDest(), plan));
  unsigned in = k.addBuffer(bufferFor(I.getInput(), plan));
  dim_t dims[4] = {n, c / g, g, rest};
  dim_t inStrides[4] = {c * rest, rest, (c / g) * rest, 1};
  dim_t outStrides[4] = {c * rest, g * rest, rest, 1};
  unsigned vars[4];
  ExprRef ii = k.constInt(0), oi = k.constInt(0);
  for (int d = 0; d < 4; ++d) {
    vars[d] = k.newVar();
    ii = k.add(ii, k.mul(k.var(vars[d]), inStrides[d]));
    oi = k.add(oi, k.mul(k.var(vars[d]), outStrides[d]));
  }
  std::vector<Stmt> body = {Kernel::store(out, oi, k.load(in, ii))};
  for (int d = 3; d >= 0; --d)
    body = {Kernel::loop(vars[d], dims[d], d == 0, std::move(body))};
  k.body() = std::move(body);
  return k;
}
/// Result[i] = Input[Starts + i * Steps] per dim: a strided copy from a
/// base offset (steps may be negative).
Kernel sliceKernel(const SliceInst &I, const MemoryPlan &plan) {
  TypeRef in = I.getInput()->getType(), res = I.getDest()->getType();
  auto inStrides = in->strides(), outStrides = res->strides();
  Kernel k(I.getName());
  unsigned out = k.addBuffer(bufferFor(I.getDest(), plan));
  unsigned src = k.addBuffer(bufferFor(I.getInput(), plan));
  int64_t base = 0;
  for (unsigned d = 0; d < in->rank(); ++d)
    base += I.getStarts()[d] * inStrides[d];
  llvm::SmallVector<unsigned, kMaxRank> vars;
  ExprRef ii = k.constInt(base), oi = k.constInt(0);
  for (unsigned d = 0; d < res->rank(); ++d) {
    vars.push_back(k.newVar());
    ii = k.add(ii, k.mul(k.var(vars[d]), I.getSteps()[d] * inStrides[d]));
    oi = k.add(oi, k.mul(k.var(vars[d]), outStrides[d]));
  }
  std::vector<Stmt> body = {Kernel::store(out, oi, k.load(src, ii))};
  for (int d = int(res->rank()) - 1; d >= 0; --d)
    body = {Kernel::loop(vars[d], res->dims()[d], d == 0, std::move(body))};
  if (res->rank() == 0)
    body = {Kernel::loop(k.newVar(), 1, true, std::move(body))};
  k.body() = std::move(body);
  return k;
}
/// Constant-mode Pad: every result element is first set to Value, then,
/// where the coordinate minus the leading pads lies inside the input, to
/// the input element (so no out-of-bounds address is ever loaded).
Kernel constantPadKernel(const PadInst &I, const MemoryPlan &plan) {
  TypeRef in = I.getInput()->getType(), res = I.getDest()->getType();
  auto inStrides = in->strides(), outStrides = res->strides();
  llvm::ArrayRef<int64_t> pads = I.getPads();
  unsigned rank = res->rank();
  Kernel k(I.getName());
  unsigned out = k.addBuffer(bufferFor(I.getDest(), plan));
  unsigned src = k.addBuffer(bufferFor(I.getInput(), plan));
  ScalarKind kind = res->getElemKind();
  ExprRef fill = isFloatKind(kind) ? k.constFloat(I.getValue(), kind)
                                   : k.constInt(int64_t(I.getValue()), kind);
  llvm::SmallVector<unsigned, kMaxRank> vars;
  ExprRef oi = k.constInt(0), ii = k.constInt(0), inside = nullptr;
  for (unsigned d = 0; d < rank; ++d) {
    vars.push_back(k.newVar());
    ExprRef c = k.add(k.var(vars[d]), k.constInt(-pads[d]));
    oi = k.add(oi, k.mul(k.var(vars[d]), outStrides[d]));
    ii = k.add(ii, k.mul(c, inStrides[d]));
    ExprRef ok = k.binary(BinOp::And, k.binary(BinOp::Le, k.constInt(0), c),
                          k.binary(BinOp::Lt, c, k.constInt(in->dims()[d])));
    inside = inside ? k.binary(BinOp::And, inside, ok) : ok;
  }
  std::vector<Stmt> body = {Kernel::store(out, oi, fill)};
  if (inside)
    body.push_back(
        Kernel::ifThen(inside, {Kernel::store(out, oi, k.load(src, ii))}));
  for (int d = int(rank) - 1; d >= 0; --d)
    body = {Kernel::loop(vars[d], res->dims()[d], d == 0, std::move(body))};
  k.body() = std::move(body);
  return k;
}
} // namespace

bool kir::lowerPad(const PadInst &I, const MemoryPlan &plan,
                   std::vector<Kernel> &out) {
  if (I.getDest()->getType()->size() == 0)
    return true;          // nothing to write
  if (I.getMode() != 0) { // reflect, edge
    if (I.getInput()->getType()->size() == 0)
      return false;
    out.push_back(mirrorPadKernel(I, plan));
    return true;
  }
  if (I.getDest()->getType()->rank() == 0)
    return false;
  out.push_back(constantPadKernel(I, plan));
  return true;
}

bool kir::lowerSlice(const SliceInst &I, const MemoryPlan &plan,
                     std::vector<Kernel> &out) {
  if (I.getDest()->getType()->size())
    out.push_back(sliceKernel(I, plan));
  return true;
}

bool kir::lowerChannelShuffle(const ChannelShuffleInst &I,
                              const MemoryPlan &plan,
                              std::vector<Kernel> &out) {
  return appendKernel(out, channelShuffleKernel(I, plan));
}

bool kir::lowerReduce(const Instruction &I, const MemoryPlan &plan,
                      std::vector<Kernel> &out) {
  std::optional<ReduceKind> rk = reduceKindOf(I.getKind());
  CHECK(rk) << "lowerReduce of " << I.getKindName().str();
  // An empty integer mean would divide by zero: no rule.
  if (rk->mean && I.getOperand(1).value->getType()->size() == 0 &&
      !isFloatKind(I.getOperand(0).value->getType()->getElemKind()))
    return false;
  return appendKernel(out, reduceKernel(I, *rk, plan));
}
