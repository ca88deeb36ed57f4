//===- NarrowWeights.cpp - 16-bit weights packed at compile time ----------===//
//
// See NarrowWeights.h.
//
//===----------------------------------------------------------------------===//
#include "NarrowWeights.h"

#include "ember/Base/ElemAccess.h"
#include "ember/Kernel/ConstantImage.h"
#include "ember/Kernel/LowerToKernel.h"

using namespace ember;
using namespace ember::cpu;

namespace {
bool isNarrowFloat(ElemKind k) {
  return k == ElemKind::Float16 || k == ElemKind::BFloat16;
}

/// The 16-bit constant that Cast \p I widens to float32, or null.
WeightVar *widenedConstant(const CastInst &I) {
  auto *w = llvm::dyn_cast<WeightVar>(getOrigin(I.getInput()));
  if (!w || !w->isConstant() || getOriginOffset(I.getInput()) != 0 ||
      !isNarrowFloat(w->getType()->getElemKind()) ||
      I.getDest()->getType()->getElemKind() != ElemKind::Float32 ||
      w->getType()->size() != I.getDest()->getType()->size())
    return nullptr;
  return w;
}

/// The operand of \p I that may be a widened weight (a float32 Conv's
/// filter, a float32 MatMul's B), or null.
Value *weightOperand(const Instruction &I) {
  if (auto *c = llvm::dyn_cast<ConvInst>(&I))
    return c->getDest()->getType()->getElemKind() == ElemKind::Float32
               ? c->getFilter()
               : nullptr;
  auto *m = llvm::dyn_cast<MatMulInst>(&I);
  if (!m || m->getLHS()->getType()->getElemKind() != ElemKind::Float32 ||
      llvm::is_contained(m->getEpilogue(), m->getRHS()))
    return nullptr;
  return m->getRHS();
}
} // namespace

NarrowWeights::NarrowWeights(
    const IRFunction &F,
    const llvm::DenseMap<const Value *, unsigned> &readers) {
  llvm::DenseMap<const Value *, WeightVar *> casts;
  for (auto &I : F.getInstrs())
    if (auto *c = llvm::dyn_cast<CastInst>(I.get()))
      if (WeightVar *w = widenedConstant(*c))
        casts[getOrigin(c->getDest())] = w;
  for (auto &I : F.getInstrs()) {
    Value *v = weightOperand(*I);
    if (!v || getOriginOffset(v) != 0)
      continue;
    const Value *o = getOrigin(v);
    if (WeightVar *w = casts.lookup(o))
      if (readers.lookup(o) == 1)
        sources_[o] = w;
  }
}

WeightVar *NarrowWeights::source(Value *v) const {
  return getOriginOffset(v) == 0 ? sources_.lookup(getOrigin(v)) : nullptr;
}

bool NarrowWeights::isAbsorbed(const CastInst &I) const {
  return sources_.count(getOrigin(I.getDest())) != 0;
}

bool cpu::widensInKernel(ElemKind kind, const TargetDesc &T) {
  return kind == ElemKind::BFloat16 || T.has(ISAExt::AVX512F) ||
         T.has(ISAExt::NEON);
}

/// The values of the 16-bit constant \p w, widened to float32 (exactly),
/// read from the constant image \p constants placed by \p plan.
static std::vector<float> widenConstant(WeightVar *w, const MemoryPlan &plan,
                                        const std::vector<uint8_t> &constants) {
  kir::Buffer src = kir::bufferFor(w, plan);
  ElemKind kind = w->getType()->getElemKind();
  std::vector<float> values(w->getType()->size());
  for (size_t i = 0; i < values.size(); ++i)
    values[i] =
        float(loadElement(constants.data() + src.offset, kind, int64_t(i)));
  return values;
}

const float *cpu::floatConstantValues(const kir::Buffer &src, WeightVar *narrow,
                                      const MemoryPlan &plan,
                                      const std::vector<uint8_t> &constants,
                                      std::vector<float> &storage) {
  if (!narrow)
    return reinterpret_cast<const float *>(constants.data() + src.offset);
  storage = widenConstant(narrow, plan, constants);
  return storage.data();
}

kir::Buffer cpu::appendNarrowConstant(std::vector<uint8_t> &constants,
                                      const std::vector<float> &values,
                                      ElemKind kind, std::string name) {
  std::vector<uint16_t> narrow(values.size());
  for (size_t i = 0; i < values.size(); ++i)
    storeElement(narrow.data(), kind, int64_t(i), double(values[i]));
  return kir::appendConstant(constants, narrow.data(),
                             narrow.size() * sizeof(uint16_t), std::move(name),
                             kind);
}

kir::Kernel cpu::widenKernel(std::string name, const kir::Buffer &src,
                             const kir::Buffer &dst) {
  kir::Kernel k(std::move(name));
  unsigned d = k.addBuffer(dst), s = k.addBuffer(src);
  unsigned e = k.newVar();
  int64_t count = int64_t(dst.size / sizeof(float));
  k.body() = {kir::Kernel::loop(
      e, count, /*parallel=*/true,
      {kir::Kernel::store(d, k.var(e),
                          k.cast(k.load(s, k.var(e)), ElemKind::Float32))})};
  return k;
}
