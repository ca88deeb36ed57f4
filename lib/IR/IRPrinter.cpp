//===- IRPrinter.cpp - Textual IR -----------------------------------------===//
#include "ember/IR/IRPrinter.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"

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

/// Prints %name; names with characters outside [A-Za-z0-9._/:-] are quoted
/// so that the parser can read them back.
static void printName(llvm::StringRef name, llvm::raw_ostream &os) {
  bool plain = !name.empty() && llvm::all_of(name, [](char c) {
    return llvm::isAlnum(c) || llvm::StringRef("._/:-").contains(c);
  });
  os << '%';
  if (plain) {
    os << name;
    return;
  }
  os << '"';
  for (char c : name) {
    if (c == '"' || c == '\\')
      os << '\\';
    os << c;
  }
  os << '"';
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
    os << "  ";
    printName(w->getName(), os);
    os << " = weight " << w->getType()->toString()
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
    if (!llvm::isa<DeallocActivationInst>(I)) {
      printName(I.getName(), os);
      os << " = ";
    }
    os << I.getKindName();
    if (llvm::isa<AllocActivationInst>(I) || llvm::isa<TensorViewInst>(I))
      os << " " << I.getType()->toString();
    for (unsigned i = 0; i < I.getNumOperands(); ++i) {
      const Operand &op = I.getOperand(i);
      os << (i ? ", " : " ") << operandRoleName(op.role) << " ";
      printName(op.value->getName(), os);
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

void ember::printMemorySummary(const MemoryPlan &plan, llvm::raw_ostream &os,
                               size_t schedulePeak) {
  double ratio =
      plan.activationLowerBound
          ? double(plan.activationSize) / double(plan.activationLowerBound)
          : 1.0;
  os << "memory:\n"
     << "  constant weights: " << plan.constantSize << " bytes\n"
     << "  mutable weights (inputs and outputs): " << plan.mutableSize
     << " bytes\n"
     << "  activations: " << plan.activationSize << " bytes (lower bound "
     << plan.activationLowerBound << ", ratio " << llvm::format("%.3f", ratio)
     << ", no reuse " << plan.activationNaiveSize << ")\n";
  if (schedulePeak)
    os << "  schedule peak before IR optimization: " << schedulePeak
       << " bytes\n";
}
