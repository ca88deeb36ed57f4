//===- GeneratedKernels.cpp - CUDA's own MatMul and Conv kernels ----------===//
//
// Each kernel is one parallel loop calling a prelude function per element
// (per output element, or per lane of a tile: tiles x kTileThreads).
//
//===----------------------------------------------------------------------===//
#include "GeneratedKernels.h"
#include "DeviceCall.h"
#include "TiledKernels.h"

#include "ember/Kernel/LowerToKernel.h"

using namespace ember;
using namespace ember::cuda;
using kir::CallArg;
using kir::ExprRef;
using kir::Kernel;

static CallArg bufArg(unsigned b) { return CallArg{true, b, nullptr}; }
static CallArg valArg(ExprRef e) { return CallArg{false, 0, e}; }

static int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// Appends constant integer arguments.
static void addInts(Kernel &k, std::vector<CallArg> &args,
                    std::initializer_list<int64_t> values) {
  for (int64_t v : values)
    args.push_back(valArg(k.constInt(v)));
}

/// The stride between the matrices of an operand with \p opBatch matrices
/// of \p matrix elements, over \p batch result matrices: 0 when it is one
/// matrix read by all; nothing when it is broadcast over only some batch
/// dimensions.
static std::optional<int64_t> batchStride(int64_t opBatch, int64_t batch,
                                          int64_t matrix) {
  if (opBatch == batch)
    return batch == 1 ? 0 : matrix;
  if (opBatch == 1)
    return 0;
  return std::nullopt;
}

/// The buffer arguments of a generated GEMM: D, A, B and the bias (D
/// stands in when there is none; the epilogue code says to skip it).
static std::vector<CallArg> gemmBuffers(Kernel &ker, const MatMulInst &I,
                                        Value *dest, Value *bias,
                                        const MemoryPlan &plan) {
  unsigned d = ker.addBuffer(kir::bufferFor(dest, plan));
  unsigned a = ker.addBuffer(kir::bufferFor(I.getLHS(), plan));
  unsigned b = ker.addBuffer(kir::bufferFor(I.getRHS(), plan));
  unsigned bi = bias ? ker.addBuffer(kir::bufferFor(bias, plan)) : d;
  return {bufArg(d), bufArg(a), bufArg(b), bufArg(bi)};
}

std::optional<Kernel> cuda::tiledGemm(const MatMulInst &I, Value *dest,
                                      Value *bias, int64_t epi,
                                      const MemoryPlan &plan, bool tf32) {
  TypeRef ta = I.getLHS()->getType(), tb = I.getRHS()->getType();
  TypeRef td = I.getDest()->getType();
  unsigned r = ta->rank();
  int64_t m = ta->dims()[r - 2], k = ta->dims()[r - 1];
  int64_t n = td->dims().back();
  int64_t batch = td->size() / std::max<int64_t>(m * n, 1);
  auto sab =
      batchStride(ta->size() / std::max<int64_t>(m * k, 1), batch, m * k);
  auto sbb =
      batchStride(tb->size() / std::max<int64_t>(k * n, 1), batch, k * n);
  if (!sab || !sbb || ta->getElemKind() != ElemKind::Float32 || m * n == 0)
    return std::nullopt;
  bool tB = I.getTransB();
  Kernel ker(I.getName().str() + ".tiled");
  std::vector<CallArg> args = gemmBuffers(ker, I, dest, bias, plan);
  unsigned e = ker.newVar();
  addInts(ker, args,
          {m, n, k, *sab, k, 1, *sbb, tB ? 1 : n, tB ? k : 1, epi, tf32});
  args.push_back(valArg(ker.var(e)));
  int64_t tiles = batch * ceilDiv(m, kTileM) * ceilDiv(n, kTileN);
  ker.body() = {
      Kernel::loop(e, tiles * kTileThreads, /*parallel=*/true,
                   {EMBER_CUDA_CALL(ker, ember_gemm_tile_f32, args)})};
  return ker;
}

Kernel cuda::elementwiseGemm(const MatMulInst &I, Value *dest, Value *bias,
                             int64_t epi, const MemoryPlan &plan) {
  TypeRef ta = I.getLHS()->getType();
  unsigned r = ta->rank();
  int64_t m = ta->dims()[r - 2], k = ta->dims()[r - 1];
  int64_t n = I.getDest()->getType()->dims()[r - 1];
  Kernel ker(I.getName().str() + ".fallback");
  std::vector<CallArg> args = gemmBuffers(ker, I, dest, bias, plan);
  unsigned e = ker.newVar();
  addInts(ker, args, {m, n, k, epi});
  args.push_back(valArg(ker.var(e)));
  ker.body() = {Kernel::loop(e, I.getDest()->getType()->size(),
                             /*parallel=*/true,
                             {EMBER_CUDA_CALL(ker, ember_gemm_f32, args)})};
  return ker;
}

Kernel cuda::generatedConv(const ConvInst &I, const MemoryPlan &plan, bool tf32,
                           std::string &how) {
  auto xd = I.getInput()->getType()->dims();
  auto wd = I.getFilter()->getType()->dims();
  auto yd = I.getDest()->getType()->dims();
  auto st = I.getStrides(), pads = I.getPads(), dil = I.getDilations();
  int64_t group = I.getGroup(), perGroup = wd[0] / group;
  // A tile's rows are a group's output channels: with fewer than a quarter
  // of them (depthwise and narrow groups) most of each tile would be
  // padding, and a thread per output element does less work.
  bool tiled = perGroup * 4 >= kTileM;
  Kernel k(I.getName());
  unsigned y = k.addBuffer(kir::bufferFor(I.getDest(), plan));
  unsigned x = k.addBuffer(kir::bufferFor(I.getInput(), plan));
  unsigned w = k.addBuffer(kir::bufferFor(I.getFilter(), plan));
  unsigned b = k.addBuffer(kir::bufferFor(I.getBias(), plan));
  auto res = I.getResidual();
  // Without a residual the output buffer stands in; hasRes says to skip it.
  unsigned r = res.empty() ? y : k.addBuffer(kir::bufferFor(res[0], plan));
  unsigned e = k.newVar();
  std::vector<CallArg> args = {bufArg(y), bufArg(x), bufArg(w), bufArg(b),
                               bufArg(r)};
  addInts(k, args, {int64_t(!res.empty())});
  if (tiled)
    addInts(k, args, {xd[0]});
  addInts(k, args,
          {xd[1], xd[2], xd[3], wd[0], wd[2], wd[3], yd[2], yd[3], st[0], st[1],
           pads[0], pads[1], dil[0], dil[1], group, I.getFusedActivation()});
  args.push_back(valArg(k.constFloat(I.getFusedAlpha())));
  args.push_back(valArg(k.constFloat(I.getFusedBeta())));
  if (tiled)
    addInts(k, args, {tf32});
  args.push_back(valArg(k.var(e)));
  int64_t extent = I.getDest()->getType()->size();
  if (tiled)
    extent = group * ceilDiv(perGroup, kTileM) *
             ceilDiv(xd[0] * yd[2] * yd[3], kTileN) * kTileThreads;
  how = !tiled ? "direct, one thread per output element"
        : tf32 ? "tiled implicit GEMM, 64x64 tiles per group, TF32 tensor "
                 "cores"
               : "tiled implicit GEMM, 64x64 tiles per group";
  k.body() = {
      Kernel::loop(e, extent, /*parallel=*/true,
                   {tiled ? EMBER_CUDA_CALL(k, ember_conv_tile_f32, args)
                          : EMBER_CUDA_CALL(k, ember_conv2d_f32, args)})};
  return k;
}
