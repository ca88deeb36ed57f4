//===- Windows.cpp - N-d pooling as kernels
//--------------------------------===//
//
// PoolND follows the Interpreter (backends/Interpreter/Window.cpp): max
// pooling of any numeric kind where padding never wins, average pooling of
// floats dividing by the inside count (or, with CountIncludePad, by the
// positions inside the explicitly padded input).
//
//===----------------------------------------------------------------------===//
#include "KernelRules.h"

#include <limits>

using namespace ember;
using namespace ember::kir;

namespace {
Kernel poolND(const PoolNDInst &I, const MemoryPlan &plan) {
  TypeRef xt = I.getInput()->getType(), yt = I.getDest()->getType();
  auto ks = I.getKernel(), st = I.getStrides(), pads = I.getPads(),
       dil = I.getDilations();
  size_t n = ks.size();
  bool avg = I.getIsAvg(), countPad = I.getCountIncludePad();
  auto xs = xt->strides(), ys = yt->strides();
  ScalarKind kind = xt->getElemKind();
  ScalarKind ak = isFloatKind(kind)            ? computeKind(kind)
                  : kind == ScalarKind::UInt64 ? kind
                                               : ScalarKind::Int64;
  Kernel k(I.getName());
  unsigned out = k.addBuffer(bufferFor(I.getDest(), plan));
  unsigned x = k.addBuffer(bufferFor(I.getInput(), plan));
  unsigned acc = k.addLocal(ak), cnt = k.addLocal(ScalarKind::Int64),
           padCnt = k.addLocal(ScalarKind::Int64);
  ExprRef init =
      avg ? constOf(k, 0, ak)
      : isFloatKind(ak)
          ? k.constFloat(-std::numeric_limits<double>::infinity(), ak)
          : k.constInt(ak == ScalarKind::UInt64
                           ? 0
                           : std::numeric_limits<int64_t>::min(),
                       ak);
  k.body() = loopNest(k, yt->dims(), [&](llvm::ArrayRef<ExprRef> o) {
    llvm::SmallVector<unsigned, kMaxRank> kv;
    ExprRef idx = k.add(k.mul(o[0], xs[0]), k.mul(o[1], xs[1]));
    ExprRef inside = k.constInt(1, ScalarKind::Bool);
    ExprRef inPadded = k.constInt(1, ScalarKind::Bool);
    for (size_t j = 0; j < n; ++j) {
      kv.push_back(k.newVar());
      ExprRef c =
          k.add(k.add(k.mul(o[2 + j], st[j]), k.mul(k.var(kv[j]), dil[j])),
                k.constInt(-pads[j]));
      dim_t len = xt->dims()[2 + j];
      inside =
          k.binary(BinOp::And, inside,
                   k.binary(BinOp::And, k.binary(BinOp::Le, k.constInt(0), c),
                            k.binary(BinOp::Lt, c, k.constInt(len))));
      inPadded =
          k.binary(BinOp::And, inPadded,
                   k.binary(BinOp::Lt, c, k.constInt(len + pads[j + n])));
      idx = k.add(idx, k.mul(c, xs[2 + j]));
    }
    ExprRef v = k.cast(k.load(x, idx), ak);
    ExprRef one = k.constInt(1);
    std::vector<Stmt> body = {
        Kernel::assign(padCnt, k.select(inPadded, k.add(k.local(padCnt), one),
                                        k.local(padCnt))),
        Kernel::ifThen(
            inside, {Kernel::assign(acc, k.binary(avg ? BinOp::Add : BinOp::Max,
                                                  k.local(acc), v)),
                     Kernel::assign(cnt, k.add(k.local(cnt), one))})};
    for (int j = int(n) - 1; j >= 0; --j)
      body = {Kernel::loop(kv[j], ks[j], false, std::move(body))};
    ExprRef result = k.local(acc);
    if (avg) {
      ExprRef count =
          countPad ? k.local(padCnt) : k.binary(BinOp::Max, k.local(cnt), one);
      result = k.binary(BinOp::Div, result, k.cast(count, ak));
    }
    ExprRef dst = k.constInt(0);
    for (size_t d = 0; d < o.size(); ++d)
      dst = k.add(dst, k.mul(o[d], ys[d]));
    std::vector<Stmt> s = {Kernel::assign(acc, init),
                           Kernel::assign(cnt, k.constInt(0)),
                           Kernel::assign(padCnt, k.constInt(0))};
    s.insert(s.end(), body.begin(), body.end());
    s.push_back(Kernel::store(out, dst, k.cast(result, kind)));
    return s;
  });
  return k;
}
/// One source tap along one dim: a clamped index and its weight.
struct Tap {
  ExprRef index, weight;
};

/// The taps of output coordinate \p o (a loop variable) along a resized
/// dim of \p in input elements, computed in Float64 as the Interpreter's
/// sourceCoord/resizeTaps do.
std::vector<Tap> resizeTaps(Kernel &k, const ResizeInst &I, ExprRef o, dim_t in,
                            dim_t outLen, double scale) {
  const ScalarKind f64 = ScalarKind::Float64;
  auto c = [&](double v) { return k.constFloat(v, f64); };
  auto bin = [&](BinOp op, ExprRef a, ExprRef b) { return k.binary(op, a, b); };
  ExprRef of = k.cast(o, f64), x;
  switch (I.getCoordMode()) {
  case 1: // asymmetric
    x = bin(BinOp::Div, of, c(scale));
    break;
  case 2: // pytorch_half_pixel
    x = outLen > 1 ? bin(BinOp::Sub,
                         bin(BinOp::Div, bin(BinOp::Add, of, c(0.5)), c(scale)),
                         c(0.5))
                   : c(0);
    break;
  case 3: { // align_corners
    double len = double(in) * scale;
    x = len == 1.0 ? c(0)
                   : bin(BinOp::Div, bin(BinOp::Mul, of, c(double(in - 1))),
                         c(len - 1.0));
    break;
  }
  default: // half_pixel
    x = bin(BinOp::Sub, bin(BinOp::Div, bin(BinOp::Add, of, c(0.5)), c(scale)),
            c(0.5));
  }
  auto clampIdx = [&](ExprRef i) {
    ExprRef zero = k.constInt(0), last = k.constInt(in - 1);
    return k.select(bin(BinOp::Lt, i, zero), zero,
                    k.select(bin(BinOp::Lt, last, i), last, i));
  };
  auto toIdx = [&](ExprRef v) { return k.cast(v, ScalarKind::Int64); };
  if (I.getMode() == 0) {
    ExprRef i;
    switch (I.getNearestMode()) {
    case 1: // round_prefer_ceil
      i = k.unary(UnOp::Floor, bin(BinOp::Add, x, c(0.5)));
      break;
    case 2:
      i = k.unary(UnOp::Floor, x);
      break;
    case 3:
      i = k.unary(UnOp::Ceil, x);
      break;
    default: // round_prefer_floor
      i = k.unary(UnOp::Ceil, bin(BinOp::Sub, x, c(0.5)));
    }
    return {{clampIdx(toIdx(i)), c(1)}};
  }
  ExprRef fl = k.unary(UnOp::Floor, x), i0 = toIdx(fl);
  ExprRef r = bin(BinOp::Sub, x, fl);
  std::vector<std::pair<int64_t, ExprRef>> taps;
  if (I.getMode() == 1) {
    taps = {{0, bin(BinOp::Sub, c(1), r)}, {1, r}};
  } else {
    double A = I.getCubicCoeff();
    auto far = [&](ExprRef t) { // ((A t - 5A) t + 8A) t - 4A
      ExprRef p = bin(BinOp::Sub, bin(BinOp::Mul, c(A), t), c(5 * A));
      p = bin(BinOp::Add, bin(BinOp::Mul, p, t), c(8 * A));
      return bin(BinOp::Sub, bin(BinOp::Mul, p, t), c(4 * A));
    };
    auto near = [&](ExprRef t) { // ((A + 2) t - (A + 3)) t t + 1
      ExprRef p = bin(BinOp::Sub, bin(BinOp::Mul, c(A + 2), t), c(A + 3));
      return bin(BinOp::Add, bin(BinOp::Mul, bin(BinOp::Mul, p, t), t), c(1));
    };
    taps = {{-1, far(bin(BinOp::Add, r, c(1)))},
            {0, near(r)},
            {1, near(bin(BinOp::Sub, c(1), r))},
            {2, far(bin(BinOp::Sub, c(2), r))}};
  }
  std::vector<Tap> out;
  for (auto &[d, w] : taps)
    out.push_back({k.add(i0, k.constInt(d)), w});
  if (I.getExcludeOutside()) {
    ExprRef sum = c(0);
    for (Tap &t : out) {
      ExprRef ok = bin(BinOp::And, bin(BinOp::Le, k.constInt(0), t.index),
                       bin(BinOp::Lt, t.index, k.constInt(in)));
      t.weight = k.select(ok, t.weight, c(0));
      sum = bin(BinOp::Add, sum, t.weight);
    }
    for (Tap &t : out)
      t.weight = bin(BinOp::Div, t.weight, sum);
  }
  for (Tap &t : out)
    t.index = clampIdx(t.index);
  return out;
}

/// Resize: the weighted sum over every combination of per-dim taps.
Kernel resize(const ResizeInst &I, const MemoryPlan &plan) {
  TypeRef xt = I.getInput()->getType(), yt = I.getDest()->getType();
  auto scales = I.getScales();
  auto xs = xt->strides(), ys = yt->strides();
  Kernel k(I.getName());
  unsigned out = k.addBuffer(bufferFor(I.getDest(), plan));
  unsigned x = k.addBuffer(bufferFor(I.getInput(), plan));
  const ScalarKind f64 = ScalarKind::Float64;
  k.body() = loopNest(k, yt->dims(), [&](llvm::ArrayRef<ExprRef> o) {
    std::vector<std::vector<Tap>> taps;
    for (size_t j = 0; j < o.size(); ++j) {
      dim_t in = xt->dims()[j];
      if (in == yt->dims()[j] && scales[j] == 1.f)
        taps.push_back({{o[j], k.constFloat(1, f64)}});
      else
        taps.push_back(
            resizeTaps(k, I, o[j], in, yt->dims()[j], double(scales[j])));
    }
    ExprRef acc = k.constFloat(0, f64);
    std::vector<size_t> sel(o.size(), 0);
    while (true) {
      ExprRef w = nullptr, idx = k.constInt(0);
      for (size_t j = 0; j < o.size(); ++j) {
        const Tap &t = taps[j][sel[j]];
        idx = k.add(idx, k.mul(t.index, xs[j]));
        w = w ? k.binary(BinOp::Mul, w, t.weight) : t.weight;
      }
      acc = k.binary(BinOp::Add, acc,
                     k.binary(BinOp::Mul, w, k.cast(k.load(x, idx), f64)));
      size_t j = o.size();
      for (; j > 0; --j) {
        if (++sel[j - 1] < taps[j - 1].size())
          break;
        sel[j - 1] = 0;
      }
      if (j == 0)
        break;
    }
    ExprRef dst = k.constInt(0);
    for (size_t d = 0; d < o.size(); ++d)
      dst = k.add(dst, k.mul(o[d], ys[d]));
    return std::vector<Stmt>{
        Kernel::store(out, dst, k.cast(acc, yt->getElemKind()))};
  });
  return k;
}
/// ConvTranspose as a portable gather: output element (n, m, o...) sums
/// x[n, c, i...] * w[c, m', k...] over the input positions with
/// i * stride + k * dilation - pad == o.
Kernel convTranspose(const ConvTransposeInst &I, const MemoryPlan &plan) {
  TypeRef xt = I.getInput()->getType(), wt = I.getFilter()->getType(),
          yt = I.getDest()->getType();
  auto st = I.getStrides(), pads = I.getPads(), dil = I.getDilations();
  size_t n = st.size();
  dim_t mPerG = wt->dims()[1], cPerG = xt->dims()[1] / I.getGroup();
  auto xs = xt->strides(), ws = wt->strides(), ys = yt->strides();
  ScalarKind ck = computeKind(yt->getElemKind());
  Kernel k(I.getName());
  unsigned out = k.addBuffer(bufferFor(I.getDest(), plan));
  unsigned x = k.addBuffer(bufferFor(I.getInput(), plan));
  unsigned w = k.addBuffer(bufferFor(I.getFilter(), plan));
  unsigned b = k.addBuffer(bufferFor(I.getBias(), plan));
  unsigned acc = k.addLocal(ck);
  k.body() = loopNest(k, yt->dims(), [&](llvm::ArrayRef<ExprRef> o) {
    unsigned cv = k.newVar();
    ExprRef g = k.binary(BinOp::Div, o[1], k.constInt(mPerG));
    ExprRef ch = k.add(k.mul(g, cPerG), k.var(cv));
    ExprRef xi = k.add(k.mul(o[0], xs[0]), k.mul(ch, xs[1]));
    ExprRef wi =
        k.add(k.mul(ch, ws[0]),
              k.mul(k.binary(BinOp::Sub, o[1], k.mul(g, mPerG)), ws[1]));
    ExprRef valid = k.constInt(1, ScalarKind::Bool);
    llvm::SmallVector<unsigned, kMaxRank> kv;
    for (size_t j = 0; j < n; ++j) {
      kv.push_back(k.newVar());
      ExprRef t = k.add(
          o[2 + j], k.add(k.constInt(pads[j]), k.mul(k.var(kv[j]), -dil[j])));
      ExprRef s = k.constInt(st[j]);
      ExprRef i = k.binary(BinOp::Div, t, s);
      ExprRef ok = k.binary(
          BinOp::And, k.binary(BinOp::Le, k.constInt(0), t),
          k.binary(
              BinOp::And,
              k.binary(BinOp::Eq, k.binary(BinOp::Rem, t, s), k.constInt(0)),
              k.binary(BinOp::Lt, i, k.constInt(xt->dims()[2 + j]))));
      valid = k.binary(BinOp::And, valid, ok);
      xi = k.add(xi, k.mul(i, xs[2 + j]));
      wi = k.add(wi, k.mul(k.var(kv[j]), ws[2 + j]));
    }
    ExprRef prod = k.binary(BinOp::Mul, k.cast(k.load(x, xi), ck),
                            k.cast(k.load(w, wi), ck));
    std::vector<Stmt> body = {Kernel::ifThen(
        valid,
        {Kernel::assign(acc, k.binary(BinOp::Add, k.local(acc), prod))})};
    for (int j = int(n) - 1; j >= 0; --j)
      body = {Kernel::loop(kv[j], wt->dims()[2 + j], false, std::move(body))};
    ExprRef dst = k.constInt(0);
    for (size_t d = 0; d < o.size(); ++d)
      dst = k.add(dst, k.mul(o[d], ys[d]));
    return std::vector<Stmt>{
        Kernel::assign(acc, k.cast(k.load(b, o[1]), ck)),
        Kernel::loop(cv, cPerG, false, std::move(body)),
        Kernel::store(out, dst, k.cast(k.local(acc), yt->getElemKind()))};
  });
  return k;
}
} // namespace

bool kir::lowerPoolND(const PoolNDInst &I, const MemoryPlan &plan,
                      std::vector<Kernel> &out) {
  if (I.getDest()->getType()->size())
    out.push_back(poolND(I, plan));
  return true;
}

bool kir::lowerConvTranspose(const ConvTransposeInst &I, const MemoryPlan &plan,
                             std::vector<Kernel> &out) {
  if (I.getDest()->getType()->size())
    out.push_back(convTranspose(I, plan));
  return true;
}

bool kir::lowerResize(const ResizeInst &I, const MemoryPlan &plan,
                      std::vector<Kernel> &out) {
  if (I.getCoordMode() == 4 || I.getInput()->getType()->size() == 0)
    return false; // tf_crop_and_resize: no rule (nor in the Interpreter)
  if (I.getDest()->getType()->size())
    out.push_back(resize(I, plan));
  return true;
}
