//===- CUDABackend.cpp - The CUDA backend's capabilities ------------------===//
#include "CUDA.h"

#include "ember/Base/Error.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"

using namespace ember;
using namespace ember::cuda;

bool CUDABackend::isOpSupported(const Node &n) const {
  return isTableOp(n.getKind()) && cudaSupports(n);
}

bool CUDABackend::shouldLower(const Node &n) const {
  // Conv keeps its fused epilogue and runs on cuDNN or as a generated
  // direct convolution; everything else is lowered as for the Interpreter,
  // MatMul included: the cuBLASLt descriptor has one batch stride per
  // operand and no transpose, so broadcast and transposed operands are
  // materialized by the lowering rule.
  return !llvm::isa<ConvNode>(n);
}

bool CUDABackend::supportsFusedActivation(FusedActivation act) const {
  // The generated convolution applies every kind up to SiLU (cuDNN a
  // subset; Conv falls back to the generated kernel for the others); the
  // GELU kinds are MatMul epilogues, which this backend does not fuse.
  return act != FusedActivation::NumKinds && act != FusedActivation::Gelu &&
         act != FusedActivation::GeluTanh;
}

llvm::Error CUDABackend::saveBundle(const Module & /*M*/, const IRFunction &F,
                                    const MemoryPlan &plan,
                                    const BundleOptions &opts) const {
  const CUDACodegenOptions &cudaOpts = opts.codegen.cuda;
  std::string arch = cudaOpts.arch.empty() ? kDefaultArch : cudaOpts.arch;
  if (!isValidArch(arch))
    return makeErrorF("-cuda-arch '{0}' is not an architecture like sm_90",
                      arch);
  CUDACodegenOptions copts = cudaOpts;
  // The library-op host code exists as x86_64 bitcode only.
  const std::string &target = opts.codegen.target.triple;
  llvm::Triple triple(target.empty() ? llvm::sys::getProcessTriple() : target);
  if (triple.getArch() != llvm::Triple::x86_64) {
    if (copts.gemm == LibChoice::Library || copts.conv == LibChoice::Library)
      return makeErrorF("cuBLASLt/cuDNN calls in CUDA bundles need an x86_64 "
                        "host target, not '{0}'",
                        triple.str());
    copts.gemm = copts.conv = LibChoice::Generated;
  }
  EMBER_ASSIGN_OR_RETURN(CUDAProgram prog, lowerForCUDA(F, plan, copts));
  if (opts.verbose)
    for (const std::string &c : prog.choices)
      llvm::errs() << "CUDA: " << c << "\n";
  CUDASource src = renderCUDA(prog, opts.networkName);
  EMBER_ASSIGN_OR_RETURN(CUDABinary bin,
                         compileWithNVRTC(src.text, arch, opts.networkName));
  if (opts.verbose) {
    llvm::errs() << "CUDA: " << src.launches.size()
                 << " kernels compiled by NVRTC for " << arch << " in "
                 << llvm::format("%.2f", bin.compileSeconds) << " s (cubin "
                 << bin.cubin.size() << " bytes, PTX " << bin.ptx.size()
                 << " bytes); " << prog.libOps.size() << " library calls";
    if (prog.usesCublasLt() || prog.usesCudnn())
      llvm::errs() << "; link with"
                   << (prog.usesCublasLt() ? " -lcublasLt" : "")
                   << (prog.usesCudnn() ? " -lcudnn" : "") << " -lcudart";
    llvm::errs() << "\n";
  }
  return writeCUDABundle(F, plan, prog, src, bin, opts);
}
