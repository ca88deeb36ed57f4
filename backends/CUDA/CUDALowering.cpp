//===- CUDALowering.cpp - Kernels, library ops and the constant image -----===//
//
// Everything goes through the shared kernel lowering except MatMul and
// Conv, which the hook claims: MatMul becomes a cuBLASLt op or a generated
// kernel (GeneratedKernels.h: shared-memory tiles, or the shared loop nest
// for operands broadcast over some batch dimensions); Conv becomes a cuDNN
// op or a generated convolution. A library op is a placeholder
// kernel in the shared lowering's output, replaced by a Step afterwards.
// A cuBLASLt MatMul followed by `Add(result, bias row)` and an in-place
// ReLU takes them into its epilogue when the shared lowering left them in
// one kernel of their own (which is then dropped). Placeholders and
// epilogue kernels are recognized by the instructions whose work they do
// (Kernel::getSources), never by name.
//
//===----------------------------------------------------------------------===//
#include "CUDA.h"
#include "GeneratedKernels.h"
#include "LibDesc.h"
#include "host/LibOps.h"

#include "ember/Base/Error.h"
#include "ember/Kernel/LowerToKernel.h"

#include "llvm/ADT/DenseMap.h"

#include <cstring>
#include <optional>
#include <variant>

using namespace ember;
using namespace ember::cuda;
using kir::CallArg;
using kir::ExprRef;
using kir::Kernel;

/// MatMuls below this many multiply-adds stay generated under auto: a
/// library call costs more than the whole product.
static constexpr int64_t kMinLibraryMacs = 1 << 15;

bool cuda::cudaSupports(const Node &n) {
  if (isTableOp(n.getKind()) && isLoopOp(toOpKind(n.getKind())))
    return true; // kir::lowerLoopOp
  if (llvm::isa<ConvNode>(n))
    return n.getType()->getElemKind() == ElemKind::Float32;
  return kir::hasKernelLowering(n);
}

bool CUDAProgram::usesCublasLt() const {
  return llvm::any_of(
      libOps, [](const LibOp &o) { return o.desc[0] == EMBER_LIB_GEMM; });
}

bool CUDAProgram::usesCudnn() const {
  return llvm::any_of(
      libOps, [](const LibOp &o) { return o.desc[0] == EMBER_LIB_CONV; });
}

/// The cuDNN descriptor of \p I, or a reason why cuDNN cannot run it.
static std::variant<std::vector<int64_t>, std::string>
cudnnConv(const ConvInst &I, const MemoryPlan &plan, bool tf32) {
  auto xd = I.getInput()->getType()->dims();
  auto wd = I.getFilter()->getType()->dims();
  auto yd = I.getDest()->getType()->dims();
  auto st = I.getStrides(), pads = I.getPads(), dil = I.getDilations();
  if (pads[0] != pads[2] || pads[1] != pads[3])
    return std::string("asymmetric padding");
  int64_t act = EMBER_ACT_NONE;
  float coef = 0;
  switch (FusedActivation(I.getFusedActivation())) {
  case FusedActivation::None:
    break;
  case FusedActivation::Relu:
    act = EMBER_ACT_RELU;
    break;
  case FusedActivation::Sigmoid:
    act = EMBER_ACT_SIGMOID;
    break;
  case FusedActivation::Clip:
    if (I.getFusedAlpha() != 0.f || !(I.getFusedBeta() > 0.f))
      return std::string("Clip epilogue with a non-zero minimum");
    act = EMBER_ACT_CLIPPED_RELU, coef = I.getFusedBeta();
    break;
  default:
    return std::string("epilogue activation without a cuDNN mode");
  }
  int32_t coefBits;
  std::memcpy(&coefBits, &coef, sizeof(coef));
  auto res = I.getResidual();
  LibDesc d(EMBER_LIB_CONV, EMBER_CONV_FIELDS);
  d.set(EMBER_CONV_N, xd[0]).set(EMBER_CONV_C, xd[1]);
  d.set(EMBER_CONV_H, xd[2]).set(EMBER_CONV_W, xd[3]);
  d.set(EMBER_CONV_M, wd[0])
      .set(EMBER_CONV_KH, wd[2])
      .set(EMBER_CONV_KW, wd[3]);
  d.set(EMBER_CONV_OH, yd[2]).set(EMBER_CONV_OW, yd[3]);
  d.set(EMBER_CONV_PAD_H, pads[0]).set(EMBER_CONV_PAD_W, pads[1]);
  d.set(EMBER_CONV_STRIDE_H, st[0]).set(EMBER_CONV_STRIDE_W, st[1]);
  d.set(EMBER_CONV_DIL_H, dil[0]).set(EMBER_CONV_DIL_W, dil[1]);
  d.set(EMBER_CONV_GROUP, I.getGroup()).set(EMBER_CONV_ACT, act);
  d.set(EMBER_CONV_ACT_COEF, coefBits);
  d.set(EMBER_CONV_HAS_RES, int64_t(!res.empty()));
  d.setOperand(EMBER_CONV_X, I.getInput(), plan);
  d.setOperand(EMBER_CONV_WEIGHTS, I.getFilter(), plan);
  d.setOperand(EMBER_CONV_BIAS, I.getBias(), plan);
  d.setOperand(EMBER_CONV_Y, I.getDest(), plan);
  // Without a residual the output stands in; HAS_RES says to skip it.
  d.setOperand(EMBER_CONV_RES, res.empty() ? I.getDest() : res[0], plan);
  d.set(EMBER_CONV_MATH, tf32 ? EMBER_MATH_TF32 : EMBER_MATH_FP32);
  return d.take();
}

namespace {
/// A cuBLASLt epilogue candidate: the Add (and ReLU) after a MatMul, and
/// where the result goes when the epilogue takes the Add alone (sumDest)
/// or the Add and the ReLU (reluDest); null where that is not allowed.
struct Epilogue {
  unsigned libOp;
  const Instruction *add, *relu;
  Value *bias, *sumDest, *reluDest;
};

/// Lowers one network; see the file comment.
class Lowering {
public:
  Lowering(const IRFunction &F, const MemoryPlan &plan,
           const CUDACodegenOptions &o, CUDAProgram &prog)
      : F_(F), plan_(plan), opts_(o), prog_(prog),
        loopPartner_(kir::loopPartners(F)) {}
  llvm::Expected<bool> claim(const Instruction &I, std::vector<Kernel> &out);
  void finish(std::vector<Kernel> kernels);

private:
  void addLibOp(const Instruction &I, std::vector<int64_t> desc,
                std::vector<Kernel> &out, const std::string &choice);
  void pairLoops();
  bool lowerMatMul(const MatMulInst &I, std::vector<Kernel> &out);
  bool tf32() const { return opts_.math == MathMode::TF32; }
  std::optional<Epilogue> findEpilogue(const MatMulInst &I);
  bool canWriteTo(const MatMulInst &I, Value *dest,
                  llvm::ArrayRef<const Instruction *> absorbed,
                  llvm::ArrayRef<Value *> skipped);

  const IRFunction &F_;
  const MemoryPlan &plan_;
  CUDACodegenOptions opts_;
  CUDAProgram &prog_;
  std::vector<Epilogue> epilogues_;
  /// Per library op: the MatMul (GEMMs) or the generated convolution
  /// (Convs) its fallback kernel is made from.
  std::vector<const MatMulInst *> gemms_;
  std::vector<std::optional<Kernel>> convFallbacks_;
  /// Per GEMM op: where its result goes and its bias after the epilogues.
  std::vector<std::pair<Value *, Value *>> gemmOut_;
  /// The library op of each claimed instruction (its placeholder kernel's
  /// source).
  llvm::DenseMap<const Instruction *, unsigned> libOpOf_;
  /// A loopbegin's loopend and the reverse.
  llvm::DenseMap<const Instruction *, const Instruction *> loopPartner_;
};
} // namespace

void Lowering::addLibOp(const Instruction &I, std::vector<int64_t> desc,
                        std::vector<Kernel> &out, const std::string &choice) {
  // A placeholder, replaced by a library step in finish: the shared
  // lowering gives it I as its source.
  libOpOf_[&I] = prog_.libOps.size();
  out.emplace_back(I.getName());
  prog_.libOps.push_back(LibOp{I.getName().str(), std::move(desc), 0});
  prog_.choices.push_back((I.getName() + ": " + choice).str());
  gemms_.push_back(llvm::dyn_cast<MatMulInst>(&I));
  gemmOut_.push_back(
      {gemms_.back() ? gemms_.back()->getDest() : nullptr, nullptr});
  convFallbacks_.emplace_back();
}

/// Byte ranges of two values overlap (same region).
static bool overlaps(Value *a, Value *b, const MemoryPlan &plan) {
  Placement pa = plan.locate(a), pb = plan.locate(b);
  size_t sa = a->getType()->sizeInBytes(), sb = b->getType()->sizeInBytes();
  return pa.region == pb.region && pa.offset < pb.offset + sb &&
         pb.offset < pa.offset + sa;
}

/// True if MatMul \p I may write the epilogue's result straight to \p dest
/// when it absorbs \p absorbed: \p dest does not overlap the operands, and
/// the intermediate values \p skipped (other than \p dest) are read by no
/// other instruction.
bool Lowering::canWriteTo(const MatMulInst &I, Value *dest,
                          llvm::ArrayRef<const Instruction *> absorbed,
                          llvm::ArrayRef<Value *> skipped) {
  if (overlaps(dest, I.getLHS(), plan_) || overlaps(dest, I.getRHS(), plan_))
    return false;
  llvm::SmallVector<Value *, 2> dead;
  for (Value *v : skipped)
    if (getOrigin(v) != getOrigin(dest))
      dead.push_back(getOrigin(v));
  auto &instrs = F_.getInstrs();
  auto it = llvm::find_if(instrs, [&](auto &p) { return p.get() == &I; });
  for (++it; it != instrs.end(); ++it) {
    const Instruction *J = it->get();
    if (llvm::isa<DeallocActivationInst>(J) || llvm::is_contained(absorbed, J))
      continue;
    for (const Operand &op : J->getOperands())
      if (llvm::is_contained(dead, getOrigin(op.value)))
        return false;
  }
  return true;
}

/// `Add(mm, bias row)` right after MatMul \p I (only allocations, views
/// and a Broadcast of the bias in between) and a ReLU of the sum right
/// after it.
std::optional<Epilogue> Lowering::findEpilogue(const MatMulInst &I) {
  auto &instrs = F_.getInstrs();
  auto it = llvm::find_if(instrs, [&](auto &p) { return p.get() == &I; });
  Value *mm = I.getDest();
  int64_t n = mm->getType()->dims().back();
  if (mm->getType()->rank() != 2 || !llvm::isa<AllocActivationInst>(mm))
    return std::nullopt;
  auto skip = [&](auto i, bool broadcasts) {
    while (i != instrs.end() && (llvm::isa<AllocActivationInst>(**i) ||
                                 llvm::isa<DeallocActivationInst>(**i) ||
                                 llvm::isa<TensorViewInst>(**i) ||
                                 (broadcasts && llvm::isa<BroadcastInst>(**i))))
      ++i;
    return i;
  };
  auto ai = skip(std::next(it), true);
  auto *add = ai == instrs.end() ? nullptr : llvm::dyn_cast<AddInst>(ai->get());
  if (!add || add->getLHS() != mm || add->getRHS() == mm)
    return std::nullopt;
  // The bias: a constant of n elements, or a Broadcast of one (the only
  // Broadcast allowed in between: the result is written early, before
  // anything between the MatMul and the Add).
  Value *bias = add->getRHS();
  for (auto i = std::next(it); i != ai; ++i)
    if (auto *bc = llvm::dyn_cast<BroadcastInst>(i->get())) {
      if (bc->getDest() != bias)
        return std::nullopt;
      bias = bc->getInput();
    }
  auto *w = llvm::dyn_cast<WeightVar>(bias);
  if (!w || !w->isConstant() || w->getType()->size() != n)
    return std::nullopt;
  Value *sum = add->getDest();
  Epilogue e{0, add, nullptr, bias, nullptr, nullptr};
  if (canWriteTo(I, sum, {add}, {mm}))
    e.sumDest = sum;
  auto ri = skip(std::next(ai), false);
  auto *relu =
      ri == instrs.end() ? nullptr : llvm::dyn_cast<ReluInst>(ri->get());
  if (relu && relu->getInput() == sum &&
      canWriteTo(I, relu->getDest(), {add, relu}, {mm, sum})) {
    e.relu = relu;
    e.reluDest = relu->getDest();
  }
  if (!e.sumDest && !e.reluDest)
    return std::nullopt;
  return e;
}

bool Lowering::lowerMatMul(const MatMulInst &I, std::vector<Kernel> &out) {
  TypeRef ta = I.getLHS()->getType(), tb = I.getRHS()->getType();
  unsigned r = ta->rank();
  int64_t m = ta->dims()[r - 2], k = ta->dims()[r - 1];
  int64_t n = I.getDest()->getType()->dims()[r - 1];
  int64_t batch = ta->size() / std::max<int64_t>(m * k, 1);
  // The lowering rule makes broadcast and transposed operands explicit for
  // this backend; IR written by hand may still hold them, and the generated
  // kernel reads them in place.
  bool plain =
      !I.getTransB() && ta->dims().drop_back(2) == tb->dims().drop_back(2);
  bool big = batch * m * n * k >= kMinLibraryMacs;
  bool lib = opts_.gemm == LibChoice::Library ||
             (opts_.gemm == LibChoice::Auto && big);
  if (!lib || !plain || m * n * k == 0 ||
      ta->getElemKind() != ElemKind::Float32) {
    const char *why = opts_.gemm == LibChoice::Generated
                          ? "-cuda-gemm=generated"
                      : !plain ? "broadcast or transposed operand"
                               : "too small for cuBLASLt";
    std::optional<Kernel> tiled =
        tiledGemm(I, I.getDest(), nullptr, EMBER_EPI_NONE, plan_, tf32());
    const char *how = !tiled   ? "one thread per output element"
                      : tf32() ? "64x64 shared-memory tiles, TF32 tensor cores"
                               : "64x64 shared-memory tiles";
    prog_.choices.push_back((I.getName() + ": MatMul -> generated kernel (" +
                             how + "; " + why + ")")
                                .str());
    if (!tiled)
      return false;
    out.push_back(std::move(*tiled));
    return true;
  }
  std::optional<Epilogue> epi = findEpilogue(I);
  LibDesc d(EMBER_LIB_GEMM, EMBER_GEMM_FIELDS);
  d.set(EMBER_GEMM_BATCH, batch).set(EMBER_GEMM_M, m).set(EMBER_GEMM_N, n);
  d.set(EMBER_GEMM_K, k).set(EMBER_GEMM_EPILOGUE, EMBER_EPI_NONE);
  d.setOperand(EMBER_GEMM_A, I.getLHS(), plan_);
  d.setOperand(EMBER_GEMM_B, I.getRHS(), plan_);
  d.setOperand(EMBER_GEMM_D, I.getDest(), plan_);
  // No bias until finish gives the op an epilogue.
  d.set(EMBER_GEMM_BIAS, 0).set(EMBER_GEMM_BIAS + 1, 0);
  d.set(EMBER_GEMM_MATH, tf32() ? EMBER_MATH_TF32 : EMBER_MATH_FP32);
  if (epi) {
    epi->libOp = prog_.libOps.size();
    epilogues_.push_back(*epi);
  }
  addLibOp(I, d.take(), out,
           std::string("MatMul -> cuBLASLt (") +
               (tf32() ? "TF32 tensor cores, " : "fp32, ") +
               std::to_string(batch) + " x " + std::to_string(m) + "x" +
               std::to_string(n) + "x" + std::to_string(k) + ")");
  return true;
}

llvm::Expected<bool> Lowering::claim(const Instruction &I,
                                     std::vector<Kernel> &out) {
  if (kir::isLoopInst(I)) {
    const Instruction *partner = loopPartner_.lookup(&I);
    kir::Buffer flag{Region::Activation, prog_.loopFlagOffset, 1,
                     ElemKind::Bool, "loop.flag"};
    out.push_back(kir::lowerLoopOp(I, partner ? *partner : I, plan_, flag));
    return true;
  }
  if (auto *mm = llvm::dyn_cast<MatMulInst>(&I))
    return lowerMatMul(*mm, out);
  auto *c = llvm::dyn_cast<ConvInst>(&I);
  if (!c)
    return false;
  std::string why = "-cuda-conv=generated";
  if (opts_.conv != LibChoice::Generated) {
    auto d = cudnnConv(*c, plan_, tf32());
    if (auto *desc = std::get_if<std::vector<int64_t>>(&d)) {
      addLibOp(I, std::move(*desc), out,
               tf32() ? "Conv -> cuDNN (fp32, TF32 tensor cores allowed)"
                      : "Conv -> cuDNN (fp32, no TF32)");
      std::string how;
      convFallbacks_.back() = generatedConv(*c, plan_, tf32(), how);
      return true;
    }
    why = std::get<std::string>(d);
  }
  std::string how;
  out.push_back(generatedConv(*c, plan_, tf32(), how));
  prog_.choices.push_back(
      (I.getName() + ": Conv -> generated (" + how + "; " + why + ")").str());
  return true;
}

/// Turns placeholders into library steps and applies the MatMul epilogues
/// whose Add (and ReLU) ended up in a kernel of their own.
void Lowering::finish(std::vector<Kernel> kernels) {
  std::vector<bool> dropped(kernels.size(), false);
  // The kernel that does exactly the work of \p instrs, in that order.
  auto kernelOf =
      [&](llvm::ArrayRef<const Instruction *> instrs) -> std::optional<size_t> {
    for (size_t i = 0; i < kernels.size(); ++i)
      if (kernels[i].getSources() == instrs)
        return i;
    return std::nullopt;
  };
  for (const Epilogue &e : epilogues_) {
    // A kernel of the Add and the ReLU alone, or of the Add alone.
    std::string add = e.add->getName().str();
    std::optional<size_t> kernel;
    Value *dest = nullptr;
    if (e.reluDest && (kernel = kernelOf({e.add, e.relu})))
      dest = e.reluDest;
    else if (e.sumDest && (kernel = kernelOf({e.add})))
      dest = e.sumDest;
    else
      continue;
    std::vector<int64_t> &d = prog_.libOps[e.libOp].desc;
    bool relu = dest == e.reluDest;
    d[EMBER_GEMM_EPILOGUE] = relu ? EMBER_EPI_RELU_BIAS : EMBER_EPI_BIAS;
    Placement out = plan_.locate(dest), b = plan_.locate(e.bias);
    d[EMBER_GEMM_D] = int64_t(out.region), d[EMBER_GEMM_D + 1] = out.offset;
    d[EMBER_GEMM_BIAS] = int64_t(b.region), d[EMBER_GEMM_BIAS + 1] = b.offset;
    gemmOut_[e.libOp] = {dest, e.bias};
    dropped[*kernel] = true;
    for (std::string &ch : prog_.choices)
      if (llvm::StringRef(ch).starts_with(prog_.libOps[e.libOp].name + ": "))
        ch += relu ? " + bias/ReLU epilogue (" + add + ", " +
                         e.relu->getName().str() + ")"
                   : " + bias epilogue (" + add + ")";
  }
  for (size_t ki = 0; ki < kernels.size(); ++ki) {
    Kernel &k = kernels[ki];
    if (dropped[ki])
      continue;
    auto src = k.getSources();
    auto lib = src.size() == 1 && k.body().empty() ? libOpOf_.find(src[0])
                                                   : libOpOf_.end();
    if (lib != libOpOf_.end()) {
      prog_.steps.push_back(Step{true, lib->second});
      continue;
    }
    prog_.steps.push_back(Step{false, unsigned(prog_.kernels.size())});
    prog_.kernels.push_back(std::move(k));
  }
  pairLoops();
  // Every library op's generated fallback, launched by no step: planning
  // happens on the GPU at hand (in process, or in a bundle's init), where a
  // library may refuse an op that it accepted elsewhere.
  for (size_t i = 0; i < prog_.libOps.size(); ++i) {
    LibOp &op = prog_.libOps[i];
    op.fallback = unsigned(prog_.kernels.size());
    if (gemms_[i]) {
      Value *dest = gemmOut_[i].first, *bias = gemmOut_[i].second;
      int64_t epi = op.desc[EMBER_GEMM_EPILOGUE];
      std::optional<Kernel> tiled =
          tiledGemm(*gemms_[i], dest, bias, epi, plan_, tf32());
      prog_.kernels.push_back(
          tiled ? std::move(*tiled)
                : elementwiseGemm(*gemms_[i], dest, bias, epi, plan_));
    } else
      prog_.kernels.push_back(std::move(*convFallbacks_[i]));
  }
}

/// Pairs each loop's loopbegin and loopend steps with a stack over the
/// steps, so nested loops pair as they nest.
void Lowering::pairLoops() {
  prog_.testOf.assign(prog_.steps.size(), -1);
  std::vector<size_t> open;
  for (size_t n = 0; n < prog_.steps.size(); ++n) {
    const Step &s = prog_.steps[n];
    auto src = s.isLibrary ? llvm::ArrayRef<const Instruction *>()
                           : prog_.kernels[s.index].getSources();
    if (src.size() != 1)
      continue;
    if (src[0]->getKind() == ValueKind::LoopBeginInst) {
      open.push_back(prog_.loops.size());
      prog_.loops.push_back({n, n});
    } else if (src[0]->getKind() == ValueKind::LoopEndInst) {
      CHECK(!open.empty()) << "a loopend without its loopbegin (verifyIR)";
      StepLoop &l = prog_.loops[open.back()];
      l.end = n;
      prog_.testOf[l.begin] = prog_.testOf[n] = int(open.back());
      open.pop_back();
    }
  }
  CHECK(open.empty()) << "a loopbegin without its loopend (verifyIR)";
}

llvm::Expected<CUDAProgram> cuda::lowerForCUDA(const IRFunction &F,
                                               const MemoryPlan &plan,
                                               const CUDACodegenOptions &opts) {
  unsigned sm = 0;
  llvm::StringRef arch = opts.arch;
  if (opts.math == MathMode::TF32 && arch.consume_front("sm_") &&
      !arch.getAsInteger(10, sm) && sm < 80)
    return makeErrorF("-cuda-math=tf32 needs TF32 tensor cores (sm_80 or "
                      "newer); the target is {0}",
                      opts.arch);
  CUDAProgram prog;
  prog.constants = makeConstantImage(F, plan);
  prog.mutableSize = plan.mutableSize;
  prog.activationSize = plan.activationSize;
  prog.checkOffset = kir::checkStatusOffset(F, plan);
  bool hasLoops =
      llvm::any_of(F.getInstrs(), [](auto &I) { return kir::isLoopInst(*I); });
  if (hasLoops) {
    // The loop flag: one byte after the planned activations, which no
    // other kernel touches.
    prog.loopFlagOffset = (plan.activationSize + 63) / 64 * 64;
    prog.activationSize = prog.loopFlagOffset + 64;
  }
  Lowering L(F, plan, opts, prog);
  auto kernels = kir::lowerToKernels(
      F, plan, [&](const Instruction &I, std::vector<Kernel> &out) {
        return L.claim(I, out);
      });
  if (!kernels)
    return kernels.takeError();
  L.finish(std::move(*kernels));
  prog.constants.resize((prog.constants.size() + 63) / 64 * 64, 0);
  return prog;
}
