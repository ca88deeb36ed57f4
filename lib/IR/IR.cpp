//===- IR.cpp - The instruction-level IR ----------------------------------===//
#include "ember/IR/IR.h"

#include "glog/logging.h"

#include "llvm/ADT/DenseMap.h"

#include <algorithm>

using namespace ember;

llvm::StringRef ember::operandRoleName(OperandRole role) {
  switch (role) {
  case OperandRole::In:
    return "@in";
  case OperandRole::Out:
    return "@out";
  case OperandRole::InOut:
    return "@inout";
  }
  return "?";
}

llvm::StringRef Value::getKindName() const {
  switch (kind_) {
  case ValueKind::AllocActivationInst:
    return "allocactivation";
  case ValueKind::DeallocActivationInst:
    return "deallocactivation";
  case ValueKind::TensorViewInst:
    return "tensorview";
  case ValueKind::CopyInst:
    return "copy";
  case ValueKind::WeightVar:
    return "weight";
  default:
    break;
  }
  // Table instructions print as the lower-cased op name.
  static std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (unsigned i = 0; i < kNumOpKinds; ++i)
      v.push_back(llvm::StringRef(getOpInfo(OpKind(i)).name).lower());
    return v;
  }();
  return names[unsigned(*opKindForInstr(kind_))];
}

OperandRole ember::tableOperandRole(ValueKind kind, const AttrList &attrs,
                                    unsigned i, unsigned numOperands) {
  std::optional<OpKind> op = opKindForInstr(kind);
  unsigned numDests = op ? getOpInfo(*op).results.size() : 0;
  if (i < numDests)
    return OperandRole::Out;
  if (kind != ValueKind::LoopEndInst)
    return OperandRole::In;
  // Count, Counter, cond, cond next, n carried, n next, k scan buffers, k
  // rows.
  unsigned n = unsigned(attrs[0].i), k = (numOperands - 4 - 2 * n) / 2;
  bool written = i == 1 || i == 2 || (i >= 4 && i < 4 + n) ||
                 (i >= 4 + 2 * n && i < 4 + 2 * n + k);
  return written ? OperandRole::InOut : OperandRole::In;
}

std::vector<LoopSpan>
ember::findLoops(llvm::ArrayRef<const Instruction *> order) {
  std::vector<LoopSpan> loops;
  llvm::DenseMap<const Value *, size_t> open; // counter -> loops index
  for (size_t p = 0; p < order.size(); ++p) {
    const Instruction *I = order[p];
    if (!I)
      continue;
    if (I->getKind() == ValueKind::LoopBeginInst) {
      open[I->getOperand(0).value] = loops.size();
      loops.push_back({p, p});
    } else if (I->getKind() == ValueKind::LoopEndInst) {
      auto it = open.find(I->getOperand(1).value);
      if (it != open.end()) // else verifyIR reports it
        loops[it->second].end = p;
    }
  }
  return loops;
}

size_t ember::extendThroughLoops(llvm::ArrayRef<LoopSpan> loops, size_t first,
                                 size_t last) {
  for (const LoopSpan &l : loops)
    if (first < l.begin && last >= l.begin && last < l.end)
      last = l.end;
  return last;
}

Value *ember::getOrigin(Value *v) {
  while (auto *tv = llvm::dyn_cast<TensorViewInst>(v))
    v = tv->getSrc();
  return v;
}

int64_t ember::getOriginOffset(Value *v) {
  int64_t off = 0;
  while (auto *tv = llvm::dyn_cast<TensorViewInst>(v)) {
    off += tv->getOffset();
    v = tv->getSrc();
  }
  return off;
}

IRFunction::~IRFunction() = default;

TypeRef IRFunction::getType(const Type &ty) {
  if (!module_) {
    if (!ownTypes_)
      ownTypes_ = std::make_unique<Module>();
    return ownTypes_->uniqueType(ty);
  }
  return module_->uniqueType(ty);
}

Instruction *IRFunction::insert(Instruction *I) {
  auto pos = insertPoint_ ? *insertPoint_ : instrs_.end();
  instrs_.insert(pos, std::unique_ptr<Instruction>(I));
  return I;
}

WeightVar *IRFunction::createWeightVar(llvm::StringRef name, TypeRef ty,
                                       WeightKind wk, const Tensor *payload,
                                       bool isOutput) {
  auto *w = new WeightVar(names_.get(name), ty, wk, payload, isOutput);
  weights_.emplace_back(w);
  return w;
}

AllocActivationInst *IRFunction::createAllocActivation(llvm::StringRef name,
                                                       TypeRef ty) {
  return llvm::cast<AllocActivationInst>(insert(new AllocActivationInst(
      ValueKind::AllocActivationInst, names_.get(name), ty, {}, {})));
}

DeallocActivationInst *
IRFunction::createDeallocActivation(AllocActivationInst *alloc) {
  Operand op{alloc, OperandRole::Out};
  return llvm::cast<DeallocActivationInst>(insert(new DeallocActivationInst(
      ValueKind::DeallocActivationInst,
      names_.get("dealloc." + alloc->getName().str()), nullptr, op, {})));
}

TensorViewInst *IRFunction::createTensorView(llvm::StringRef name, Value *src,
                                             TypeRef ty, int64_t offset) {
  Operand op{src, OperandRole::In};
  AttrList attrs{Attr::makeInt(offset)};
  return llvm::cast<TensorViewInst>(insert(new TensorViewInst(
      ValueKind::TensorViewInst, names_.get(name), ty, op, std::move(attrs))));
}

CopyInst *IRFunction::createCopy(llvm::StringRef name, Value *dest,
                                 Value *src) {
  Operand ops[] = {{dest, OperandRole::Out}, {src, OperandRole::In}};
  return llvm::cast<CopyInst>(insert(
      new CopyInst(ValueKind::CopyInst, names_.get(name), nullptr, ops, {})));
}

Instruction *IRFunction::createOpInstr(ValueKind kind, llvm::StringRef name,
                                       llvm::ArrayRef<Operand> ops,
                                       AttrList attrs) {
  return insert(newOpInstr(kind, names_.get(name), ops, std::move(attrs)));
}

void IRFunction::eraseInstr(Instruction *I) {
  auto it = std::find_if(
      instrs_.begin(), instrs_.end(),
      [&](const std::unique_ptr<Instruction> &p) { return p.get() == I; });
  CHECK(it != instrs_.end()) << "instruction is not in this function";
  names_.release(I->getName());
  instrs_.erase(it);
}

void IRFunction::eraseInstrsIf(
    llvm::function_ref<bool(const Instruction *)> pred) {
  for (auto it = instrs_.begin(); it != instrs_.end();) {
    if (!pred(it->get())) {
      ++it;
      continue;
    }
    CHECK(!insertPoint_ || *insertPoint_ != it)
        << "erasing the insertion point";
    names_.release((*it)->getName());
    it = instrs_.erase(it);
  }
}

WeightVar *IRFunction::getWeightByName(llvm::StringRef name) const {
  for (auto &w : weights_)
    if (w->getName() == name)
      return w.get();
  return nullptr;
}

#include "ember/Generated/Instrs.inc"
