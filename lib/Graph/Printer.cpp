//===- Printer.cpp - Textual and Graphviz dumps of a Function -------------===//
#include "ember/Graph/Printer.h"

#include "ember/Graph/Verifier.h"

#include "llvm/ADT/DenseSet.h"

using namespace ember;

static std::string valueName(NodeValue v) {
  std::string s = "%" + v.getNode()->getName().str();
  if (v.getNode()->getNumResults() > 1)
    s += "#" + std::to_string(v.getResNo());
  return s;
}

static std::string attrsToString(const Node &n) {
  if (n.getAttrs().empty())
    return "";
  const OpInfo &info = getOpInfo(toOpKind(n.getKind()));
  std::string s = " {";
  for (unsigned i = 0; i < n.getAttrs().size(); ++i)
    s += (i ? ", " : "") + std::string(info.attrs[i].name) + "=" +
         n.attr(i).toString();
  return s + "}";
}

/// Storage nodes used by \p order, in first-use order.
static std::vector<Node *> usedStorage(const std::vector<Node *> &order) {
  std::vector<Node *> storage;
  llvm::DenseSet<Node *> seen;
  for (Node *n : order)
    for (NodeValue v : n->getInputs())
      if (isStorage(v.getNode()) && seen.insert(v.getNode()).second)
        storage.push_back(v.getNode());
  return storage;
}

void ember::printFunction(const Function &F, llvm::raw_ostream &os) {
  std::vector<Node *> order = topologicalOrder(F);
  os << "function " << F.getName() << " {\n";
  for (Node *s : usedStorage(order)) {
    os << "  %" << s->getName() << " = " << s->getKindName() << " "
       << s->getType()->toString();
    if (auto *p = llvm::dyn_cast<Placeholder>(s))
      os << (p->isOutput() ? " output" : " input");
    os << "\n";
  }
  for (Node *n : order) {
    os << "  ";
    if (n->getNumResults())
      os << "%" << n->getName() << " = ";
    os << n->getKindName() << "(";
    for (unsigned i = 0; i < n->getNumInputs(); ++i)
      os << (i ? ", " : "") << valueName(n->getNthInput(i));
    os << ")" << attrsToString(*n);
    if (n->getNumResults()) {
      os << " : ";
      for (unsigned i = 0; i < n->getNumResults(); ++i)
        os << (i ? ", " : "") << n->getType(i)->toString();
    }
    os << "\n";
  }
  os << "}\n";
}

std::string ember::functionToString(const Function &F) {
  std::string s;
  llvm::raw_string_ostream os(s);
  printFunction(F, os);
  return os.str();
}

static std::string dotEscape(llvm::StringRef s) {
  std::string r;
  for (char c : s) {
    if (c == '"' || c == '\\' || c == '{' || c == '}' || c == '<' ||
        c == '>' || c == '|')
      r += '\\';
    r += c;
  }
  return r;
}

void ember::printFunctionDot(const Function &F, llvm::raw_ostream &os) {
  std::vector<Node *> order = topologicalOrder(F);
  os << "digraph \"" << dotEscape(F.getName()) << "\" {\n"
     << "  node [shape=record, fontname=\"monospace\"];\n";
  auto id = [](const Node *n) { return "n" + std::to_string(uintptr_t(n)); };
  std::vector<Node *> all = usedStorage(order);
  all.insert(all.end(), order.begin(), order.end());
  for (Node *n : all) {
    os << "  " << id(n) << " [label=\"{" << dotEscape(n->getKindName())
       << "|" << dotEscape(n->getName());
    for (unsigned i = 0; i < n->getNumResults(); ++i)
      os << "|" << dotEscape(n->getType(i)->toString());
    os << "}\"";
    if (llvm::isa<Constant>(n))
      os << ", style=filled, fillcolor=\"#eeeeee\"";
    else if (llvm::isa<Placeholder>(n))
      os << ", style=filled, fillcolor=\"#cce5ff\"";
    os << "];\n";
  }
  for (Node *n : order)
    for (NodeValue v : n->getInputs())
      os << "  " << id(v.getNode()) << " -> " << id(n) << ";\n";
  os << "}\n";
}

std::map<std::string, unsigned> ember::countNodeKinds(const Function &F) {
  std::map<std::string, unsigned> counts;
  for (auto &n : F.getNodes())
    ++counts[n->getKindName().str()];
  return counts;
}
