//===- CUDALowering.cpp - Kernels and constant image for CUDA -------------===//
//
// Everything goes through the shared kernel lowering except Conv, which
// becomes one parallel loop over output elements calling the generated
// direct convolution `ember_conv2d_f32` of the CUDA prelude (see
// CUDARenderer.cpp). MatMul uses the shared lowering's loop nest, which the
// renderer maps to one thread per output element.
//
//===----------------------------------------------------------------------===//
#include "CUDA.h"

#include "ember/Kernel/LowerToKernel.h"

#include <cstring>

using namespace ember;
using namespace ember::cuda;
using kir::CallArg;
using kir::ExprRef;
using kir::Kernel;

bool cuda::cudaSupports(const Node &n) {
  if (llvm::isa<ConvNode>(n))
    return n.getType()->getElemKind() == ElemKind::Float32;
  return kir::hasKernelLowering(n);
}

static CallArg bufArg(unsigned b) { return CallArg{true, b, nullptr}; }
static CallArg valArg(ExprRef e) { return CallArg{false, 0, e}; }

/// One parallel loop over the output elements of \p I; each iteration calls
/// the prelude's direct convolution for its flat output index.
static Kernel lowerConv(const ConvInst &I, const MemoryPlan &plan) {
  auto xd = I.getInput()->getType()->dims();
  auto wd = I.getFilter()->getType()->dims();
  auto yd = I.getDest()->getType()->dims();
  auto st = I.getStrides(), pads = I.getPads(), dil = I.getDilations();
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
  for (int64_t v : {int64_t(!res.empty()), xd[1], xd[2], xd[3], wd[0], wd[2],
                    wd[3], yd[2], yd[3], st[0], st[1], pads[0], pads[1], dil[0],
                    dil[1], I.getGroup(), I.getFusedActivation()})
    args.push_back(valArg(k.constInt(v)));
  args.push_back(valArg(k.constFloat(I.getFusedAlpha())));
  args.push_back(valArg(k.constFloat(I.getFusedBeta())));
  args.push_back(valArg(k.var(e)));
  k.body() = {Kernel::loop(e, I.getDest()->getType()->size(),
                           /*parallel=*/true,
                           {Kernel::call("ember_conv2d_f32", args)})};
  return k;
}

llvm::Expected<CUDAProgram> cuda::lowerForCUDA(const IRFunction &F,
                                               const MemoryPlan &plan) {
  CUDAProgram prog;
  prog.constants.assign(plan.constantSize, 0);
  for (auto &w : F.getWeights())
    if (w->isConstant())
      std::memcpy(prog.constants.data() +
                      plan.placements.lookup(w.get()).offset,
                  w->getPayload()->data(), w->getType()->sizeInBytes());
  prog.mutableSize = plan.mutableSize;
  prog.activationSize = plan.activationSize;
  auto kernels = kir::lowerToKernels(
      F, plan,
      [&](const Instruction &I,
          std::vector<Kernel> &out) -> llvm::Expected<bool> {
        if (auto *c = llvm::dyn_cast<ConvInst>(&I)) {
          out.push_back(lowerConv(*c, plan));
          prog.choices.push_back((I.getName() +
                                  ": Conv -> generated direct convolution "
                                  "(one thread per output element)")
                                     .str());
          return true;
        }
        if (llvm::isa<MatMulInst>(I))
          prog.choices.push_back(
              (I.getName() + ": MatMul -> generated kernel from the shared "
                             "lowering (one thread per output element)")
                  .str());
        return false;
      });
  if (!kernels)
    return kernels.takeError();
  prog.kernels = std::move(*kernels);
  prog.constants.resize((prog.constants.size() + 63) / 64 * 64, 0);
  return std::move(prog);
}
