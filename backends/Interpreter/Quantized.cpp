//===- Quantized.cpp - Exact integer products of quantized models ---------===//
//
// IntMatMul and IntConv in plain integer arithmetic: the reference the
// compiled backends are compared with bit for bit. Operands are Int8 or
// UInt8, zero points Int32, the accumulation Int32 (exact: see Ops.py).
//
//===----------------------------------------------------------------------===//
#include "Kernels.h"

using namespace ember;
using namespace ember::interp;

namespace {

/// Reads element \p i of an Int8 or UInt8 buffer as int32.
class ByteReader {
public:
  ByteReader(const ExecContext &ctx, Value *v)
      : p_(ctx.ptr<uint8_t>(v)),
        signed_(v->getType()->getElemKind() == ElemKind::Int8) {}
  int32_t operator[](dim_t i) const {
    return signed_ ? int32_t(int8_t(p_[i])) : int32_t(p_[i]);
  }

private:
  const uint8_t *p_;
  bool signed_;
};

void intMatMul(const IntMatMulInst &I, const ExecContext &ctx) {
  TypeRef ta = I.getLHS()->getType(), tb = I.getRHS()->getType();
  TypeRef tc = I.getDest()->getType();
  unsigned r = ta->rank();
  dim_t m = ta->dims()[r - 2], k = ta->dims()[r - 1], n = tc->dims()[r - 1];
  dim_t batch = m * n != 0 ? tc->size() / (m * n) : 0;
  ByteReader a(ctx, I.getLHS()), b(ctx, I.getRHS());
  const int32_t *za = ctx.ptr<int32_t>(I.getLHSZero());
  const int32_t *zb = ctx.ptr<int32_t>(I.getRHSZero());
  int32_t *c = ctx.ptr<int32_t>(I.getDest());
  auto outBatch = tc->dims().drop_back(2);
  for (dim_t bi = 0; bi < batch; ++bi) {
    dim_t a0 = batchOffset(bi, outBatch, ta->dims().drop_back(2), m * k);
    dim_t b0 = batchOffset(bi, outBatch, tb->dims().drop_back(2), k * n);
    for (dim_t i = 0; i < m; ++i)
      for (dim_t j = 0; j < n; ++j) {
        int32_t acc = 0;
        for (dim_t p = 0; p < k; ++p)
          acc += (a[a0 + i * k + p] - za[i]) * (b[b0 + p * n + j] - zb[j]);
        c[(bi * m + i) * n + j] = acc;
      }
  }
}

/// One output element of IntConv: image \p img, channel \p oc, at (oh, ow).
int32_t convAt(const IntConvInst &I, const ByteReader &x, const ByteReader &w,
               int32_t zx, int32_t zw, dim_t img, dim_t oc, dim_t oh,
               dim_t ow) {
  auto xd = I.getInput()->getType()->dims();
  auto wd = I.getFilter()->getType()->dims();
  auto strides = I.getStrides(), pads = I.getPads(), dil = I.getDilations();
  dim_t cg = wd[1], ocPerGroup = wd[0] / I.getGroup();
  dim_t c0 = (oc / ocPerGroup) * cg;
  int32_t acc = 0;
  for (dim_t c = 0; c < cg; ++c)
    for (dim_t kh = 0; kh < wd[2]; ++kh) {
      int64_t ih = int64_t(oh * strides[0] + kh * dil[0]) - pads[0];
      if (ih < 0 || ih >= int64_t(xd[2]))
        continue;
      for (dim_t kw = 0; kw < wd[3]; ++kw) {
        int64_t iw = int64_t(ow * strides[1] + kw * dil[1]) - pads[1];
        if (iw < 0 || iw >= int64_t(xd[3]))
          continue;
        dim_t xi = ((img * xd[1] + c0 + c) * xd[2] + ih) * xd[3] + iw;
        dim_t wi = ((oc * cg + c) * wd[2] + kh) * wd[3] + kw;
        acc += (x[xi] - zx) * (w[wi] - zw);
      }
    }
  return acc;
}

void intConv(const IntConvInst &I, const ExecContext &ctx) {
  auto yd = I.getDest()->getType()->dims();
  ByteReader x(ctx, I.getInput()), w(ctx, I.getFilter());
  int32_t zx = *ctx.ptr<int32_t>(I.getInputZero());
  const int32_t *zw = ctx.ptr<int32_t>(I.getFilterZero());
  int32_t *y = ctx.ptr<int32_t>(I.getDest());
  for (dim_t img = 0; img < yd[0]; ++img)
    for (dim_t oc = 0; oc < yd[1]; ++oc)
      for (dim_t oh = 0; oh < yd[2]; ++oh)
        for (dim_t ow = 0; ow < yd[3]; ++ow)
          *y++ = convAt(I, x, w, zx, zw[oc], img, oc, oh, ow);
}

} // namespace

bool interp::executeQuantized(const Instruction &I, const ExecContext &ctx) {
  return runKernelFor(I, ctx, intMatMul, intConv);
}
