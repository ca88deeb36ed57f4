//===- OpsetHistory.cpp - Op versions past opset 17 ----------------------===//
//
// Read from the operator schemas of onnx 1.23 (opset 28): for every op with
// a version past 17, the versions whose inputs, attributes or meaning
// changed. Versions not listed changed element types only: Acos..Tan,
// Conv, ConvTranspose, pooling and the RNNs at 22 (bfloat16); Cast,
// CastLike, Constant, Identity, Reshape, Shape, Size, Flatten, Squeeze,
// Unsqueeze, Transpose, If, Loop, Scan at 19/21/23/24/25 (float8, int4,
// float4, ...); Cast's `saturate` (19) and `round_mode` (24) concern float8
// targets only; TopK at 24; the ops bumped at 28 (BitShift, Celu,
// Compress, DepthToSpace, Einsum, Mod, OneHot, ReduceLogSum(Exp),
// ReverseSequence, Unique); Range's `stash_type` (27) keeps float32
// arithmetic for float32 inputs.
//
//===----------------------------------------------------------------------===//
#include "OpsetHistory.h"

#include <algorithm>

using namespace ember;

namespace {

struct OpChanges {
  const char *opType;
  /// Versions past 17 that changed more than element types, ascending.
  int64_t versions[3];
};

const OpChanges kChanges[] = {
    // Attributes or inputs added or moved.
    {"AveragePool", {19}},            // dilations
    {"DFT", {20}},                    // axis becomes an input
    {"DequantizeLinear", {21, 23}},   // block_size; output_dtype
    {"QuantizeLinear", {21, 23}},     // block_size, output_dtype; precision
    {"GridSample", {20}},             // N-D; modes renamed (bilinear -> linear)
    {"GroupNormalization", {18, 21}}, // new; scale and bias per channel
    {"LpPool", {18}},                 // ceil_mode, dilations
    {"OptionalHasElement", {18}},
    {"OptionalGetElement", {18}},
    {"Pad", {18, 19}},  // axes input; wrap mode
    {"ReduceL1", {18}}, // axes becomes an input
    {"ReduceL2", {18}},
    {"ReduceLogSum", {18}},
    {"ReduceLogSumExp", {18}},
    {"ReduceMax", {18}},
    {"ReduceMean", {18}},
    {"ReduceMin", {18}},
    {"ReduceProd", {18}},
    {"ReduceSumSquare", {18}},
    {"Resize", {18, 19}},      // antialias, axes, aspect policy; a mode
    {"ScatterElements", {18}}, // reduction max / min
    {"ScatterND", {18}},
    {"SpaceToDepth", {28}}, // mode
    {"Split", {18}},        // num_outputs
    // Ops new past 17: their first version (later ones changed types).
    {"Attention", {23, 24, 25}},
    {"AffineGrid", {20}},
    {"BitCast", {26}},
    {"BitwiseAnd", {18}},
    {"BitwiseNot", {18}},
    {"BitwiseOr", {18}},
    {"BitwiseXor", {18}},
    {"CausalConvWithState", {27}},
    {"CenterCropPad", {18}},
    {"Col2Im", {18}},
    {"CumProd", {26}},
    {"DeformConv", {19}},
    {"Gelu", {20}},
    {"ImageDecoder", {20}},
    {"LinearAttention", {27}},
    {"Mish", {18}},
    {"RMSNormalization", {23}},
    {"RegexFullMatch", {20}},
    {"RotaryEmbedding", {23}},
    {"StringConcat", {20}},
    {"StringSplit", {20}},
    {"SwiGLU", {28}},
    {"Swish", {24}},
    {"TensorScatter", {24}},
};

} // namespace

int64_t onnximport::ruleOpset(llvm::StringRef opType, int64_t opset) {
  if (opset <= 17)
    return opset;
  int64_t at = 17;
  for (const OpChanges &c : kChanges) {
    if (opType != c.opType)
      continue;
    for (int64_t v : c.versions)
      if (v && v <= opset)
        at = std::max(at, v);
  }
  return at;
}
