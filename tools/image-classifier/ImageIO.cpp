//===- ImageIO.cpp - Decoding PNG and JPEG files into pixels --------------===//
//
// libpng and libjpeg report errors by calling a handler that must not
// return; both handlers here record the message and longjmp back to the
// decode function, which turns it into an llvm::Error. Nothing with a
// destructor is created between setjmp and the library calls.
//
//===----------------------------------------------------------------------===//
#include "ImageIO.h"

#include "ember/Base/Error.h"

#include "llvm/Support/MemoryBuffer.h"

#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <string>

#include <jpeglib.h>
// jerror.h needs jpeglib.h first.
#include <jerror.h>
#include <png.h>

namespace ember {

/// Decoded images larger than this are refused before allocating: a damaged
/// or hostile header must not make us allocate gigabytes.
static constexpr uint64_t kMaxImageBytes = uint64_t(1) << 30;

static bool tooLarge(uint64_t width, uint64_t height, uint64_t channels) {
  return width * height * channels > kMaxImageBytes;
}

llvm::Expected<Image> readImage(llvm::StringRef path) {
  auto buf = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                         /*RequiresNullTerminator=*/false);
  if (!buf)
    return makeErrorF("cannot read image '{0}': {1}", path,
                      buf.getError().message());
  llvm::ArrayRef<uint8_t> bytes(
      reinterpret_cast<const uint8_t *>((*buf)->getBufferStart()),
      (*buf)->getBufferSize());
  static const uint8_t pngMagic[8] = {0x89, 'P',  'N',  'G',
                                      '\r', '\n', 0x1a, '\n'};
  if (bytes.size() >= 8 && std::memcmp(bytes.data(), pngMagic, 8) == 0)
    return decodePNG(bytes, path);
  if (bytes.size() >= 3 && bytes[0] == 0xFF && bytes[1] == 0xD8 &&
      bytes[2] == 0xFF)
    return decodeJPEG(bytes, path);
  return makeErrorF("image '{0}' is neither a PNG nor a JPEG file", path);
}

//===----------------------------------------------------------------------===//
// PNG
//===----------------------------------------------------------------------===//

namespace {
/// What the libpng callbacks share with decodePNG.
struct PNGState {
  llvm::ArrayRef<uint8_t> bytes;
  size_t pos = 0;
  char message[256] = "";
};
} // namespace

static void pngError(png_structp png, png_const_charp msg) {
  auto *state = static_cast<PNGState *>(png_get_error_ptr(png));
  std::snprintf(state->message, sizeof(state->message), "%s", msg);
  png_longjmp(png, 1);
}

static void pngWarning(png_structp, png_const_charp) {}

static void pngRead(png_structp png, png_bytep out, png_size_t n) {
  auto *state = static_cast<PNGState *>(png_get_io_ptr(png));
  if (state->bytes.size() - state->pos < n)
    png_error(png, "file is truncated");
  std::memcpy(out, state->bytes.data() + state->pos, n);
  state->pos += n;
}

/// Asks libpng for 8-bit gray, gray+alpha, RGB or RGBA samples.
static void setPNGTransforms(png_structp png, png_infop info) {
  int colorType = png_get_color_type(png, info);
  if (png_get_bit_depth(png, info) == 16)
    png_set_strip_16(png);
  if (colorType == PNG_COLOR_TYPE_PALETTE)
    png_set_palette_to_rgb(png);
  if (colorType == PNG_COLOR_TYPE_GRAY && png_get_bit_depth(png, info) < 8)
    png_set_expand_gray_1_2_4_to_8(png);
  if (png_get_valid(png, info, PNG_INFO_tRNS))
    png_set_tRNS_to_alpha(png);
  png_set_interlace_handling(png);
  png_read_update_info(png, info);
}

llvm::Expected<Image> decodePNG(llvm::ArrayRef<uint8_t> bytes,
                                llvm::StringRef name) {
  PNGState state;
  state.bytes = bytes;
  Image img;
  std::vector<png_bytep> rows;
  png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &state,
                                           pngError, pngWarning);
  png_infop info = png ? png_create_info_struct(png) : nullptr;
  if (!info) {
    png_destroy_read_struct(&png, nullptr, nullptr);
    return makeErrorF("cannot decode PNG '{0}': out of memory", name);
  }
  if (setjmp(png_jmpbuf(png))) {
    png_destroy_read_struct(&png, &info, nullptr);
    return makeErrorF("corrupt PNG '{0}': {1}", name, state.message);
  }
  png_set_read_fn(png, &state, pngRead);
  png_read_info(png, info);
  setPNGTransforms(png, info);
  img.width = png_get_image_width(png, info);
  img.height = png_get_image_height(png, info);
  img.channels = png_get_channels(png, info);
  if (img.channels < 1 || img.channels > 4 ||
      png_get_rowbytes(png, info) != size_t(img.width) * img.channels)
    png_error(png, "unsupported sample layout");
  if (tooLarge(img.width, img.height, img.channels))
    png_error(png, "image is larger than 1 GiB decoded");
  img.pixels.resize(size_t(img.width) * img.height * img.channels);
  rows.resize(img.height);
  for (unsigned y = 0; y < img.height; ++y)
    rows[y] = img.pixels.data() + size_t(y) * img.width * img.channels;
  png_read_image(png, rows.data());
  png_read_end(png, nullptr);
  png_destroy_read_struct(&png, &info, nullptr);
  return img;
}

//===----------------------------------------------------------------------===//
// JPEG
//===----------------------------------------------------------------------===//

namespace {
/// libjpeg's error manager extended with our jump target and message.
struct JPEGError {
  jpeg_error_mgr mgr;
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX] = "";
};
} // namespace

static void jpegErrorExit(j_common_ptr cinfo) {
  auto *err = reinterpret_cast<JPEGError *>(cinfo->err);
  cinfo->err->format_message(cinfo, err->message);
  std::longjmp(err->jump, 1);
}

/// Keeps the text of corrupt-data warnings (level -1); drops trace output.
static void jpegEmit(j_common_ptr cinfo, int level) {
  if (level >= 0)
    return;
  auto *err = reinterpret_cast<JPEGError *>(cinfo->err);
  if (err->mgr.num_warnings++ == 0)
    cinfo->err->format_message(cinfo, err->message);
}

llvm::Expected<Image> decodeJPEG(llvm::ArrayRef<uint8_t> bytes,
                                 llvm::StringRef name) {
  jpeg_decompress_struct cinfo;
  JPEGError err;
  Image img;
  cinfo.err = jpeg_std_error(&err.mgr);
  err.mgr.error_exit = jpegErrorExit;
  err.mgr.emit_message = jpegEmit;
  if (setjmp(err.jump)) {
    jpeg_destroy_decompress(&cinfo);
    return makeErrorF("corrupt JPEG '{0}': {1}", name, err.message);
  }
  jpeg_create_decompress(&cinfo);
  jpeg_mem_src(&cinfo, bytes.data(), bytes.size());
  jpeg_read_header(&cinfo, TRUE);
  if (cinfo.jpeg_color_space == JCS_CMYK || cinfo.jpeg_color_space == JCS_YCCK)
    ERREXIT(&cinfo, JERR_CONVERSION_NOTIMPL);
  cinfo.out_color_space = cinfo.num_components == 1 ? JCS_GRAYSCALE : JCS_RGB;
  jpeg_start_decompress(&cinfo);
  img.width = cinfo.output_width;
  img.height = cinfo.output_height;
  img.channels = cinfo.output_components;
  if (tooLarge(img.width, img.height, img.channels)) {
    jpeg_destroy_decompress(&cinfo);
    return makeErrorF("JPEG '{0}' is larger than 1 GiB decoded", name);
  }
  img.pixels.resize(size_t(img.width) * img.height * img.channels);
  while (cinfo.output_scanline < cinfo.output_height) {
    JSAMPROW row = img.pixels.data() +
                   size_t(cinfo.output_scanline) * img.width * img.channels;
    jpeg_read_scanlines(&cinfo, &row, 1);
  }
  jpeg_finish_decompress(&cinfo);
  jpeg_destroy_decompress(&cinfo);
  // libjpeg decodes truncated or damaged data with a warning; refuse it.
  if (err.mgr.num_warnings)
    return makeErrorF("corrupt JPEG '{0}': {1}", name, err.message);
  return img;
}

} // namespace ember
