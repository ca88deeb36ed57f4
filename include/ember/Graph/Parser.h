//===- Parser.h - Reading the graph printer's text format ------*- C++ -*-===//
#ifndef EMBER_GRAPH_PARSER_H
#define EMBER_GRAPH_PARSER_H

#include "ember/Graph/Graph.h"

namespace ember {

/// Parses one function in the format printFunction writes into \p M:
///
///   function f {
///     %x = Placeholder float<2 x 3> input
///     %w = Constant float<3> [1, 2, 3]
///     %r = Relu(%x) : float<2 x 3>
///     Save(%r, %y)
///   }
///
/// Extensions for hand-written tests: a Constant may list its values
/// ("[v]" fills every element; without a list, values are pseudo-random in
/// [-1, 1) from a fixed seed); the ": TYPE" of an op may be left out (it is
/// then inferred); missing attributes are zero; lines starting with "//"
/// or "#" are comments. Node names are kept, so print(parse(print(F)))
/// equals print(F). The function is verified; errors name the line.
llvm::Expected<Function *> parseFunction(llvm::StringRef text, Module &M);

/// Parses a type written by Type::toString ("float<1 x 3>").
llvm::Expected<Type> parseType(llvm::StringRef text);

} // namespace ember

#endif // EMBER_GRAPH_PARSER_H
