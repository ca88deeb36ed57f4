//===- Attention.cpp - The attention fusions of the Interpreter -----------===//
//
// ScaledSoftmax and Attention computed as the unfused chains they replace
// (MatMul, Mul by the scale, Add of the broadcast mask, Softmax, MatMul),
// in float32 in the same order, so that the fused graph and the unfused
// one agree up to the order of the dot products' sums. A causal entry is
// -inf before the softmax: weight exactly 0, as the -FLT_MAX fill of the
// exporters' Where gives (a causal row always keeps its first key).
//
//===----------------------------------------------------------------------===//
#include "Generic.h"
#include "Kernels.h"

#include "ember/Graph/AttentionLayout.h"

#include <cmath>
#include <limits>
#include <vector>

using namespace ember;
using namespace ember::interp;

namespace {
/// The additive mask of a score tensor of \p dims, read by broadcast.
struct MaskView {
  const float *p = nullptr;
  llvm::SmallVector<dim_t, kMaxRank> strides;

  MaskView(const ExecContext &ctx, llvm::ArrayRef<Value *> mask,
           llvm::ArrayRef<dim_t> dims) {
    if (mask.empty())
      return;
    p = ctx.ptr<float>(mask[0]);
    llvm::ArrayRef<dim_t> md = mask[0]->getType()->dims();
    strides.assign(dims.size(), 0);
    dim_t s = 1;
    for (int i = int(dims.size()) - 1; i >= 0; --i) {
      strides[i] = md[i] == 1 ? 0 : s;
      s *= md[i];
    }
  }

  /// Mask values of the score row \p row (all dims but the last).
  const float *rowAt(dim_t row, llvm::ArrayRef<dim_t> dims) const {
    if (!p)
      return nullptr;
    dim_t off = 0;
    for (int i = int(dims.size()) - 2; i >= 0; --i) {
      off += (row % dims[i]) * strides[i];
      row /= dims[i];
    }
    return p + off;
  }
  dim_t lastStride() const { return p ? strides.back() : 0; }
};
} // namespace

/// y[0..n) = softmax(x * scale + mask) of score row \p qi; keys past
/// \p qi masked when \p causal.
static void scaledSoftmaxRow(float *y, const float *x, const float *mask,
                             dim_t maskStride, dim_t n, float scale,
                             bool causal, dim_t qi) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  float mx = -kInf;
  for (dim_t j = 0; j < n; ++j) {
    float t = x[j] * scale;
    if (mask)
      t += mask[j * maskStride];
    if (causal && j > qi)
      t = -kInf;
    y[j] = t;
    mx = std::max(mx, t);
  }
  float sum = 0.f;
  for (dim_t j = 0; j < n; ++j)
    sum += y[j] = std::exp(y[j] - mx);
  for (dim_t j = 0; j < n; ++j)
    y[j] /= sum;
}

static void scaledSoftmax(const ScaledSoftmaxInst &I, const ExecContext &ctx) {
  llvm::ArrayRef<dim_t> dims = I.getInput()->getType()->dims();
  dim_t n = dims.back(), tq = dims[dims.size() - 2];
  dim_t rows = n ? I.getInput()->getType()->size() / n : 0;
  MaskView mask(ctx, I.getMask(), dims);
  const float *x = ctx.ptr<float>(I.getInput());
  float *y = ctx.ptr<float>(I.getDest());
  for (dim_t r = 0; r < rows; ++r)
    scaledSoftmaxRow(y + r * n, x + r * n, mask.rowAt(r, dims),
                     mask.lastStride(), n, I.getScale(), I.getCausal() != 0,
                     r % tq);
}

namespace {
/// One operand of an Attention as its logical dims [.., T, D] see it: the
/// element strides of those dims (AttentionLayout.h).
struct HeadView {
  AttnDims dims, strides;
  HeadView(const Value *x, llvm::ArrayRef<int64_t> perm)
      : dims(permutedDims(x->getType()->dims(), perm)),
        strides(permutedStrides(x->getType()->dims(), perm)) {}
  /// Row \p t of flat batch index \p b.
  int64_t row(int64_t b, int64_t t) const {
    size_t r = dims.size();
    return batchOffset(b, dims, strides, r - 2) + t * strides[r - 2];
  }
};
} // namespace

/// Scores Q K^T, the scaled and masked softmax, then P V, per batch index;
/// Q, K, V and the result through the Attention's perms.
static void attention(const AttentionInst &I, const ExecContext &ctx) {
  HeadView qv(I.getQ(), I.getQPerm()), kv(I.getK(), I.getKPerm());
  HeadView vv(I.getV(), I.getVPerm());
  size_t r = qv.dims.size();
  dim_t tq = qv.dims[r - 2], d = qv.dims[r - 1];
  dim_t tk = kv.dims[r - 2], dv = vv.dims[r - 1];
  dim_t batch = tq > 0 && d > 0 ? I.getQ()->getType()->size() / (tq * d) : 0;
  AttnDims sd = qv.dims;
  sd[r - 1] = tk;
  AttnDims od = qv.dims;
  od[r - 1] = dv;
  AttnDims os = resultStrides(I.getDest()->getType()->dims(), I.getOutPerm());
  MaskView mask(ctx, I.getMask(), sd);
  const float *q = ctx.ptr<float>(I.getQ()), *k = ctx.ptr<float>(I.getK());
  const float *v = ctx.ptr<float>(I.getV());
  float *o = ctx.ptr<float>(I.getDest());
  std::vector<float> s(tk), p(tk);
  for (dim_t b = 0; b < batch; ++b)
    for (dim_t i = 0; i < tq; ++i) {
      const float *qi = q + qv.row(b, i);
      for (dim_t j = 0; j < tk; ++j) {
        const float *kj = k + kv.row(b, j);
        float acc = 0.f;
        for (dim_t c = 0; c < d; ++c)
          acc += qi[c] * kj[c];
        s[j] = acc;
      }
      scaledSoftmaxRow(p.data(), s.data(), mask.rowAt(b * tq + i, sd),
                       mask.lastStride(), tk, I.getScale(), I.getCausal() != 0,
                       i);
      float *oi = o + batchOffset(b, od, os, r - 2) + i * os[r - 2];
      for (dim_t c = 0; c < dv; ++c) {
        float acc = 0.f;
        for (dim_t j = 0; j < tk; ++j)
          acc += p[j] * v[vv.row(b, j) + c];
        oi[c] = acc;
      }
    }
}

bool interp::executeAttention(const Instruction &I, const ExecContext &ctx) {
  return runKernelFor(I, ctx, scaledSoftmax, attention);
}
