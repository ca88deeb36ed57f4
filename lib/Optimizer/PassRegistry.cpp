//===- PassRegistry.cpp - The one list of passes and default pipelines ----===//
#include "Passes/Passes.h"

using namespace ember;

namespace {
struct RegistryEntry {
  const char *name;
  std::unique_ptr<Pass> (*create)();
};
template <typename P> std::unique_ptr<Pass> make() {
  return std::make_unique<P>();
}
template <typename P> constexpr RegistryEntry entry() {
  return {P::kName, make<P>};
}
const RegistryEntry kRegistry[] = {
    entry<DCEPass>(),
    entry<CSEPass>(),
    entry<ConstantFoldPass>(),
    entry<RemoveNoOpsPass>(),
    entry<ArithSimplifyPass>(),
    entry<SplatFoldPass>(),
    entry<ReshapeMergePass>(),
    entry<TransposeOptPass>(),
    entry<FoldBatchNormPass>(),
    entry<MatMulFormPass>(),
    entry<MergeMatMulAddPass>(),
    entry<ChannelShufflePass>(),
    entry<FuseConvResidualPass>(),
    entry<FuseConvActivationPass>(),
    entry<FuseGeluPass>(),
    entry<FuseMatMulEpiloguePass>(),
    entry<FuseLayerNormPass>(),
    entry<FuseSoftmaxMaskPass>(),
    entry<FuseAttentionPass>(),
    entry<LowerPass>(),
    entry<ConvLayoutPass>(),
    entry<MergeParallelPass>(),
    entry<CastMergePass>(),
    entry<FoldPadIntoConvPass>(),
    entry<FoldPadIntoPoolPass>(),
    entry<FoldScaleIntoConvPass>(),
    entry<TrimConvTapsPass>(),
    entry<ConcatMergePass>(),
    entry<SliceConcatPass>(),
    entry<FoldQDQPass>(),
    entry<CenterIntWeightsPass>(),
    entry<WidenHalfPass>(),
    entry<ConvertPrecisionPass>(),
};
} // namespace

std::unique_ptr<Pass> ember::createPass(llvm::StringRef name) {
  for (const RegistryEntry &e : kRegistry)
    if (name == e.name)
      return e.create();
  return nullptr;
}

std::vector<std::string> ember::getPassNames() {
  std::vector<std::string> names;
  for (const RegistryEntry &e : kRegistry)
    names.push_back(e.name);
  return names;
}

/// The cleanups that enable each other, run together to a fixed point.
static PipelineStage cleanups(bool withFolding) {
  PipelineStage s{{"remove-noops", "reshape-merge", "transpose-opt",
                   "splat-fold", "arith-simplify", "cast-merge", "concat-merge",
                   "slice-concat", "cse"},
                  true};
  if (withFolding)
    s.passes.push_back("constant-fold");
  s.passes.push_back("dce");
  return s;
}

Pipeline ember::getDefaultPipeline() {
  return {
      {{"dce", "fold-qdq"}, false}, // before folding: it needs the int8 weights
      cleanups(/*withFolding=*/true),
      {{"fuse-gelu", "fuse-layernorm"}, false},
      {{"fold-pad-into-conv", "fold-pad-into-pool", "fold-batchnorm",
        "trim-conv-taps", "fold-scale-into-conv", "channel-shuffle",
        "fuse-softmax-mask", "fuse-attention", "matmul-form",
        "center-int-weights", "merge-matmul-add", "fuse-conv-residual",
        "fuse-conv-activation", "merge-parallel", "conv-layout", "dce"},
       false},
      {{"lower"}, false},
      {{"widen-half"}, false},
      {{"convert-precision"}, false},
      {{"fuse-matmul-epilogue"}, false},
      cleanups(/*withFolding=*/true),
  };
}

Pipeline ember::getMinimalPipeline() {
  return {{{"dce", "lower", "dce"}, false}};
}
