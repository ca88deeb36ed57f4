//===- ConvertPrecision.cpp - Reduced-precision operands for MatMul, Conv -===//
//
// Under -precision=bf16, every float32 MatMul (Gemm and the fully connected
// forms are MatMuls once lowered, so the pass runs after "lower") reads its
// operands as BFloat16: each operand goes through a Cast to BFloat16 (round
// to nearest even), and the MatMul's result stays Float32 (a BFloat16
// MatMul accumulates in Float32; see inferMatMul). Casts of constants are
// folded by constant-fold, so weights are converted once, at compile time;
// activations are converted at run time; a fused epilogue (bias, residual,
// activation) stays Float32 after the Float32 sums. A Conv gets a BFloat16
// filter and reads its Float32 input rounded to BFloat16 (convertConvBF16).
// Everything else keeps its precision; docs/Precision.md lists the rules and
// their reasons.
//
// Under -precision=fp16 the same ops read Float16-rounded operands but, as
// no CPU kernel multiplies Float16 yet, each operand is a Cast pair:
// Float32 -> Float16 (round to nearest even) -> Float32, and the MatMul or
// Conv stays Float32. A constant weight's pair folds at compile time into
// a Float32 Constant of Float16-rounded values. -weights-precision=fp16|bf16
// puts the same pair on the constant weights of the MatMuls and Convs
// -precision leaves in Float32, and makes constant-fold keep every weight's
// widening Cast (PrecisionOptions::storesNarrowWeights): the inner Cast
// folds into a 16-bit Constant (half the bundle's bytes) widened at run
// time.
//
//===----------------------------------------------------------------------===//
#include "PassUtils.h"
#include "Passes.h"

using namespace ember;

/// The BFloat16 form of operand \p v of the node named \p name.
static NodeValue toBF16(Function &F, llvm::StringRef name, NodeValue v) {
  return F.createCast((name + ".bf16").str(), v, ElemKind::BFloat16);
}

/// \p v rounded to \p kind and widened back to Float32: the value a
/// Float32 MatMul or Conv reads, rounded as a \p kind operand would be.
static NodeValue roundTrip(Function &F, llvm::StringRef name, NodeValue v,
                           ElemKind kind) {
  std::string n =
      (name + (kind == ElemKind::Float16 ? ".fp16" : ".bf16")).str();
  NodeValue narrow = F.createCast(n, v, kind);
  return F.createCast(n + ".wide", narrow, ElemKind::Float32);
}

/// True if \p conv may read reduced-precision operands: a Float32
/// convolution that is not depthwise (its few multiply-adds per weight gain
/// little and its kernels stay Float32) and whose filter is a Constant, so
/// that the Cast folds into the bundle's weights.
static bool isConvertibleConv(ConvNode *conv) {
  NodeValue w = conv->getFilter();
  auto xd = conv->getInput().dims();
  int64_t group = conv->getGroup();
  bool depthwise =
      group > 1 && dim_t(group) == xd[1] && dim_t(group) == w.dims()[0];
  return conv->getInput().getElemKind() == ElemKind::Float32 &&
         w.getElemKind() == ElemKind::Float32 && !depthwise &&
         llvm::isa<Constant>(w.getNode());
}

/// True if \p mm multiplies two Float32 operands.
static bool isConvertibleMatMul(MatMulNode *mm) {
  return mm->getLHS().getElemKind() == ElemKind::Float32 &&
         mm->getRHS().getElemKind() == ElemKind::Float32;
}

/// Gives \p conv a BFloat16 filter. The input stays Float32: the
/// convolution rounds it while it copies its patches, with no Cast over the
/// tensor.
static void convertConvBF16(Function &F, ConvNode *conv) {
  NodeValue w = conv->getFilter();
  conv->setNthInput(1, toBF16(F, conv->getName().str() + ".filter", w));
}

/// Replaces \p mm by a MatMul of its operands cast to BFloat16.
static void convertMatMulBF16(Function &F, MatMulNode *mm) {
  std::string name = mm->getName().str();
  NodeValue a = toBF16(F, name + ".lhs", mm->getLHS());
  NodeValue b = toBF16(F, name + ".rhs", mm->getRHS());
  // An epilogue stays Float32 and keeps its place after the sums.
  llvm::SmallVector<NodeValue, 4> epilogue = mm->getEpilogue();
  MatMulNode *converted = F.createMatMul(
      name, a, b, epilogue, mm->getTransB(), mm->getFusedActivation(),
      mm->getFusedAlpha(), mm->getFusedBeta());
  replaceNode(mm, converted);
  F.eraseNode(mm);
}

/// Under -precision=fp16: both operands of \p n (a MatMul or convertible
/// Conv) rounded to Float16 by a Cast pair; \p n stays Float32.
static void convertFP16(Function &F, Node *n) {
  std::string name = n->getName().str();
  for (unsigned i : {0u, 1u})
    n->setNthInput(i, roundTrip(F, name + (i ? ".rhs" : ".lhs"),
                                n->getNthInput(i), ElemKind::Float16));
}

/// Converts \p n (a MatMul or Conv) as -precision asks; returns the
/// counter to bump, or nullptr where \p n keeps Float32 operands.
static const char *convertOperands(Function &F, Node *n, FloatPrecision p) {
  auto *conv = llvm::dyn_cast<ConvNode>(n);
  auto *mm = llvm::dyn_cast<MatMulNode>(n);
  if (p == FloatPrecision::FP32 ||
      !(conv ? isConvertibleConv(conv) : isConvertibleMatMul(mm)))
    return nullptr;
  if (p == FloatPrecision::FP16)
    convertFP16(F, n);
  else if (conv)
    convertConvBF16(F, conv);
  else
    convertMatMulBF16(F, mm);
  return conv ? "convert-precision.convs" : "convert-precision.matmuls";
}

/// The most nodes a weight's constant expression may have (a Constant that
/// lowering has reshaped or transposed: a handful).
constexpr unsigned kMaxWeightNodes = 16;

/// -weights-precision on \p n, a MatMul or Conv left in Float32: a Float32
/// constant weight (input 1) stored in \p p's type, widened at run time.
static bool narrowWeight(Function &F, Node *n, FloatPrecision p) {
  NodeValue w = n->getNthInput(1);
  unsigned budget = kMaxWeightNodes;
  if (p == FloatPrecision::FP32 || w.getElemKind() != ElemKind::Float32 ||
      !isConstantExpr(w, budget))
    return false;
  ElemKind kind =
      p == FloatPrecision::FP16 ? ElemKind::Float16 : ElemKind::BFloat16;
  n->setNthInput(1, roundTrip(F, n->getName().str() + ".rhs", w, kind));
  return true;
}

bool ConvertPrecisionPass::run(Function &F, PassContext &ctx) {
  const PrecisionOptions &p = ctx.precision;
  bool changed = false;
  for (Node *n : nodesInOrder(F)) {
    if (!llvm::isa<ConvNode>(n) && !llvm::isa<MatMulNode>(n))
      continue;
    if (p.keeps(llvm::isa<ConvNode>(n) ? "Conv" : "MatMul"))
      continue;
    if (const char *counter = convertOperands(F, n, p.precision)) {
      ++ctx.counters[counter];
      changed = true;
    } else if (narrowWeight(F, n, p.weights)) {
      ++ctx.counters["convert-precision.narrow-weights"];
      changed = true;
    }
  }
  return changed;
}
