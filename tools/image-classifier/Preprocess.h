//===- Preprocess.h - Decoded pixels into a model input tensor -*- C++ -*-===//
//
// Every preprocessing choice a model's training fixed is an explicit option
// here: value range, layout, channel order, per-channel mean and stddev,
// and whether resizing is allowed. Nothing is guessed.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_TOOLS_IMAGECLASSIFIER_PREPROCESS_H
#define EMBER_TOOLS_IMAGECLASSIFIER_PREPROCESS_H

#include "ImageIO.h"

#include "llvm/ADT/SmallVector.h"

namespace ember {

/// The range 8-bit samples are mapped to before normalization.
enum class ImageMode { ZeroToOne, NegOneToOne, ZeroTo255, Neg128To127 };
/// Where the channel dimension sits in the model input.
enum class ImageLayout { NCHW, NHWC };
/// The order of color channels the model expects.
enum class ChannelOrder { RGB, BGR };

/// How to turn an image into model input values.
struct PreprocessOptions {
  ImageMode mode = ImageMode::ZeroToOne;
  ImageLayout layout = ImageLayout::NCHW;
  ChannelOrder order = ChannelOrder::RGB;
  /// Per-channel mean and stddev in the units of \c mode, in the model's
  /// channel order; one value applies to every channel. Empty: 0 and 1.
  llvm::SmallVector<float, 4> mean, stddev;
  /// Resize (bilinear) to the model's size instead of refusing a mismatch.
  bool resize = false;
};

/// The (height, width, channels) a model input expects.
struct InputShape {
  unsigned height = 0, width = 0, channels = 0;
};

/// Maps ImageNet's mean (0.485, 0.456, 0.406) and stddev (0.229, 0.224,
/// 0.225), given for RGB values in [0, 1], into the units of \p opts.mode and
/// the channel order of \p opts, and stores them in \p opts.
void setImageNetNormalization(PreprocessOptions &opts);

/// Checks that mean/stddev have 1 or \p channels entries and no stddev is 0.
llvm::Error checkNormalization(const PreprocessOptions &opts,
                               unsigned channels);

/// Bilinear resize with half-pixel centers (no antialiasing).
Image resizeImage(const Image &img, unsigned width, unsigned height);

/// Writes \p img, preprocessed, into \p dst: height*width*channels floats in
/// the layout of \p opts. The alpha channel is dropped; a gray image fills
/// all three channels of an RGB model; a color image given to a 1-channel
/// model, or a size mismatch without \c resize, is an error naming the file
/// (\p name) and both sizes.
llvm::Error writeImageToInput(const Image &img, llvm::StringRef name,
                              const InputShape &shape,
                              const PreprocessOptions &opts, float *dst);

} // namespace ember

#endif // EMBER_TOOLS_IMAGECLASSIFIER_PREPROCESS_H
