//===- CPULowering.cpp - Kernels and constant image for the CPU -----------===//
//
// The dispatch of planned IR to the CPU's kernels, and MatMul as libjit
// calls. Convolutions are lowered by the plan planConv picks
// (ConvGemmLowering.cpp, ConvCVLowering.cpp, ConvRowsLowering.cpp,
// WinogradLowering.cpp, DepthwiseLowering.cpp, ConvBF16.cpp); depthwise
// pools (DepthwiseLowering.cpp), sums over trailing axes
// (ReduceLowering.cpp) and last-axis softmaxes (SoftmaxLowering.cpp) are
// claimed here too; everything else goes through
// the shared kernel lowering.
//
//===----------------------------------------------------------------------===//
#include "CPULowering.h"
#include "ConvBF16.h"
#include "LibCall.h"
#include "MatMulBF16.h"
#include "MatMulInt8.h"
#include "MatMulTiling.h"

#include "glog/logging.h"

#include "ember/Base/Error.h"
#include "ember/Kernel/ConstantImage.h"
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

/// The instructions that read each origin buffer (views not counted).
static llvm::DenseMap<const Value *, unsigned>
countReaders(const IRFunction &F) {
  llvm::DenseMap<const Value *, unsigned> readers;
  for (auto &I : F.getInstrs())
    for (const Operand &op : I->getOperands())
      if (op.role != OperandRole::Out && !llvm::isa<TensorViewInst>(*I))
        ++readers[getOrigin(op.value)];
  return readers;
}

CPULowering::CPULowering(const IRFunction &F, const MemoryPlan &plan,
                         const TargetDesc &target,
                         const CPUCodegenOptions &opts)
    : F_(F), plan_(plan), readers_(countReaders(F)), narrow_(F, readers_),
      target_(target), opts_(opts), folds_(F, plan), bf16_(F, target, opts) {
  // Room for copies of small broadcast sources (see lowerToKernels).
  for (auto &I : F.getInstrs())
    if (auto *b = llvm::dyn_cast<BroadcastInst>(I.get()))
      if (b->getInput()->getType()->sizeInBytes() <= (1u << 16))
        snapshotReserve_ += alignTo64(b->getInput()->getType()->sizeInBytes());
  loopPartner_ = kir::loopPartners(F);
}

/// Starts the constant image with the weights of F_, with address
/// space reserved for what lowering appends (packed panels, Winograd
/// filters of up to 64/9 of a filter's size, folded transposes), so
/// that appending never copies the whole image while its old buffer is
/// alive: that copy was the compile's memory peak. Reserved pages that
/// are never written cost no memory; the reservation is capped at half
/// the machine's memory, beyond which the image grows as usual.
/// The weights go in by fillConstantImage, each payload handed to
/// \p weightCopied once written.
void CPULowering::startConstantImage(const WeightCopied &weightCopied) {
  uint64_t phys =
      uint64_t(sysconf(_SC_PHYS_PAGES)) * uint64_t(sysconf(_SC_PAGESIZE));
  uint64_t want = 9 * uint64_t(plan_.constantSize) + snapshotReserve_;
  prog_.constants.reserve(size_t(std::min(want, phys / 2)));
  fillConstantImage(F_, plan_, prog_.constants, weightCopied);
}

/// The CPU's own lowerings of \p I (convolutions, products, pools, ...),
/// appended to \p out; false leaves \p I to the shared kernel lowering.
bool CPULowering::lowerOwn(const Instruction &I, std::vector<Kernel> &out) {
  if (kir::isLoopInst(I)) {
    const Instruction *partner = loopPartner_.lookup(&I);
    kir::Buffer flag{Region::Activation, loopFlagOffset(), 1, ElemKind::Bool,
                     "loop.flag"};
    out.push_back(kir::lowerLoopOp(I, partner ? *partner : I, plan_, flag));
    scratchSize_ = std::max<size_t>(scratchSize_, 1);
    return true;
  }
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
  if (auto k = lowerTrailingReduce(I, plan_)) {
    out.push_back(std::move(*k));
    return true;
  }
  if (auto k = lowerResizePlanes(I, plan_, prog_.constants)) {
    out.push_back(std::move(*k));
    return true;
  }
  if (auto k = lowerSoftmaxRows(I, plan_)) {
    out.push_back(std::move(*k));
    return true;
  }
  if (auto k = lowerTopKRows(I, plan_)) {
    out.push_back(std::move(*k));
    return true;
  }
  if (auto k = lowerScaledSoftmaxRows(I, plan_)) {
    out.push_back(std::move(*k));
    return true;
  }
  if (auto k = lowerAttentionBlocks(I, plan_, target_)) {
    out.push_back(std::move(*k));
    return true;
  }
  if (auto *m = llvm::dyn_cast<MatMulInst>(&I)) {
    if (m->getLHS()->getType()->getElemKind() == ElemKind::BFloat16)
      lowerMatMulBF16(
          *m, {plan_, prog_.constants, target_, patchOffset(), scratchSize_},
          out);
    else
      lowerMatMul(*m, out);
    return true;
  }
  if (lowerIntProductCPU(
          I, {F_, plan_, prog_.constants, target_, patchOffset(), scratchSize_},
          out))
    return true;
  if (auto *t = llvm::dyn_cast<TransposeInst>(&I)) {
    // Its MatMul reads the input through strides instead.
    if (folds_.isFolded(*t))
      return true;
    if (auto k = kir::foldConstantTranspose(*t, plan_, prog_.constants)) {
      out.push_back(std::move(*k));
      return true;
    }
  }
  return false;
}

/// After \p I was lowered into out[from, end): a constant weight that only
/// \p I reads, and that none of those kernels reads (they read a packed or
/// transformed copy appended to the image), is dead until compaction drops
/// it; its pages are returned now, so that a weight and its copy are not
/// both resident while the rest of the network is lowered.
void CPULowering::releaseReplacedWeights(const Instruction &I,
                                         const std::vector<Kernel> &out,
                                         size_t from) {
  // An instruction lowered to no kernel (a Transpose its MatMul reads
  // through strides) leaves its operands to the readers of its result.
  if (out.size() == from)
    return;
  for (const Operand &op : I.getOperands()) {
    auto *w = llvm::dyn_cast<WeightVar>(getOrigin(op.value));
    if (!w || !w->isConstant() || readers_.lookup(w) != 1)
      continue;
    kir::Buffer src = kir::bufferFor(w, plan_);
    bool read = false;
    for (size_t i = from; i < out.size() && !read; ++i)
      for (const kir::Buffer &b : out[i].getBuffers())
        read |= b.region == Region::Constant &&
                b.offset < src.offset + src.size &&
                src.offset < b.offset + b.size;
    if (!read)
      kir::releaseConstantBytes(prog_.constants, src.offset, src.size);
  }
}

llvm::Expected<CPUProgram> CPULowering::run(const WeightCopied &weightCopied) {
  startConstantImage(weightCopied);
  prog_.mutableSize = plan_.mutableSize;
  prog_.activationSize = plan_.activationSize;
  prog_.checkOffset = kir::checkStatusOffset(F_, plan_);
  auto kernels = kir::lowerToKernels(
      F_, plan_,
      [&](const Instruction &I,
          std::vector<Kernel> &out) -> llvm::Expected<bool> {
        size_t from = out.size();
        if (!lowerOwn(I, out))
          return false;
        releaseReplacedWeights(I, out, from);
        return true;
      },
      [&](uint64_t bytes) -> std::optional<kir::Buffer> {
        uint64_t size = alignTo64(bytes);
        if (snapshotUsed_ + size > snapshotReserve_)
          return std::nullopt;
        kir::Buffer b{Region::Activation, scratchOffset() + snapshotUsed_,
                      bytes, ElemKind::Float32, "snapshot"};
        snapshotUsed_ += size;
        return b;
      },
      // The Cast's reader widens the 16-bit weight itself.
      [&](const Instruction &I) {
        auto *c = llvm::dyn_cast<CastInst>(&I);
        return c && narrow_.isAbsorbed(*c);
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
  prog_.loops = findKernelLoops(prog_.kernels, loopFlagOffset());
  prog_.constants.resize(alignTo64(prog_.constants.size()), 0);
  kir::compactConstants(prog_.constants, prog_.kernels);
  size_t scratchEnd = patchOffset() + alignTo64(scratchSize_);
  if (scratchEnd > alignTo64(plan_.activationSize))
    prog_.activationSize = scratchEnd;
  return std::move(prog_);
}

/// The element strides of B's rows (k) and columns (j), read as \p B says.
static std::pair<int64_t, int64_t> rhsStrides(const MatMulInst &I,
                                              const MatMulOperand &B) {
  if (I.getTransB())
    return {B.colStride(), B.rowStride()};
  return {B.rowStride(), B.colStride()};
}

/// Packs B [batch][K][n] (a transposed one: [batch][n][K]; any other
/// strides where a Transpose is folded into the product) into panels
/// [batch][n / NR][K][NR] (NR = \p nr), zero-padded: each panel is one
/// contiguous stream. A constant B is packed here, into the constant image;
/// a B computed at run time whose columns are not contiguous is packed by a
/// kernel appended to \p out, into scratch, so the product reads it
/// without a transpose copy.
kir::Buffer CPULowering::packMatMulRHS(const MatMulInst &I,
                                       const MatMulOperand &B, int64_t nr,
                                       bool b16, std::vector<Kernel> &out) {
  TypeRef tb = I.getRHS()->getType();
  int64_t K = I.getLHS()->getType()->dims().back();
  int64_t n = I.getDest()->getType()->dims().back();
  int64_t batch = K * n != 0 ? tb->size() / (K * n) : 0;
  int64_t np = (n + nr - 1) / nr;
  // Named variables, not a structured binding: the packing lambda below
  // captures them.
  std::pair<int64_t, int64_t> strides = rhsStrides(I, B);
  int64_t kStride = strides.first, jStride = strides.second;
  auto batchDims = tb->dims().drop_back(2);
  kir::Buffer src = kir::bufferFor(B.source, plan_);
  auto *w = llvm::dyn_cast<WeightVar>(getOrigin(B.source));
  WeightVar *narrow = narrow_.source(B.source);
  uint64_t bytes = batch * np * K * nr * 4;
  kir::Buffer scratch{Region::Activation, patchOffset(), bytes,
                      ElemKind::Float32, "matmul.rhs.packed"};
  if ((!w || !w->isConstant()) && !narrow) {
    kir::Buffer packed = scratch;
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
    ExprRef at = k.add(stridedBatchOffset(k, k.div(panel, np), batchDims,
                                          batchDims, B.strides),
                       k.add(k.mul(kk, kStride), k.mul(jc, jStride)));
    ExprRef v = k.select(k.binary(kir::BinOp::Lt, j, k.constInt(n)),
                         k.load(b, at), k.constFloat(0));
    k.body() = {Kernel::loop(e, batch * np * K * nr, /*parallel=*/true,
                             {Kernel::store(d, k.var(e), v)})};
    out.push_back(std::move(k));
    return packed;
  }
  // Panels are written in place: element ((bi * np + j / nr) * K + k) * nr
  // + j % nr, the padding lanes zero.
  auto pack = [&](const float *b, float *packed) {
    for (int64_t bi = 0; bi < batch; ++bi)
      for (int64_t k = 0; k < K; ++k)
        for (int64_t j = 0; j < n; ++j)
          packed[((bi * np + j / nr) * K + k) * nr + j % nr] =
              b[bi * K * n + k * kStride + j * jStride];
  };
  std::string name = I.getRHS()->getName().str() + ".packed";
  if (narrow) {
    std::vector<float> packed(size_t(batch * np * K * nr), 0.f), wide;
    pack(floatConstantValues(src, narrow, plan_, prog_.constants, wide),
         packed.data());
    return packedNarrow(packed, narrow, scratch, name, out, b16);
  }
  // Packed straight into the image: a packed copy built apart would be a
  // third copy of the weight (a 400 MB one in VGG's first Linear) beside
  // the original and the image's.
  kir::Buffer dst = kir::appendZeros(prog_.constants, bytes, name);
  pack(reinterpret_cast<const float *>(prog_.constants.data() + src.offset),
       reinterpret_cast<float *>(prog_.constants.data() + dst.offset));
  return dst;
}

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
  MatMulOperand A = folds_.operand(I.getLHS()), B = folds_.operand(I.getRHS());
  auto [kStride, jStride] = rhsStrides(I, B);
  auto *w = llvm::dyn_cast<WeightVar>(getOrigin(B.source));
  WeightVar *narrow = narrow_.source(B.source);
  bool packed =
      ((w && w->isConstant()) || narrow || jStride != 1) && kk * n > 0;
  // A 16-bit B stays 16-bit in memory where libjit's tiles widen it.
  bool b16 = packed && narrow &&
             widensInKernel(narrow->getType()->getElemKind(), target_);
  int64_t kc = matMulKBlock(kk, tiling), mr = tiling.rows;
  MatMulTasks tasks = splitMatMul(m, np, tiling, target);
  int64_t rows = tasks.rowsPerTask, panels = tasks.panelsPerTask;
  int64_t rowTasks = tasks.rowTasks, colTasks = tasks.colTasks;
  kir::Buffer bBuf = packed ? packMatMulRHS(I, B, nr, b16, out)
                            : kir::bufferFor(B.source, plan_);
  // A packed A goes to scratch after a B packed at run time.
  bool packA = opts_.forcePackMatMulLHS || A.colStride() != 1 ||
               matMulPacksLHS(std::min(m, rows), kk, np, tiling, target);
  size_t aAt = packed && bBuf.region == Region::Activation ? bBuf.size : 0;
  kir::Buffer aBuf =
      packA ? packMatMulLHS(I, A, plan_, mr, patchOffset() + alignTo64(aAt),
                            scratchSize_, out)
            : kir::bufferFor(A.source, plan_);
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
  // A packed operand's matrices are contiguous; any other is read through
  // its strides.
  auto offset = [&](Value *v, const MatMulOperand &op, bool pack,
                    int64_t matrix) {
    auto opBatch = v->getType()->dims().drop_back(2);
    return pack ? kir::matMulBatchOffset(k, bi, outBatch, opBatch, matrix)
                : stridedBatchOffset(k, bi, outBatch, opBatch, op.strides);
  };
  std::vector<CallArg> args = {
      bufArg(c, k.mul(bi, m * n)),
      bufArg(a, offset(I.getLHS(), A, packA, matMulPackedLHSFloats(m, kk, mr))),
      bufArg(b, offset(I.getRHS(), B, packed, np * kk * nr))};
  appendMatMulEpilogue(k, I, plan_, k.mul(bi, m * n), args);
  bool prefetch = packed && prefetchMatMulRHS(batch * kk * n, target);
  for (int64_t v :
       {n, kk, A.rowStride(), packed ? nr : kStride, packed ? kk * nr : nr,
        int64_t(packed), int64_t(packA), int64_t(prefetch), kc})
    args.push_back(valArg(k.constInt(v)));
  appendFusedActivation(k, I, args);
  for (ExprRef v : {i0, min(k.add(i0, k.constInt(rows)), m), t0,
                    min(k.add(t0, k.constInt(panels)), np)})
    args.push_back(valArg(v));
  kir::Stmt call = !b16 ? EMBER_LIBJIT_CALL(k, ember_matmul_f32, args)
                   : bBuf.kind == ElemKind::Float16
                       ? EMBER_LIBJIT_CALL(k, ember_matmul_f32_b16, args)
                       : EMBER_LIBJIT_CALL(k, ember_matmul_f32_bbf16, args);
  k.body() = {Kernel::loop(e, batch * rowTasks * colTasks, /*parallel=*/true,
                           {std::move(call)})};
  out.push_back(std::move(k));
}

llvm::Expected<CPUProgram> cpu::lowerForCPU(const IRFunction &F,
                                            const MemoryPlan &plan,
                                            const TargetDesc &T,
                                            const CPUCodegenOptions &opts,
                                            const WeightCopied &weightCopied) {
  return CPULowering(F, plan, T, opts).run(weightCopied);
}
