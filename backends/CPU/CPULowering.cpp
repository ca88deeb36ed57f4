//===- CPULowering.cpp - Kernels and constant image for the CPU -----------===//
//
// Everything but Conv and MatMul goes through the shared kernel lowering.
// Conv and MatMul become loops of calls into libjit; conv filters are
// re-laid out here, at compile time, into the blocked layout libjit wants.
//
//===----------------------------------------------------------------------===//
#include "CPU.h"

#include "ember/Base/Error.h"
#include "ember/Kernel/LowerToKernel.h"

#include <cstring>

using namespace ember;
using namespace ember::cpu;
using kir::CallArg;
using kir::ExprRef;
using kir::Kernel;

namespace {
/// Op kinds the CPU runs through libjit rather than the shared lowering.
struct LibraryOp {
  OpKind op;
  ElemKind kind;
};
const LibraryOp kLibraryOps[] = {{OpKind::Conv, ElemKind::Float32},
                                 {OpKind::MatMul, ElemKind::Float32}};

/// Output channels libjit computes per block (its MBMAX).
constexpr int64_t kConvBlock = 8;
/// MatMul rows per parallel task.
constexpr int64_t kMatMulRows = 16;
} // namespace

bool cpu::cpuSupports(OpKind op, ElemKind kind) {
  for (const LibraryOp &l : kLibraryOps)
    if (l.op == op)
      return l.kind == kind;
  return kir::hasKernelLowering(op, kind);
}

static CallArg bufArg(unsigned b, ExprRef offset = nullptr) {
  return CallArg{true, b, offset};
}
static CallArg valArg(ExprRef e) { return CallArg{false, 0, e}; }

namespace {
/// Builds the CPU's kernels and constant image.
class CPULowering {
public:
  CPULowering(const IRFunction &F, const MemoryPlan &plan)
      : F_(F), plan_(plan) {
    for (auto &I : F.getInstrs())
      for (const Operand &op : I->getOperands())
        if (op.role != OperandRole::Out && !llvm::isa<TensorViewInst>(*I))
          ++readers_[getOrigin(op.value)];
  }

  llvm::Expected<CPUProgram> run() {
    prog_.constants.assign(plan_.constantSize, 0);
    for (auto &w : F_.getWeights())
      if (w->isConstant())
        std::memcpy(prog_.constants.data() +
                        plan_.placements.lookup(w.get()).offset,
                    w->getPayload()->data(), w->getType()->sizeInBytes());
    prog_.mutableSize = plan_.mutableSize;
    prog_.activationSize = plan_.activationSize;
    auto kernels = kir::lowerToKernels(
        F_, plan_,
        [&](const Instruction &I,
            std::vector<Kernel> &out) -> llvm::Expected<bool> {
          if (auto *c = llvm::dyn_cast<ConvInst>(&I)) {
            out.push_back(lowerConv(*c));
            return true;
          }
          if (auto *m = llvm::dyn_cast<MatMulInst>(&I)) {
            out.push_back(lowerMatMul(*m));
            return true;
          }
          return false;
        });
    if (!kernels)
      return kernels.takeError();
    prog_.kernels = std::move(*kernels);
    prog_.constants.resize(alignTo64(prog_.constants.size()), 0);
    return std::move(prog_);
  }

private:
  static size_t alignTo64(size_t n) { return (n + 63) / 64 * 64; }
  kir::Buffer packFilter(const ConvInst &I, int64_t MB);
  Kernel lowerConv(const ConvInst &I);
  Kernel lowerMatMul(const MatMulInst &I);

  const IRFunction &F_;
  const MemoryPlan &plan_;
  llvm::DenseMap<const Value *, unsigned> readers_;
  CPUProgram prog_;
};
} // namespace

/// Re-lays the filter [M][C/g][KH][KW] out as blocks of MB output channels,
/// [g][block][C/g][KH][KW][MB], zero-padding partial blocks. The packed copy
/// replaces the original when only this conv reads it and it fits.
kir::Buffer CPULowering::packFilter(const ConvInst &I, int64_t MB) {
  Value *filter = I.getFilter();
  auto wd = filter->getType()->dims();
  int64_t M = wd[0], cPerG = wd[1], KH = wd[2], KW = wd[3];
  int64_t group = I.getGroup(), mPerG = M / group;
  int64_t nbg = (mPerG + MB - 1) / MB, K = cPerG * KH * KW;
  std::vector<float> packed(size_t(group * nbg * K * MB), 0.f);
  kir::Buffer src = kir::bufferFor(filter, plan_);
  const float *w =
      reinterpret_cast<const float *>(prog_.constants.data() + src.offset);
  for (int64_t m = 0; m < M; ++m) {
    int64_t g = m / mPerG, blk = g * nbg + (m % mPerG) / MB, lane = m % MB;
    for (int64_t k = 0; k < K; ++k)
      packed[(blk * K + k) * MB + lane] = w[m * K + k];
  }
  size_t bytes = packed.size() * sizeof(float);
  Value *origin = getOrigin(filter);
  bool inPlace = readers_.lookup(origin) == 1 && bytes <= src.size;
  size_t offset = src.offset;
  if (!inPlace) {
    offset = alignTo64(prog_.constants.size());
    prog_.constants.resize(offset + bytes, 0);
  }
  std::memcpy(prog_.constants.data() + offset, packed.data(), bytes);
  return kir::Buffer{Region::Constant, offset, bytes, ElemKind::Float32,
                     filter->getName().str() + ".packed"};
}

Kernel CPULowering::lowerConv(const ConvInst &I) {
  auto xd = I.getInput()->getType()->dims();
  auto wd = I.getFilter()->getType()->dims();
  auto yd = I.getDest()->getType()->dims();
  auto st = I.getStrides(), pads = I.getPads(), dil = I.getDilations();
  int64_t group = I.getGroup(), mPerG = wd[0] / group;
  int64_t MB = std::min(kConvBlock, mPerG);
  int64_t nb = group * ((mPerG + MB - 1) / MB);
  Kernel k(I.getName());
  unsigned y = k.addBuffer(kir::bufferFor(I.getDest(), plan_));
  unsigned x = k.addBuffer(kir::bufferFor(I.getInput(), plan_));
  unsigned w = k.addBuffer(packFilter(I, MB));
  unsigned b = k.addBuffer(kir::bufferFor(I.getBias(), plan_));
  auto res = I.getResidual();
  int64_t H = xd[2], W = xd[3], OH = yd[2], OW = yd[3];
  bool pointwise = wd[2] == 1 && wd[3] == 1 && st[0] == 1 && st[1] == 1 &&
                   pads[0] == 0 && pads[1] == 0 && pads[2] == 0 && pads[3] == 0;
  if (pointwise) { // a 1x1 conv is one long row: better vectorization
    W *= H, H = 1, OW *= OH, OH = 1;
  }
  unsigned e = k.newVar();
  ExprRef ev = k.var(e);
  std::vector<CallArg> args = {bufArg(y), bufArg(x), bufArg(w), bufArg(b)};
  if (res.empty())
    args.push_back(valArg(k.constInt(0)));
  else
    args.push_back(bufArg(k.addBuffer(kir::bufferFor(res[0], plan_))));
  for (int64_t v :
       {xd[1], H, W, wd[0], wd[2], wd[3], OH, OW, st[0], st[1], pads[0],
        pads[1], dil[0], dil[1], group, MB, I.getFusedActivation()})
    args.push_back(valArg(k.constInt(v)));
  args.push_back(valArg(k.constFloat(I.getFusedAlpha())));
  args.push_back(valArg(k.constFloat(I.getFusedBeta())));
  args.push_back(valArg(k.binary(kir::BinOp::Div, ev, k.constInt(nb))));
  args.push_back(valArg(k.binary(kir::BinOp::Rem, ev, k.constInt(nb))));
  k.body() = {Kernel::loop(e, xd[0] * nb, /*parallel=*/true,
                           {Kernel::call("ember_conv2d_f32", args)})};
  return k;
}

Kernel CPULowering::lowerMatMul(const MatMulInst &I) {
  TypeRef ta = I.getLHS()->getType(), tb = I.getRHS()->getType();
  unsigned r = ta->rank();
  int64_t m = ta->dims()[r - 2], kk = ta->dims()[r - 1], n = tb->dims()[r - 1];
  int64_t batch = m * kk ? ta->size() / (m * kk) : 0;
  int64_t nrb = std::max<int64_t>(1, (m + kMatMulRows - 1) / kMatMulRows);
  Kernel k(I.getName());
  unsigned c = k.addBuffer(kir::bufferFor(I.getDest(), plan_));
  unsigned a = k.addBuffer(kir::bufferFor(I.getLHS(), plan_));
  unsigned b = k.addBuffer(kir::bufferFor(I.getRHS(), plan_));
  unsigned e = k.newVar();
  ExprRef bi = k.binary(kir::BinOp::Div, k.var(e), k.constInt(nrb));
  ExprRef row =
      k.mul(k.binary(kir::BinOp::Rem, k.var(e), k.constInt(nrb)), kMatMulRows);
  ExprRef rowEnd = k.binary(kir::BinOp::Min,
                            k.add(row, k.constInt(kMatMulRows)), k.constInt(m));
  std::vector<CallArg> args = {bufArg(c, k.mul(bi, m * n)),
                               bufArg(a, k.mul(bi, m * kk)),
                               bufArg(b, k.mul(bi, kk * n)),
                               valArg(k.constInt(m)),
                               valArg(k.constInt(n)),
                               valArg(k.constInt(kk)),
                               valArg(row),
                               valArg(rowEnd)};
  k.body() = {Kernel::loop(e, batch * nrb, /*parallel=*/true,
                           {Kernel::call("ember_matmul_f32", args)})};
  return k;
}

llvm::Expected<CPUProgram> cpu::lowerForCPU(const IRFunction &F,
                                            const MemoryPlan &plan) {
  return CPULowering(F, plan).run();
}
