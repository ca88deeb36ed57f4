//===- IRPrinter.cpp - Textual IR -----------------------------------------===//
#include "ember/IR/IRPrinter.h"

using namespace ember;

static void printPlacement(const MemoryPlan *plan, const Value *v,
                           llvm::raw_ostream &os) {
  if (!plan)
    return;
  auto it = plan->placements.find(v);
  if (it == plan->placements.end())
    return;
  os << " // @" << regionName(it->second.region) << "+" << it->second.offset
     << " size " << it->second.size;
}

static void printAttrs(const Instruction &I, llvm::raw_ostream &os) {
  if (I.getAttrs().empty())
    return;
  os << " {";
  if (auto op = opKindForInstr(I.getKind())) {
    const OpInfo &info = getOpInfo(*op);
    for (unsigned i = 0; i < I.getAttrs().size(); ++i)
      os << (i ? ", " : "") << info.attrs[i].name << "="
         << I.attr(i).toString();
  } else if (llvm::isa<TensorViewInst>(I)) {
    os << "Offset=" << I.attr(0).toString();
  }
  os << "}";
}

void ember::printIR(const IRFunction &F, llvm::raw_ostream &os,
                    const MemoryPlan *plan) {
  os << "function " << F.getName() << "\n";
  os << "declare {\n";
  for (auto &w : F.getWeights()) {
    os << "  %" << w->getName() << " = weight " << w->getType()->toString()
       << (w->isConstant() ? " const" : " mutable");
    if (!w->isConstant())
      os << (w->isOutput() ? " output" : " input");
    printPlacement(plan, w.get(), os);
    os << "\n";
  }
  os << "}\ncode {\n";
  unsigned idx = 0;
  for (auto &ip : F.getInstrs()) {
    const Instruction &I = *ip;
    os << "  " << idx++ << " ";
    if (!llvm::isa<DeallocActivationInst>(I))
      os << "%" << I.getName() << " = ";
    os << I.getKindName();
    if (llvm::isa<AllocActivationInst>(I) || llvm::isa<TensorViewInst>(I))
      os << " " << I.getType()->toString();
    for (unsigned i = 0; i < I.getNumOperands(); ++i) {
      const Operand &op = I.getOperand(i);
      os << (i ? ", " : " ") << operandRoleName(op.role) << " %"
         << op.value->getName();
    }
    printAttrs(I, os);
    printPlacement(plan, &I, os);
    os << "\n";
  }
  os << "}\n";
  if (plan) {
    os << "memory {\n"
       << "  constant " << plan->constantSize << " bytes\n"
       << "  mutable " << plan->mutableSize << " bytes\n"
       << "  activations " << plan->activationSize << " bytes (lower bound "
       << plan->activationLowerBound << ", no reuse "
       << plan->activationNaiveSize << ")\n"
       << "}\n";
  }
}

std::string ember::irToString(const IRFunction &F, const MemoryPlan *plan) {
  std::string s;
  llvm::raw_string_ostream os(s);
  printIR(F, os, plan);
  return os.str();
}
