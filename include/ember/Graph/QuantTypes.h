//===- QuantTypes.h - Which results carry quantized types -------*- C++ -*-===//
//
// A tensor's Type carries its scale and zero point where they are known at
// compile time (docs/Quantization.md "Types"). This file says which node
// results those are and checks that the types agree with the operands.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_GRAPH_QUANTTYPES_H
#define EMBER_GRAPH_QUANTTYPES_H

#include "ember/Graph/Node.h"

#include "llvm/ADT/STLFunctionalExtras.h"

#include <optional>

namespace ember {

class Function;

/// The quantization of constant \p scale (Float32) and \p zero (Int32)
/// operands: per tensor for one element, else per index of \p axis; none
/// when either is not a Constant or a Splat.
std::optional<TypeQuant> constantQuant(NodeValue scale, NodeValue zero,
                                       int64_t axis);

/// The quantization a node of \p kind gives its result when its operands
/// say it: Quantize, RequantAdd and RequantMul with constant scale and zero
/// point operands.
std::optional<TypeQuant> resultQuant(OpKind kind,
                                     llvm::ArrayRef<NodeValue> inputs,
                                     const AttrList &attrs);

/// Checks \p n's quantized types against its operands: a quantized result
/// of Quantize/Requant* equals its constant scale and zero point operands
/// (RequantConv and RequantMatMul: the zero point; their scale is folded into
/// the multiplier), and every quantized type is well formed
/// (checkQuantType). A Dequantize may read a value with other parameters
/// (ONNX allows it: the integers are reinterpreted).
llvm::Error verifyQuantTypes(const Node &n);

/// Writes \p n's quantized result type into its scale and zero point
/// operands that are Constants \p mayWrite accepts (the parser's value-less
/// ones) and of the kind and size the type states.
void fillQuantOperands(Node &n,
                       llvm::function_ref<bool(const Constant *)> mayWrite);

/// Gives the graph inputs that only Dequantize nodes with one constant
/// scale and zero point read, and the outputs saved from quantized values,
/// those quantized types.
void annotateQuantizedIO(Function &F);

} // namespace ember

#endif // EMBER_GRAPH_QUANTTYPES_H
