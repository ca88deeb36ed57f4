//===- BF16Storage.cpp - Activations stored in BFloat16 on the CPU --------===//
#include "BF16Storage.h"

#include "ConvBF16.h"
#include "ConvBF16Direct.h"
#include "ConvPlan.h"
#include "MatMulBF16.h"

#include "ember/Kernel/LowerToKernel.h"

using namespace ember;
using namespace ember::cpu;

/// True if \p I is a convolution with a BFloat16 filter on the CPU's
/// BFloat16 path whose products do not run on AMX tiles (no AMX host here
/// to test the BFloat16 input and output of those kernels).
static bool bf16Conv(const ConvInst &I, const TargetDesc &T,
                     const CPUCodegenOptions &opts) {
  if (I.getFilter()->getType()->getElemKind() != ElemKind::BFloat16 ||
      planConv(I, T, opts).path != ConvPathKind::BF16Gemm)
    return false;
  int64_t mPerG = int64_t(I.getFilter()->getType()->dims()[0]) / I.getGroup();
  return chooseBF16MatMul(T, mPerG).kernel != BF16MatMulKernel::AMX;
}

bool cpu::takesBF16Input(const ConvInst &I, const TargetDesc &T) {
  auto d = chooseConvBF16Direct(I, T);
  if (d)
    return d->kernel != BF16MatMulKernel::AMX;
  return usesConvBF16CV(I, T);
}

kir::Buffer cpu::bf16Buffer(Value *v, const MemoryPlan &plan) {
  kir::Buffer b = kir::bufferFor(v, plan);
  b.kind = ElemKind::BFloat16;
  b.size /= 2;
  return b;
}

namespace {
/// What the instructions do with one activation buffer.
struct Uses {
  const ConvInst *producer = nullptr;
  unsigned readers = 0;
  bool ok = true;
};
} // namespace

BF16Storage::BF16Storage(const IRFunction &F, const TargetDesc &T,
                         const CPUCodegenOptions &opts) {
  llvm::DenseMap<const Value *, Uses> uses;
  for (auto &I : F.getInstrs()) {
    if (llvm::isa<AllocActivationInst>(*I) ||
        llvm::isa<DeallocActivationInst>(*I))
      continue;
    auto *c = llvm::dyn_cast<ConvInst>(I.get());
    for (unsigned i = 0; i < I->getNumOperands(); ++i) {
      Value *v = I->getOperand(i).value;
      Value *origin = getOrigin(v);
      if (!llvm::isa<AllocActivationInst>(origin))
        continue;
      Uses &u = uses[origin];
      // A view, or a Conv operand other than the dest and input, reads or
      // writes the buffer as Float32.
      bool conv = c && v == origin && bf16Conv(*c, T, opts);
      if (conv && i == 0 && !u.producer && c->getResidual().empty())
        u.producer = c;
      else if (conv && i == 1 && takesBF16Input(*c, T))
        ++u.readers;
      else
        u.ok = false;
    }
  }
  for (auto &[v, u] : uses)
    if (u.ok && u.producer && u.readers)
      values_.insert(v);
}
