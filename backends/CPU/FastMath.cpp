//===- FastMath.cpp - Inline, vectorizable float math for the renderer ----===//
//
// llvm.exp, llvm.log and the libm calls (tanhf, erff) have no vector form
// here: LLVM scalarizes them into one call per element, so a loop that uses
// them does not vectorize. These expansions are plain arithmetic, integer
// bit tricks and selects, which the loop vectorizer turns into full-width
// vector code. Every polynomial is our own near-minimax fit (Lawson's
// iteration on Chebyshev nodes, coefficients rounded to float); the error
// bounds against libm, measured over the float range, are in docs/Math.md
// and checked by tests/ops/VectorMathAccuracy.cpp.
//
//===----------------------------------------------------------------------===//
#include "CPU.h"

#include "llvm/IR/Intrinsics.h"

#include <initializer_list>

using namespace ember;

namespace {
/// Shorthands for building float (scalar or vector) arithmetic.
class MathBuilder {
public:
  MathBuilder(llvm::IRBuilder<> &b, llvm::Type *ft) : b_(b), ft_(ft) {
    it_ = b.getInt32Ty();
    if (auto *vt = llvm::dyn_cast<llvm::VectorType>(ft))
      it_ = llvm::VectorType::get(it_, vt->getElementCount());
  }

  llvm::IRBuilder<> &b() { return b_; }
  llvm::Type *intType() const { return it_; }
  llvm::Value *c(double v) { return llvm::ConstantFP::get(ft_, v); }
  llvm::Value *ci(int32_t v) { return llvm::ConstantInt::get(it_, v); }
  llvm::Value *fma(llvm::Value *a, llvm::Value *m, llvm::Value *d) {
    return b_.CreateIntrinsic(llvm::Intrinsic::fma, {ft_}, {a, m, d});
  }
  llvm::Value *abs(llvm::Value *a) {
    return b_.CreateIntrinsic(llvm::Intrinsic::fabs, {ft_}, {a});
  }
  /// |mag| with the sign of \p sign.
  llvm::Value *copySign(llvm::Value *mag, llvm::Value *sign) {
    return b_.CreateIntrinsic(llvm::Intrinsic::copysign, {ft_}, {mag, sign});
  }
  /// min(a, hi) that is hi for a NaN \p a (the caller handles NaN).
  llvm::Value *clampHi(llvm::Value *a, double hi) {
    return b_.CreateSelect(b_.CreateFCmpOLT(a, c(hi)), a, c(hi));
  }
  /// c[0] + c[1] x + c[2] x^2 + ... by Horner's rule with fused steps.
  llvm::Value *poly(llvm::Value *x, std::initializer_list<double> coeffs) {
    const double *i = coeffs.end() - 1;
    llvm::Value *p = c(*i);
    while (i != coeffs.begin())
      p = fma(p, x, c(*--i));
    return p;
  }
  /// NaN inputs give themselves back (the expansions compute on a
  /// clamped value that hides them).
  llvm::Value *keepNaN(llvm::Value *x, llvm::Value *res) {
    return b_.CreateSelect(b_.CreateFCmpUNO(x, x), x, res);
  }

private:
  llvm::IRBuilder<> &b_;
  llvm::Type *ft_;
  llvm::Type *it_;
};
} // namespace

/// exp(x) for x in [-87.3, 88.72] (the caller clamps). Cody-Waite range
/// reduction n = round(x / ln 2), r = x - n ln 2 in two parts (ln2Hi is
/// exact in 9 bits), a degree-6 polynomial on [-ln2/2, ln2/2] (Cephes expf
/// coefficients), and 2^n built from bits.
static llvm::Value *expCore(MathBuilder &m, llvm::Value *xc) {
  llvm::IRBuilder<> &b = m.b();
  llvm::Type *ft = xc->getType();
  llvm::Value *n =
      b.CreateIntrinsic(llvm::Intrinsic::rint, {ft},
                        {b.CreateFMul(xc, m.c(1.44269504088896341))});
  llvm::Value *r = m.fma(n, m.c(-0.693359375), xc);
  r = m.fma(n, m.c(2.12194440e-4), r);
  llvm::Value *p =
      m.poly(r, {5.0000001201e-1, 1.6666665459e-1, 4.1665795894e-2,
                 8.3334519073e-3, 1.3981999507e-3, 1.9875691500e-4});
  llvm::Value *y = m.fma(b.CreateFMul(p, r), r, b.CreateFAdd(r, m.c(1)));
  // y * 2^n as y * 2^(n-1) * 2, so that n = 128 does not overflow the
  // exponent field; n - 1 >= -127 (2^-127 encodes as 0: underflow to 0).
  llvm::Value *e = b.CreateAdd(b.CreateFPToSI(n, m.intType()), m.ci(126));
  llvm::Value *scale = b.CreateBitCast(b.CreateShl(e, m.ci(23)), ft);
  return b.CreateFMul(b.CreateFMul(y, scale), m.c(2));
}

llvm::Value *cpu::emitFastExp(llvm::IRBuilder<> &b, llvm::Value *x) {
  llvm::Type *ft = x->getType();
  if (!ft->getScalarType()->isFloatTy())
    return b.CreateIntrinsic(llvm::Intrinsic::exp, {ft}, {x});
  MathBuilder m(b, ft);
  constexpr double kLo = -87.3, kHi = 88.72283935546875;
  llvm::Value *xc = b.CreateSelect(b.CreateFCmpOLT(x, m.c(kLo)), m.c(kLo), x);
  xc = m.clampHi(xc, kHi);
  xc = b.CreateSelect(b.CreateFCmpUNO(x, x), m.c(0), xc);
  llvm::Value *res = expCore(m, xc);
  res = b.CreateSelect(b.CreateFCmpOLT(x, m.c(kLo)), m.c(0), res);
  res = b.CreateSelect(b.CreateFCmpOGT(x, m.c(kHi)),
                       llvm::ConstantFP::getInfinity(ft), res);
  return m.keepNaN(x, res);
}

/// log(x) = k ln 2 + log(1 + f) with 1 + f = x / 2^k in [sqrt(1/2),
/// sqrt(2)), and log(1 + f) = f - f^2/2 + f^3 P(f), P of degree 7.
/// Subnormal inputs are scaled by 2^23 first.
llvm::Value *cpu::emitFastLog(llvm::IRBuilder<> &b, llvm::Value *x) {
  llvm::Type *ft = x->getType();
  if (!ft->getScalarType()->isFloatTy())
    return nullptr;
  MathBuilder m(b, ft);
  llvm::Value *tiny = b.CreateFCmpOLT(x, m.c(0x1p-126));
  llvm::Value *xs = b.CreateSelect(tiny, b.CreateFMul(x, m.c(0x1p23)), x);
  // Adding 1 - sqrt(1/2) (in bits) carries into the exponent exactly when
  // the mantissa is at least sqrt(1/2)'s, so the exponent field is k.
  constexpr int32_t kOne = 0x3f800000, kSqrtHalf = 0x3f3504f3;
  llvm::Value *bits =
      b.CreateAdd(b.CreateBitCast(xs, m.intType()), m.ci(kOne - kSqrtHalf));
  llvm::Value *k = b.CreateSub(b.CreateAShr(bits, m.ci(23)), m.ci(127));
  llvm::Value *mant =
      b.CreateAdd(b.CreateAnd(bits, m.ci(0x007fffff)), m.ci(kSqrtHalf));
  llvm::Value *f = b.CreateFSub(b.CreateBitCast(mant, ft), m.c(1));
  llvm::Value *e = b.CreateFSub(b.CreateSIToFP(k, ft),
                                b.CreateSelect(tiny, m.c(23), m.c(0)));
  llvm::Value *f2 = b.CreateFMul(f, f);
  llvm::Value *p =
      m.poly(f, {0.3333333134651184, -0.250008225440979, 0.20001226663589478,
                 -0.16623356938362122, 0.14201761782169342, -0.131601944565773,
                 0.12761549651622772, -0.07634429633617401});
  llvm::Value *y = b.CreateFMul(b.CreateFMul(f2, f), p);
  y = m.fma(f2, m.c(-0.5), y);
  y = m.fma(e, m.c(-2.12194440e-4), y); // ln 2 - 0.693359375
  llvm::Value *res = m.fma(e, m.c(0.693359375), b.CreateFAdd(f, y));
  llvm::Constant *inf = llvm::ConstantFP::getInfinity(ft);
  res = b.CreateSelect(b.CreateFCmpOEQ(x, inf), inf, res);
  res = b.CreateSelect(b.CreateFCmpOEQ(x, m.c(0)),
                       llvm::ConstantFP::getInfinity(ft, true), res);
  res = b.CreateSelect(b.CreateFCmpOLT(x, m.c(0)), llvm::ConstantFP::getNaN(ft),
                       res);
  return m.keepNaN(x, res);
}

/// tanh(x) = x + x^3 P(x^2) for |x| < 0.625 (P of degree 4); beyond,
/// 1 - 2 / (1 + e^(2|x|)) with the sign of x (its cancellation costs at
/// most about one ulp there). |x| >= 9.1 rounds to +-1.
llvm::Value *cpu::emitFastTanh(llvm::IRBuilder<> &b, llvm::Value *x) {
  llvm::Type *ft = x->getType();
  if (!ft->getScalarType()->isFloatTy())
    return nullptr;
  MathBuilder m(b, ft);
  llvm::Value *a = m.abs(x);
  llvm::Value *x2 = b.CreateFMul(x, x);
  llvm::Value *p = m.poly(x2, {-0.3333328068256378, 0.13331441581249237,
                               -0.05373971536755562, 0.02063908986747265,
                               -0.005704990588128567});
  llvm::Value *small = m.fma(b.CreateFMul(x, x2), p, x);
  llvm::Value *ex = expCore(m, b.CreateFMul(m.clampHi(a, 9.1), m.c(2)));
  llvm::Value *large =
      b.CreateFSub(m.c(1), b.CreateFDiv(m.c(2), b.CreateFAdd(ex, m.c(1))));
  llvm::Value *res = b.CreateSelect(b.CreateFCmpOLT(a, m.c(0.625)), small,
                                    m.copySign(large, x));
  return m.keepNaN(x, res);
}

/// erf(x) = x + x Q(x^2) for |x| < 1 (Q of degree 5); for 1 <= |x| <
/// 3.92, 1 - exp(R(|x| - 1)) with R (degree 8) fitted to log erfc, the
/// sign of x restored; beyond 3.92 erf rounds to +-1 and the clamped
/// argument gives exactly that.
llvm::Value *cpu::emitFastErf(llvm::IRBuilder<> &b, llvm::Value *x) {
  llvm::Type *ft = x->getType();
  if (!ft->getScalarType()->isFloatTy())
    return nullptr;
  MathBuilder m(b, ft);
  llvm::Value *a = m.abs(x);
  llvm::Value *q = m.poly(b.CreateFMul(x, x),
                          {0.12837912142276764, -0.3761232793331146,
                           0.11280182003974915, -0.02671135403215885,
                           0.004917594138532877, -0.0005631576641462743});
  llvm::Value *small = m.fma(x, q, x);
  llvm::Value *t = b.CreateFSub(m.clampHi(a, 3.92), m.c(1));
  llvm::Value *r =
      m.poly(t, {-1.8496055603027344, -2.638967275619507, -0.8431065082550049,
                 -0.04157201573252678, 0.010073876939713955,
                 -0.0020520812831819057, 0.00031956861494109035,
                 -3.2861898944247514e-05, 1.6319661426678067e-06});
  llvm::Value *large = b.CreateFSub(m.c(1), expCore(m, r));
  llvm::Value *res =
      b.CreateSelect(b.CreateFCmpOLT(a, m.c(1)), small, m.copySign(large, x));
  return m.keepNaN(x, res);
}

/// Phi(x) = erfc(-x / sqrt 2) / 2. The tail h = Phi(-|x|) = exp(R(|x|))
/// with R (degree 8) fitted to log Phi(-a) on [0, 5.5], its error weighted
/// by Phi(-a); Phi is h below 0 and 1 - h above, so x Phi(x) never forms
/// 1 + erf and does not cancel for x < 0. |x| is clamped at 5.5, where
/// Phi(-5.5) < 2^-25: below -5.5 the result is 0 (x Phi(x) then is NaN
/// at -inf, as 0.5 x (1 + erf(x / sqrt 2)) is), above 5.5 it is 1 - h(5.5).
llvm::Value *cpu::emitFastNormCdf(llvm::IRBuilder<> &b, llvm::Value *x) {
  llvm::Type *ft = x->getType();
  if (!ft->getScalarType()->isFloatTy())
    return nullptr;
  MathBuilder m(b, ft);
  constexpr double kMax = 5.5;
  llvm::Value *a = m.clampHi(m.abs(x), kMax);
  llvm::Value *r =
      m.poly(a, {-0.6931471824645996, -0.7978857159614563, -0.3182965815067291,
                 -0.03639371320605278, 0.004904343280941248,
                 -0.00010110949369845912, -0.0001265323517145589,
                 2.676986150618177e-05, -1.9214380699850153e-06});
  llvm::Value *h = expCore(m, r);
  llvm::Value *res =
      b.CreateSelect(b.CreateFCmpOLT(x, m.c(0)), h, b.CreateFSub(m.c(1), h));
  res = b.CreateSelect(b.CreateFCmpOLT(x, m.c(-kMax)), m.c(0), res);
  return m.keepNaN(x, res);
}
