//===- GraphMutator.h - Structural mutations of ONNX models -----*- C++ -*-===//
//
// The graph fuzzer's mutator: parses a model, changes one thing that a
// byte-level mutation would almost never reach while keeping the protobuf
// valid (an attribute's value or type, a declared dimension, an element
// type, an op type, which value a node reads, an initializer's shape or
// payload size, the opset), and writes the model again.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_TESTS_FUZZ_GRAPHMUTATOR_H
#define EMBER_TESTS_FUZZ_GRAPHMUTATOR_H

#include <cstddef>
#include <cstdint>
#include <string>

namespace ember {
namespace fuzz {

/// Applies 1 to 3 structural mutations chosen by \p seed to the model in
/// \p bytes; returns the new model's bytes, or an empty string when \p bytes
/// is not a model (the caller then mutates the bytes instead).
std::string mutateModel(const std::string &bytes, uint32_t seed);

} // namespace fuzz
} // namespace ember

#endif // EMBER_TESTS_FUZZ_GRAPHMUTATOR_H
