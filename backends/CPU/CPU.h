//===- CPU.h - Internals of the CPU backend --------------------*- C++ -*-===//
#ifndef EMBER_BACKENDS_CPU_CPU_H
#define EMBER_BACKENDS_CPU_CPU_H

#include "ember/Backend/Backend.h"
#include "ember/Kernel/ConstantImage.h"
#include "ember/Kernel/Kernel.h"

#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Module.h"
#include "llvm/Target/TargetMachine.h"

namespace ember {
namespace cpu {

/// One loop kept as a loop (docs/ControlFlow.md): the indices of its
/// loopbegin and loopend kernels, and the activation-region byte where
/// both leave their test's answer (1: run the body again). The entries
/// branch on it right after calling either kernel.
struct CPULoop {
  size_t begin, end;
  uint64_t flagOffset;
};

/// A network ready for LLVM: its kernels, its loops and the constant region
/// image (planned constants, with conv filters re-laid out for libjit).
struct CPUProgram {
  std::vector<kir::Kernel> kernels;
  std::vector<CPULoop> loops;
  std::vector<uint8_t> constants;
  size_t mutableSize = 0;
  size_t activationSize = 0;
  /// Byte offset in the mutable region of the Int64 run-time check status
  /// (Module::getCheckStatus), which the entries return; -1 without one.
  int64_t checkOffset = -1;
};

/// A libjit call argument: buffer \p b at element \p offset, or a value.
inline kir::CallArg bufArg(unsigned b, kir::ExprRef offset = nullptr) {
  return kir::CallArg{true, b, offset};
}
inline kir::CallArg valArg(kir::ExprRef e) { return kir::CallArg{false, 0, e}; }

/// True when \p I's filter is a constant weight (known at compile time, so
/// it can be packed or transformed then).
bool hasConstantFilter(const ConvInst &I);

/// Appends to the constant image (ember/Kernel/ConstantImage.h).
using kir::appendConstant;

/// ReduceSum, ReduceMean, ReduceMin or ReduceMax \p I of float32 over its
/// input's trailing axes (runs of at least 16) as libjit calls reducing
/// each run with vectors, or none for any other instruction
/// (ReduceLowering.cpp).
std::optional<kir::Kernel> lowerTrailingReduce(const Instruction &I,
                                               const MemoryPlan &plan);

/// Softmax \p I of float32 over its input's last axis as one libjit call
/// per row (Softmax.inc), or none for any other instruction
/// (SoftmaxLowering.cpp).
std::optional<kir::Kernel> lowerSoftmaxRows(const Instruction &I,
                                            const MemoryPlan &plan);

/// Resize \p I of float32 whose leading dims keep their size as one libjit
/// call per plane over tap tables appended to \p constants, or none for
/// any other instruction (ResizeLowering.cpp).
std::optional<kir::Kernel> lowerResizePlanes(const Instruction &I,
                                             const MemoryPlan &plan,
                                             std::vector<uint8_t> &constants);

/// TopK \p I of float32 along its input's last axis as one libjit call per
/// row (TopK.inc), or none for any other instruction (TopKLowering.cpp).
std::optional<kir::Kernel> lowerTopKRows(const Instruction &I,
                                         const MemoryPlan &plan);

/// ScaledSoftmax \p I as one libjit call per row, or none for any other
/// instruction (AttentionLowering.cpp).
std::optional<kir::Kernel> lowerScaledSoftmaxRows(const Instruction &I,
                                                  const MemoryPlan &plan);

/// An Attention task's blocks: nv vectors of 16 queries, keys per block.
struct AttentionBlocks {
  int64_t nv, bk;
};
/// The blocks of an Attention with \p tq queries on kernel target \p T
/// (AttentionLowering.cpp).
AttentionBlocks chooseAttentionBlocks(const TargetDesc &T, int64_t tq);
/// Attention \p I as one libjit call per batch index and query block, or
/// none for any other instruction.
std::optional<kir::Kernel> lowerAttentionBlocks(const Instruction &I,
                                                const MemoryPlan &plan,
                                                const TargetDesc &T);

struct MatMulOperand;
/// Appends to \p out the kernel that packs MatMul \p I's A [..., m, K],
/// read as \p A says (MatMulOperands.h), into row tiles of \p mr rows
/// (chunks of 16 columns), at \p scratchAt in the activation region
/// (raising \p scratchSize to cover it), and returns the packed buffer
/// (MatMulLowering.cpp).
kir::Buffer packMatMulLHS(const MatMulInst &I, const MatMulOperand &A,
                          const MemoryPlan &plan, int64_t mr, size_t scratchAt,
                          size_t &scratchSize, std::vector<kir::Kernel> &out);

/// Appends the bias and residual arguments of ember_matmul_f32 (and of the
/// BFloat16 MatMul kernels) for \p I
/// to \p args (null where absent); the residual of the batch matrix at
/// \p cOffset, as C's (MatMulLowering.cpp).
void appendMatMulEpilogue(kir::Kernel &k, const MatMulInst &I,
                          const MemoryPlan &plan, kir::ExprRef cOffset,
                          std::vector<kir::CallArg> &args);

/// The loops of \p kernels, found by their loopbegin / loopend sources.
std::vector<CPULoop> findKernelLoops(llvm::ArrayRef<kir::Kernel> kernels,
                                     uint64_t flagOffset);

/// True if the CPU backend can run node \p n.
bool cpuSupports(const Node &n);

/// The residual operand of a libjit conv call: \p I's residual buffer at
/// \p offset (elements), or a null pointer when it has none.
kir::CallArg convResidualArg(kir::Kernel &k, const ConvInst &I,
                             const MemoryPlan &plan, kir::ExprRef offset);

/// Appends the fused activation of \p I (a Conv or MatMul) as every libjit
/// kernel with an epilogue takes it after its sizes: act (a
/// FusedActivation), alpha, beta.
template <typename InstT>
void appendFusedActivation(kir::Kernel &k, const InstT &I,
                           std::vector<kir::CallArg> &args) {
  args.push_back(valArg(k.constInt(int64_t(I.getFusedActivation()))));
  args.push_back(valArg(k.constFloat(I.getFusedAlpha())));
  args.push_back(valArg(k.constFloat(I.getFusedBeta())));
}

/// The target as the CPU's kernel rules see it: \p T with \p opts'
/// simdWidth (if set) as its vector width, 512 bits with 32 registers.
TargetDesc kernelTarget(const TargetDesc &T, const CPUCodegenOptions &opts);

/// True when libjit's 16-lane kernels and tiles suit \p T: 16 float lanes
/// and 32 vector registers (AVX-512); otherwise the 8-lane ones, whose tiles
/// fit 16 registers.
bool useWideKernels(const TargetDesc &T);

/// Lowers planned IR to kernels for \p T (a kernelTarget); Conv and MatMul
/// become libjit calls, along the paths \p opts force. \p weightCopied,
/// if set, gets each constant payload once the constant image holds it
/// (BundleOptions::weightCopied).
llvm::Expected<CPUProgram> lowerForCPU(const IRFunction &F,
                                       const MemoryPlan &plan,
                                       const TargetDesc &T,
                                       const CPUCodegenOptions &opts,
                                       const WeightCopied &weightCopied = {});

/// Renders \p k into \p M as `void NAME(ptr constants, ptr mutables,
/// ptr activations, i64 begin, i64 end)`, where [begin, end) bounds the
/// loop splitLoop picks (or is [0, 1) for a sequential kernel).
llvm::Function *renderKernel(const kir::Kernel &k, llvm::Module &M);

/// A kernel's buffers in groups: buffers whose bytes overlap (through
/// other buffers too) form one group, addressed from its lowest byte;
/// different groups never overlap.
struct BufferGroups {
  struct Base {
    Region region;
    uint64_t offset;
  };
  std::vector<unsigned> groupOf; ///< Per buffer.
  std::vector<Base> bases;       ///< Per group, numbered by first buffer.
};
BufferGroups groupBuffers(const kir::Kernel &k);

/// Equal for kernels that render to the same code once each buffer group's
/// base address is an argument: everything the renderer reads but the
/// groups' bases and the names.
std::string kernelShapeKey(const kir::Kernel &k);

/// Renders \p k's code as `void NAME(ptr group0, ..., ptr groupN-1, i64
/// begin, i64 end)` (groups of groupBuffers, each argument noalias), the
/// body every kernel of \p k's shape key calls.
llvm::Function *renderSharedBody(const kir::Kernel &k, llvm::Module &M,
                                 llvm::StringRef name);

/// The type of renderSharedBody's function for \p k.
llvm::FunctionType *sharedBodyType(const kir::Kernel &k,
                                   llvm::LLVMContext &ctx);

/// Renders \p k like renderKernel, as a call of \p body (a
/// renderSharedBody of a kernel with \p k's shape key) with the addresses
/// of \p k's buffer groups.
llvm::Function *renderKernelCalling(const kir::Kernel &k, llvm::Function *body,
                                    llvm::Module &M);

/// exp(\p x) for a float \p x as inline arithmetic that vectorizes (other
/// types: llvm.exp). See FastMath.cpp for its accuracy.
llvm::Value *emitFastExp(llvm::IRBuilder<> &b, llvm::Value *x);

/// log, tanh and erf of a float \p x as inline arithmetic that vectorizes,
/// like emitFastExp; null for other types (the caller emits the libm
/// call). The error bounds are in docs/Math.md.
llvm::Value *emitFastLog(llvm::IRBuilder<> &b, llvm::Value *x);
llvm::Value *emitFastTanh(llvm::IRBuilder<> &b, llvm::Value *x);
llvm::Value *emitFastErf(llvm::IRBuilder<> &b, llvm::Value *x);
/// Phi(x), the standard normal CDF (GELU's erf form is x Phi(x)), like
/// emitFastErf.
llvm::Value *emitFastNormCdf(llvm::IRBuilder<> &b, llvm::Value *x);

/// The loop a rendered kernel's [begin, end) bounds (null: sequential).
const kir::Stmt *splitLoop(const kir::Kernel &k);

/// The number of iterations a rendered kernel's [begin, end) spans.
int64_t kernelExtent(const kir::Kernel &k);

/// Options of buildModule.
struct ModuleOptions {
  std::string name;          ///< Entry point name.
  bool embedWeights = false; ///< Put the constant image in the module.
  /// Also add NAME_profile, which calls a timer hook between kernels.
  bool profileEntry = false;
  /// libjit's 16-lane kernels (useWideKernels of the kernel target): sets
  /// its ember_wide_simd, and lets the loop vectorizer use 512-bit vectors.
  bool wideKernels = false;
};

/// Builds the network's module for \p TM: libjit linked in, one function per
/// kernel, the entry points NAME and NAME_mt (and NAME_profile when asked),
/// then the O3 pipeline.
llvm::Expected<std::unique_ptr<llvm::Module>>
buildModule(const CPUProgram &prog, llvm::LLVMContext &ctx,
            llvm::TargetMachine &TM, const ModuleOptions &opts);

/// Writes the bundle files for \p prog, compiled by \p TM with libjit's
/// 16-lane kernels if \p wideKernels (see docs/Bundle.md). Unless the
/// weights are embedded, \p prog's constant image is released once
/// NAME.weights.bin is written.
llvm::Error writeBundle(const Module &M, const IRFunction &F,
                        const MemoryPlan &plan, CPUProgram &prog,
                        llvm::TargetMachine &TM, bool wideKernels,
                        const BundleOptions &opts);

} // namespace cpu

/// The CPU backend: kernels rendered to LLVM IR, libjit for conv/matmul,
/// ORC LLJIT in process and object files for bundles.
class CPUBackend final : public Backend {
public:
  llvm::StringRef getName() const override { return "CPU"; }
  bool isOpSupported(const Node &n) const override;
  bool shouldLower(const Node &n) const override;
  /// libjit's conv epilogues apply every FusedActivation to the
  /// accumulators as whole vectors (libjit.cpp's activateV), which saves
  /// the activation's pass over memory
  /// (docs/PerformanceHistory.md#fused-activations).
  bool supportsFusedActivation(FusedActivation) const override { return true; }
  /// libjit's MatMul applies bias, residual and activation to its
  /// accumulators before the last K block's store (MatMul.inc).
  bool supportsMatMulEpilogue() const override { return true; }
  bool supportsConvResidual() const override { return true; }
  bool supportsBF16MatMul() const override { return true; }
  bool supportsNarrowWeights() const override { return true; }
  /// Where libjit's vpdpbusd kernel runs, except for depthwise
  /// convolutions (MatMulInt8.cpp's rule).
  bool prefersIntegerProduct(const Node &product,
                             const CodegenOptions &opts) const override;
  /// Every conv kernel's epilogue reads a residual element before it
  /// writes that output element (the channel-vector GEMM's whole-vector
  /// stores past a tile are off when the two are one buffer).
  bool convResidualInPlace() const override { return true; }
  /// A computed filter is packed by a kernel before its GEMM (Winograd
  /// only takes constant ones).
  bool supportsRuntimeConvFilter() const override { return true; }
  llvm::Error printConvPlans(const IRFunction &F, const CodegenOptions &opts,
                             llvm::raw_ostream &os) const override;
  llvm::Expected<std::unique_ptr<CompiledFunction>>
  compile(const Module &M, std::shared_ptr<const IRFunction> F,
          const MemoryPlan &plan, const CodegenOptions &opts) const override;
  llvm::Error saveBundle(const Module &M, const IRFunction &F,
                         const MemoryPlan &plan,
                         const BundleOptions &opts) const override;
};

} // namespace ember

#endif
