//===- ImagePreprocessTest.cpp - Decoding and preprocessing tests --------===//
//
// Oracles: images are encoded here with libpng's and libjpeg's writers and
// must decode to the same samples (exactly for PNG, within 2 levels for a
// quality-100 JPEG); every preprocessing case is checked against values
// computed by hand in the comments.
//
//===----------------------------------------------------------------------===//
#include "ImageIO.h"
#include "Preprocess.h"

#include "ember/Base/Error.h"

#include "gtest/gtest.h"

#include <cstdio>
#include <cstdlib>
#include <jpeglib.h>
#include <png.h>
#include <zlib.h>

using namespace ember;

namespace {

std::vector<uint8_t> encodePNG(const Image &img) {
  png_image pi{};
  pi.version = PNG_IMAGE_VERSION;
  pi.width = img.width;
  pi.height = img.height;
  static const png_uint_32 formats[] = {0, PNG_FORMAT_GRAY, PNG_FORMAT_GA,
                                        PNG_FORMAT_RGB, PNG_FORMAT_RGBA};
  pi.format = formats[img.channels];
  png_alloc_size_t size = 0;
  EXPECT_TRUE(png_image_write_to_memory(&pi, nullptr, &size, 0,
                                        img.pixels.data(), 0, nullptr));
  std::vector<uint8_t> out(size);
  EXPECT_TRUE(png_image_write_to_memory(&pi, out.data(), &size, 0,
                                        img.pixels.data(), 0, nullptr));
  out.resize(size);
  return out;
}

std::vector<uint8_t> encodeJPEG(const Image &img) {
  jpeg_compress_struct c;
  jpeg_error_mgr err;
  c.err = jpeg_std_error(&err);
  jpeg_create_compress(&c);
  unsigned char *mem = nullptr;
  unsigned long size = 0;
  jpeg_mem_dest(&c, &mem, &size);
  c.image_width = img.width;
  c.image_height = img.height;
  c.input_components = int(img.channels);
  c.in_color_space = img.channels == 1 ? JCS_GRAYSCALE : JCS_RGB;
  jpeg_set_defaults(&c);
  jpeg_set_quality(&c, 100, TRUE);
  jpeg_start_compress(&c, TRUE);
  while (c.next_scanline < c.image_height) {
    JSAMPROW row = const_cast<uint8_t *>(img.pixels.data()) +
                   size_t(c.next_scanline) * img.width * img.channels;
    jpeg_write_scanlines(&c, &row, 1);
  }
  jpeg_finish_compress(&c);
  jpeg_destroy_compress(&c);
  std::vector<uint8_t> out(mem, mem + size);
  std::free(mem);
  return out;
}

Image makeImage(unsigned w, unsigned h, unsigned ch,
                std::vector<uint8_t> pixels) {
  Image img;
  img.width = w;
  img.height = h;
  img.channels = ch;
  img.pixels = std::move(pixels);
  return img;
}

/// A smooth gray ramp (JPEG reproduces it closely).
Image ramp(unsigned w, unsigned h) {
  std::vector<uint8_t> px;
  for (unsigned y = 0; y < h; ++y)
    for (unsigned x = 0; x < w; ++x)
      px.push_back(uint8_t(40 + 4 * x + 2 * y));
  return makeImage(w, h, 1, px);
}

std::string errorOf(llvm::Error e) { return errorToString(std::move(e)); }

} // namespace

TEST(ImageIO, PNGRoundTripsEveryChannelCount) {
  for (unsigned ch = 1; ch <= 4; ++ch) {
    std::vector<uint8_t> px;
    for (unsigned i = 0; i < 3 * 2 * ch; ++i)
      px.push_back(uint8_t(i * 37 + ch));
    Image img = makeImage(3, 2, ch, px);
    auto bytes = encodePNG(img);
    auto back = decodePNG(bytes, "mem.png");
    ASSERT_TRUE(bool(back)) << errorToString(back.takeError());
    EXPECT_EQ(back->width, 3u);
    EXPECT_EQ(back->height, 2u);
    EXPECT_EQ(back->channels, ch);
    EXPECT_EQ(back->pixels, px);
  }
}

TEST(ImageIO, CorruptPNGIsAnErrorNamingTheFile) {
  auto bytes = encodePNG(ramp(16, 16));
  bytes.resize(bytes.size() / 2);
  auto r = decodePNG(bytes, "half.png");
  ASSERT_FALSE(bool(r));
  EXPECT_NE(errorOf(r.takeError()).find("corrupt PNG 'half.png'"),
            std::string::npos);
  bytes = encodePNG(ramp(16, 16));
  bytes[bytes.size() - 20] ^= 0xFF; // inside IDAT: its CRC fails
  r = decodePNG(bytes, "flip.png");
  ASSERT_FALSE(bool(r));
  EXPECT_NE(errorOf(r.takeError()).find("corrupt PNG 'flip.png'"),
            std::string::npos);
}

TEST(ImageIO, JPEGDecodesCloseToItsSource) {
  Image src = ramp(16, 8);
  auto bytes = encodeJPEG(src);
  auto back = decodeJPEG(bytes, "mem.jpg");
  ASSERT_TRUE(bool(back)) << errorToString(back.takeError());
  ASSERT_EQ(back->channels, 1u);
  ASSERT_EQ(back->pixels.size(), src.pixels.size());
  for (size_t i = 0; i < src.pixels.size(); ++i)
    EXPECT_NEAR(back->pixels[i], src.pixels[i], 2) << i;
  Image rgb = makeImage(8, 8, 3, std::vector<uint8_t>(8 * 8 * 3, 128));
  back = decodeJPEG(encodeJPEG(rgb), "rgb.jpg");
  ASSERT_TRUE(bool(back));
  EXPECT_EQ(back->channels, 3u);
  EXPECT_NEAR(back->pixels[5], 128, 2);
}

TEST(ImageIO, TruncatedJPEGIsAnError) {
  auto bytes = encodeJPEG(ramp(64, 64));
  bytes.resize(bytes.size() / 2);
  auto r = decodeJPEG(bytes, "cut.jpg");
  ASSERT_FALSE(bool(r));
  EXPECT_NE(errorOf(r.takeError()).find("corrupt JPEG 'cut.jpg'"),
            std::string::npos);
}

TEST(ImageIO, ReadImageSniffsTheFormatAndReportsMissingFiles) {
  auto r = readImage("/nonexistent/x.png");
  ASSERT_FALSE(bool(r));
  EXPECT_NE(errorOf(r.takeError())
                .find("cannot read image "
                      "'/nonexistent/x.png'"),
            std::string::npos);
  std::string path = ::testing::TempDir() + "/not-an-image.png";
  FILE *f = std::fopen(path.c_str(), "wb");
  std::fputs("hello", f);
  std::fclose(f);
  r = readImage(path);
  ASSERT_FALSE(bool(r));
  EXPECT_NE(errorOf(r.takeError()).find("neither a PNG nor a JPEG"),
            std::string::npos);
}

TEST(ImageIO, EveryTruncationAndByteFlipIsHandled) {
  // No prefix and no single damaged byte may crash the decoders; each gives
  // an image of the declared size or an error. (The full files decode.)
  for (bool png : {true, false}) {
    Image src = ramp(12, 10);
    auto bytes = png ? encodePNG(src) : encodeJPEG(src);
    auto decode = [&](llvm::ArrayRef<uint8_t> b) {
      return png ? decodePNG(b, "x") : decodeJPEG(b, "x");
    };
    unsigned errors = 0;
    for (size_t n = 0; n < bytes.size(); ++n) {
      auto r = decode(llvm::ArrayRef<uint8_t>(bytes).take_front(n));
      if (!r) {
        llvm::consumeError(r.takeError());
        ++errors;
      } else {
        EXPECT_EQ(r->pixels.size(), size_t(r->width) * r->height * r->channels);
      }
    }
    EXPECT_GT(errors, bytes.size() / 2) << (png ? "PNG" : "JPEG");
    for (size_t i = 0; i < bytes.size(); ++i) {
      auto copy = bytes;
      copy[i] ^= 0x5A;
      auto r = decode(copy);
      if (!r)
        llvm::consumeError(r.takeError());
      else
        EXPECT_EQ(r->pixels.size(), size_t(r->width) * r->height * r->channels);
    }
  }
}

TEST(ImageIO, HugeDeclaredSizesAreRefusedBeforeAllocating) {
  // A PNG whose IHDR claims 1,000,000 x 1,000,000 (libpng's own limit),
  // with a valid CRC, and a JPEG whose frame header claims 60000 x 60000.
  auto png = encodePNG(ramp(4, 4));
  for (int i = 0; i < 2; ++i) {
    uint32_t v = 1000000;
    for (int b = 0; b < 4; ++b)
      png[16 + 4 * i + b] = uint8_t(v >> (24 - 8 * b));
  }
  uint32_t crc = uint32_t(crc32(0, png.data() + 12, 17));
  for (int b = 0; b < 4; ++b)
    png[29 + b] = uint8_t(crc >> (24 - 8 * b));
  auto r = decodePNG(png, "huge.png");
  ASSERT_FALSE(bool(r));
  std::string e = errorOf(r.takeError());
  EXPECT_NE(e.find("larger than 1 GiB"), std::string::npos) << e;

  auto jpg = encodeJPEG(makeImage(8, 8, 3, std::vector<uint8_t>(192, 9)));
  size_t sof = 0;
  for (size_t i = 2; i + 9 < jpg.size() && !sof; ++i)
    if (jpg[i] == 0xFF && jpg[i + 1] == 0xC0)
      sof = i;
  ASSERT_NE(sof, 0u);
  // Height and width 60000 (libjpeg's own limit is 65500): 10.8 GB of RGB.
  for (size_t k = 5; k < 9; k += 2) {
    jpg[sof + k] = 0xEA;
    jpg[sof + k + 1] = 0x60;
  }
  r = decodeJPEG(jpg, "huge.jpg");
  ASSERT_FALSE(bool(r));
  e = errorOf(r.takeError());
  EXPECT_NE(e.find("larger than 1 GiB"), std::string::npos) << e;
}

TEST(Preprocess, ImageModesMapSamplesToTheirRanges) {
  // One gray pixel of value 51: 0to1 -> 0.2, neg1to1 -> 0.4 - 1 = -0.6,
  // 0to255 -> 51, neg128to127 -> -77.
  Image img = makeImage(1, 1, 1, {51});
  InputShape shape{1, 1, 1};
  const std::pair<ImageMode, float> cases[] = {{ImageMode::ZeroToOne, 0.2f},
                                               {ImageMode::NegOneToOne, -0.6f},
                                               {ImageMode::ZeroTo255, 51.f},
                                               {ImageMode::Neg128To127, -77.f}};
  for (auto [mode, want] : cases) {
    PreprocessOptions o;
    o.mode = mode;
    float v = -1e9f;
    ASSERT_FALSE(bool(writeImageToInput(img, "p", shape, o, &v)));
    EXPECT_NEAR(v, want, 1e-6f);
  }
}

TEST(Preprocess, LayoutChannelOrderMeanAndStddev) {
  // Two RGB pixels (10,20,30) (40,50,60), 0to255, mean 1,2,3, stddev 1,2,4.
  Image img = makeImage(2, 1, 3, {10, 20, 30, 40, 50, 60});
  InputShape shape{1, 2, 3};
  PreprocessOptions o;
  o.mode = ImageMode::ZeroTo255;
  o.mean = {1, 2, 3};
  o.stddev = {1, 2, 4};
  float v[6];
  ASSERT_FALSE(bool(writeImageToInput(img, "p", shape, o, v)));
  // NCHW: R plane (9, 39), G plane (9, 24), B plane (6.75, 14.25).
  EXPECT_EQ(std::vector<float>(v, v + 6),
            (std::vector<float>{9, 39, 9, 24, 6.75f, 14.25f}));
  o.layout = ImageLayout::NHWC;
  ASSERT_FALSE(bool(writeImageToInput(img, "p", shape, o, v)));
  EXPECT_EQ(std::vector<float>(v, v + 6),
            (std::vector<float>{9, 9, 6.75f, 39, 24, 14.25f}));
  // BGR: model channel 0 is blue; the mean list is in model order:
  // (30-1)/1, (20-2)/2, (10-3)/4 and (60-1)/1, (50-2)/2, (40-3)/4.
  o.order = ChannelOrder::BGR;
  ASSERT_FALSE(bool(writeImageToInput(img, "p", shape, o, v)));
  EXPECT_EQ(std::vector<float>(v, v + 6),
            (std::vector<float>{29, 9, 1.75f, 59, 24, 9.25f}));
}

TEST(Preprocess, ImageNetNormalizationFollowsModeAndOrder) {
  PreprocessOptions o;
  setImageNetNormalization(o); // 0to1, RGB: the published constants
  EXPECT_FLOAT_EQ(o.mean[0], 0.485f);
  EXPECT_FLOAT_EQ(o.stddev[2], 0.225f);
  o.mode = ImageMode::ZeroTo255;
  o.order = ChannelOrder::BGR;
  setImageNetNormalization(o); // BGR in 0..255: blue first, scaled by 255
  EXPECT_FLOAT_EQ(o.mean[0], 0.406f * 255);
  EXPECT_FLOAT_EQ(o.stddev[0], 0.225f * 255);
  o.mode = ImageMode::NegOneToOne;
  o.order = ChannelOrder::RGB;
  setImageNetNormalization(o); // x in [0,1] is 2x-1 in neg1to1
  EXPECT_FLOAT_EQ(o.mean[0], 2 * 0.485f - 1);
  EXPECT_FLOAT_EQ(o.stddev[0], 2 * 0.229f);
  // A pixel equal to the mean maps to 0: 0.485*255 = 123.675 ~ 124.
  Image img = makeImage(1, 1, 3, {124, 116, 104});
  setImageNetNormalization(o);
  float v[3];
  ASSERT_FALSE(bool(writeImageToInput(img, "p", {1, 1, 3}, o, v)));
  for (float x : v)
    EXPECT_NEAR(x, 0.f, 0.01f);
}

TEST(Preprocess, ChannelCountsAndSizesAreChecked) {
  float v[12];
  PreprocessOptions o;
  // Gray feeds all three channels of an RGB model; alpha is dropped.
  Image ga = makeImage(1, 1, 2, {255, 7});
  ASSERT_FALSE(bool(writeImageToInput(ga, "ga.png", {1, 1, 3}, o, v)));
  EXPECT_EQ(std::vector<float>(v, v + 3), (std::vector<float>{1, 1, 1}));
  Image rgb = makeImage(1, 1, 3, {1, 2, 3});
  std::string e = errorOf(writeImageToInput(rgb, "c.png", {1, 1, 1}, o, v));
  EXPECT_EQ(e, "image 'c.png' has 3 channels (RGB); the model input "
               "expects 1");
  Image big = makeImage(3, 2, 1, std::vector<uint8_t>(6, 0));
  e = errorOf(writeImageToInput(big, "b.png", {2, 2, 1}, o, v));
  EXPECT_EQ(e, "image 'b.png' is 3x2 (WxH); the model input expects 2x2; "
               "pass -resize to resize it");
  o.mean = {1, 2};
  EXPECT_FALSE(errorOf(checkNormalization(o, 3)).empty());
  o.mean = {1};
  o.stddev = {0};
  EXPECT_EQ(errorOf(checkNormalization(o, 3)),
            "-stddev values must be non-zero");
}

TEST(Preprocess, BilinearResizeWithHalfPixelCenters) {
  // Upscale 2x1 (0, 100) to 4x1: sources at -0.25, 0.25, 0.75, 1.25
  // clamp to [0,1] -> 0, 25, 75, 100.
  Image up = resizeImage(makeImage(2, 1, 1, {0, 100}), 4, 1);
  EXPECT_EQ(up.pixels, (std::vector<uint8_t>{0, 25, 75, 100}));
  // Downscale 4x1 (0, 10, 20, 30) to 2x1: sources 0.5 and 2.5 -> 5, 25.
  Image down = resizeImage(makeImage(4, 1, 1, {0, 10, 20, 30}), 2, 1);
  EXPECT_EQ(down.pixels, (std::vector<uint8_t>{5, 25}));
  // With -resize, a mismatched image is resized and then preprocessed.
  PreprocessOptions o;
  o.resize = true;
  o.mode = ImageMode::ZeroTo255;
  float v[2];
  ASSERT_FALSE(bool(writeImageToInput(makeImage(4, 1, 1, {0, 10, 20, 30}),
                                      "r.png", {1, 2, 1}, o, v)));
  EXPECT_EQ(v[0], 5.f);
  EXPECT_EQ(v[1], 25.f);
}
