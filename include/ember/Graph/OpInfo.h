//===- OpInfo.h - The op table as seen from C++ ----------------*- C++ -*-===//
//
// One OpInfo per op kind, generated from lib/Graph/Ops.py: operand,
// attribute and result names, the declarative verification rules and the
// type-inference function. Nodes and instructions share it.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_GRAPH_OPINFO_H
#define EMBER_GRAPH_OPINFO_H

#include "ember/Base/Type.h"
#include "ember/Graph/Attr.h"

#include "llvm/Support/Error.h"

namespace ember {

/// Every op kind in the table.
enum class OpKind : uint16_t {
#define EMBER_OP(N) N,
#include "ember/Generated/OpKinds.inc"
#undef EMBER_OP
};

/// The number of op kinds in the table.
constexpr unsigned kNumOpKinds = 0
#define EMBER_OP(N) +1
#include "ember/Generated/OpKinds.inc"
#undef EMBER_OP
    ;

/// Activations a producer (Conv, MatMul) can apply in its epilogue. Stored
/// in the FusedActivation attribute; FusedAlpha/FusedBeta carry parameters.
/// The list and each one's formula: FusedActivations.def.
enum class FusedActivation : int64_t {
#define EMBER_FUSED_ACT(Name, Code) Name = Code,
#include "ember/Graph/FusedActivations.def"
  NumKinds,
};

/// The order of a convolution's activations: channels first (Conv) or
/// channels last (ConvNHWC). A backend names the one it prefers.
enum class ConvLayout { NCHW, NHWC };

/// Applies \p act to one value (the reference semantics backends follow).
inline float applyFusedActivation(FusedActivation act, float x, float alpha,
                                  float beta) {
  switch (act) {
  case FusedActivation::None:
  case FusedActivation::NumKinds:
    return x;
  case FusedActivation::Relu:
    return x > 0.f ? x : 0.f;
  case FusedActivation::Clip:
    return x < alpha ? alpha : (x > beta ? beta : x);
  case FusedActivation::Sigmoid:
    return 1.f / (1.f + __builtin_expf(-x));
  case FusedActivation::HardSwish: {
    float t = x * alpha + beta;
    t = t < 0.f ? 0.f : (t > 1.f ? 1.f : t);
    return x * t;
  }
  case FusedActivation::LeakyRelu:
    return x >= 0.f ? x : alpha * x;
  case FusedActivation::SiLU:
    return x / (1.f + __builtin_expf(-x));
  case FusedActivation::Gelu:
    // erfc keeps the tail accurate where 1 + erf(x) cancels.
    return 0.5f * x * __builtin_erfcf(-x * 0.70710678118654752f);
  case FusedActivation::GeluTanh: {
    float u = 0.7978845608028654f * (x + 0.044715f * x * x * x);
    return 0.5f * x * (1.f + __builtin_tanhf(u));
  }
  }
  return x;
}

/// Name and kind of one attribute.
struct AttrInfo {
  const char *name;
  AttrKind kind;
};

/// The kinds of declarative verification rules.
enum class RuleKind : uint8_t { None, SameType, Rank, MinRank, Float };

/// One declarative rule: `a` is an input index; `b` is a second input index
/// (SameType) or a rank (Rank, MinRank).
struct VerifyRule {
  RuleKind kind;
  unsigned a;
  unsigned b;
};

/// Computes an op's result types from its input types and attributes, and
/// reports any inconsistency as an error.
using InferFn = llvm::Expected<llvm::SmallVector<Type, 1>> (*)(
    llvm::ArrayRef<TypeRef> inputs, const AttrList &attrs);

/// Everything the table says about one op kind.
struct OpInfo {
  const char *name;
  llvm::ArrayRef<const char *> inputs;
  bool variadic; ///< The last input name stands for a list of operands.
  llvm::ArrayRef<AttrInfo> attrs;
  llvm::ArrayRef<const char *> results;
  llvm::ArrayRef<VerifyRule> rules;
  InferFn infer;
  bool hasInstr;
  /// Result element i depends only on element i of each input (which all
  /// have the result's shape): in-place reuse and kernel fusion apply.
  bool elementwise;
  const char *doc;
  /// The op's value as a formula over its inputs (Ops.py), or null. Kernel
  /// lowering, Interpreter and support tables take formula ops from it.
  const char *formula;
};

/// The table entry for \p kind.
const OpInfo &getOpInfo(OpKind kind);

/// True for the ops of a loop kept as a loop (LoopCarry, LoopBegin,
/// LoopParam, LoopEnd, LoopFinal): they write buffers other than their
/// result or run more than once, so the graph passes never fold or merge
/// them, and the IR passes treat LoopBegin and LoopEnd as barriers.
bool isLoopOp(OpKind kind);

/// Finds an op kind by its table name.
std::optional<OpKind> lookupOpKind(llvm::StringRef name);

/// Checks the declarative rules and operand count of \p kind, then runs its
/// inference. \p what names the node or instruction for error messages.
/// Result dims must be positive unless \p allowEmpty (the importer asks
/// whether an op on an empty tensor gives an empty result, which it binds
/// to a constant: no node ever has an empty type).
llvm::Expected<llvm::SmallVector<Type, 1>>
checkAndInfer(OpKind kind, llvm::StringRef what, llvm::ArrayRef<TypeRef> inputs,
              const AttrList &attrs, bool allowEmpty = false);

} // namespace ember

#endif // EMBER_GRAPH_OPINFO_H
