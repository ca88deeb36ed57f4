//===- CPULowering.cpp - Kernels and constant image for the CPU -----------===//
//
// Conv and MatMul become loops of calls into libjit; conv filters are
// re-laid out here, at compile time, into the blocked layout libjit wants.
// Depthwise convolutions and some pools (DepthwiseLowering.cpp), Winograd
// convolutions (WinogradLowering.cpp), sums over trailing axes
// (ReduceLowering.cpp) and last-axis softmaxes (SoftmaxLowering.cpp) are
// claimed here too; everything else goes through
// the shared kernel lowering.
//
//===----------------------------------------------------------------------===//
#include "CPU.h"
#include "ConvBF16.h"
#include "ConvPlan.h"
#include "ConvTiling.h"
#include "Depthwise.h"
#include "LibCall.h"
#include "MatMulBF16.h"
#include "MatMulInt8.h"
#include "MatMulTiling.h"
#include "Winograd.h"

#include "glog/logging.h"

#include "ember/Base/Error.h"
#include "ember/Kernel/LowerToKernel.h"

#include <algorithm>
#include <cstring>
#include <unistd.h>

using namespace ember;
using namespace ember::cpu;
using kir::CallArg;
using kir::ExprRef;
using kir::Kernel;
using kir::Stmt;

namespace {
/// Builds the CPU's kernels and constant image.
class CPULowering {
public:
  CPULowering(const IRFunction &F, const MemoryPlan &plan,
              const TargetDesc &target, const CPUCodegenOptions &opts)
      : F_(F), plan_(plan), target_(target), opts_(opts) {
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

  /// Starts the constant image with the weights of F_, with address
  /// space reserved for what lowering appends (packed panels, Winograd
  /// filters of up to 64/9 of a filter's size, folded transposes), so
  /// that appending never copies the whole image while its old buffer is
  /// alive: that copy was the compile's memory peak. Reserved pages that
  /// are never written cost no memory; the reservation is capped at half
  /// the machine's memory, beyond which the image grows as usual.
  /// The weights are written straight into the reserved buffer: an image
  /// built apart and copied in held them once more beside the Module's.
  void reserveConstantImage() {
    uint64_t phys =
        uint64_t(sysconf(_SC_PHYS_PAGES)) * uint64_t(sysconf(_SC_PAGESIZE));
    uint64_t want = 9 * uint64_t(plan_.constantSize) + snapshotReserve_;
    prog_.constants.reserve(size_t(std::min(want, phys / 2)));
    prog_.constants.assign(plan_.constantSize, 0);
    copyConstants(F_, plan_, prog_.constants.data());
  }

  llvm::Expected<CPUProgram> run() {
    reserveConstantImage();
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
          if (auto k = lowerPoolPlanes(I, dwContext())) {
            out.push_back(std::move(*k));
            return true;
          }
          if (auto *p = llvm::dyn_cast<MaxPoolInst>(&I))
            if (auto k = lowerMaxPoolCV(*p, dwContext())) {
              out.push_back(std::move(*k));
              return true;
            }
          if (auto *p = llvm::dyn_cast<AvgPoolInst>(&I))
            if (auto k = lowerAvgPoolDepthwise(*p, dwContext())) {
              out.push_back(std::move(*k));
              return true;
            }
          if (auto k = lowerTrailingSum(I, plan_)) {
            out.push_back(std::move(*k));
            return true;
          }
          if (auto k = lowerSoftmaxRows(I, plan_)) {
            out.push_back(std::move(*k));
            return true;
          }
          if (auto *m = llvm::dyn_cast<MatMulInst>(&I)) {
            // fuse-matmul-epilogue leaves BFloat16 products alone.
            bool bf16 =
                m->getLHS()->getType()->getElemKind() == ElemKind::BFloat16;
            CHECK(!bf16 ||
                  (m->getEpilogue().empty() && m->getFusedActivation() == 0))
                << "BFloat16 MatMul with an epilogue";
            if (bf16)
              lowerMatMulBF16(*m,
                              {plan_, prog_.constants, target_, patchOffset(),
                               scratchSize_},
                              out);
            else
              lowerMatMul(*m, out);
            return true;
          }
          if (lowerIntProductCPU(I,
                                 {F_, plan_, prog_.constants, target_,
                                  patchOffset(), scratchSize_},
                                 out))
            return true;
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
    compactConstants(prog_);
    size_t scratchEnd = patchOffset() + alignTo64(scratchSize_);
    if (scratchEnd > alignTo64(plan_.activationSize))
      prog_.activationSize = scratchEnd;
    return std::move(prog_);
  }

private:
  static size_t alignTo64(size_t n) { return (n + 63) / 64 * 64; }
  kir::Buffer packFilter(const ConvInst &I, int64_t MB, uint64_t scratchUsed,
                         std::vector<Kernel> &out);
  void lowerConv(const ConvInst &I, std::vector<Kernel> &out);
  void lowerConvCV(const ConvInst &I, std::vector<Kernel> &out);
  Kernel im2col(const ConvInst &I, int64_t img, const kir::Buffer &patches,
                int64_t cw, int64_t numCols);
  static void appendPatchGeometry(const ConvInst &I, Kernel &k,
                                  std::vector<CallArg> &args);
  size_t scratchOffset() const { return alignTo64(plan_.activationSize); }
  size_t patchOffset() const { return scratchOffset() + snapshotReserve_; }
  kir::Buffer packMatMulRHS(const MatMulInst &I, int64_t nr,
                            std::vector<Kernel> &out);
  void lowerMatMul(const MatMulInst &I, std::vector<Kernel> &out);
  std::optional<Kernel> foldConstantTranspose(const TransposeInst &I);

  const IRFunction &F_;
  const MemoryPlan &plan_;
  llvm::DenseMap<const Value *, unsigned> readers_;
  CPUProgram prog_;
  size_t scratchSize_ = 0; ///< Conv patches, packed B, after the snapshots.
  size_t snapshotReserve_ = 0, snapshotUsed_ = 0; ///< After the arena.
  const TargetDesc &target_;      ///< The kernel target (see lowerForCPU).
  const CPUCodegenOptions &opts_; ///< Forced paths.

  DepthwiseContext dwContext() {
    return {plan_, prog_.constants, opts_.convPath, target_};
  }
};
} // namespace

/// Re-lays the filter [M][C/g][KH][KW] out as blocks of MB output channels,
/// [g][block][C/g][KH][KW][MB], zero-padding partial blocks. A constant
/// filter is packed here, into the constant image (replacing the original
/// when only this conv reads it and it fits); a filter computed at run time
/// (a graph input, say) is packed by a kernel appended to \p out, into
/// scratch after the conv's own \p scratchUsed bytes.
kir::Buffer CPULowering::packFilter(const ConvInst &I, int64_t MB,
                                    uint64_t scratchUsed,
                                    std::vector<Kernel> &out) {
  Value *filter = I.getFilter();
  auto wd = filter->getType()->dims();
  int64_t M = wd[0], cPerG = wd[1], KH = wd[2], KW = wd[3];
  int64_t group = I.getGroup(), mPerG = M / group;
  int64_t nbg = (mPerG + MB - 1) / MB, K = cPerG * KH * KW;
  if (!hasConstantFilter(I)) {
    uint64_t at = alignTo64(scratchUsed), bytes = group * nbg * K * MB * 4;
    kir::Buffer packed{Region::Activation, patchOffset() + at, bytes,
                       ElemKind::Float32, "conv.filter.packed"};
    scratchSize_ = std::max<size_t>(scratchSize_, at + bytes);
    using kir::BinOp;
    Kernel k((I.getName() + ".pack").str());
    unsigned d = k.addBuffer(packed);
    unsigned src = k.addBuffer(kir::bufferFor(filter, plan_));
    // e = ((g * nbg + blk) * K + k) * MB + lane.
    unsigned e = k.newVar();
    ExprRef lane = k.rem(k.var(e), MB), kk = k.rem(k.div(k.var(e), MB), K);
    ExprRef gb = k.div(k.var(e), MB * K);
    ExprRef mg = k.add(k.mul(k.rem(gb, nbg), MB), lane); // channel in group
    ExprRef real = k.binary(BinOp::Lt, mg, k.constInt(mPerG));
    ExprRef m = k.add(k.mul(k.div(gb, nbg), mPerG),
                      k.binary(BinOp::Min, mg, k.constInt(mPerG - 1)));
    ExprRef v =
        k.select(real, k.load(src, k.add(k.mul(m, K), kk)), k.constFloat(0));
    k.body() = {Kernel::loop(e, group * nbg * K * MB, /*parallel=*/true,
                             {Kernel::store(d, k.var(e), v)})};
    out.push_back(std::move(k));
    return packed;
  }
  std::vector<float> packed(size_t(group * nbg * K * MB), 0.f);
  kir::Buffer src = kir::bufferFor(filter, plan_);
  const float *w =
      reinterpret_cast<const float *>(prog_.constants.data() + src.offset);
  for (int64_t m = 0; m < M; ++m) {
    int64_t g = m / mPerG, blk = g * nbg + (m % mPerG) / MB;
    int64_t lane = m % mPerG % MB;
    for (int64_t k = 0; k < K; ++k)
      packed[(blk * K + k) * MB + lane] = w[m * K + k];
  }
  size_t bytes = packed.size() * sizeof(float);
  std::string name = filter->getName().str() + ".packed";
  if (readers_.lookup(getOrigin(filter)) != 1 || bytes > src.size)
    return appendConstant(prog_.constants, packed.data(), bytes, name);
  std::memcpy(prog_.constants.data() + src.offset, packed.data(), bytes);
  return kir::Buffer{Region::Constant, src.offset, bytes, ElemKind::Float32,
                     name};
}

/// The im2col kernel of image \p img: one libjit call per input channel
/// (parallel) writes that channel's rows of its group's patch matrix,
/// P_g[(c*KH + kh)*KW + kw][oh*OW + ow] = x[img][g*C/g + c][ih][iw],
/// in chunks of \p cw columns, [numCols / cw][K][cw], zero-filled from N to
/// \p numCols (a multiple of cw).
Kernel CPULowering::im2col(const ConvInst &I, int64_t img,
                           const kir::Buffer &patches, int64_t cw,
                           int64_t numCols) {
  auto xd = I.getInput()->getType()->dims();
  auto wd = I.getFilter()->getType()->dims();
  int64_t C = xd[1], H = xd[2], W = xd[3], KH = wd[2], KW = wd[3];
  int64_t cPerG = C / I.getGroup(), K = cPerG * KH * KW;
  Kernel k((I.getName() + ".im2col").str());
  unsigned x = k.addBuffer(kir::bufferFor(I.getInput(), plan_));
  unsigned p = k.addBuffer(patches);
  unsigned c = k.newVar();
  using kir::BinOp;
  ExprRef g = k.div(k.var(c), cPerG);
  ExprRef cg = k.rem(k.var(c), cPerG);
  int64_t chunks = numCols / cw;
  std::vector<CallArg> args = {
      bufArg(p, k.mul(g, chunks * K * cw)),
      bufArg(x, k.add(k.constInt(img * C * H * W), k.mul(k.var(c), H * W))),
      valArg(k.mul(cg, KH * KW))};
  for (int64_t v : {cw, K * cw, numCols})
    args.push_back(valArg(k.constInt(v)));
  appendPatchGeometry(I, k, args);
  k.body() = {Kernel::loop(c, C, /*parallel=*/true,
                           {EMBER_LIBJIT_CALL(k, ember_im2col_f32, args)})};
  return k;
}

/// libjit's im2col arguments after the destination ones: H, W, KH, KW, OH,
/// OW, strides, leading pads and dilations of \p I.
void CPULowering::appendPatchGeometry(const ConvInst &I, Kernel &k,
                                      std::vector<CallArg> &args) {
  auto xd = I.getInput()->getType()->dims();
  auto wd = I.getFilter()->getType()->dims();
  auto yd = I.getDest()->getType()->dims();
  auto st = I.getStrides(), pads = I.getPads(), dil = I.getDilations();
  for (int64_t v : {xd[2], xd[3], wd[2], wd[3], yd[2], yd[3], st[0], st[1],
                    pads[0], pads[1], dil[0], dil[1]})
    args.push_back(valArg(k.constInt(v)));
}

/// A non-depthwise convolution through the channel-vector GEMM (libjit's
/// ConvGemmCV.inc): the filter packed in blocks of kConvCVBlock channels,
/// the output read in tiles of kConvCVTile pixels straight from the
/// activation (or its zero-padded copy), without im2col. Per image and
/// group, tasks are (block, chunk of tiles); consecutive tasks share a
/// block's filter, and a chunk's tiles fit kConvCVTaskBytes.
void CPULowering::lowerConvCV(const ConvInst &I, std::vector<Kernel> &out) {
  auto xd = I.getInput()->getType()->dims();
  auto wd = I.getFilter()->getType()->dims();
  auto yd = I.getDest()->getType()->dims();
  auto st = I.getStrides(), pads = I.getPads(), dil = I.getDilations();
  int64_t group = I.getGroup(), M = wd[0], mPerG = M / group;
  int64_t MB = kConvCVBlock, nbg = (mPerG + MB - 1) / MB;
  int64_t C = xd[1], H = xd[2], W = xd[3], KH = wd[2], KW = wd[3];
  int64_t cPerG = C / group, K = cPerG * KH * KW;
  int64_t OH = yd[2], OW = yd[3], N = OH * OW;
  // Where tile pixels are read (see ConvGemmCV.inc): a pointwise
  // convolution reads its activation in place as one row of N pixels; any
  // other reads it along output rows at the stride -- a strided 1x1 one in
  // place (patch row k = input channel k), the rest through an offset table
  // of k = (c, kh, kw), from the activation itself when unpadded, else from
  // a zero-padded copy of each image (Hp x Wp planes).
  bool pointwise = isPointwise(I), strided = !pointwise && isStrided1x1(I);
  bool table = !pointwise && !strided;
  int64_t Hp = (OH - 1) * st[0] + (KH - 1) * dil[0] + 1;
  int64_t Wp = (OW - 1) * st[1] + (KW - 1) * dil[1] + 1;
  bool padded = table && std::any_of(pads.begin(), pads.end(),
                                     [](auto p) { return p != 0; });
  int64_t PS = padded ? Hp * Wp : H * W, RS = padded ? Wp : W;
  int64_t rowPixels = pointwise ? N : OW, rows = pointwise ? 1 : OH;
  // A stride-1 convolution whose rows fill tiles poorly (7x7 planes: half
  // of each 14-pixel tile) walks the plane flat instead: virtual pixel
  // oh * RS + ow reads every tap at a fixed offset, so tiles run across
  // rows and only the RS - OW pixels between rows are wasted.
  int64_t flatPixels = (OH - 1) * RS + OW, vw = 0;
  bool flatOk = table && st[0] == 1 && st[1] == 1;
  int64_t NT = kConvCVTile;
  double rowUse = tileUse(OW, NT);
  double flatUse = tileUse(flatPixels, NT) * double(N) / double(flatPixels);
  if (flatOk && flatUse > 1.05 * rowUse) {
    vw = RS;
    // The flat walk computes the RS - OW pixels between rows and drops them;
    // narrower tiles that fit the rows may waste less (7x7 planes: 70% of a
    // flat walk's pixels are real). A row's last tile computes only its
    // real pixels, so without a flat walk the widest tiles stay, as they
    // do the most multiply-adds per filter load. The margins 1.05 and 1.02
    // and kConvCVWidths' speeds were chosen by measurement, see
    // docs/PerformanceHistory.md#channel-vector-lowering.
    double best = flatUse;
    for (const auto &[nt, speed] : kConvCVWidths)
      if (tileUse(OW, nt) * speed > best * 1.02) {
        best = tileUse(OW, nt) * speed;
        NT = nt;
        vw = 0;
      }
  }
  if (vw) {
    rowPixels = flatPixels;
    rows = 1;
  }
  // The walk is chosen by 14-pixel tiles; 16-register targets compute those
  // strip by strip, so the widest tile there is three whole strips.
  if (!useWideKernels(target_) && NT == kConvCVTile)
    NT = kConvCVNarrowTile;
  int64_t tiles = rows * ((rowPixels + NT - 1) / NT);
  // Past kConvCVKC, libjit walks K in slices over all tiles of a call, so
  // a call may hold up to kConvCVMaxTiles of them whatever K is.
  int64_t perTask =
      K > kConvCVKC
          ? std::min(tiles, kConvCVMaxTiles)
          : std::clamp<int64_t>(
                kConvCVTaskBytes / std::max<int64_t>(1, K * NT * 4), 1, tiles);
  int64_t chunks = (tiles + perTask - 1) / perTask;
  // Tasks go pixel chunk by pixel chunk (all blocks of a chunk in a row)
  // where the filter is smaller than the input: a thread's share of a
  // team's tasks then reads part of the input and all of the (small)
  // filter, instead of all of the input; weight-heavy layers (7x7 planes)
  // keep block-major tasks, each thread streaming part of the filter
  // (docs/PerformanceHistory.md#channel-vector-lowering).
  bool pixelMajor = M * K <= C * H * W;
  if (pixelMajor)
    chunks = std::max(chunks, std::min<int64_t>(tiles, 2));
  // At least kConvCVMinTasks tasks where there are tiles for them, so that
  // a small plane with few channels still spreads over the threads.
  if (group * nbg * chunks < kConvCVMinTasks)
    chunks =
        std::min(tiles, (kConvCVMinTasks + group * nbg - 1) / (group * nbg));
  // An even number of tasks where there are few, so that two threads get
  // equal shares: MobileNetV2's 7x7 projections 960 -> 160 made 5 tasks
  // of 32 channels, three on one thread; as 10 tasks of half a block's
  // tiles each, both threads do five.
  if (int64_t tasks = group * nbg * chunks;
      tasks % 2 && tasks < kConvCVEvenTasks && chunks < tiles)
    chunks = std::min(tiles, chunks * 2);
  // A pointwise or flat walk reads consecutive pixels along one row.
  bool oneRow = pointwise || vw;
  int64_t ldp = PS, rowStride = oneRow ? 0 : st[0] * RS;
  int64_t tileStride = oneRow ? NT : NT * st[1];
  int64_t ps = oneRow ? 1 : st[1];
  uint64_t padBytes = padded ? uint64_t(C * PS * 4) : 0;
  kir::Buffer packed = packFilter(I, MB, padBytes, out);
  kir::Buffer offsets;
  if (table) {
    std::vector<int32_t> koff;
    koff.reserve(K);
    for (int64_t c = 0; c < cPerG; ++c)
      for (int64_t kh = 0; kh < KH; ++kh)
        for (int64_t kw = 0; kw < KW; ++kw)
          koff.push_back(int32_t(c * PS + kh * dil[0] * RS + kw * dil[1]));
    offsets = appendConstant(prog_.constants, koff.data(), K * 4,
                             I.getName().str() + ".koff", ElemKind::Int32);
  }
  kir::Buffer xpad{Region::Activation, patchOffset(), padBytes,
                   ElemKind::Float32, "conv.padded"};
  scratchSize_ = std::max<size_t>(scratchSize_, xpad.size);
  kir::Buffer input = kir::bufferFor(I.getInput(), plan_);
  using kir::BinOp;
  for (int64_t img = 0; img < xd[0]; ++img) {
    if (padded) {
      Kernel k((I.getName() + ".pad").str());
      unsigned d = k.addBuffer(xpad), x = k.addBuffer(input);
      unsigned c = k.newVar();
      std::vector<CallArg> args = {bufArg(d, k.mul(k.var(c), PS)),
                                   bufArg(x, k.add(k.constInt(img * C * H * W),
                                                   k.mul(k.var(c), H * W)))};
      for (int64_t v : {H, W, Hp, Wp, pads[0], pads[1]})
        args.push_back(valArg(k.constInt(v)));
      k.body() = {
          Kernel::loop(c, C, /*parallel=*/true,
                       {EMBER_LIBJIT_CALL(k, ember_pad_plane_f32, args)})};
      out.push_back(std::move(k));
    }
    Kernel k(I.getName());
    unsigned y = k.addBuffer(kir::bufferFor(I.getDest(), plan_));
    unsigned w = k.addBuffer(packed);
    unsigned p = k.addBuffer(padded ? xpad : input);
    unsigned b = k.addBuffer(kir::bufferFor(I.getBias(), plan_));
    unsigned e = k.newVar();
    ExprRef c, b0;
    if (pixelMajor) {
      // e = (g * chunks + c) * nbg + blk.
      b0 = k.rem(k.var(e), nbg);
      c = k.rem(k.div(k.var(e), nbg), chunks);
    } else {
      // e = (g * nbg + blk) * chunks + c.
      c = k.rem(k.var(e), chunks);
      b0 = k.rem(k.div(k.var(e), chunks), nbg);
    }
    ExprRef g = k.div(k.var(e), chunks * nbg);
    ExprRef t0 = k.div(k.mul(c, tiles), chunks);
    ExprRef t1 = k.div(k.add(k.mul(c, tiles), k.constInt(tiles)), chunks);
    ExprRef yOff = k.mul(k.add(k.constInt(img * M), k.mul(g, mPerG)), N);
    ExprRef pOff = k.mul(g, cPerG * PS);
    if (!padded)
      pOff = k.add(pOff, k.constInt(img * C * H * W));
    std::vector<CallArg> args = {
        bufArg(y, yOff), bufArg(w, k.mul(g, nbg * K * MB)), bufArg(p, pOff)};
    if (table)
      args.push_back(bufArg(k.addBuffer(offsets)));
    else
      args.push_back(valArg(k.constInt(0)));
    args.push_back(bufArg(b, k.mul(g, mPerG)));
    args.push_back(convResidualArg(k, I, plan_, yOff));
    for (int64_t v : {K, N, ldp, rowPixels, rowStride, tileStride, ps, mPerG,
                      vw, OW, NT, int64_t(I.getFusedActivation())})
      args.push_back(valArg(k.constInt(v)));
    args.push_back(valArg(k.constFloat(I.getFusedAlpha())));
    args.push_back(valArg(k.constFloat(I.getFusedBeta())));
    for (ExprRef v : {b0, k.add(b0, k.constInt(1)), t0, t1})
      args.push_back(valArg(v));
    k.body() = {
        Kernel::loop(e, group * nbg * chunks, /*parallel=*/true,
                     {EMBER_LIBJIT_CALL(k, ember_conv_gemm_cv_f32, args)})};
    out.push_back(std::move(k));
  }
}

void CPULowering::lowerConv(const ConvInst &I, std::vector<Kernel> &out) {
  auto xd = I.getInput()->getType()->dims();
  auto wd = I.getFilter()->getType()->dims();
  auto yd = I.getDest()->getType()->dims();
  int64_t group = I.getGroup(), M = wd[0], mPerG = M / group;
  ConvPlan plan = planConv(I, target_, opts_);
  switch (plan.path) {
  case ConvPathKind::Depthwise:
    out.push_back(lowerDepthwiseConv(I, dwContext()));
    return;
  case ConvPathKind::Winograd:
    lowerWinogradConv(I, plan.winogradTile,
                      {plan_, prog_.constants, patchOffset(), scratchSize_},
                      out);
    return;
  case ConvPathKind::ChannelVectors:
    lowerConvCV(I, out);
    return;
  case ConvPathKind::PixelRows:
    lowerConvRows(I, plan.rows, plan_, out);
    return;
  case ConvPathKind::BF16Gemm:
    lowerConvBF16(
        I, {plan_, prog_.constants, target_, patchOffset(), scratchSize_}, out);
    return;
  case ConvPathKind::PixelPanels:
    break;
  }
  int64_t MB = kConvBlock, nbg = (mPerG + MB - 1) / MB;
  int64_t K = xd[1] / group * wd[2] * wd[3];
  int64_t N = yd[2] * yd[3], numPanels = (N + kConvNR - 1) / kConvNR;
  // An even number of equal chunks, so that two threads split them evenly
  // (ResNet-50's 1x1 256 -> 64 on 56x56: 13 chunks of 8 panels left one
  // thread 7 of them; 14 chunks of 7 panels split 7 + 7).
  int64_t chunks = (numPanels + kConvChunk - 1) / kConvChunk;
  if (chunks > 1 && chunks % 2 && chunks < numPanels)
    ++chunks;
  // Calls per group along M, each covering about kConvBlocksPerCall blocks,
  // but fewer blocks when that leaves fewer than kConvMinTasks tasks (a
  // 14x14 pointwise conv to 64 channels was one task: one thread did it all).
  int64_t nbc = (nbg + kConvBlocksPerCall - 1) / kConvBlocksPerCall;
  nbc = std::min(nbg, std::max(nbc, (kConvMinTasks + chunks * group - 1) /
                                        (chunks * group)));
  // An even number of tasks, so that two threads split them evenly
  // (ResNet-50's 1x1 256 -> 1024 on 14x14 made 11 tasks of one chunk; one
  // thread did 6 of them).
  if (chunks * group * nbc % 2 && nbc < nbg)
    ++nbc;
  bool direct = isPointwise(I);
  // When one task covers all of a chunk's filter blocks, it writes the
  // chunk's panels itself, [K][maxPanels * 64] in a slot of its own, just
  // before it reads them from cache (MobileNetV2's 3 -> 32 stem on 224x224:
  // a separate im2col wrote 1.35 MB that the GEMM read back, split over
  // only 3 input channels).
  bool own = !direct && nbc == 1;
  int64_t maxPanels = (numPanels + chunks - 1) / chunks;
  // The patch matrix: the activation itself for a pointwise convolution
  // (one chunk of panels; only its last partial panel is copied), the
  // tasks' own panels, or else im2col's copy in chunks of kPatchChunk
  // panels.
  int64_t ldp = direct ? N : (own ? maxPanels : kPatchChunk) * kConvNR;
  int64_t panelsPerChunk = direct || own ? numPanels : kPatchChunk;
  int64_t chunkStride = direct || own ? 0 : K * ldp;
  int64_t groupStride =
      direct ? K * N : (numPanels + kPatchChunk - 1) / kPatchChunk * K * ldp;
  int64_t slot = K * ldp;
  uint64_t scratch = direct ? 0
                     : own  ? chunks * group * slot * 4
                            : groupStride * group * 4;
  kir::Buffer packed = packFilter(I, MB, scratch, out);
  kir::Buffer patches{Region::Activation, patchOffset(), scratch,
                      ElemKind::Float32, "conv.patches"};
  scratchSize_ = std::max<size_t>(scratchSize_, patches.size);
  using kir::BinOp;
  for (int64_t img = 0; img < xd[0]; ++img) {
    if (!direct && !own)
      out.push_back(
          im2col(I, img, patches, kPatchChunk * kConvNR, groupStride / K));
    Kernel k(I.getName());
    unsigned y = k.addBuffer(kir::bufferFor(I.getDest(), plan_));
    unsigned w = k.addBuffer(packed);
    unsigned p =
        k.addBuffer(direct ? kir::bufferFor(I.getInput(), plan_) : patches);
    unsigned b = k.addBuffer(kir::bufferFor(I.getBias(), plan_));
    // e = (chunk * group + g) * nbc + bc: consecutive tasks share a chunk
    // of panels.
    unsigned e = k.newVar();
    ExprRef bc = k.rem(k.var(e), nbc);
    ExprRef g = k.rem(k.div(k.var(e), nbc), group);
    ExprRef ch = k.div(k.var(e), nbc * group);
    ExprRef t0 = k.div(k.mul(ch, numPanels), chunks);
    ExprRef t1 =
        k.div(k.add(k.mul(ch, numPanels), k.constInt(numPanels)), chunks);
    ExprRef b0 = k.div(k.mul(bc, nbg), nbc);
    ExprRef b1 = k.div(k.add(k.mul(bc, nbg), k.constInt(nbg)), nbc);
    ExprRef yOff = k.mul(k.add(k.constInt(img * M), k.mul(g, mPerG)), N);
    ExprRef pOff = k.mul(g, groupStride);
    if (direct)
      pOff = k.add(pOff, k.constInt(img * xd[1] * N));
    // An own slot (e < chunks * group): panel t at slot + (t - t0) * 64,
    // which stays inside the buffer since t0 <= ch * maxPanels <= e * slot.
    ExprRef slotOff = k.mul(k.var(e), slot);
    if (own)
      pOff = k.add(slotOff, k.mul(t0, -kConvNR));
    std::vector<CallArg> args = {
        bufArg(y, yOff), bufArg(w, k.mul(g, nbg * K * MB)), bufArg(p, pOff)};
    args.push_back(bufArg(b, k.mul(g, mPerG)));
    args.push_back(convResidualArg(k, I, plan_, yOff));
    for (int64_t v : {K, N, ldp, panelsPerChunk, chunkStride, mPerG,
                      I.getFusedActivation()})
      args.push_back(valArg(k.constInt(v)));
    args.push_back(valArg(k.constFloat(I.getFusedAlpha())));
    args.push_back(valArg(k.constFloat(I.getFusedBeta())));
    for (ExprRef v : {b0, b1, t0, t1})
      args.push_back(valArg(v));
    // No prefetch of the next block's filter: each block is reused over a
    // chunk of panels (with the prefetch it measured slower, see
    // docs/PerformanceHistory.md#panel-lowering).
    args.push_back(valArg(k.constInt(0)));
    std::vector<kir::Stmt> body;
    if (own) {
      int64_t cPerG = xd[1] / group, plane = xd[2] * xd[3];
      std::vector<CallArg> pa = {
          bufArg(p, slotOff),
          valArg(k.constInt(ldp)),
          bufArg(
              k.addBuffer(kir::bufferFor(I.getInput(), plan_)),
              k.add(k.constInt(img * xd[1] * plane), k.mul(g, cPerG * plane))),
          valArg(k.constInt(cPerG)),
          valArg(k.mul(t0, kConvNR)),
          valArg(k.mul(t1, kConvNR))};
      appendPatchGeometry(I, k, pa);
      body.push_back(EMBER_LIBJIT_CALL(k, ember_im2col_cols_f32, pa));
    }
    body.push_back(EMBER_LIBJIT_CALL(k, ember_conv_gemm_f32, args));
    k.body() = {Kernel::loop(e, chunks * group * nbc, /*parallel=*/true,
                             std::move(body))};
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

/// Packs B [batch][K][n] (a transposed one: [batch][n][K]) into panels
/// [batch][n / NR][K][NR] (NR = \p nr), zero-padded: each panel is one
/// contiguous stream. A constant B is packed here, into the constant image;
/// a transposed B computed at run time is packed by a kernel appended to
/// \p out, into scratch, so the product reads it without a transpose copy.
kir::Buffer CPULowering::packMatMulRHS(const MatMulInst &I, int64_t nr,
                                       std::vector<Kernel> &out) {
  TypeRef tb = I.getRHS()->getType();
  bool transB = I.getTransB();
  int64_t K = I.getLHS()->getType()->dims().back();
  int64_t n = I.getDest()->getType()->dims().back();
  int64_t batch = K * n != 0 ? tb->size() / (K * n) : 0;
  int64_t np = (n + nr - 1) / nr;
  int64_t kStride = transB ? 1 : n, jStride = transB ? K : 1;
  kir::Buffer src = kir::bufferFor(I.getRHS(), plan_);
  auto *w = llvm::dyn_cast<WeightVar>(getOrigin(I.getRHS()));
  if (!w || !w->isConstant()) {
    uint64_t bytes = batch * np * K * nr * 4;
    kir::Buffer packed{Region::Activation, patchOffset(), bytes,
                       ElemKind::Float32, "matmul.rhs.packed"};
    scratchSize_ = std::max<size_t>(scratchSize_, bytes);
    Kernel k((I.getName() + ".pack").str());
    unsigned d = k.addBuffer(packed), b = k.addBuffer(src);
    // e = ((bi * np + panel) * K + kk) * NR + lane.
    unsigned e = k.newVar();
    ExprRef lane = k.rem(k.var(e), nr);
    ExprRef kk = k.rem(k.div(k.var(e), nr), K);
    ExprRef panel = k.div(k.var(e), nr * K);
    ExprRef j = k.add(k.mul(k.rem(panel, np), nr), lane);
    ExprRef jc = k.binary(kir::BinOp::Min, j, k.constInt(n - 1));
    ExprRef at = k.add(k.mul(k.div(panel, np), K * n),
                       k.add(k.mul(kk, kStride), k.mul(jc, jStride)));
    ExprRef v = k.select(k.binary(kir::BinOp::Lt, j, k.constInt(n)),
                         k.load(b, at), k.constFloat(0));
    k.body() = {Kernel::loop(e, batch * np * K * nr, /*parallel=*/true,
                             {Kernel::store(d, k.var(e), v)})};
    out.push_back(std::move(k));
    return packed;
  }
  std::vector<float> packed(size_t(batch * np * K * nr), 0.f);
  const float *b =
      reinterpret_cast<const float *>(prog_.constants.data() + src.offset);
  for (int64_t bi = 0; bi < batch; ++bi)
    for (int64_t k = 0; k < K; ++k)
      for (int64_t j = 0; j < n; ++j)
        packed[((bi * np + j / nr) * K + k) * nr + j % nr] =
            b[bi * K * n + k * kStride + j * jStride];
  return appendConstant(prog_.constants, packed.data(),
                        packed.size() * sizeof(float),
                        I.getRHS()->getName().str() + ".packed");
}

/// C = A * B per batch, in the tasks of splitMatMul with the tiles of
/// chooseMatMulTiling (MatMulTiling.h). A constant or transposed B is packed
/// (packMatMulRHS), A where the rule says (matMulPacksLHS); a broadcast
/// batch dim of either operand is read with batch stride 0.
void CPULowering::lowerMatMul(const MatMulInst &I, std::vector<Kernel> &out) {
  TypeRef ta = I.getLHS()->getType(), tc = I.getDest()->getType();
  unsigned r = ta->rank();
  int64_t m = ta->dims()[r - 2], kk = ta->dims()[r - 1], n = tc->dims()[r - 1];
  int64_t batch = m * n != 0 ? tc->size() / (m * n) : 0;
  bool wide = useWideKernels(target_);
  MatMulTarget target = matMulTarget(target_);
  MatMulTiling tiling = chooseMatMulTiling(target);
  // libjit instantiates the rule's tile of each target kind (LibjitABI.h's
  // kMatMulWide* / kMatMulNarrow*); a new target kind needs its own.
  CHECK(
      tiling.rows == (wide ? libjit::kMatMulWideMR : libjit::kMatMulNarrowMR) &&
      tiling.panelCols ==
          target.lanes * (wide ? libjit::kMatMulWideV : libjit::kMatMulNarrowV))
      << "no libjit MatMul kernel for this tile";
  int64_t nr = tiling.panelCols;
  int64_t np = (n + nr - 1) / nr;
  auto *w = llvm::dyn_cast<WeightVar>(getOrigin(I.getRHS()));
  bool packed = ((w && w->isConstant()) || I.getTransB()) && kk * n > 0;
  int64_t kc = matMulKBlock(kk, tiling), mr = tiling.rows;
  MatMulTasks tasks = splitMatMul(m, np, tiling, target);
  int64_t rows = tasks.rowsPerTask, panels = tasks.panelsPerTask;
  int64_t rowTasks = tasks.rowTasks, colTasks = tasks.colTasks;
  kir::Buffer bBuf =
      packed ? packMatMulRHS(I, nr, out) : kir::bufferFor(I.getRHS(), plan_);
  // A packed A goes to scratch after a B packed at run time.
  bool packA = opts_.forcePackMatMulLHS ||
               matMulPacksLHS(std::min(m, rows), kk, np, tiling, target);
  size_t aAt = packed && bBuf.region == Region::Activation ? bBuf.size : 0;
  kir::Buffer aBuf =
      packA ? packMatMulLHS(I, plan_, mr, patchOffset() + alignTo64(aAt),
                            scratchSize_, out)
            : kir::bufferFor(I.getLHS(), plan_);
  Kernel k(I.getName());
  unsigned c = k.addBuffer(kir::bufferFor(I.getDest(), plan_));
  unsigned a = k.addBuffer(aBuf), b = k.addBuffer(bBuf);
  unsigned e = k.newVar();
  using kir::BinOp;
  auto min = [&](ExprRef x, int64_t v) {
    return k.binary(BinOp::Min, x, k.constInt(v));
  };
  // e = (bi * rowTasks + rt) * colTasks + ct.
  ExprRef bi = k.div(k.var(e), rowTasks * colTasks);
  ExprRef i0 = k.mul(k.rem(k.div(k.var(e), colTasks), rowTasks), rows);
  ExprRef t0 = k.mul(k.rem(k.var(e), colTasks), panels);
  auto outBatch = tc->dims().drop_back(2);
  auto offset = [&](Value *v, int64_t matrix) {
    return kir::matMulBatchOffset(k, bi, outBatch,
                                  v->getType()->dims().drop_back(2), matrix);
  };
  std::vector<CallArg> args = {
      bufArg(c, k.mul(bi, m * n)),
      bufArg(a, offset(I.getLHS(),
                       packA ? matMulPackedLHSFloats(m, kk, mr) : m * kk)),
      bufArg(b, offset(I.getRHS(), packed ? np * kk * nr : kk * n))};
  appendMatMulEpilogue(k, I, plan_, k.mul(bi, m * n), args);
  bool prefetch = packed && prefetchMatMulRHS(batch * kk * n, target);
  for (int64_t v :
       {n, kk, packed ? nr : n, packed ? kk * nr : nr, int64_t(packed),
        int64_t(packA), int64_t(prefetch), kc, I.getFusedActivation()})
    args.push_back(valArg(k.constInt(v)));
  args.push_back(valArg(k.constFloat(I.getFusedAlpha())));
  args.push_back(valArg(k.constFloat(I.getFusedBeta())));
  for (ExprRef v : {i0, min(k.add(i0, k.constInt(rows)), m), t0,
                    min(k.add(t0, k.constInt(panels)), np)})
    args.push_back(valArg(v));
  k.body() = {Kernel::loop(e, batch * rowTasks * colTasks, /*parallel=*/true,
                           {EMBER_LIBJIT_CALL(k, ember_matmul_f32, args)})};
  out.push_back(std::move(k));
}

llvm::Expected<CPUProgram> cpu::lowerForCPU(const IRFunction &F,
                                            const MemoryPlan &plan,
                                            const TargetDesc &T,
                                            const CPUCodegenOptions &opts) {
  return CPULowering(F, plan, T, opts).run();
}
