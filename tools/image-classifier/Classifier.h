//===- Classifier.h - Batches of images through a network -----*- C++ -*-===//
#ifndef EMBER_TOOLS_IMAGECLASSIFIER_CLASSIFIER_H
#define EMBER_TOOLS_IMAGECLASSIFIER_CLASSIFIER_H

#include "Preprocess.h"
#include "Runner.h"

#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

namespace ember {

/// Everything about a classification run except the network.
struct ClassifyOptions {
  PreprocessOptions preprocess;
  /// Classes printed per image.
  unsigned topK = 1;
  /// Class names (may be empty: indices only).
  std::vector<std::string> labels;
  /// The expected class per image (empty: no check).
  std::vector<unsigned> expected;
  bool softmax = false;
  /// Timed passes over all images; results are printed for the last.
  unsigned iterations = 1;
  /// Untimed runs of the first batch before timing.
  unsigned warmup = 0;
};

/// The outcome of classifyImages.
struct ClassifyResult {
  unsigned images = 0;
  unsigned mismatches = 0;
  double networkSeconds = 0;
  unsigned runs = 0;
};

/// The image geometry \p runner's input implies under \p layout, checked:
/// rank 4 and 1 or 3 channels.
llvm::Expected<InputShape> getInputShape(const NetworkRunner &runner,
                                         ImageLayout layout);

/// Classifies \p paths in batches of the runner's input batch size (the
/// last one padded with zeros, its padding ignored), printing each image
/// with its top-K classes to \p os, then a summary.
llvm::Expected<ClassifyResult>
classifyImages(NetworkRunner &runner, const std::vector<std::string> &paths,
               const ClassifyOptions &opts, llvm::raw_ostream &os);

} // namespace ember

#endif // EMBER_TOOLS_IMAGECLASSIFIER_CLASSIFIER_H
