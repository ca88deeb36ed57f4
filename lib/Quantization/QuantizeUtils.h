//===- QuantizeUtils.h - Pieces of the profile-guided quantizer -*- C++ -*-===//
#ifndef EMBER_LIB_QUANTIZATION_QUANTIZEUTILS_H
#define EMBER_LIB_QUANTIZATION_QUANTIZEUTILS_H

#include "ember/Quantization/Quantize.h"

namespace ember {
namespace quant {

/// True if \p opts keeps nodes of \p kind in float.
bool keeps(const QuantizationOptions &opts, llvm::StringRef kind);

/// Dequantize(Quantize(x)) with the per-tensor parameters \p p.
NodeValue quantDequant(Function &F, const std::string &name, NodeValue x,
                       const QuantParams &p);

/// A per-tensor Dequantize of 8-bit values with a constant scale (what
/// quantDequant makes).
bool isByteDequantize(NodeValue v);

/// The first element of the Float32 constant \p v.
float scalarOf(NodeValue v);

/// The elements of the Float32 Constant \p v into \p out; false if \p v is
/// no such constant.
bool floatValues(NodeValue v, std::vector<float> &out);

/// The bias of a Gemm as \p n values (its C times beta, C a constant row
/// broadcast to the result); false if C is something else.
bool gemmBias(NodeValue c, float beta, dim_t n, std::vector<float> &out);

/// Folds the inference BatchNorm \p bn (constant parameters) into the
/// filter \p w ([C][...]) and bias \p b of the Conv it follows; false,
/// with nothing changed, if its parameters are not constants.
bool foldBatchNorm(BatchNormNode *bn, std::vector<float> &w,
                   std::vector<float> &b);

/// Symmetric Int8 weights and their Dequantize.
struct WeightsQ {
  NodeValue value;           ///< Dequantize of the Int8 constant
  std::vector<float> scales; ///< one, or one per channel
};

/// Quantizes \p w (shape \p dims, \p channels output channels along
/// \p axis, channel-major or channel-minor) per tensor or per channel.
WeightsQ quantizeWeights(Function &F, const std::string &name,
                         const std::vector<float> &w,
                         llvm::ArrayRef<dim_t> dims, dim_t channels,
                         bool channelMajor, int64_t axis,
                         const QuantizationOptions &opts);

/// The Int32 bias at scale \p xScale * \p wScales[c] and its Dequantize.
NodeValue quantizeBias(Function &F, const std::string &name,
                       const std::vector<float> &b, float xScale,
                       const std::vector<float> &wScales);

} // namespace quant
} // namespace ember

#endif // EMBER_LIB_QUANTIZATION_QUANTIZEUTILS_H
