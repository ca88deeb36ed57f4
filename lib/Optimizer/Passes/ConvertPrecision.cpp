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
// filter and reads its Float32 input rounded to BFloat16 (convertConv).
// Everything else keeps its precision; docs/Precision.md lists the rules and
// their reasons.
//
//===----------------------------------------------------------------------===//
#include "PassUtils.h"
#include "Passes.h"

using namespace ember;

/// The BFloat16 form of operand \p v of the node named \p name.
static NodeValue toBF16(Function &F, llvm::StringRef name, NodeValue v) {
  return F.createCast((name + ".bf16").str(), v, ElemKind::BFloat16);
}

/// Gives \p conv a BFloat16 filter: a Float32 convolution that is not
/// depthwise (its few multiply-adds per weight gain little and its kernels
/// stay Float32) and whose filter is a Constant, so that the Cast folds
/// into the bundle's weights. The input stays Float32: the convolution
/// rounds it while it copies its patches, with no Cast over the tensor.
static bool convertConv(Function &F, ConvNode *conv) {
  NodeValue w = conv->getFilter();
  auto xd = conv->getInput().dims();
  int64_t group = conv->getGroup();
  bool depthwise =
      group > 1 && dim_t(group) == xd[1] && dim_t(group) == w.dims()[0];
  if (conv->getInput().getElemKind() != ElemKind::Float32 ||
      w.getElemKind() != ElemKind::Float32 || depthwise ||
      !llvm::isa<Constant>(w.getNode()))
    return false;
  conv->setNthInput(1, toBF16(F, conv->getName().str() + ".filter", w));
  return true;
}

bool ConvertPrecisionPass::run(Function &F, PassContext &ctx) {
  if (ctx.precision.precision != FloatPrecision::BF16)
    return false;
  bool changed = false;
  for (Node *n : nodesInOrder(F)) {
    if (auto *conv = llvm::dyn_cast<ConvNode>(n)) {
      if (!ctx.precision.keeps("Conv") && convertConv(F, conv)) {
        ++ctx.counters["convert-precision.convs"];
        changed = true;
      }
      continue;
    }
    if (ctx.precision.keeps("MatMul"))
      continue;
    auto *mm = llvm::dyn_cast<MatMulNode>(n);
    if (!mm || mm->getLHS().getElemKind() != ElemKind::Float32 ||
        mm->getRHS().getElemKind() != ElemKind::Float32)
      continue;
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
    ++ctx.counters["convert-precision.matmuls"];
    changed = true;
  }
  return changed;
}
