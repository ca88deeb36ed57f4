//===- Window.cpp - N-d pooling, transposed convolution, Resize -----------===//
#include "Generic.h"
#include "ember/Base/ResizeTaps.h"

#include <cmath>
#include <limits>

using namespace ember;
using namespace ember::interp;

using Coord = llvm::SmallVector<dim_t, kMaxRank>;

/// The taps over the input (tapsBelow per axis); with count_include_pad
/// the divisor counts the explicit padding too, not positions past it.
static void poolND(const PoolNDInst &I, const ExecContext &ctx) {
  Buf d(ctx, I.getDest()), x(ctx, I.getInput());
  auto k = I.getKernel(), s = I.getStrides(), p = I.getPads(),
       dil = I.getDilations();
  bool avg = I.getIsAvg(), countPad = I.getCountIncludePad();
  size_t n = k.size();
  Coord oc, xc(n + 2), base(n), lo(n), hi(n), kc(n);
  for (dim_t i = 0, e = d.size(); i < e; ++i) {
    unflatten(i, d.dims(), oc);
    xc[0] = oc[0];
    xc[1] = oc[1];
    dim_t count = 1, padCount = 1;
    for (size_t j = 0; j < n; ++j) {
      base[j] = oc[2 + j] * s[j] - p[j];
      lo[j] = tapsBelow(0, base[j], dil[j], k[j]);
      hi[j] = tapsBelow(x.dims()[2 + j], base[j], dil[j], k[j]);
      count *= std::max<dim_t>(hi[j] - lo[j], 0);
      padCount *= tapsBelow(x.dims()[2 + j] + p[j + n], base[j], dil[j], k[j]);
    }
    double acc = avg ? 0.0 : -INFINITY;
    kc.assign(lo.begin(), lo.end());
    for (dim_t t = 0; t < count; ++t) {
      for (size_t j = 0; j < n; ++j)
        xc[2 + j] = base[j] + kc[j] * dil[j];
      double v = x.ld(flatten(xc, x.dims()));
      acc = avg ? acc + v : std::max(acc, v);
      for (size_t j = n; j-- > 0;) { // next tap, last axis fastest
        if (++kc[j] < hi[j])
          break;
        kc[j] = lo[j];
      }
    }
    d.st(i, avg ? acc / double(countPad ? padCount : std::max<dim_t>(count, 1))
                : acc);
  }
}

static void convTranspose(const ConvTransposeInst &I, const ExecContext &ctx) {
  Buf d(ctx, I.getDest()), x(ctx, I.getInput()), w(ctx, I.getFilter()),
      b(ctx, I.getBias());
  auto s = I.getStrides(), p = I.getPads(), dil = I.getDilations();
  size_t n = s.size();
  dim_t group = I.getGroup(), C = x.dims()[1], mPerG = w.dims()[1];
  dim_t cPerG = C / group;
  std::vector<double> acc(d.size());
  for (dim_t i = 0, e = d.size(); i < e; ++i) {
    Coord c;
    unflatten(i, d.dims(), c);
    acc[i] = b.ld(c[1]);
  }
  llvm::ArrayRef<dim_t> kd = w.dims().drop_front(2);
  dim_t kernel = 1;
  for (dim_t v : kd)
    kernel *= v;
  Coord xc, kc, oc(n + 2);
  // Scatter every input element through the filter.
  for (dim_t i = 0, e = x.size(); i < e; ++i) {
    unflatten(i, x.dims(), xc);
    double xv = x.ld(i);
    dim_t c = xc[1], g = c / cPerG;
    for (dim_t m = 0; m < mPerG; ++m)
      for (dim_t kk = 0; kk < kernel; ++kk) {
        unflatten(kk, kd, kc);
        bool inside = true;
        for (size_t j = 0; j < n && inside; ++j) {
          oc[2 + j] = xc[2 + j] * s[j] + kc[j] * dil[j] - p[j];
          inside = oc[2 + j] >= 0 && oc[2 + j] < d.dims()[2 + j];
        }
        if (!inside)
          continue;
        oc[0] = xc[0];
        oc[1] = g * mPerG + m;
        double wv = w.ld((c * mPerG + m) * kernel + kk);
        acc[flatten(oc, d.dims())] += xv * wv;
      }
  }
  for (dim_t i = 0, e = d.size(); i < e; ++i)
    d.st(i, acc[i]);
}

static void resize(const ResizeInst &I, const ExecContext &ctx) {
  Buf d(ctx, I.getDest()), x(ctx, I.getInput());
  auto scales = I.getScales();
  size_t r = x.dims().size();
  ResizeRule rule{I.getMode(), I.getCoordMode(), I.getNearestMode(),
                  I.getCubicCoeff(), I.getExcludeOutside() != 0};
  // Taps per dim per output coordinate.
  std::vector<std::vector<ResizeTapList>> taps(r);
  for (size_t j = 0; j < r; ++j)
    for (dim_t o = 0; o < d.dims()[j]; ++o)
      taps[j].push_back(
          resizeTapsAt(rule, o, x.dims()[j], d.dims()[j], double(scales[j])));
  Coord oc, sel(r), xc(r);
  for (dim_t i = 0, e = d.size(); i < e; ++i) {
    unflatten(i, d.dims(), oc);
    double acc = 0;
    std::fill(sel.begin(), sel.end(), 0);
    while (true) {
      double wgt = 1;
      for (size_t j = 0; j < r; ++j) {
        const auto &t = taps[j][oc[j]][sel[j]];
        xc[j] = t.first;
        wgt *= t.second;
      }
      if (wgt != 0)
        acc += wgt * x.ld(flatten(xc, x.dims()));
      size_t j = r;
      for (; j > 0; --j) {
        if (++sel[j - 1] < dim_t(taps[j - 1][oc[j - 1]].size()))
          break;
        sel[j - 1] = 0;
      }
      if (j == 0)
        break;
    }
    d.st(i, acc);
  }
}

bool interp::executeWindow(const Instruction &I, const ExecContext &ctx) {
  return runKernelFor(I, ctx, poolND, convTranspose, resize);
}
