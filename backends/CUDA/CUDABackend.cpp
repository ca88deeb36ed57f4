//===- CUDABackend.cpp - The CUDA backend's capabilities ------------------===//
#include "CUDA.h"

#include "ember/Base/Error.h"

#include "llvm/Support/raw_ostream.h"

using namespace ember;
using namespace ember::cuda;

bool CUDABackend::isOpSupported(const Node &n) const {
  return isTableOp(n.getKind()) && cudaSupports(n);
}

bool CUDABackend::shouldLower(const Node &n) const {
  // Conv keeps its fused epilogue and runs as a generated direct
  // convolution; everything else is lowered as for the Interpreter.
  return !llvm::isa<ConvNode>(n);
}

llvm::Error CUDABackend::saveBundle(const Module &M, const IRFunction &F,
                                    const MemoryPlan &plan,
                                    const BundleOptions &opts) const {
  std::string arch = opts.cudaArch.empty() ? kDefaultArch : opts.cudaArch;
  if (!isValidArch(arch))
    return makeErrorF("-cuda-arch '{0}' is not an architecture like sm_90",
                      arch);
  EMBER_ASSIGN_OR_RETURN(CUDAProgram prog, lowerForCUDA(F, plan));
  if (opts.verbose)
    for (const std::string &c : prog.choices)
      llvm::errs() << "CUDA: " << c << "\n";
  CUDASource src = renderCUDA(prog, opts.networkName);
  EMBER_ASSIGN_OR_RETURN(CUDABinary bin,
                         compileWithNVRTC(src.text, arch, opts.networkName));
  if (opts.verbose)
    llvm::errs() << "CUDA: " << src.launches.size()
                 << " kernels compiled by NVRTC for " << arch << " in "
                 << llvm::format("%.2f", bin.compileSeconds) << " s (cubin "
                 << bin.cubin.size() << " bytes, PTX " << bin.ptx.size()
                 << " bytes)\n";
  return writeCUDABundle(F, plan, prog, src, bin, opts);
}
