//===- ImageIO.h - Decoding PNG and JPEG files into pixels -----*- C++ -*-===//
//
// The image-classifier's only contact with libpng and libjpeg. Everything
// decodes to 8-bit samples, interleaved (HWC), with 1 (gray), 2 (gray +
// alpha), 3 (RGB) or 4 (RGBA) channels as the file stores them.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_TOOLS_IMAGECLASSIFIER_IMAGEIO_H
#define EMBER_TOOLS_IMAGECLASSIFIER_IMAGEIO_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <vector>

namespace ember {

/// A decoded image: 8-bit samples, row-major, channels interleaved.
struct Image {
  unsigned width = 0;
  unsigned height = 0;
  /// 1 gray, 2 gray+alpha, 3 RGB, 4 RGBA.
  unsigned channels = 0;
  std::vector<uint8_t> pixels;

  /// Sample \p c of the pixel at row \p y, column \p x.
  uint8_t at(unsigned y, unsigned x, unsigned c) const {
    return pixels[(size_t(y) * width + x) * channels + c];
  }
  /// Channels that carry color (the alpha channel excluded).
  unsigned colorChannels() const {
    return channels == 2 || channels == 4 ? channels - 1 : channels;
  }
};

/// Decodes the PNG or JPEG file at \p path (chosen by its leading bytes, not
/// its name). 16-bit PNGs are reduced to 8 bits, palettes expanded. Errors
/// name the file.
llvm::Expected<Image> readImage(llvm::StringRef path);

/// Decodes a PNG from memory; \p name is used in messages.
llvm::Expected<Image> decodePNG(llvm::ArrayRef<uint8_t> bytes,
                                llvm::StringRef name);

/// Decodes a baseline or progressive JPEG from memory (gray or color; CMYK
/// is refused); \p name is used in messages.
llvm::Expected<Image> decodeJPEG(llvm::ArrayRef<uint8_t> bytes,
                                 llvm::StringRef name);

} // namespace ember

#endif // EMBER_TOOLS_IMAGECLASSIFIER_IMAGEIO_H
