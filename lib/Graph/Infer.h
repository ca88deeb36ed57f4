//===- Infer.h - Result-type inference, one per op family -------*- C++ -*-===//
//
// Private to lib/Graph. Each function computes an op's result types from
// its input types and attributes and reports inconsistent operands as an
// error; the op table (Ops.py) names the function for each op, and the
// declarations below are generated from those names, so a function the
// table names but no Infer*.cpp defines fails to link, and a definition the
// table does not name fails to compile (it is qualified with ember::).
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_LIB_GRAPH_INFER_H
#define EMBER_LIB_GRAPH_INFER_H

#include "ember/Graph/OpInfo.h"

namespace ember {

using InferResult = llvm::Expected<llvm::SmallVector<Type, 1>>;

#include "ember/Generated/InferDecls.inc"

} // namespace ember

#endif // EMBER_LIB_GRAPH_INFER_H
