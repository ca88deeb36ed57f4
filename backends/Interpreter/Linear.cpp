//===- Linear.cpp - MatMul, convolution, pooling and softmax kernels -----===//
#include "Generic.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace ember;
using namespace ember::interp;

/// The offset of the matrix of an operand with batch dims \p op for flat
/// batch index \p bi of the result's batch dims \p out (a dim of 1 against
/// a larger one is broadcast), each matrix \p matrix elements.
dim_t interp::batchOffset(dim_t bi, llvm::ArrayRef<dim_t> out,
                          llvm::ArrayRef<dim_t> op, dim_t matrix) {
  dim_t off = 0, stride = matrix;
  for (size_t d = out.size(); d-- > 0;) {
    dim_t coord = bi % out[d];
    bi /= out[d];
    if (op[d] != 1)
      off += coord * stride;
    stride *= op[d];
  }
  return off;
}

/// y = act(y + bias + residual) over the product \p I has stored (the
/// epilogue's reference semantics; a rank-1 operand is the bias).
static void matMulEpilogue(const MatMulInst &I, const ExecContext &ctx) {
  auto act = FusedActivation(I.getFusedActivation());
  if (I.getEpilogue().empty() && act == FusedActivation::None)
    return;
  const float *bias = nullptr, *res = nullptr;
  for (Value *v : I.getEpilogue())
    (v->getType()->rank() == 1 ? bias : res) = ctx.ptr<float>(v);
  float *y = ctx.ptr<float>(I.getDest());
  dim_t n = I.getDest()->getType()->dims().back();
  dim_t size = I.getDest()->getType()->size();
  for (dim_t e = 0; e < size; ++e) {
    float v = y[e];
    if (bias)
      v += bias[e % n];
    if (res)
      v += res[e];
    y[e] = applyFusedActivation(act, v, I.getFusedAlpha(), I.getFusedBeta());
  }
}

static void matMul(const MatMulInst &I, const ExecContext &ctx) {
  if (I.getLHS()->getType()->getElemKind() == ElemKind::BFloat16)
    matMulBF16(I, ctx);
  else
    matMulLoop<float>(I, ctx, [](float v) { return v; });
  matMulEpilogue(I, ctx);
}

/// Direct convolution shared by Conv (NCHW: x [N, C, H, W], w [M, C/G, KH,
/// KW], y [N, M, OH, OW]) and ConvNHWC (x [N, H, W, C], w [M, KH, KW, C/G],
/// y [N, OH, OW, M]): the same sums in the same order for both layouts, so
/// the layout pass can be checked against plain Conv.
template <bool ChannelsLast, typename ConvLike>
static void convImpl(const ConvLike &I, const ExecContext &ctx) {
  llvm::ArrayRef<dim_t> xd = I.getInput()->getType()->dims();
  llvm::ArrayRef<dim_t> wd = I.getFilter()->getType()->dims();
  llvm::ArrayRef<dim_t> yd = I.getDest()->getType()->dims();
  auto strides = I.getStrides(), pads = I.getPads(), dil = I.getDilations();
  dim_t group = I.getGroup();
  const unsigned cAxis = ChannelsLast ? 3 : 1, hAxis = ChannelsLast ? 1 : 2;
  dim_t N = xd[0], C = xd[cAxis], H = xd[hAxis], W = xd[hAxis + 1];
  dim_t M = wd[0], KH = wd[ChannelsLast ? 1 : 2], KW = wd[ChannelsLast ? 2 : 3];
  dim_t OH = yd[hAxis], OW = yd[hAxis + 1];
  dim_t cPerG = C / group, mPerG = M / group;
  // Flat offsets of one element of x, w and y in the layout.
  auto xAt = [&](dim_t n, dim_t c, dim_t h, dim_t w) {
    return ChannelsLast ? ((n * H + h) * W + w) * C + c
                        : ((n * C + c) * H + h) * W + w;
  };
  auto wAt = [&](dim_t m, dim_t c, dim_t kh, dim_t kw) {
    return ChannelsLast ? ((m * KH + kh) * KW + kw) * cPerG + c
                        : ((m * cPerG + c) * KH + kh) * KW + kw;
  };
  auto yAt = [&](dim_t n, dim_t m, dim_t oh, dim_t ow) {
    return ChannelsLast ? ((n * OH + oh) * OW + ow) * M + m
                        : ((n * M + m) * OH + oh) * OW + ow;
  };
  const float *x = ctx.ptr<float>(I.getInput());
  const float *w = nullptr;
  // A BFloat16 filter: the input rounded to BFloat16 (nearest even), both
  // widened; each product is then exact in Float32 and the sums below are
  // those of the Float32 convolution, in the same order.
  std::vector<float> wWide, xRounded;
  if (I.getFilter()->getType()->getElemKind() == ElemKind::BFloat16) {
    wWide = widenBF16(ctx.ptr<uint16_t>(I.getFilter()),
                      I.getFilter()->getType()->size());
    xRounded = roundToBF16(x, I.getInput()->getType()->size());
    w = wWide.data();
    x = xRounded.data();
  } else {
    w = ctx.ptr<float>(I.getFilter());
  }
  const float *bias = ctx.ptr<float>(I.getBias());
  float *y = ctx.ptr<float>(I.getDest());
  auto residuals = I.getResidual();
  const float *res = residuals.empty() ? nullptr : ctx.ptr<float>(residuals[0]);
  auto act = FusedActivation(I.getFusedActivation());
  float alpha = I.getFusedAlpha(), beta = I.getFusedBeta();
  for (dim_t n = 0; n < N; ++n)
    for (dim_t m = 0; m < M; ++m) {
      dim_t g = m / mPerG;
      for (dim_t oh = 0; oh < OH; ++oh)
        for (dim_t ow = 0; ow < OW; ++ow) {
          float acc = bias[m];
          for (dim_t c = 0; c < cPerG; ++c)
            for (dim_t kh = 0; kh < KH; ++kh) {
              dim_t ih = oh * strides[0] - pads[0] + kh * dil[0];
              if (ih < 0 || ih >= H)
                continue;
              for (dim_t kw = 0; kw < KW; ++kw) {
                dim_t iw = ow * strides[1] - pads[1] + kw * dil[1];
                if (iw >= 0 && iw < W)
                  acc +=
                      x[xAt(n, g * cPerG + c, ih, iw)] * w[wAt(m, c, kh, kw)];
              }
            }
          dim_t at = yAt(n, m, oh, ow);
          if (res)
            acc += res[at];
          y[at] = applyFusedActivation(act, acc, alpha, beta);
        }
    }
}

/// Shared loop of MaxPool and AvgPool; \p isMax selects the reduction.
/// Max (isMax) or average pooling of T, accumulating in Acc from \p init
/// (padding never wins the max; its identity is below every value).
template <typename T, typename Acc>
static void poolOf(const Instruction &I, const ExecContext &ctx, bool isMax,
                   Acc init) {
  Value *dest = I.getOperand(0).value, *src = I.getOperand(1).value;
  llvm::ArrayRef<dim_t> xd = src->getType()->dims();
  llvm::ArrayRef<dim_t> yd = dest->getType()->dims();
  auto kernel = I.attr(0).ints, strides = I.attr(1).ints, pads = I.attr(2).ints;
  bool countPad = !isMax && I.attr(3).i;
  dim_t H = xd[2], W = xd[3], OH = yd[2], OW = yd[3];
  const T *x = ctx.ptr<T>(src);
  T *y = ctx.ptr<T>(dest);
  // The taps over the input (tapsBelow); with count_include_pad the divisor
  // counts the explicit padding too, not positions past it (ONNX semantics
  // for ceil-mode tails).
  for (dim_t nc = 0, e = xd[0] * xd[1]; nc < e; ++nc)
    for (dim_t oh = 0; oh < OH; ++oh)
      for (dim_t ow = 0; ow < OW; ++ow) {
        dim_t h0 = oh * strides[0] - pads[0], w0 = ow * strides[1] - pads[1];
        dim_t hLo = h0 + tapsBelow(0, h0, 1, kernel[0]);
        dim_t hHi = h0 + tapsBelow(H, h0, 1, kernel[0]);
        dim_t wLo = w0 + tapsBelow(0, w0, 1, kernel[1]);
        dim_t wHi = w0 + tapsBelow(W, w0, 1, kernel[1]);
        Acc acc = init;
        for (dim_t ih = hLo; ih < hHi; ++ih)
          for (dim_t iw = wLo; iw < wHi; ++iw) {
            Acc v = x[(nc * H + ih) * W + iw];
            acc = isMax ? std::max(acc, v) : acc + v;
          }
        dim_t count = countPad ? tapsBelow(H + pads[2], h0, 1, kernel[0]) *
                                     tapsBelow(W + pads[3], w0, 1, kernel[1])
                               : std::max<dim_t>(hHi - hLo, 0) *
                                     std::max<dim_t>(wHi - wLo, 0);
        y[(nc * OH + oh) * OW + ow] =
            T(isMax ? acc : acc / Acc(std::max<dim_t>(count, 1)));
      }
}

/// Float32 pooling; max pooling of Int8 and UInt8 too (quantized models'
/// MaxPool between products runs on the bytes), from the type's lowest
/// value (what a window of padding alone gives, as Quantize(-inf) does).
static void pool(const Instruction &I, const ExecContext &ctx, bool isMax) {
  switch (I.getOperand(0).value->getType()->getElemKind()) {
  case ElemKind::Int8:
    return poolOf<int8_t, int32_t>(I, ctx, isMax, -128);
  case ElemKind::UInt8:
    return poolOf<uint8_t, int32_t>(I, ctx, isMax, 0);
  default:
    return poolOf<float, float>(
        I, ctx, isMax, isMax ? -std::numeric_limits<float>::infinity() : 0.f);
  }
}

static void softmax(const SoftmaxInst &I, const ExecContext &ctx) {
  TypeRef t = I.getInput()->getType();
  int64_t axis = I.getAxis();
  dim_t len = t->dims()[axis];
  dim_t inner = 1;
  for (unsigned i = axis + 1; i < t->rank(); ++i)
    inner *= t->dims()[i];
  dim_t outer = t->size() / (len * inner);
  const float *x = ctx.ptr<float>(I.getInput());
  float *y = ctx.ptr<float>(I.getDest());
  for (dim_t o = 0; o < outer; ++o)
    for (dim_t in = 0; in < inner; ++in) {
      const float *xs = x + o * len * inner + in;
      float *ys = y + o * len * inner + in;
      float mx = -std::numeric_limits<float>::infinity();
      for (dim_t i = 0; i < len; ++i)
        mx = std::max(mx, xs[i * inner]);
      float sum = 0.f;
      for (dim_t i = 0; i < len; ++i)
        sum += ys[i * inner] = std::exp(xs[i * inner] - mx);
      for (dim_t i = 0; i < len; ++i)
        ys[i * inner] /= sum;
    }
}

bool interp::executeLinear(const Instruction &I, const ExecContext &ctx) {
  switch (I.getKind()) {
  case ValueKind::MatMulInst:
    matMul(llvm::cast<MatMulInst>(I), ctx);
    return true;
  case ValueKind::ConvInst:
    convImpl</*ChannelsLast=*/false>(llvm::cast<ConvInst>(I), ctx);
    return true;
  case ValueKind::ConvNHWCInst:
    convImpl</*ChannelsLast=*/true>(llvm::cast<ConvNHWCInst>(I), ctx);
    return true;
  case ValueKind::MaxPoolInst:
    pool(I, ctx, /*isMax=*/true);
    return true;
  case ValueKind::AvgPoolInst:
    pool(I, ctx, /*isMax=*/false);
    return true;
  case ValueKind::SoftmaxInst:
    softmax(llvm::cast<SoftmaxInst>(I), ctx);
    return true;
  default:
    return false;
  }
}
