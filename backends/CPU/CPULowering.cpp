//===- CPULowering.cpp - Kernels and constant image for the CPU -----------===//
//
// Everything but Conv and MatMul goes through the shared kernel lowering.
// Conv and MatMul become loops of calls into libjit; conv filters are
// re-laid out here, at compile time, into the blocked layout libjit wants.
//
//===----------------------------------------------------------------------===//
#include "CPU.h"

#include "glog/logging.h"

#include "ember/Base/Error.h"
#include "ember/Kernel/LowerToKernel.h"

#include <cstring>

using namespace ember;
using namespace ember::cpu;
using kir::CallArg;
using kir::ExprRef;
using kir::Kernel;
using kir::Stmt;

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
/// 32-pixel tiles per conv GEMM task.
constexpr int64_t kConvChunk = 8;
/// MatMul rows per parallel task.
constexpr int64_t kMatMulRows = 16;
} // namespace

bool cpu::cpuSupports(const Node &n) {
  for (const LibraryOp &l : kLibraryOps)
    if (isTableOp(n.getKind()) && l.op == toOpKind(n.getKind()))
      return l.kind == n.getType()->getElemKind();
  return kir::hasKernelLowering(n);
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
    // Room for copies of small broadcast sources (see lowerToKernels).
    for (auto &I : F.getInstrs())
      if (auto *b = llvm::dyn_cast<BroadcastInst>(I.get()))
        if (b->getInput()->getType()->sizeInBytes() <= (1u << 16))
          snapshotReserve_ +=
              alignTo64(b->getInput()->getType()->sizeInBytes());
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
            lowerConv(*c, out);
            return true;
          }
          if (auto *m = llvm::dyn_cast<MatMulInst>(&I)) {
            out.push_back(lowerMatMul(*m));
            return true;
          }
          if (auto *t = llvm::dyn_cast<TransposeInst>(&I))
            if (auto k = foldConstantTranspose(*t)) {
              out.push_back(std::move(*k));
              return true;
            }
          return false;
        },
        [&](uint64_t bytes) -> std::optional<kir::Buffer> {
          uint64_t size = alignTo64(bytes);
          if (snapshotUsed_ + size > snapshotReserve_)
            return std::nullopt;
          kir::Buffer b{Region::Activation, scratchOffset() + snapshotUsed_,
                        bytes, ElemKind::Float32, "snapshot"};
          snapshotUsed_ += size;
          return b;
        });
    if (!kernels)
      return kernels.takeError();
    if (VLOG_IS_ON(2))
      for (const Kernel &k : *kernels) {
        std::string text;
        llvm::raw_string_ostream os(text);
        k.print(os);
        VLOG(2) << os.str();
      }
    prog_.kernels = std::move(*kernels);
    prog_.constants.resize(alignTo64(prog_.constants.size()), 0);
    size_t scratchEnd = patchOffset() + alignTo64(scratchSize_);
    if (scratchEnd > alignTo64(plan_.activationSize))
      prog_.activationSize = scratchEnd;
    return std::move(prog_);
  }

private:
  static size_t alignTo64(size_t n) { return (n + 63) / 64 * 64; }
  kir::Buffer packFilter(const ConvInst &I, int64_t MB);
  void lowerConv(const ConvInst &I, std::vector<Kernel> &out);
  Kernel lowerDepthwise(const ConvInst &I);
  Kernel im2col(const ConvInst &I, int64_t img, const kir::Buffer &patches,
                int64_t numPanels);
  size_t scratchOffset() const { return alignTo64(plan_.activationSize); }
  size_t patchOffset() const { return scratchOffset() + snapshotReserve_; }
  Kernel lowerMatMul(const MatMulInst &I);
  std::optional<Kernel> foldConstantTranspose(const TransposeInst &I);

  const IRFunction &F_;
  const MemoryPlan &plan_;
  llvm::DenseMap<const Value *, unsigned> readers_;
  CPUProgram prog_;
  size_t scratchSize_ = 0; ///< Conv patch matrices, after the snapshots.
  size_t snapshotReserve_ = 0, snapshotUsed_ = 0; ///< After the arena.
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

/// The im2col kernel of image \p img: one libjit call per input channel
/// (parallel) writes that channel's rows of its group's patch matrix,
/// P_g[(c*KH + kh)*KW + kw][oh*OW + ow] = x[img][g*C/g + c][ih][iw], stored
/// in panels of 32 columns, [N/32][K][32], zero-filled past N.
Kernel CPULowering::im2col(const ConvInst &I, int64_t img,
                           const kir::Buffer &patches, int64_t numPanels) {
  auto xd = I.getInput()->getType()->dims();
  auto wd = I.getFilter()->getType()->dims();
  auto yd = I.getDest()->getType()->dims();
  auto st = I.getStrides(), pads = I.getPads(), dil = I.getDilations();
  int64_t C = xd[1], H = xd[2], W = xd[3], KH = wd[2], KW = wd[3];
  int64_t cPerG = C / I.getGroup(), K = cPerG * KH * KW;
  Kernel k((I.getName() + ".im2col").str());
  unsigned x = k.addBuffer(kir::bufferFor(I.getInput(), plan_));
  unsigned p = k.addBuffer(patches);
  unsigned c = k.newVar();
  using kir::BinOp;
  ExprRef g = k.binary(BinOp::Div, k.var(c), k.constInt(cPerG));
  ExprRef cg = k.binary(BinOp::Rem, k.var(c), k.constInt(cPerG));
  std::vector<CallArg> args = {
      bufArg(p, k.mul(g, numPanels * K * 32)),
      bufArg(x, k.add(k.constInt(img * C * H * W), k.mul(k.var(c), H * W))),
      valArg(k.mul(cg, KH * KW))};
  for (int64_t v : {K, H, W, KH, KW, yd[2], yd[3], st[0], st[1], pads[0],
                    pads[1], dil[0], dil[1], numPanels})
    args.push_back(valArg(k.constInt(v)));
  k.body() = {Kernel::loop(c, C, /*parallel=*/true,
                           {Kernel::call("ember_im2col_f32", args)})};
  return k;
}

/// A depthwise convolution: one direct libjit call per (image, channel).
Kernel CPULowering::lowerDepthwise(const ConvInst &I) {
  auto xd = I.getInput()->getType()->dims();
  auto wd = I.getFilter()->getType()->dims();
  auto yd = I.getDest()->getType()->dims();
  auto st = I.getStrides(), pads = I.getPads(), dil = I.getDilations();
  int64_t C = xd[1], HW = xd[2] * xd[3], OHOW = yd[2] * yd[3];
  Kernel k(I.getName());
  unsigned y = k.addBuffer(kir::bufferFor(I.getDest(), plan_));
  unsigned x = k.addBuffer(kir::bufferFor(I.getInput(), plan_));
  unsigned w = k.addBuffer(kir::bufferFor(I.getFilter(), plan_));
  unsigned b = k.addBuffer(kir::bufferFor(I.getBias(), plan_));
  unsigned e = k.newVar();
  ExprRef c = k.binary(kir::BinOp::Rem, k.var(e), k.constInt(C));
  std::vector<CallArg> args = {
      bufArg(y, k.mul(k.var(e), OHOW)), bufArg(x, k.mul(k.var(e), HW)),
      bufArg(w, k.mul(c, wd[2] * wd[3])), bufArg(b, c)};
  auto res = I.getResidual();
  if (res.empty())
    args.push_back(valArg(k.constInt(0)));
  else
    args.push_back(bufArg(k.addBuffer(kir::bufferFor(res[0], plan_)),
                          k.mul(k.var(e), OHOW)));
  for (int64_t v : {xd[2], xd[3], wd[2], wd[3], yd[2], yd[3], st[0], st[1],
                    pads[0], pads[1], dil[0], dil[1], I.getFusedActivation()})
    args.push_back(valArg(k.constInt(v)));
  args.push_back(valArg(k.constFloat(I.getFusedAlpha())));
  args.push_back(valArg(k.constFloat(I.getFusedBeta())));
  k.body() = {Kernel::loop(e, xd[0] * C, /*parallel=*/true,
                           {Kernel::call("ember_dwconv_f32", args)})};
  return k;
}

void CPULowering::lowerConv(const ConvInst &I, std::vector<Kernel> &out) {
  auto xd = I.getInput()->getType()->dims();
  auto wd = I.getFilter()->getType()->dims();
  auto yd = I.getDest()->getType()->dims();
  int64_t group = I.getGroup(), M = wd[0], mPerG = M / group;
  if (group == xd[1] && group == M) {
    out.push_back(lowerDepthwise(I));
    return;
  }
  int64_t MB = std::min(kConvBlock, mPerG), nbg = (mPerG + MB - 1) / MB;
  int64_t nb = group * nbg, K = xd[1] / group * wd[2] * wd[3];
  int64_t N = yd[2] * yd[3], numPanels = (N + 31) / 32;
  int64_t chunks = (numPanels + kConvChunk - 1) / kConvChunk;
  kir::Buffer packed = packFilter(I, MB);
  kir::Buffer patches{Region::Activation, patchOffset(),
                      uint64_t(group * numPanels * K * 32 * 4),
                      ElemKind::Float32, "conv.patches"};
  scratchSize_ = std::max<size_t>(scratchSize_, patches.size);
  using kir::BinOp;
  for (int64_t img = 0; img < xd[0]; ++img) {
    out.push_back(im2col(I, img, patches, numPanels));
    Kernel k(I.getName());
    unsigned y = k.addBuffer(kir::bufferFor(I.getDest(), plan_));
    unsigned w = k.addBuffer(packed);
    unsigned p = k.addBuffer(patches);
    unsigned b = k.addBuffer(kir::bufferFor(I.getBias(), plan_));
    unsigned e = k.newVar();
    ExprRef t0 =
        k.mul(k.binary(BinOp::Div, k.var(e), k.constInt(nb)), kConvChunk);
    ExprRef t1 = k.binary(BinOp::Min, k.add(t0, k.constInt(kConvChunk)),
                          k.constInt(numPanels));
    ExprRef blk = k.binary(BinOp::Rem, k.var(e), k.constInt(nb));
    ExprRef g = k.binary(BinOp::Div, blk, k.constInt(nbg));
    ExprRef bb = k.mul(k.binary(BinOp::Rem, blk, k.constInt(nbg)), MB);
    ExprRef m0 = k.add(k.mul(g, mPerG), bb);
    ExprRef rows = k.binary(BinOp::Min, k.constInt(MB),
                            k.binary(BinOp::Sub, k.constInt(mPerG), bb));
    ExprRef yOff = k.mul(k.add(k.constInt(img * M), m0), N);
    std::vector<CallArg> args = {bufArg(y, yOff), bufArg(w, k.mul(blk, K * MB)),
                                 bufArg(p, k.mul(g, numPanels * K * 32)),
                                 bufArg(b, m0)};
    auto res = I.getResidual();
    if (res.empty())
      args.push_back(valArg(k.constInt(0)));
    else
      args.push_back(bufArg(k.addBuffer(kir::bufferFor(res[0], plan_)), yOff));
    for (int64_t v : {K, N, MB})
      args.push_back(valArg(k.constInt(v)));
    args.push_back(valArg(rows));
    args.push_back(valArg(k.constInt(I.getFusedActivation())));
    args.push_back(valArg(k.constFloat(I.getFusedAlpha())));
    args.push_back(valArg(k.constFloat(I.getFusedBeta())));
    args.push_back(valArg(t0));
    args.push_back(valArg(t1));
    k.body() = {Kernel::loop(e, chunks * nb, /*parallel=*/true,
                             {Kernel::call("ember_conv_gemm_f32", args)})};
    out.push_back(std::move(k));
  }
}

/// A Transpose of constant weights (Gemm's transB, say) is done here, at
/// compile time, into the constant image; at run time only a contiguous
/// copy into the result buffer remains.
std::optional<Kernel>
CPULowering::foldConstantTranspose(const TransposeInst &I) {
  auto *w = llvm::dyn_cast<WeightVar>(getOrigin(I.getInput()));
  TypeRef in = I.getInput()->getType(), outTy = I.getDest()->getType();
  if (!w || !w->isConstant() || in->size() == 0)
    return std::nullopt;
  size_t esize = elemSize(in->getElemKind()), bytes = in->sizeInBytes();
  kir::Buffer src = kir::bufferFor(I.getInput(), plan_);
  size_t offset = alignTo64(prog_.constants.size());
  prog_.constants.resize(offset + bytes, 0);
  const uint8_t *from = prog_.constants.data() + src.offset;
  uint8_t *to = prog_.constants.data() + offset;
  auto inStrides = in->strides();
  unsigned r = outTy->rank();
  llvm::SmallVector<dim_t, kMaxRank> coord(r, 0);
  for (dim_t o = 0, e = outTy->size(); o < e; ++o) {
    dim_t i = 0;
    for (unsigned d = 0; d < r; ++d)
      i += coord[d] * inStrides[I.getShuffle()[d]];
    std::memcpy(to + o * esize, from + i * esize, esize);
    for (int d = int(r) - 1; d >= 0 && ++coord[d] == outTy->dims()[d]; --d)
      coord[d] = 0;
  }
  Kernel k(I.getName());
  unsigned dst = k.addBuffer(kir::bufferFor(I.getDest(), plan_));
  unsigned cst = k.addBuffer(kir::Buffer{Region::Constant, offset, bytes,
                                         in->getElemKind(),
                                         I.getName().str() + ".folded"});
  unsigned v = k.newVar();
  k.body() = {
      Kernel::loop(v, outTy->size(), /*parallel=*/true,
                   {Kernel::store(dst, k.var(v), k.load(cst, k.var(v)))})};
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
