//===- classify.cpp - Classify digits through the RAII bundle wrapper ----===//
//
// Usage: classify-cpp WEIGHTS.bin|- IMAGE.input.pb...
//
//===----------------------------------------------------------------------===//
#include "digits.h"

#include "EmberBundle.hpp"
#include "tensor_pb.h"

#include <algorithm>
#include <cstdio>

int main(int argc, char **argv) try {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s WEIGHTS.bin|- IMAGE.input.pb...\n",
                 argv[0]);
    return 1;
  }
  std::string weights = argv[1] == std::string("-") ? "" : argv[1];
  ember::Bundle net(digits_info, digits, weights);
  const size_t numInputs = digits_input_SIZE / sizeof(float);
  const size_t numClasses = digits_logits_SIZE / sizeof(float);
  for (int i = 2; i < argc; ++i) {
    if (readTensorFloats(argv[i], net.tensor("input"), numInputs) !=
        long(numInputs)) {
      std::fprintf(stderr, "classify-cpp: cannot read %s\n", argv[i]);
      return 1;
    }
    net.run();
    const float *logits = net.tensor("logits");
    size_t best = std::max_element(logits, logits + numClasses) - logits;
    std::printf("%s: predicted %zu (score %.4f)\n", argv[i], best,
                logits[best]);
  }
  return 0;
} catch (const std::exception &e) {
  std::fprintf(stderr, "classify-cpp: %s\n", e.what());
  return 1;
}
