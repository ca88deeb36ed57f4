//===- OpsetHistory.h - Which version of an op a newer opset runs --------===//
//
// The import table states each rule's range in op versions up to opset 17
// (the ONNX release Ember's rules were written against). A model of a later
// opset runs, for each op, the newest version of it not above that opset;
// most versions past 17 only admit new element types (int4, float8,
// bfloat16 on more ops), which the importer's own type checks handle, so
// those map back to the rule of opset 17. Versions that changed inputs,
// attributes or meaning are listed, and only a rule written for them
// imports them.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_LIB_IMPORTER_OPSETHISTORY_H
#define EMBER_LIB_IMPORTER_OPSETHISTORY_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>

namespace ember {
namespace onnximport {

/// The newest default-domain opset whose changes the table below knows.
constexpr int64_t kNewestKnownOpset = 28;

/// The opset at which to look up \p opType's import rule for a model of
/// \p opset: \p opset itself up to 17; past it, the newest version of the
/// op up to \p opset that changed more than its element types, or 17.
int64_t ruleOpset(llvm::StringRef opType, int64_t opset);

} // namespace onnximport
} // namespace ember

#endif
