//===- Printer.h - Textual and Graphviz dumps of a Function ----*- C++ -*-===//
#ifndef EMBER_GRAPH_PRINTER_H
#define EMBER_GRAPH_PRINTER_H

#include "ember/Graph/Graph.h"

#include "llvm/Support/raw_ostream.h"

namespace ember {

/// Prints \p F as text: storage it uses, then one line per node in a
/// topological order, with attributes and result types.
void printFunction(const Function &F, llvm::raw_ostream &os);
std::string functionToString(const Function &F);

/// Writes \p F as a Graphviz digraph.
void printFunctionDot(const Function &F, llvm::raw_ostream &os);

/// Node counts per kind (for -print-optimization-stats style reports).
std::map<std::string, unsigned> countNodeKinds(const Function &F);

} // namespace ember

#endif // EMBER_GRAPH_PRINTER_H
