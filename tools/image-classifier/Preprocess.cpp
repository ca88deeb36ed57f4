//===- Preprocess.cpp - Decoded pixels into a model input tensor ----------===//
#include "Preprocess.h"

#include "ember/Base/Error.h"

#include <algorithm>
#include <cmath>

namespace ember {

/// The value the 8-bit sample \p v maps to in \p mode.
static float scaleSample(ImageMode mode, float v) {
  switch (mode) {
  case ImageMode::ZeroToOne:
    return v / 255.f;
  case ImageMode::NegOneToOne:
    return v / 255.f * 2.f - 1.f;
  case ImageMode::ZeroTo255:
    return v;
  case ImageMode::Neg128To127:
    return v - 128.f;
  }
  return v;
}

void setImageNetNormalization(PreprocessOptions &opts) {
  const float rgbMean[3] = {0.485f, 0.456f, 0.406f};
  const float rgbStd[3] = {0.229f, 0.224f, 0.225f};
  // A value x in [0, 1] is lo + x * span in the mode's units.
  float lo = scaleSample(opts.mode, 0.f);
  float span = scaleSample(opts.mode, 255.f) - lo;
  opts.mean.clear();
  opts.stddev.clear();
  for (unsigned c = 0; c < 3; ++c) {
    unsigned src = opts.order == ChannelOrder::BGR ? 2 - c : c;
    opts.mean.push_back(lo + rgbMean[src] * span);
    opts.stddev.push_back(rgbStd[src] * span);
  }
}

llvm::Error checkNormalization(const PreprocessOptions &opts,
                               unsigned channels) {
  for (auto *v : {&opts.mean, &opts.stddev}) {
    const char *what = v == &opts.mean ? "-mean" : "-stddev";
    if (!v->empty() && v->size() != 1 && v->size() != channels)
      return makeErrorF("{0} has {1} values; the model input has {2} "
                        "channel(s) (give {3})",
                        what, v->size(), channels,
                        channels == 1 ? std::string("1 value")
                                      : "1 or " + std::to_string(channels));
  }
  for (float s : opts.stddev)
    if (!(s > 0.f) && !(s < 0.f))
      return makeError("-stddev values must be non-zero");
  return llvm::Error::success();
}

Image resizeImage(const Image &img, unsigned width, unsigned height) {
  Image out;
  out.width = width;
  out.height = height;
  out.channels = img.channels;
  out.pixels.resize(size_t(width) * height * img.channels);
  float sy = float(img.height) / height, sx = float(img.width) / width;
  for (unsigned y = 0; y < height; ++y) {
    float fy = std::clamp((y + 0.5f) * sy - 0.5f, 0.f, img.height - 1.f);
    unsigned y0 = unsigned(fy), y1 = std::min(y0 + 1, img.height - 1);
    float wy = fy - y0;
    for (unsigned x = 0; x < width; ++x) {
      float fx = std::clamp((x + 0.5f) * sx - 0.5f, 0.f, img.width - 1.f);
      unsigned x0 = unsigned(fx), x1 = std::min(x0 + 1, img.width - 1);
      float wx = fx - x0;
      for (unsigned c = 0; c < img.channels; ++c) {
        float top = img.at(y0, x0, c) * (1 - wx) + img.at(y0, x1, c) * wx;
        float bot = img.at(y1, x0, c) * (1 - wx) + img.at(y1, x1, c) * wx;
        float v = top * (1 - wy) + bot * wy;
        out.pixels[(size_t(y) * width + x) * img.channels + c] =
            uint8_t(std::lround(std::clamp(v, 0.f, 255.f)));
      }
    }
  }
  return out;
}

static const char *describeChannels(unsigned n) {
  static const char *names[] = {"?", "gray", "gray+alpha", "RGB", "RGBA"};
  return n <= 4 ? names[n] : "?";
}

/// Which channel of \p img feeds model channel \p c.
static unsigned sourceChannel(const Image &img, const PreprocessOptions &opts,
                              unsigned c) {
  if (img.colorChannels() == 1)
    return 0;
  return opts.order == ChannelOrder::BGR ? 2 - c : c;
}

llvm::Error writeImageToInput(const Image &img, llvm::StringRef name,
                              const InputShape &shape,
                              const PreprocessOptions &opts, float *dst) {
  unsigned have = img.colorChannels();
  if (!(have == shape.channels || (have == 1 && shape.channels == 3)))
    return makeErrorF("image '{0}' has {1} channels ({2}); the model input "
                      "expects {3}",
                      name, img.channels, describeChannels(img.channels),
                      shape.channels);
  if (img.width != shape.width || img.height != shape.height) {
    if (!opts.resize)
      return makeErrorF("image '{0}' is {1}x{2} (WxH); the model input "
                        "expects {3}x{4}; pass -resize to resize it",
                        name, img.width, img.height, shape.width, shape.height);
    Image resized = resizeImage(img, shape.width, shape.height);
    return writeImageToInput(resized, name, shape, opts, dst);
  }
  size_t hw = size_t(shape.height) * shape.width;
  for (unsigned c = 0; c < shape.channels; ++c) {
    unsigned src = sourceChannel(img, opts, c);
    float mean = opts.mean.empty()
                     ? 0.f
                     : opts.mean[std::min<size_t>(c, opts.mean.size() - 1)];
    float sd = opts.stddev.empty()
                   ? 1.f
                   : opts.stddev[std::min<size_t>(c, opts.stddev.size() - 1)];
    for (size_t p = 0; p < hw; ++p) {
      float v =
          (scaleSample(opts.mode, img.pixels[p * img.channels + src]) - mean) /
          sd;
      size_t at = opts.layout == ImageLayout::NCHW ? c * hw + p
                                                   : p * shape.channels + c;
      dst[at] = v;
    }
  }
  return llvm::Error::success();
}

} // namespace ember
