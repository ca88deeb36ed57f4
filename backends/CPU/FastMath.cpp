//===- FastMath.cpp - Inline, vectorizable float math for the renderer ----===//
//
// llvm.exp on float has no vector form here: LLVM scalarizes it into expf
// calls, so a loop with Exp or Sigmoid does not vectorize. This expansion
// is plain arithmetic (a Cody-Waite range reduction, a degree-6 polynomial
// and an exponent built from bits), which the loop vectorizer handles.
// Accuracy: within 2 ulp of expf for results >= 2^-126; smaller results
// (x < -87.3) are 0, x > 88.72 gives +inf and NaN stays NaN.
//
//===----------------------------------------------------------------------===//
#include "CPU.h"

#include "llvm/IR/Intrinsics.h"

using namespace ember;

llvm::Value *cpu::emitFastExp(llvm::IRBuilder<> &b, llvm::Value *x) {
  llvm::Type *ft = x->getType();
  if (!ft->isFloatTy())
    return b.CreateIntrinsic(llvm::Intrinsic::exp, {ft}, {x});
  auto c = [&](double v) { return llvm::ConstantFP::get(ft, v); };
  auto fma = [&](llvm::Value *a, llvm::Value *m, llvm::Value *d) {
    return b.CreateIntrinsic(llvm::Intrinsic::fma, {ft}, {a, m, d});
  };
  constexpr double kLo = -87.3, kHi = 88.72;
  llvm::Value *xc = b.CreateSelect(b.CreateFCmpOLT(x, c(kLo)), c(kLo), x);
  xc = b.CreateSelect(b.CreateFCmpOGT(xc, c(kHi)), c(kHi), xc);
  xc = b.CreateSelect(b.CreateFCmpUNO(x, x), c(0), xc);
  // n = round(x / ln 2), r = x - n ln 2 in two parts (ln2Hi is exact).
  llvm::Value *n = b.CreateIntrinsic(
      llvm::Intrinsic::rint, {ft}, {b.CreateFMul(xc, c(1.44269504088896341))});
  llvm::Value *r = fma(n, c(-0.693359375), xc);
  r = fma(n, c(2.12194440e-4), r);
  // exp(r) on [-ln2/2, ln2/2] (Cephes expf coefficients).
  llvm::Value *p = c(1.9875691500e-4);
  for (double k : {1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2,
                   1.6666665459e-1, 5.0000001201e-1})
    p = fma(p, r, c(k));
  llvm::Value *y = fma(b.CreateFMul(p, r), r, b.CreateFAdd(r, c(1)));
  // y * 2^n as y * 2^(n-1) * 2, so that n = 128 does not overflow the
  // exponent field; n - 1 >= -127 (2^-127 encodes as 0: underflow to 0).
  llvm::Type *it = b.getInt32Ty();
  if (auto *vt = llvm::dyn_cast<llvm::VectorType>(ft))
    it = llvm::VectorType::get(it, vt->getElementCount());
  llvm::Value *e =
      b.CreateAdd(b.CreateFPToSI(n, it), llvm::ConstantInt::get(it, 126));
  llvm::Value *scale =
      b.CreateBitCast(b.CreateShl(e, llvm::ConstantInt::get(it, 23)), ft);
  llvm::Value *res = b.CreateFMul(b.CreateFMul(y, scale), c(2));
  res = b.CreateSelect(b.CreateFCmpOLT(x, c(kLo)), c(0), res);
  res = b.CreateSelect(b.CreateFCmpOGT(x, c(kHi)),
                       llvm::ConstantFP::getInfinity(ft), res);
  return b.CreateSelect(b.CreateFCmpUNO(x, x), x, res);
}
