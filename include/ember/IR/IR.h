//===- IR.h - The instruction-level IR -------------------------*- C++ -*-===//
//
// An IRFunction is a straight-line list of instructions over buffers:
// WeightVars (constant weights or the caller's mutable inputs/outputs),
// AllocActivation buffers in the scratch arena, and TensorViews that
// reinterpret another buffer without copying. Every operand has a role:
// @in (read), @out (written), @inout (read then written).
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_IR_IR_H
#define EMBER_IR_IR_H

#include "ember/Base/NameUniquer.h"
#include "ember/Graph/Graph.h"

#include "llvm/ADT/STLFunctionalExtras.h"

#include <list>
#include <memory>

namespace ember {

/// Every kind of IR value: the table's instructions first, then the
/// hand-written memory instructions, then WeightVar.
enum class ValueKind : uint16_t {
#define EMBER_INSTR(N) N##Inst,
#include "ember/Generated/InstrKinds.inc"
#undef EMBER_INSTR
  AllocActivationInst,
  DeallocActivationInst,
  TensorViewInst,
  CopyInst,
  WeightVar,
};

/// The instruction kind that implements op \p kind, if the table has one.
std::optional<ValueKind> instrKindForOp(OpKind kind);
/// The op kind behind a table instruction kind.
std::optional<OpKind> opKindForInstr(ValueKind kind);

/// Operand roles.
enum class OperandRole : uint8_t { In, Out, InOut };
llvm::StringRef operandRoleName(OperandRole role);

/// Anything an operand can name. Values that denote a buffer have a type.
class Value {
public:
  Value(const Value &) = delete;
  Value &operator=(const Value &) = delete;
  virtual ~Value() = default;

  ValueKind getKind() const { return kind_; }
  llvm::StringRef getName() const { return name_; }
  /// The buffer type (null for instructions that define no buffer).
  TypeRef getType() const { return type_; }
  /// The kind's printed name ("conv", "allocactivation", "weight").
  llvm::StringRef getKindName() const;

protected:
  Value(ValueKind kind, llvm::StringRef name, TypeRef type)
      : kind_(kind), name_(name.str()), type_(type) {}

private:
  ValueKind kind_;
  std::string name_;
  TypeRef type_;
};

/// Which memory region a WeightVar lives in.
enum class WeightKind : uint8_t { Constant, Mutable };

/// A buffer outside the activation arena: constant weights, or a network
/// input/output the caller provides.
class WeightVar final : public Value {
public:
  static bool classof(const Value *v) {
    return v->getKind() == ValueKind::WeightVar;
  }
  WeightKind getWeightKind() const { return weightKind_; }
  bool isConstant() const { return weightKind_ == WeightKind::Constant; }
  /// For constants: the payload to place in the constant region.
  const Tensor *getPayload() const { return payload_; }
  /// For mutable weights: true when this is a network output.
  bool isOutput() const { return isOutput_; }

private:
  friend class IRFunction;
  WeightVar(llvm::StringRef name, TypeRef ty, WeightKind wk,
            const Tensor *payload, bool isOutput)
      : Value(ValueKind::WeightVar, name, ty), weightKind_(wk),
        payload_(payload), isOutput_(isOutput) {}
  WeightKind weightKind_;
  const Tensor *payload_;
  bool isOutput_;
};

/// An operand: a value and its role.
struct Operand {
  Value *value;
  OperandRole role;
};

/// An instruction in an IRFunction.
class Instruction : public Value {
public:
  static bool classof(const Value *v) {
    return v->getKind() != ValueKind::WeightVar;
  }
  llvm::ArrayRef<Operand> getOperands() const { return operands_; }
  const Operand &getOperand(unsigned i) const { return operands_[i]; }
  unsigned getNumOperands() const { return operands_.size(); }
  void setOperand(unsigned i, Value *v) { operands_[i].value = v; }
  const AttrList &getAttrs() const { return attrs_; }
  const Attr &attr(unsigned i) const { return attrs_[i]; }
  /// True for instructions generated from the op table.
  bool isTableOp() const { return opKindForInstr(getKind()).has_value(); }

protected:
  Instruction(ValueKind kind, llvm::StringRef name, TypeRef type,
              llvm::ArrayRef<Operand> ops, AttrList attrs)
      : Value(kind, name, type), operands_(ops.begin(), ops.end()),
        attrs_(std::move(attrs)) {}
  llvm::SmallVector<Value *, 4> getOperandsFrom(unsigned start) const {
    llvm::SmallVector<Value *, 4> r;
    for (unsigned i = start; i < operands_.size(); ++i)
      r.push_back(operands_[i].value);
    return r;
  }

private:
  friend class IRFunction;
  llvm::SmallVector<Operand, 4> operands_;
  AttrList attrs_;
};

/// Allocates a buffer of its type in the activation arena.
class AllocActivationInst final : public Instruction {
public:
  static bool classof(const Value *v) {
    return v->getKind() == ValueKind::AllocActivationInst;
  }

private:
  friend class IRFunction;
  using Instruction::Instruction;
};

/// Ends the lifetime of an AllocActivation.
class DeallocActivationInst final : public Instruction {
public:
  static bool classof(const Value *v) {
    return v->getKind() == ValueKind::DeallocActivationInst;
  }
  AllocActivationInst *getAlloc() const {
    return llvm::cast<AllocActivationInst>(getOperand(0).value);
  }

private:
  friend class IRFunction;
  using Instruction::Instruction;
};

/// Views a buffer with another type starting at an element offset; no data
/// moves. Attribute 0 is the offset in elements of the source.
class TensorViewInst final : public Instruction {
public:
  static bool classof(const Value *v) {
    return v->getKind() == ValueKind::TensorViewInst;
  }
  Value *getSrc() const { return getOperand(0).value; }
  int64_t getOffset() const { return attr(0).i; }

private:
  friend class IRFunction;
  using Instruction::Instruction;
};

/// Copies Src into Dest (same type).
class CopyInst final : public Instruction {
public:
  static bool classof(const Value *v) {
    return v->getKind() == ValueKind::CopyInst;
  }
  Value *getDest() const { return getOperand(0).value; }
  Value *getSrc() const { return getOperand(1).value; }

private:
  friend class IRFunction;
  using Instruction::Instruction;
};

#include "ember/Generated/Instrs.h"

/// The buffer that \p v ultimately names: views are looked through to the
/// WeightVar or AllocActivation they reinterpret.
Value *getOrigin(Value *v);
/// The element offset of \p v within its origin buffer.
int64_t getOriginOffset(Value *v);

/// The role operand \p i of a table instruction of \p kind with \p attrs
/// and \p numOperands operands has: @out for its results, @in for the
/// rest, except the buffers a loopend writes (@inout: its counter, the
/// condition, the carried values and the scan buffers; docs/IR.md).
OperandRole tableOperandRole(ValueKind kind, const AttrList &attrs, unsigned i,
                             unsigned numOperands);

/// One loop of an instruction order: the positions of its loopbegin and
/// of the loopend that jumps back after it.
struct LoopSpan {
  size_t begin, end;
};
/// The loops of \p order (loopbegin and loopend matched by their counter),
/// outermost first.
std::vector<LoopSpan> findLoops(llvm::ArrayRef<const Instruction *> order);
/// The last position at which a buffer first touched (or allocated) at
/// \p first and last touched at \p last must still be alive: a buffer
/// that exists before a loop and is used inside it (the loopbegin
/// included, which reads the trip count again at every test) lives until
/// that loop's loopend, since the next iteration reads it again.
size_t extendThroughLoops(llvm::ArrayRef<LoopSpan> loops, size_t first,
                          size_t last);

/// A program over planned buffers: straight-line but for loops between
/// loopbegin and loopend.
class IRFunction {
public:
  explicit IRFunction(llvm::StringRef name, Module *module = nullptr)
      : name_(name.str()), module_(module) {}
  ~IRFunction();

  llvm::StringRef getName() const { return name_; }
  /// The module that owns types and constant payloads (may be null for
  /// hand-built IR that owns its types; see ownType).
  Module *getModule() const { return module_; }

  using InstrList = std::list<std::unique_ptr<Instruction>>;
  const InstrList &getInstrs() const { return instrs_; }
  InstrList &getInstrsMutable() { return instrs_; }
  const std::list<std::unique_ptr<WeightVar>> &getWeights() const {
    return weights_;
  }

  /// A uniqued type usable in this function.
  TypeRef getType(const Type &ty);

  WeightVar *createWeightVar(llvm::StringRef name, TypeRef ty, WeightKind wk,
                             const Tensor *payload, bool isOutput);
  AllocActivationInst *createAllocActivation(llvm::StringRef name, TypeRef ty);
  DeallocActivationInst *createDeallocActivation(AllocActivationInst *alloc);
  TensorViewInst *createTensorView(llvm::StringRef name, Value *src, TypeRef ty,
                                   int64_t offset);
  CopyInst *createCopy(llvm::StringRef name, Value *dest, Value *src);
  /// Creates a table instruction; operands are dests then inputs.
  Instruction *createOpInstr(ValueKind kind, llvm::StringRef name,
                             llvm::ArrayRef<Operand> ops, AttrList attrs);

#include "ember/Generated/InstrBuilders.inc"

  /// Where new instructions go: before \p pos (end() appends).
  void setInsertPoint(InstrList::iterator pos) { insertPoint_ = pos; }
  void resetInsertPoint() { insertPoint_.reset(); }
  /// Removes \p I from the list and deletes it.
  void eraseInstr(Instruction *I);
  /// Removes and deletes every instruction for which \p pred is true, in
  /// one pass (eraseInstr searches the list for each).
  void eraseInstrsIf(llvm::function_ref<bool(const Instruction *)> pred);

  WeightVar *getWeightByName(llvm::StringRef name) const;

private:
  static Instruction *newOpInstr(ValueKind kind, llvm::StringRef name,
                                 llvm::ArrayRef<Operand> ops, AttrList attrs);
  Instruction *insert(Instruction *I);

  std::string name_;
  Module *module_;
  std::unique_ptr<Module> ownTypes_;
  std::list<std::unique_ptr<WeightVar>> weights_;
  InstrList instrs_;
  std::optional<InstrList::iterator> insertPoint_;
  NameUniquer names_;
};

} // namespace ember

#endif // EMBER_IR_IR_H
