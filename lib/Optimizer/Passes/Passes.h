//===- Passes.h - Every graph pass, declared for the registry ---*- C++ -*-===//
//
// Private to lib/Optimizer. Each pass is a small class with a registry name
// and a description; its run() lives in Passes/<Name>.cpp. PassRegistry.cpp
// lists them all.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_LIB_OPTIMIZER_PASSES_PASSES_H
#define EMBER_LIB_OPTIMIZER_PASSES_PASSES_H

#include "ember/Optimizer/PassManager.h"

namespace ember {

/// Gives a pass class its name and description from static members.
template <typename Derived> class NamedPass : public Pass {
public:
  llvm::StringRef getName() const override { return Derived::kName; }
  llvm::StringRef getDescription() const override { return Derived::kDesc; }
};

#define EMBER_DECLARE_PASS(Class, Name, Desc)                                  \
  class Class final : public NamedPass<Class> {                                \
  public:                                                                      \
    static constexpr const char *kName = Name;                                 \
    static constexpr const char *kDesc = Desc;                                 \
    bool run(Function &F, PassContext &ctx) override;                          \
  };

EMBER_DECLARE_PASS(DCEPass, "dce", "remove nodes whose results are unused")
EMBER_DECLARE_PASS(CSEPass, "cse", "merge nodes that compute the same value")
EMBER_DECLARE_PASS(ConstantFoldPass, "constant-fold",
                   "evaluate subgraphs of constants into new constants")
EMBER_DECLARE_PASS(FoldQDQPass, "fold-qdq",
                   "fold Dequantize/Quantize around Conv, MatMul and Gemm "
                   "into integer products")
EMBER_DECLARE_PASS(FoldBatchNormPass, "fold-batchnorm",
                   "fold inference BatchNorm into the preceding Conv or Gemm")
EMBER_DECLARE_PASS(FuseConvActivationPass, "fuse-conv-activation",
                   "fuse Relu/Clip/Sigmoid after a Conv into its epilogue")
EMBER_DECLARE_PASS(FuseConvResidualPass, "fuse-conv-residual",
                   "fuse Add(Conv, x) into the Conv's Residual operand")
EMBER_DECLARE_PASS(FuseMatMulEpiloguePass, "fuse-matmul-epilogue",
                   "fuse bias, residual Add and activation after a MatMul "
                   "into its epilogue")
EMBER_DECLARE_PASS(FuseGeluPass, "fuse-gelu",
                   "recognize the erf and tanh GELU patterns as one Gelu")
EMBER_DECLARE_PASS(FuseLayerNormPass, "fuse-layernorm",
                   "recognize layer normalization patterns as one LayerNorm")
EMBER_DECLARE_PASS(FuseSoftmaxMaskPass, "fuse-softmax-mask",
                   "fold a constant scale, an additive mask and a causal "
                   "Where into the Softmax of attention scores")
EMBER_DECLARE_PASS(FuseAttentionPass, "fuse-attention",
                   "recognize scaled dot-product attention as one Attention")
EMBER_DECLARE_PASS(TransposeOptPass, "transpose-opt",
                   "merge, cancel and sink Transposes")
EMBER_DECLARE_PASS(ReshapeMergePass, "reshape-merge",
                   "merge chains of Reshapes")
EMBER_DECLARE_PASS(RemoveNoOpsPass, "remove-noops",
                   "remove nodes that return their input unchanged")
EMBER_DECLARE_PASS(ArithSimplifyPass, "arith-simplify",
                   "x*1, x+0, x-0, x/1, --x and arithmetic on splats")
EMBER_DECLARE_PASS(CenterIntWeightsPass, "center-int-weights",
                   "IntMatMul of constant bytes at their centered zero point "
                   "(0 or 128) plus an Int32 row-sum correction")
EMBER_DECLARE_PASS(SplatFoldPass, "splat-fold",
                   "fold Reshape/Broadcast/Transpose of a Splat into a Splat")
EMBER_DECLARE_PASS(MatMulFormPass, "matmul-form",
                   "fold last-two-dim Transposes into MatMul's TransB and "
                   "flatten N-D x 2-D MatMuls into one 2-D MatMul")
EMBER_DECLARE_PASS(MergeMatMulAddPass, "merge-matmul-add",
                   "merge MatMul + Add (and Gemm + Add) into one Gemm")
EMBER_DECLARE_PASS(ChannelShufflePass, "channel-shuffle",
                   "recognize Reshape-Transpose-Reshape as ChannelShuffle")
EMBER_DECLARE_PASS(LowerPass, "lower",
                   "lower nodes the backend asks for into simpler nodes")
EMBER_DECLARE_PASS(ConvLayoutPass, "conv-layout",
                   "put convolutions in the backend's preferred layout")
EMBER_DECLARE_PASS(MergeParallelPass, "merge-parallel",
                   "merge MatMuls/Gemms/Convs that share their input")
EMBER_DECLARE_PASS(CastMergePass, "cast-merge",
                   "merge Cast chains whose inner Cast is exact")
EMBER_DECLARE_PASS(FoldPadIntoConvPass, "fold-pad-into-conv",
                   "fold a zero Pad of the spatial dims into the Conv")
EMBER_DECLARE_PASS(TrimConvTapsPass, "trim-conv-taps",
                   "cut Conv filter taps that read only padding")
EMBER_DECLARE_PASS(FoldScaleIntoConvPass, "fold-scale-into-conv",
                   "move a per-channel scale of a Conv's input into its filter")
EMBER_DECLARE_PASS(FoldPadIntoPoolPass, "fold-pad-into-pool",
                   "fold a zero Pad of the spatial dims into the AvgPool")
EMBER_DECLARE_PASS(ConcatMergePass, "concat-merge",
                   "flatten a Concat of a Concat on the same axis")
EMBER_DECLARE_PASS(SliceConcatPass, "slice-concat",
                   "Slice of a Concat operand, Concat of adjacent Slices")
EMBER_DECLARE_PASS(WidenHalfPass, "widen-half",
                   "run Float16 ops the backend lacks on Float32 operands, "
                   "rounding their results back to Float16")
EMBER_DECLARE_PASS(ConvertPrecisionPass, "convert-precision",
                   "make MatMuls read bf16 operands under -precision=bf16")

#undef EMBER_DECLARE_PASS

} // namespace ember

#endif
