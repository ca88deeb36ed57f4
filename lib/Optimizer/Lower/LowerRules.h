//===- LowerRules.h - One lowering function per op -------------*- C++ -*-===//
//
// Private to lib/Optimizer. Each rule builds the replacement of one node
// and returns the values that replace its results, in result order.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_LIB_OPTIMIZER_LOWER_LOWERRULES_H
#define EMBER_LIB_OPTIMIZER_LOWER_LOWERRULES_H

#include "ember/Graph/Graph.h"

namespace ember {

using Replacement = llvm::SmallVector<NodeValue, 1>;

Replacement lowerGemm(Function &F, GemmNode &n);
/// Makes broadcast batch dims and a transposed RHS explicit (Broadcast,
/// Transpose) for a backend whose MatMul kernels read only equal batch dims
/// and a plain RHS; returns no values (keep the node) when there is none.
Replacement lowerMatMulOperands(Function &F, MatMulNode &n);
Replacement lowerBatchNorm(Function &F, BatchNormNode &n);
Replacement lowerSoftmax(Function &F, SoftmaxNode &n);
/// Lowers only global average pooling; returns no values (keep the node)
/// for other windows.
Replacement lowerAvgPool(Function &F, AvgPoolNode &n);

/// Global MaxPool / PoolND windows become reductions; others are kept.
Replacement lowerMaxPool(Function &F, MaxPoolNode &n);
Replacement lowerPoolND(Function &F, PoolNDNode &n);
/// Splits a Conv with Group > 1 into Group = 1 Convs and a Concat.
Replacement lowerGroupedConv(Function &F, ConvNode &n);

/// Quantize and Dequantize as float arithmetic (Quant.cpp).
Replacement lowerDequantize(Function &F, DequantizeNode &n);
Replacement lowerQuantize(Function &F, QuantizeNode &n);
/// The integer product and its requantization as float arithmetic.
Replacement lowerRequantConv(Function &F, RequantConvNode &n);
Replacement lowerRequantMatMul(Function &F, RequantMatMulNode &n);
/// The Dequantize -> Add -> [Relu] -> Quantize chain, as float arithmetic.
Replacement lowerRequantAdd(Function &F, RequantAddNode &n);
Replacement lowerRequantMul(Function &F, RequantMulNode &n);
Replacement lowerTableLookup(Function &F, TableLookupNode &n);

/// The attention fusions as Mul / Add / Softmax and MatMuls (Attention.cpp).
Replacement lowerScaledSoftmax(Function &F, ScaledSoftmaxNode &n);
Replacement lowerAttention(Function &F, AttentionNode &n);

/// True if \p n averages over the whole image without padding.
bool isGlobalAvgPool(const AvgPoolNode &n);

/// Reshapes a per-channel vector [C] to [1, C, 1, ...] of rank \p rank and
/// broadcasts it to \p dims.
NodeValue broadcastChannelVector(Function &F, llvm::StringRef name,
                                 NodeValue vec, llvm::ArrayRef<dim_t> dims);

} // namespace ember

#endif
