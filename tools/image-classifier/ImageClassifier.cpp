//===- ImageClassifier.cpp - Classify images with a model or a bundle -----===//
//
// image-classifier (-model=F.onnx [-backend=B] | -bundle=DIR/NAME)
//                  [preprocessing flags] [-minibatch=N] [-topk=K]
//                  [-labels=FILE] [-expected-labels=i,j,...]
//                  IMAGE... | - | -input-image-dir=DIR |
//                  -input-image-list-file=FILE
//                  [-dump-profile=P.yaml | -load-profile=P.yaml
//                   [quantization flags]]
//
// Exit status: the number of top-1 mismatches against -expected-labels
// (capped at 255; 0 without the flag), or 1 after an error line.
//
//===----------------------------------------------------------------------===//
#include "Classifier.h"
#include "FlagDecl.h"
#include "ImportFlags.h"
#include "InputList.h"
#include "PassOptions.h"
#include "PrecisionFlags.h"

#include "ember/Backend/Backend.h"
#include "ember/Base/Error.h"

#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"

#include "glog/logging.h"

#include <iostream>

using namespace ember;
namespace cl = llvm::cl;

static cl::OptionCategory category("image-classifier options");
static cl::opt<std::string> modelPath =
    tools::stringFlag(category, "model", "file.onnx", "", "ONNX model file");
static cl::opt<std::string> backendName = tools::stringFlag(
    category, "backend", "", "Interpreter", "Backend to compile for");
static cl::opt<std::string> bundlePrefix =
    tools::stringFlag(category, "bundle", "DIR/NAME", "",
                      "Run the bundle DIR/NAME.so instead of a model");
static cl::list<std::string>
    imageArgs(cl::Positional,
              cl::desc("<image files, or - to read paths "
                       "from stdin>"),
              cl::ZeroOrMore, cl::cat(category));
static cl::opt<std::string> imageDir =
    tools::stringFlag(category, "input-image-dir", "DIR", "",
                      "Classify every .png/.jpg/.jpeg in DIR (sorted)");
static cl::opt<std::string> imageListFile =
    tools::stringFlag(category, "input-image-list-file", "FILE", "",
                      "Classify the images listed in FILE, one a line");
static cl::opt<std::string> imageMode =
    tools::stringFlag(category, "image-mode", "", "0to1",
                      "Pixel range: 0to1, neg1to1, 0to255, neg128to127");
static cl::opt<std::string> imageLayout =
    tools::stringFlag(category, "image-layout", "", "NCHW", "NCHW or NHWC");
static cl::opt<std::string> channelOrder =
    tools::stringFlag(category, "image-channel-order", "", "RGB",
                      "Channel order the model expects: RGB or BGR");
static cl::opt<bool>
    imageNetNorm("use-imagenet-normalization",
                 cl::desc("Subtract ImageNet's mean and divide by its stddev"),
                 cl::cat(category));
static cl::opt<std::string> meanValues =
    tools::stringFlag(category, "mean", "m[,m,m]", "",
                      "Per-channel mean, in -image-mode units and the "
                      "model's channel order (one value: all channels)");
static cl::opt<std::string> stddevValues = tools::stringFlag(
    category, "stddev", "s[,s,s]", "", "Per-channel stddev, like -mean");
static cl::opt<bool> resize("resize",
                            cl::desc("Resize images to the model's size"),
                            cl::cat(category));
static cl::opt<std::string> inputName =
    tools::stringFlag(category, "model-input-name", "", "",
                      "The model input to feed the images to");
static cl::opt<unsigned>
    minibatch("minibatch",
              cl::desc("Images per run (default 1, or the model's fixed "
                       "batch)"),
              cl::cat(category));
static cl::list<std::string>
    symbols("onnx-define-symbol",
            cl::desc("Value of a symbolic input dimension other than the "
                     "batch: NAME,VALUE"),
            cl::value_desc("NAME,VALUE"), cl::cat(category));
static cl::opt<unsigned> topK("topk", cl::desc("Classes shown per image"),
                              cl::init(1), cl::cat(category));
static cl::opt<std::string> labelsFile = tools::stringFlag(
    category, "labels", "FILE", "", "Class names, one a line");
static cl::opt<std::string> expectedLabels =
    tools::stringFlag(category, "expected-labels", "i,j,...", "",
                      "Expected class per image; the exit status is "
                      "the number of mismatches");
static cl::opt<bool> computeSoftmax("compute-softmax",
                                    cl::desc("Show softmax probabilities"),
                                    cl::cat(category));
static cl::opt<unsigned>
    iterations("iterations",
               cl::desc("Timed passes over all images (results: last)"),
               cl::init(1), cl::cat(category));
static cl::opt<unsigned> warmup("warmup",
                                cl::desc("Untimed runs before timing"),
                                cl::init(0), cl::cat(category));

[[noreturn]] static void fail(const llvm::Twine &msg) {
  llvm::outs().flush();
  llvm::errs() << "image-classifier: error: " << msg << "\n";
  std::exit(1);
}

template <typename T> static T unwrap(llvm::Expected<T> v) {
  if (!v)
    fail(errorToString(v.takeError()));
  return std::move(*v);
}

/// Maps \p value of \p flag through \p table, or fails listing the choices.
template <typename T>
static T parseChoice(llvm::StringRef flag, llvm::StringRef value,
                     std::initializer_list<std::pair<const char *, T>> table) {
  std::string choices;
  for (const auto &[name, v] : table) {
    if (value == name)
      return v;
    choices += (choices.empty() ? "" : ", ") + std::string(name);
  }
  fail("-" + flag + "=" + value + " is not one of " + choices);
}

static PreprocessOptions parsePreprocessOptions() {
  PreprocessOptions p;
  p.mode = parseChoice<ImageMode>("image-mode", imageMode,
                                  {{"0to1", ImageMode::ZeroToOne},
                                   {"neg1to1", ImageMode::NegOneToOne},
                                   {"0to255", ImageMode::ZeroTo255},
                                   {"neg128to127", ImageMode::Neg128To127}});
  p.layout = parseChoice<ImageLayout>(
      "image-layout", imageLayout,
      {{"NCHW", ImageLayout::NCHW}, {"NHWC", ImageLayout::NHWC}});
  p.order = parseChoice<ChannelOrder>(
      "image-channel-order", channelOrder,
      {{"RGB", ChannelOrder::RGB}, {"BGR", ChannelOrder::BGR}});
  p.resize = resize;
  if (imageNetNorm && (!meanValues.empty() || !stddevValues.empty()))
    fail("-use-imagenet-normalization and -mean/-stddev exclude each other");
  if (imageNetNorm)
    setImageNetNormalization(p);
  if (!meanValues.empty())
    for (float v : unwrap(parseFloatList(meanValues, "-mean")))
      p.mean.push_back(v);
  if (!stddevValues.empty())
    for (float v : unwrap(parseFloatList(stddevValues, "-stddev")))
      p.stddev.push_back(v);
  return p;
}

static ClassifyOptions parseClassifyOptions() {
  ClassifyOptions c;
  c.preprocess = parsePreprocessOptions();
  if (topK == 0)
    fail("-topk must be at least 1");
  if (iterations == 0)
    fail("-iterations must be at least 1");
  c.topK = topK;
  c.softmax = computeSoftmax;
  c.iterations = iterations;
  c.warmup = warmup;
  if (!labelsFile.empty())
    c.labels = unwrap(readLabels(labelsFile));
  if (!expectedLabels.empty())
    c.expected = unwrap(parseIndexList(expectedLabels, "-expected-labels"));
  return c;
}

static std::unique_ptr<NetworkRunner> createRunner() {
  if (modelPath.empty() == bundlePrefix.empty())
    fail("give exactly one of -model=F.onnx and -bundle=DIR/NAME");
  if (minibatch.getNumOccurrences() && minibatch == 0)
    fail("-minibatch must be at least 1");
  RunnerOptions opts;
  opts.inputName = inputName;
  CompileOptions compileOpts;
  if (llvm::Error err = tools::fillPassOptions(compileOpts))
    fail(errorToString(std::move(err)));
  opts.passes = compileOpts.passes;
  opts.precision = unwrap(tools::getPrecisionOptions());
  opts.quant = unwrap(tools::getQuantizationRequest(opts.precision.keepKinds));
  if (opts.quant.report)
    fail("-dump-quantization-report is a model-runner flag (it runs the "
         "float and the quantized model side by side)");
  if (!bundlePrefix.empty() &&
      (!opts.quant.dumpProfile.empty() || !opts.quant.loadProfile.empty()))
    fail("-dump-profile and -load-profile apply to -model; a bundle is "
         "quantized when it is compiled (model-compiler -load-profile)");
  if (!bundlePrefix.empty() &&
      (opts.precision.precision != FloatPrecision::FP32 ||
       opts.precision.weights != FloatPrecision::FP32))
    fail("-precision and -weights-precision apply to -model; a bundle has "
         "the precision it was compiled with");
  if (!bundlePrefix.empty() && !symbols.empty())
    fail("-onnx-define-symbol applies to -model; a bundle's shapes were "
         "fixed when it was compiled");
  if (minibatch.getNumOccurrences())
    opts.minibatch = minibatch;
  for (const std::string &s : symbols)
    opts.symbols.push_back(unwrap(tools::parseSymbolFlag(s)));
  if (!bundlePrefix.empty())
    return unwrap(createBundleRunner(bundlePrefix, opts));
  registerAllBackends();
  return unwrap(createModelRunner(modelPath, backendName, opts));
}

int main(int argc, char **argv) {
  google::InitGoogleLogging(argv[0]);
  FLAGS_minloglevel = 2; // quiet unless something is fatal
  tools::registerPassOptions();
  cl::HideUnrelatedOptions({&category, &tools::passOptionsCategory(),
                            &tools::precisionFlagsCategory(),
                            &tools::quantizationFlagsCategory()});
  // Unknown flags are reported to flagErrStream (with "did you mean"
  // lines): print only the first line, in the form of every other error.
  // Bad flag values are printed by LLVM itself, as one line.
  std::string flagErrors;
  llvm::raw_string_ostream flagErrStream(flagErrors);
  if (!cl::ParseCommandLineOptions(argc, argv,
                                   "Classifies images with an ONNX model or "
                                   "a compiled bundle\n",
                                   &flagErrStream)) {
    llvm::StringRef first =
        llvm::StringRef(flagErrStream.str()).split('\n').first;
    if (!first.empty())
      fail(first.split(": ").second);
    std::exit(1);
  }
  ClassifyOptions opts = parseClassifyOptions();
  InputSources sources;
  sources.args.assign(imageArgs.begin(), imageArgs.end());
  sources.dir = imageDir;
  sources.listFile = imageListFile;
  sources.stdinStream = &std::cin;
  std::vector<std::string> paths = unwrap(collectImagePaths(sources));

  std::unique_ptr<NetworkRunner> runner = createRunner();
  ClassifyResult r = unwrap(classifyImages(*runner, paths, opts, llvm::outs()));
  if (llvm::Error err = runner->finish())
    fail(errorToString(std::move(err)));
  unsigned batch = unsigned(runner->getInput().dims[0]);
  double rate = r.networkSeconds > 0
                    ? double(r.images) * opts.iterations / r.networkSeconds
                    : 0;
  llvm::outs() << "summary: " << r.images << " images, batch " << batch << ", "
               << r.runs << " runs over " << opts.iterations
               << " iteration(s), " << llvm::format("%.4f", r.networkSeconds)
               << " s in the network, " << llvm::format("%.1f", rate)
               << " images/s\n";
  if (!opts.expected.empty())
    llvm::outs() << "mismatches: " << r.mismatches << " of " << r.images
                 << "\n";
  return int(std::min(r.mismatches, 255u));
}
