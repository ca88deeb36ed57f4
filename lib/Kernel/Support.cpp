//===- Support.cpp - Which nodes the shared kernel lowering covers --------===//
//
// One table for every backend that renders kernels: a node is covered when
// its family has a rule (Elementwise.cpp, Structured.cpp, Reductions.cpp,
// Indexing.cpp) for its element kinds and attributes.
//
//===----------------------------------------------------------------------===//
#include "ember/Kernel/LowerToKernel.h"

#include "ember/Graph/Node.h"

using namespace ember;
using namespace ember::kir;

namespace {
bool isFloat(ElemKind k) {
  return k == ElemKind::Float32 || k == ElemKind::Float16 ||
         k == ElemKind::Float64;
}
/// Kinds with kernel arithmetic.
bool isNumeric(ElemKind k) { return isFloat(k) || isIntegerKind(k); }
bool isNumericOrBool(ElemKind k) { return isNumeric(k) || k == ElemKind::Bool; }
bool isIndex(ElemKind k) {
  return k == ElemKind::Int32 || k == ElemKind::Int64;
}
} // namespace

bool kir::hasKernelLowering(const Node &n) {
  if (!isTableOp(n.getKind()))
    return false;
  OpKind op = toOpKind(n.getKind());
  ElemKind kind = n.getType()->getElemKind();
  auto in = [&](unsigned i) {
    return n.getNthInput(i).getType()->getElemKind();
  };
  if (getOpInfo(op).formula) // float arithmetic, generated from the formula
    return isFloat(kind);
  switch (op) {
  // Data movement: any element kind, moved as whole elements.
  case OpKind::Transpose:
  case OpKind::Broadcast:
  case OpKind::Concat:
  case OpKind::ChannelShuffle:
  case OpKind::Slice:
  case OpKind::Tile:
    return true;
  case OpKind::Gather:
  case OpKind::GatherElements:
  case OpKind::GatherND:
    return isIndex(in(1));
  case OpKind::ScatterElements:
    return isIndex(in(1)) &&
           (llvm::cast<ScatterElementsNode>(n).getReduction() == 0 ||
            isNumeric(kind));
  case OpKind::ScatterND:
    return isIndex(in(1)) &&
           (llvm::cast<ScatterNDNode>(n).getReduction() == 0 ||
            isNumeric(kind));
  case OpKind::Pad:
    return isNumericOrBool(kind); // constant, reflect and edge
  // Elementwise.
  case OpKind::Add:
  case OpKind::Sub:
  case OpKind::Mul:
  case OpKind::Div:
  case OpKind::Max:
  case OpKind::Min:
  case OpKind::Mod:
  case OpKind::Sign:
    return isNumeric(kind);
  case OpKind::Splat:
    return isNumericOrBool(kind);
  case OpKind::BitShift:
    return isUnsignedKind(kind);
  case OpKind::Equal:
    return isNumericOrBool(in(0));
  case OpKind::Greater:
  case OpKind::Less:
  case OpKind::GreaterOrEqual:
  case OpKind::LessOrEqual:
    return isNumeric(in(0));
  case OpKind::And:
  case OpKind::Or:
  case OpKind::Xor:
  case OpKind::Not:
    return kind == ElemKind::Bool || isIntegerKind(kind);
  case OpKind::IsNaN:
  case OpKind::IsInf:
    return isFloat(in(0));
  case OpKind::Where:
    return isNumericOrBool(kind);
  case OpKind::Cast: // BFloat16 only to and from Float32 (precision rules)
    return (isNumericOrBool(kind) && isNumericOrBool(in(0))) ||
           (kind == ElemKind::BFloat16 && in(0) == ElemKind::Float32) ||
           (kind == ElemKind::Float32 && in(0) == ElemKind::BFloat16);
  case OpKind::Pow: // integers through float64 (exact below 2^53)
    return isNumeric(kind);
  case OpKind::Relu:
  case OpKind::Sigmoid:
  case OpKind::Tanh:
  case OpKind::Sqrt:
  case OpKind::Exp:
  case OpKind::Log:
  case OpKind::Neg:
  case OpKind::Abs:
  case OpKind::Clip:
  case OpKind::Erf:
  case OpKind::Floor:
  case OpKind::Ceil:
  case OpKind::Round:
  case OpKind::Reciprocal:
  case OpKind::Sin:
  case OpKind::Cos:
  case OpKind::Tan:
  case OpKind::Asin:
  case OpKind::Acos:
  case OpKind::Atan:
  case OpKind::Sinh:
  case OpKind::Cosh:
  case OpKind::Asinh:
  case OpKind::Acosh:
  case OpKind::Atanh:
  case OpKind::Gelu:
    return isFloat(kind);
  // Reductions and scans.
  case OpKind::ReduceSum:
  case OpKind::ReduceMean:
  case OpKind::ReduceProd:
  case OpKind::ReduceMax:
  case OpKind::ReduceMin:
  case OpKind::CumSum:
    return isNumeric(kind);
  case OpKind::ArgMax:
  case OpKind::ArgMin:
  case OpKind::TopK:
    return isNumeric(in(0));
  case OpKind::PoolND:
    return llvm::cast<PoolNDNode>(n).getIsAvg() ? isFloat(kind)
                                                : isNumeric(kind);
  case OpKind::ConvTranspose: // a portable loop nest, not a tuned kernel
    return isFloat(kind);
  case OpKind::Resize:
    return isFloat(kind) && llvm::cast<ResizeNode>(n).getCoordMode() != 4;
  // Windows and the portable fallbacks.
  case OpKind::MaxPool: // bytes too: quantized models pool their bytes
    return kind == ElemKind::Float32 || kind == ElemKind::Int8 ||
           kind == ElemKind::UInt8;
  case OpKind::AvgPool:
  case OpKind::Softmax:
  case OpKind::MatMul:
  case OpKind::LayerNorm:
    return kind == ElemKind::Float32;
  case OpKind::IntMatMul: // operand kinds checked by inference
  case OpKind::IntConv:
    return true;
  default:
    return false;
  }
}
