//===- Classifier.cpp - Batches of images through a network ---------------===//
#include "Classifier.h"

#include "ember/Base/Error.h"

#include "llvm/Support/Format.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <numeric>

namespace ember {

llvm::Expected<InputShape> getInputShape(const NetworkRunner &runner,
                                         ImageLayout layout) {
  const TensorDesc &in = runner.getInput();
  if (in.dims.size() != 4)
    return makeErrorF("model input '{0}' has rank {1}; image-classifier "
                      "needs a rank-4 image batch",
                      in.name, in.dims.size());
  bool nchw = layout == ImageLayout::NCHW;
  InputShape s;
  s.channels = unsigned(nchw ? in.dims[1] : in.dims[3]);
  s.height = unsigned(nchw ? in.dims[2] : in.dims[1]);
  s.width = unsigned(nchw ? in.dims[3] : in.dims[2]);
  if (s.channels != 1 && s.channels != 3) {
    unsigned other = unsigned(nchw ? in.dims[3] : in.dims[1]);
    return makeErrorF("model input '{0}' would have {1} channels as {2}; "
                      "image-classifier needs 1 or 3{3}",
                      in.name, s.channels, nchw ? "NCHW" : "NHWC",
                      other == 1 || other == 3
                          ? (nchw ? " (is it NHWC? pass -image-layout=NHWC)"
                                  : " (is it NCHW? pass -image-layout=NCHW)")
                          : "");
  }
  return s;
}

namespace {
/// Per-run state of classifyImages.
class BatchClassifier {
public:
  BatchClassifier(NetworkRunner &runner, const InputShape &shape,
                  const std::vector<std::string> &paths,
                  const ClassifyOptions &opts, llvm::raw_ostream &os)
      : runner_(runner), shape_(shape), paths_(paths), opts_(opts), os_(os) {
    batch_ = size_t(runner.getInput().dims[0]);
    imageSize_ = size_t(shape.height) * shape.width * shape.channels;
    size_t total = 1;
    for (int64_t d : runner.getOutput().dims)
      total *= size_t(d);
    classes_ = batch_ ? total / batch_ : 0;
  }
  llvm::Error checkOutput() const;
  llvm::Expected<ClassifyResult> run();

private:
  llvm::Error fillBatch(size_t first);
  void report(size_t first, ClassifyResult &result) const;
  void reportImage(size_t image, const float *scores,
                   ClassifyResult &result) const;

  NetworkRunner &runner_;
  InputShape shape_;
  const std::vector<std::string> &paths_;
  const ClassifyOptions &opts_;
  llvm::raw_ostream &os_;
  size_t batch_ = 1, imageSize_ = 0, classes_ = 0;
};
} // namespace

llvm::Error BatchClassifier::checkOutput() const {
  const TensorDesc &out = runner_.getOutput();
  if (out.dims.empty() || size_t(out.dims[0]) != batch_ || classes_ == 0)
    return makeErrorF("model output '{0}' does not have the input's batch "
                      "{1} as its first dimension",
                      out.name, batch_);
  if (!opts_.labels.empty() && opts_.labels.size() != classes_)
    return makeErrorF("the labels file has {0} lines; the model output "
                      "'{1}' has {2} classes",
                      opts_.labels.size(), out.name, classes_);
  for (unsigned e : opts_.expected)
    if (e >= classes_)
      return makeErrorF("-expected-labels: {0} is not a class of the "
                        "model output '{1}' ({2} classes)",
                        e, out.name, classes_);
  return llvm::Error::success();
}

llvm::Error BatchClassifier::fillBatch(size_t first) {
  float *dst = runner_.inputData();
  for (size_t i = 0; i < batch_; ++i, dst += imageSize_) {
    if (first + i >= paths_.size()) {
      std::memset(dst, 0, imageSize_ * sizeof(float)); // padding
      continue;
    }
    const std::string &path = paths_[first + i];
    EMBER_ASSIGN_OR_RETURN(Image img, readImage(path));
    EMBER_RETURN_IF_ERR(
        writeImageToInput(img, path, shape_, opts_.preprocess, dst));
  }
  return llvm::Error::success();
}

void BatchClassifier::reportImage(size_t image, const float *scores,
                                  ClassifyResult &result) const {
  std::vector<double> v(scores, scores + classes_);
  if (opts_.softmax) {
    double mx = *std::max_element(v.begin(), v.end()), sum = 0;
    for (double &x : v)
      sum += (x = std::exp(x - mx));
    for (double &x : v)
      x /= sum;
  }
  std::vector<size_t> idx(classes_);
  std::iota(idx.begin(), idx.end(), 0);
  size_t k = std::min<size_t>(opts_.topK, classes_);
  // Ties keep the lower index first, so output is deterministic.
  std::partial_sort(idx.begin(), idx.begin() + k, idx.end(),
                    [&](size_t a, size_t b) {
                      return v[a] > v[b] || (v[a] == v[b] && a < b);
                    });
  os_ << paths_[image] << "\n";
  for (size_t r = 0; r < k; ++r) {
    os_ << "  " << r + 1 << ": " << idx[r];
    if (!opts_.labels.empty())
      os_ << " " << opts_.labels[idx[r]];
    os_ << " " << llvm::format("%.6g", v[idx[r]]) << "\n";
  }
  if (opts_.expected.empty())
    return;
  unsigned want = opts_.expected[image];
  if (idx[0] != want) {
    ++result.mismatches;
    os_ << "  mismatch: expected " << want;
    if (!opts_.labels.empty())
      os_ << " " << opts_.labels[want];
    os_ << "\n";
  }
}

void BatchClassifier::report(size_t first, ClassifyResult &result) const {
  const float *out = runner_.outputData();
  for (size_t i = 0; i < batch_ && first + i < paths_.size(); ++i)
    reportImage(first + i, out + i * classes_, result);
}

llvm::Expected<ClassifyResult> BatchClassifier::run() {
  ClassifyResult result;
  result.images = unsigned(paths_.size());
  using Clock = std::chrono::steady_clock;
  for (unsigned it = 0; it < opts_.iterations; ++it) {
    bool last = it + 1 == opts_.iterations;
    for (size_t first = 0; first < paths_.size(); first += batch_) {
      EMBER_RETURN_IF_ERR(fillBatch(first));
      for (unsigned w = 0; it == 0 && first == 0 && w < opts_.warmup; ++w)
        EMBER_RETURN_IF_ERR(runner_.run());
      auto start = Clock::now();
      EMBER_RETURN_IF_ERR(runner_.run());
      result.networkSeconds +=
          std::chrono::duration<double>(Clock::now() - start).count();
      ++result.runs;
      if (last)
        report(first, result);
    }
  }
  return result;
}

llvm::Expected<ClassifyResult>
classifyImages(NetworkRunner &runner, const std::vector<std::string> &paths,
               const ClassifyOptions &opts, llvm::raw_ostream &os) {
  EMBER_ASSIGN_OR_RETURN(InputShape shape,
                         getInputShape(runner, opts.preprocess.layout));
  EMBER_RETURN_IF_ERR(checkNormalization(opts.preprocess, shape.channels));
  if (!opts.expected.empty() && opts.expected.size() != paths.size())
    return makeErrorF("-expected-labels has {0} entries for {1} images",
                      opts.expected.size(), paths.size());
  BatchClassifier c(runner, shape, paths, opts, os);
  EMBER_RETURN_IF_ERR(c.checkOutput());
  return c.run();
}

} // namespace ember
