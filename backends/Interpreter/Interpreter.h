//===- Interpreter.h - The reference backend -------------------*- C++ -*-===//
#ifndef EMBER_BACKENDS_INTERPRETER_INTERPRETER_H
#define EMBER_BACKENDS_INTERPRETER_INTERPRETER_H

#include "ember/Backend/Backend.h"

namespace ember {

/// Executes the planned IR instruction by instruction with simple loops.
/// It lowers everything that has a lowering rule, so it tests the rules.
class InterpreterBackend final : public Backend {
public:
  llvm::StringRef getName() const override { return "Interpreter"; }
  bool isOpSupported(const Node &n) const override;
  /// Everything with a rule, except Conv (its kernel handles groups) and
  /// MatMul (it reads broadcast and transposed operands in place), and
  /// the attention fusions (their kernels are the oracle of the CPU's).
  bool shouldLower(const Node &n) const override {
    return !llvm::isa<ConvNode>(n) && !llvm::isa<MatMulNode>(n) &&
           !llvm::isa<ScaledSoftmaxNode>(n) && !llvm::isa<AttentionNode>(n);
  }
  bool supportsFusedActivation(FusedActivation) const override { return true; }
  bool supportsMatMulEpilogue() const override { return true; }
  bool supportsConvResidual() const override { return true; }
  bool supportsBF16MatMul() const override { return true; }
  bool supportsNarrowWeights() const override { return true; }
  bool supportsRuntimeConvFilter() const override { return true; }
  llvm::Expected<std::unique_ptr<CompiledFunction>>
  compile(const Module &M, std::shared_ptr<const IRFunction> F,
          const MemoryPlan &plan, const CodegenOptions &opts) const override;
};

} // namespace ember

#endif
