//===- Infer.h - Result-type inference, one per op family -------*- C++ -*-===//
//
// Private to lib/Graph. Each function computes an op's result types from
// its input types and attributes and reports inconsistent operands as an
// error; the op table (Ops.py) names the function for each op.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_LIB_GRAPH_INFER_H
#define EMBER_LIB_GRAPH_INFER_H

#include "ember/Graph/OpInfo.h"

namespace ember {

using InferResult = llvm::Expected<llvm::SmallVector<Type, 1>>;

#define EMBER_DECLARE_INFER(N)                                                 \
  InferResult infer##N(llvm::ArrayRef<TypeRef> in, const AttrList &attrs);
EMBER_DECLARE_INFER(SameAsInput0)
EMBER_DECLARE_INFER(Splat)
EMBER_DECLARE_INFER(MatMul)
EMBER_DECLARE_INFER(Gemm)
EMBER_DECLARE_INFER(Conv)
EMBER_DECLARE_INFER(Pool)
EMBER_DECLARE_INFER(BatchNorm)
EMBER_DECLARE_INFER(Softmax)
EMBER_DECLARE_INFER(Transpose)
EMBER_DECLARE_INFER(Reshape)
EMBER_DECLARE_INFER(Broadcast)
EMBER_DECLARE_INFER(Concat)
EMBER_DECLARE_INFER(Save)
EMBER_DECLARE_INFER(ChannelShuffle) // InferShuffle.cpp
EMBER_DECLARE_INFER(ConvNHWC)       // InferShuffle.cpp
// InferElementwise.cpp, InferReduce.cpp, InferTensor.cpp, InferWindow.cpp.
EMBER_DECLARE_INFER(Compare)
EMBER_DECLARE_INFER(Logical)
EMBER_DECLARE_INFER(Classify)
EMBER_DECLARE_INFER(Where)
EMBER_DECLARE_INFER(Cast)
EMBER_DECLARE_INFER(Reduce)
EMBER_DECLARE_INFER(ArgReduce)
EMBER_DECLARE_INFER(TopK)
EMBER_DECLARE_INFER(Gather)
EMBER_DECLARE_INFER(GatherElements)
EMBER_DECLARE_INFER(GatherND)
EMBER_DECLARE_INFER(ScatterElements)
EMBER_DECLARE_INFER(ScatterND)
EMBER_DECLARE_INFER(Slice)
EMBER_DECLARE_INFER(Pad)
EMBER_DECLARE_INFER(Tile)
EMBER_DECLARE_INFER(Resize)
EMBER_DECLARE_INFER(PoolND)
EMBER_DECLARE_INFER(ConvTranspose)
EMBER_DECLARE_INFER(IntMatMul)     // InferQuant.cpp
EMBER_DECLARE_INFER(IntConv)       // InferQuant.cpp
EMBER_DECLARE_INFER(RequantConv)   // InferQuant.cpp
EMBER_DECLARE_INFER(RequantMatMul) // InferQuant.cpp
EMBER_DECLARE_INFER(RequantAdd)    // InferQuant.cpp
EMBER_DECLARE_INFER(RequantMul)    // InferQuant.cpp
EMBER_DECLARE_INFER(TableLookup)   // InferQuant.cpp
EMBER_DECLARE_INFER(Dequantize)    // InferQuant.cpp
EMBER_DECLARE_INFER(Quantize)      // InferQuant.cpp
EMBER_DECLARE_INFER(LayerNorm)
EMBER_DECLARE_INFER(ScaledSoftmax)
EMBER_DECLARE_INFER(Attention)
#undef EMBER_DECLARE_INFER

} // namespace ember

#endif // EMBER_LIB_GRAPH_INFER_H
