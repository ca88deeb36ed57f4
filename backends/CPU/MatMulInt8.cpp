//===- MatMulInt8.cpp - 8-bit integer products on the CPU -----------------===//
//
// IntMatMul and IntConv as calls of libjit's integer product kernel
// (libjit/MatMulInt8.inc), which multiplies unsigned by signed bytes as
// vpdpbusd does. The weights become the signed operand (UInt8 weights less
// 128, so their zero point must then be 128) and are packed here, with
// their sums; the activations are the unsigned operand (Int8 ones plus
// 128, a flip of the top bit, their zero point raised by 128). With the
// weights' zero point 0, sum (x - zx) * w = sum x' * w - zx' * sum w: the
// kernel's correction with u, v = the activation zero point and the weight
// sums.
//
// IntMatMul: A = the activations [m][K] read in place, B = the weights
// packed in panels. IntConv and RequantConv: ConvInt8.cpp.
//
//===----------------------------------------------------------------------===//
#include "MatMulInt8.h"
#include "Int8Elementwise.h"
#include "Int8Lowering.h"

#include "CPU.h"

#include "ember/Backend/TargetDesc.h"
#include "ember/Kernel/LowerToKernel.h"

#include "glog/logging.h"

#include <algorithm>
#include <cstring>
#include <type_traits>

using namespace ember;
using namespace ember::cpu;
using namespace ember::cpu::i8;
using kir::CallArg;
using kir::ExprRef;
using kir::Kernel;

LibKernel Int8Plan::entry() const {
  switch (kernel) {
  case Int8Kernel::Amx:
    return EMBER_LIBJIT_KERNEL(ember_matmul_i8_amx);
  case Int8Kernel::Vnni:
    return EMBER_LIBJIT_KERNEL(ember_matmul_i8_vnni);
  default:
    return EMBER_LIBJIT_KERNEL(ember_matmul_i8_widen);
  }
}

LibKernel Int8Plan::requantEntry() const {
  switch (kernel) {
  case Int8Kernel::Amx:
    return EMBER_LIBJIT_KERNEL(ember_matmul_i8q_amx);
  case Int8Kernel::Vnni:
    return EMBER_LIBJIT_KERNEL(ember_matmul_i8q_vnni);
  default:
    return EMBER_LIBJIT_KERNEL(ember_matmul_i8q_widen);
  }
}

Int8Plan cpu::chooseInt8Plan(const TargetDesc &T) {
  bool vnni = useWideKernels(T) && T.has(ISAExt::AVX512VNNI);
  bool amx = vnni && T.has(ISAExt::AMXTile) && T.has(ISAExt::AMXInt8);
  return {amx    ? Int8Kernel::Amx
          : vnni ? Int8Kernel::Vnni
                 : Int8Kernel::Widen,
          chooseMatMulTiling(matMulTarget(T))};
}

namespace {

/// The Int32 values of \p v when known at compile time: a constant, or a
/// buffer a Splat fills (how constant folding leaves a uniform vector).
std::optional<std::vector<int32_t>> knownInt32(Value *v,
                                               const Int8Context &ctx) {
  size_t n = v->getType()->size();
  kir::Buffer b = kir::bufferFor(v, ctx.plan);
  if (b.region == Region::Constant) {
    std::vector<int32_t> out(n);
    std::memcpy(out.data(), ctx.constants.data() + b.offset, n * 4);
    return out;
  }
  Value *origin = getOrigin(v);
  std::optional<std::vector<int32_t>> out;
  for (const auto &I : ctx.fn.getInstrs()) {
    if (llvm::isa<AllocActivationInst>(I.get()) ||
        llvm::isa<DeallocActivationInst>(I.get()) ||
        llvm::isa<TensorViewInst>(I.get()))
      continue;
    auto *s = llvm::dyn_cast<SplatInst>(I.get());
    bool writes = llvm::any_of(I->getOperands(), [&](const auto &op) {
      return op.role != OperandRole::In && getOrigin(op.value) == origin;
    });
    if (!writes)
      continue;
    if (!s || s->getDest() != origin)
      return std::nullopt; // written by something else as well
    out = std::vector<int32_t>(n, int32_t(s->getValue()));
  }
  return out;
}

} // namespace

/// The weights behind \p w with zero points \p zero, or nullopt unless
/// the weights are constants and every zero point is known and 0 once
/// Int8.
std::optional<Weights> i8::constantWeights(Value *w, Value *zero,
                                           const Int8Context &ctx) {
  kir::Buffer wb = kir::bufferFor(w, ctx.plan);
  std::optional<std::vector<int32_t>> z = knownInt32(zero, ctx);
  if (wb.region != Region::Constant || !z)
    return std::nullopt;
  Weights out{
      ctx.constants.data() + wb.offset,
      uint8_t(w->getType()->getElemKind() == ElemKind::UInt8 ? 0x80 : 0)};
  int32_t want = out.flip ? 128 : 0;
  if (llvm::any_of(*z, [&](int32_t v) { return v != want; }))
    return std::nullopt;
  return out;
}

/// 128 for Int8 activations (read as UInt8 plus 128), else 0.
int64_t i8::activationFlip(Value *x) {
  return x->getType()->getElemKind() == ElemKind::Int8 ? 128 : 0;
}

kir::Stmt i8::callInt8(Kernel &k, const Int8Plan &plan, CallArg c, CallArg a,
                       CallArg b, const Int8Call &x, const RequantCall *q) {
  std::vector<CallArg> args;
  if (q)
    args = {q->y, q->partial};
  else
    args = {c};
  args.push_back(a);
  args.push_back(b);
  for (int64_t v : {x.n, x.K, x.lda, x.kc})
    args.push_back(valArg(k.constInt(v)));
  for (ExprRef v : {x.i0, x.i1, x.t0, x.t1})
    args.push_back(valArg(v));
  args.push_back(valArg(k.constInt(x.aSigned)));
  args.push_back(valArg(k.constInt(x.aFlip)));
  args.push_back(x.u);
  args.push_back(valArg(k.constInt(x.us)));
  args.push_back(valArg(k.constInt(x.uo)));
  args.push_back(x.v);
  args.push_back(valArg(k.constInt(x.vs)));
  args.push_back(valArg(k.constInt(x.vo)));
  if (!q)
    return checkedLibCall(k, plan.entry(), args);
  args.push_back(q->bias);
  args.push_back(valArg(k.constInt(q->bRow)));
  args.push_back(valArg(k.constInt(q->bCol)));
  args.push_back(q->mult);
  args.push_back(valArg(k.constInt(q->mRow)));
  args.push_back(valArg(k.constInt(q->mCol)));
  for (ExprRef v : {q->zero, q->lo, q->hi})
    args.push_back(valArg(v));
  bool rowMajor = q->yRow == 0 && q->yCol == 0;
  args.push_back(valArg(k.constInt(rowMajor ? x.n : q->yRow)));
  args.push_back(valArg(k.constInt(rowMajor ? 1 : q->yCol)));
  return checkedLibCall(k, plan.requantEntry(), args);
}

/// Int32 scratch for partial sums of \p elems elements at \p offset in
/// the activation region when K spans more than one block of \p plan,
/// else a null pointer.
CallArg i8::partialSums(Kernel &k, const Int8Plan &plan, int64_t K,
                        int64_t elems, size_t offset, const Int8Context &ctx,
                        ExprRef at) {
  if ((K + 3) / 4 <= plan.tiling.kBlock)
    return valArg(k.constInt(0));
  uint64_t bytes = uint64_t(elems) * 4;
  ctx.scratchSize =
      std::max<size_t>(ctx.scratchSize, offset - ctx.scratchOffset + bytes);
  kir::Buffer b{Region::Activation, offset, bytes, ElemKind::Int32,
                "intproduct.partial"};
  return bufArg(k.addBuffer(b), at);
}

TaskSpan i8::taskSpan(Kernel &k, ExprRef e, const MatMulTasks &tasks, int64_t m,
                      int64_t np) {
  int64_t rt = tasks.rowTasks, ct = tasks.colTasks;
  auto min = [&](ExprRef x, int64_t v) {
    return k.binary(kir::BinOp::Min, x, k.constInt(v));
  };
  ExprRef i0 = k.mul(k.rem(k.div(e, ct), rt), tasks.rowsPerTask);
  ExprRef t0 = k.mul(k.rem(e, ct), tasks.panelsPerTask);
  return {k.div(e, rt * ct), i0,
          min(k.add(i0, k.constInt(tasks.rowsPerTask)), m), t0,
          min(k.add(t0, k.constInt(tasks.panelsPerTask)), np)};
}

/// Checks that libjit has the plan's tile.
bool i8::haveTile(const Int8Plan &plan, const TargetDesc &T) {
  return plan.tiling.rows == 6 &&
         plan.tiling.panelCols == (useWideKernels(T) ? 64 : 16);
}

/// A bias or multiplier vector of \p v's length (1 or \p channels) as a
/// call argument at channel \p c0 with its stride.
std::pair<CallArg, int64_t>
i8::channelVector(Kernel &k, Value *v, const Int8Context &ctx, ExprRef c0) {
  unsigned b = k.addBuffer(kir::bufferFor(v, ctx.plan));
  if (v->getType()->size() == 1)
    return {bufArg(b), 0};
  return {bufArg(b, c0), 1};
}

namespace {

/// The weights [batch][K][n] as B panels of \p nr columns, and their
/// column sums.
PackedB packWeights(const Weights &w, int64_t batch, int64_t K, int64_t n,
                    int64_t nr) {
  int64_t np = (n + nr - 1) / nr, k4 = (K + 3) / 4;
  int64_t elems = np * k4 * nr * 4;
  PackedB out{std::vector<uint8_t>(size_t(batch * elems), 0),
              std::vector<int32_t>(size_t(batch * n), 0)};
  for (int64_t bi = 0; bi < batch; ++bi)
    for (int64_t k = 0; k < K; ++k)
      for (int64_t j = 0; j < n; ++j) {
        int32_t x = w.at(bi * K * n + k * n + j);
        out.bytes[bi * elems + ((j / nr * k4 + k / 4) * nr + j % nr) * 4 +
                  k % 4] = uint8_t(x);
        out.sums[bi * n + j] += x;
      }
  return out;
}

/// IntMatMul or RequantMatMul \p I (the latter with a requantizing store
/// along its columns).
template <class InstT>
bool lowerMatMul(const InstT &I, const Int8Context &ctx,
                 std::vector<Kernel> &out) {
  constexpr bool requant = std::is_same_v<InstT, RequantMatMulInst>;
  TypeRef ta = I.getLHS()->getType(), tb = I.getRHS()->getType();
  TypeRef tc = I.getDest()->getType();
  unsigned r = ta->rank();
  int64_t m = ta->dims()[r - 2], K = ta->dims()[r - 1], n = tc->dims()[r - 1];
  std::optional<Weights> w = constantWeights(I.getRHS(), I.getRHSZero(), ctx);
  Int8Plan plan = chooseInt8Plan(ctx.target);
  if (tc->size() == 0 && requant)
    return true; // nothing to store
  if (!w || !haveTile(plan, ctx.target) || tc->size() == 0 || K == 0)
    return false;
  int64_t nr = plan.tiling.panelCols, np = (n + nr - 1) / nr;
  int64_t k4 = (K + 3) / 4, batch = int64_t(tc->size()) / (m * n);
  PackedB pb = packWeights(*w, int64_t(tb->size()) / (K * n), K, n, nr);
  std::string name = I.getRHS()->getName().str();
  kir::Buffer bBuf =
      appendConstant(ctx.constants, pb.bytes.data(), pb.bytes.size(),
                     name + ".i8.packed", ElemKind::Int8);
  kir::Buffer sBuf =
      appendConstant(ctx.constants, pb.sums.data(), pb.sums.size() * 4,
                     name + ".i8.sums", ElemKind::Int32);
  MatMulTasks tasks = splitMatMul(m, np, plan.tiling, matMulTarget(ctx.target));
  Kernel k(I.getName());
  unsigned c = k.addBuffer(kir::bufferFor(I.getDest(), ctx.plan));
  unsigned a = k.addBuffer(kir::bufferFor(I.getLHS(), ctx.plan));
  unsigned b = k.addBuffer(bBuf), sums = k.addBuffer(sBuf);
  unsigned za = k.addBuffer(kir::bufferFor(I.getLHSZero(), ctx.plan));
  unsigned e = k.newVar();
  TaskSpan ts = taskSpan(k, k.var(e), tasks, m, np);
  auto outBatch = tc->dims().drop_back(2);
  auto offset = [&](Value *v, int64_t matrix) {
    return kir::matMulBatchOffset(k, ts.g, outBatch,
                                  v->getType()->dims().drop_back(2), matrix);
  };
  Int8Call call{n,
                K,
                K,
                plan.tiling.kBlock,
                ts.i0,
                ts.i1,
                ts.t0,
                ts.t1,
                0,
                activationFlip(I.getLHS()),
                bufArg(za),
                1,
                activationFlip(I.getLHS()),
                bufArg(sums, offset(I.getRHS(), n)),
                1,
                0};
  ExprRef cAt = k.mul(ts.g, m * n);
  std::optional<RequantCall> q;
  if constexpr (requant) {
    auto [bias, bCol] = channelVector(k, I.getBias(), ctx, k.constInt(0));
    auto [mult, mCol] = channelVector(k, I.getMultiplier(), ctx, k.constInt(0));
    q = RequantCall{
        bufArg(c, cAt),
        partialSums(k, plan, K, batch * m * n, ctx.scratchOffset, ctx, cAt),
        bias,
        0,
        bCol,
        mult,
        0,
        mCol,
        {},
        {},
        {}};
    requantBounds(k, I, ctx, *q);
  }
  k.body() = {Kernel::loop(
      e, batch * tasks.rowTasks * tasks.colTasks, /*parallel=*/true,
      {callInt8(k, plan, bufArg(c, cAt), bufArg(a, offset(I.getLHS(), m * K)),
                bufArg(b, offset(I.getRHS(), np * k4 * nr * 4)), call,
                q ? &*q : nullptr)})};
  out.push_back(std::move(k));
  return true;
}

} // namespace

bool cpu::lowerIntProductCPU(const Instruction &I, const Int8Context &ctx,
                             std::vector<Kernel> &out) {
  if (auto k = lowerInt8Elementwise(I, ctx.plan, ctx.target)) {
    out.push_back(std::move(*k));
    return true;
  }
  if (auto *m = llvm::dyn_cast<IntMatMulInst>(&I))
    return lowerMatMul(*m, ctx, out);
  if (auto *c = llvm::dyn_cast<IntConvInst>(&I))
    return lowerConvInt8(*c, ctx, out);
  // keepsRequantProduct kept these whole for their constant weights.
  bool done = true;
  if (auto *m = llvm::dyn_cast<RequantMatMulInst>(&I))
    done = lowerMatMul(*m, ctx, out);
  else if (auto *c = llvm::dyn_cast<RequantConvInst>(&I))
    done = lowerConvInt8(*c, ctx, out);
  else
    return false;
  CHECK(done) << I.getKindName().str() << " " << I.getName().str()
              << ": weights not constant after keepsRequantProduct";
  return true;
}

/// True when \p v is a Constant or Splat whose elements all equal \p want.
static bool isConstantOf(NodeValue v, double want) {
  if (auto *s = llvm::dyn_cast<SplatNode>(v.getNode()))
    return s->getValue() == want;
  auto *c = llvm::dyn_cast<Constant>(v.getNode());
  if (!c)
    return false;
  for (dim_t i = 0, e = c->getPayload().size(); i < e; ++i)
    if (c->getPayload().elementAsDouble(i) != want)
      return false;
  return true;
}

bool cpu::keepsRequantProduct(const Node &n) {
  NodeValue w, zero;
  if (auto *c = llvm::dyn_cast<RequantConvNode>(&n))
    w = c->getFilter(), zero = c->getFilterZero();
  else if (auto *m = llvm::dyn_cast<RequantMatMulNode>(&n))
    w = m->getRHS(), zero = m->getRHSZero();
  else
    return false;
  return llvm::isa<Constant>(w.getNode()) &&
         isConstantOf(zero, w.getElemKind() == ElemKind::UInt8 ? 128 : 0);
}

/// Whether \p v is, through Dequantize and layout nodes, constant bytes.
static bool isConstantBytes(NodeValue v) {
  while (llvm::isa<DequantizeNode>(v.getNode()) ||
         llvm::isa<ReshapeNode>(v.getNode()) ||
         llvm::isa<TransposeNode>(v.getNode()))
    v = v.getNode()->getNthInput(0);
  return llvm::isa<Constant>(v.getNode());
}

bool CPUBackend::prefersIntegerProduct(const Node &product,
                                       const CodegenOptions &opts) const {
  llvm::Expected<TargetDesc> desc = TargetDesc::create(opts.target);
  if (!desc) {
    llvm::consumeError(desc.takeError());
    return false;
  }
  // The widening kernel does a quarter of vpdpbusd's multiply-adds per
  // instruction, fewer than the Float32 kernels' FMAs: integers pay only
  // with vpdpbusd.
  if (chooseInt8Plan(kernelTarget(*desc, opts.cpu)).kernel == Int8Kernel::Widen)
    return false;
  // The integer GEMM packs constant weights at compile time; a product of
  // two run-time operands (attention's Q.K^T and P.V) would be the
  // portable scalar loop, slower than the Float32 batched GEMM.
  if (auto *mm = llvm::dyn_cast<MatMulNode>(&product))
    return isConstantBytes(mm->getRHS());
  if (auto *g = llvm::dyn_cast<GemmNode>(&product))
    return isConstantBytes(g->getB());
  // A depthwise convolution with one output per channel runs on its own
  // direct kernel (DepthwiseInt8.cpp); other groups of one input channel
  // (channel multipliers) would be one-row products through the GEMM's
  // packing, which costs more than the Float32 depthwise kernel's work.
  auto *conv = llvm::dyn_cast<ConvNode>(&product);
  if (!conv || conv->getGroup() == 1 || conv->getFilter().dims()[1] != 1)
    return true;
  return conv->getFilter().dims()[0] == conv->getInput().dims()[1];
}
