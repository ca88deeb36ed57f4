//===- ConvPathCases.h - The convolution cases of ConvPaths.cpp -*- C++ -*-===//
//
// One row per case: shape (N, C, H, W, M, KH, KW), window (strides, pads
// top/left/bottom/right, dilations), group, fused activation with its
// alpha/beta, whether a residual is added, and the Winograd tile the CPU
// picks automatically (0: a GEMM path). The table is kept unformatted so
// that a case stays two lines.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_TESTS_OPS_CONVPATHCASES_H
#define EMBER_TESTS_OPS_CONVPATHCASES_H

#include "ember/Graph/OpInfo.h"

namespace ember {
namespace test {

struct ConvCase {
  const char *name;
  dim_t N, C, H, W, M, KH, KW;
  int64_t sh, sw, pt, pl, pb, pr, dh, dw, group;
  FusedActivation act;
  float alpha, beta;
  bool residual;
  /// The Winograd output tile the CPU picks automatically (0: a GEMM path;
  /// the forced modes still run Winograd on every eligible case).
  int winograd = 0;
  /// The tile it picks with the 8-lane kernels (a host without AVX-512:
  /// the transforms compute 8 tiles of a row at a time), where that
  /// differs; -1: same.
  int winogradNarrow = -1;
};

// clang-format off
inline const ConvCase kConvCases[] = {
    {"blocks_partial_relu_res", 2, 3, 9, 9, 10, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1,
     FusedActivation::Relu, 0, 0, true},
    {"pointwise_tail", 1, 16, 7, 5, 24, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1,
     FusedActivation::None, 0, 0, false},
    {"grouped_small_blocks_clip", 1, 8, 10, 11, 12, 3, 2,
     2, 2, 1, 0, 0, 1, 1, 1, 4,
     FusedActivation::Clip, -0.2f, 0.3f, false},
    {"depthwise_strided_dilated_hswish_res", 1, 6, 13, 13, 6, 3, 3,
     2, 2, 1, 1, 1, 1, 2, 2, 6,
     FusedActivation::HardSwish, 1.f / 6, 0.5f, true},
    {"depthwise_wide_rows_leaky", 1, 2, 3, 300, 2, 5, 5,
     1, 1, 2, 2, 2, 2, 1, 1, 2,
     FusedActivation::LeakyRelu, 0.1f, 0, false},
    {"stem_7x7_stride2_sigmoid", 1, 3, 40, 40, 16, 7, 7,
     2, 2, 3, 3, 3, 3, 1, 1, 1,
     FusedActivation::Sigmoid, 0, 0, false},
    {"dilated_multi_block", 1, 5, 12, 12, 17, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2, 1,
     FusedActivation::None, 0, 0, false},
    // K = 576 > 512: two passes over K, the residual added in the first and
    // the activation applied in the last; 20 channels = three full 6-row
    // blocks and a 2-row one; 100 pixels = a 64-column panel and a 36-column
    // tail (three vectors).
    {"k_passes_relu_res", 2, 64, 10, 10, 20, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1,
     FusedActivation::Relu, 0, 0, true, 0},
    // Pointwise, read in place: K = 600 (two passes), 13 channels (a 1-row
    // last block), 49 pixels (a 17-column partial panel).
    {"pointwise_k_passes_res", 2, 600, 7, 7, 13, 1, 1,
     1, 1, 0, 0, 0, 0, 1, 1, 1,
     FusedActivation::LeakyRelu, 0.1f, 0, true},
    // Pointwise with groups and 64 pixels (exactly one panel, no tail).
    {"pointwise_grouped", 1, 12, 8, 8, 9, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 3,
     FusedActivation::None, 0, 0, false},
    // Grouped pointwise, batch 2, 49 pixels: each group's partial panel is
    // read in place next to the following group's channels.
    {"pointwise_grouped_tail_res", 2, 12, 7, 7, 9, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1,
     3, FusedActivation::Relu, 0, 0, true},
    // Channel-vector GEMM (ConvGemmCV.inc) shapes, run on both GEMMs below:
    // 40 channels = a 32-channel block and an 8-channel (one-vector) tail;
    // 50 = a block and an 18-channel (two-vector) tail; 15 pixels = a
    // 14-pixel tile and a 1-pixel one; odd K; batch 2 with residual.
    {"cv_tails_odd_k_res", 2, 7, 5, 3, 40, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1,
     FusedActivation::Relu, 0, 0, true},
    {"cv_two_vector_tail_leaky", 1, 9, 6, 6, 50, 3, 1,
     1, 1, 1, 0, 1, 0, 1, 1, 1,
     FusedActivation::LeakyRelu, 0.1f, 0, false},
    // A 1x1 plane (one 1-pixel tile) with groups of 24 channels.
    {"cv_single_pixel_grouped", 1, 16, 1, 1, 48, 1, 1,
     1, 1, 0, 0, 0, 0, 1, 1, 2,
     FusedActivation::None, 0, 0, false},
    // Stride-2 pointwise (a ResNet downsample) over im2col; 7x7 pointwise
    // read in place (3 full tiles and a 7-pixel one), K = 520.
    {"pointwise_stride2_res", 2, 24, 14, 13, 64, 1, 1,
     2, 2, 0, 0, 0, 0, 1, 1, 1,
     FusedActivation::Relu, 0, 0, true},
    {"pointwise_7x7_long_k_hswish", 1, 520, 7, 7, 36, 1, 1,
     1, 1, 0, 0, 0, 0, 1, 1, 1,
     FusedActivation::HardSwish, 1.f / 6, 0.5f, false},
    // 14x14 with K sliced (400) and a residual: on 16-register targets ten
    // 18-pixel tiles and one of 16, whose strips store whole vectors into
    // the next strip's or tile's pixels but never past the call's last.
    {"pointwise_18_wide_tiles_sliced_res", 1, 400, 14, 14, 40, 1, 1,
     1, 1, 0, 0, 0, 0, 1, 1, 1,
     FusedActivation::Relu, 0, 0, true},
    // Direct convolutions of the channel-vector GEMM: unpadded (read in
    // place through the offset table; stride 2 leaves the last input row
    // unread), and padded with stride 2 (its zero-padded copy is shorter
    // than the padded input).
    {"direct_unpadded_stride2_res", 2, 5, 10, 11, 33, 3, 3,
     2, 2, 0, 0, 0, 0, 1, 1, 1,
     FusedActivation::Relu, 0, 0, true},
    {"direct_padded_stride2", 1, 6, 8, 9, 20, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1,
     FusedActivation::None, 0, 0, false},
    // Depthwise: rows with padded edges, stride 2 on odd planes, 5x5,
    // tiny planes with asymmetric pads, stride 3.
    {"depthwise_s1_blocks_relu_res", 2, 3, 9, 40, 3, 3, 3,
     1, 1, 1, 1, 1, 1, 1, 1, 3,
     FusedActivation::Relu, 0, 0, true},
    {"depthwise_s2_odd_clip", 1, 4, 57, 57, 4, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 4,
     FusedActivation::Clip, 0.f, 6.f, false},
    {"depthwise_5x5_s2_sigmoid", 1, 3, 29, 35, 3, 5, 5,
     2, 2, 2, 2, 2, 2, 1, 1, 3,
     FusedActivation::Sigmoid, 0, 0, false},
    {"depthwise_tiny_plane_asym_pads", 1, 5, 7, 7, 5, 3, 3,
     1, 1, 0, 1, 2, 0, 1, 1, 5,
     FusedActivation::None, 0, 0, true},
    // SiLU epilogues (EfficientNet's Mul(x, Sigmoid(x))): GEMM and
    // depthwise.
    {"gemm_silu_res", 1, 8, 10, 10, 20, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1,
     FusedActivation::SiLU, 0, 0, true},
    {"depthwise_silu", 1, 4, 30, 30, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 4,
     FusedActivation::SiLU, 0, 0, false},
    // Wide stride-1 planes take bands over padded rows: dilated with
    // asymmetric pads over two bands; a valid 5x5; a row too long for a
    // band (the interior-rows path). Wide stride 2: dilated, asymmetric.
    {"depthwise_bands_dilated_asym_res", 1, 3, 70, 60, 3, 3, 3,
     1, 1, 2, 1, 0, 2, 2, 2, 3,
     FusedActivation::Clip, 0.f, 6.f, true},
    {"depthwise_5x5_valid_wide", 2, 2, 9, 40, 2, 5, 5,
     1, 1, 0, 0, 0, 0, 1, 1, 2,
     FusedActivation::None, 0, 0, false},
    // Short padded rows (up to 32) take explicit vectors in the bands:
    // three bands of 20-wide rows, dilated and asymmetric; a 4x5 plane
    // (one vector ending at the band's last output over an 8-wide row).
    {"depthwise_short_rows_three_bands_res", 1, 3, 400, 20, 3, 3, 3,
     1, 1, 2, 1, 0, 2, 2, 2, 3,
     FusedActivation::Clip, 0.f, 6.f, true},
    {"depthwise_short_rows_one_vector", 2, 4, 4, 5, 4, 3, 3,
     1, 1, 1, 1, 1, 2, 1, 1, 4,
     FusedActivation::None, 0, 0, true},
    // Wide undilated rows go straight to the output, two rows at a time:
    // three bands (65, 65 and 21 rows), a tail of 3 past whole
    // vectors, dilated columns with asymmetric pads; on 8-lane targets a
    // 17-wide row (two vectors and a tail of one).
    {"depthwise_direct_rows_dilated_cols_res", 1, 3, 151, 61, 3, 3, 3,
     1, 1, 1, 2, 1, 0, 1, 2, 3,
     FusedActivation::Clip, 0.f, 6.f, true},
    {"depthwise_direct_rows_17_wide_relu_res", 1, 5, 16, 17, 5, 3, 3,
     1, 1, 1, 1, 1, 1, 1, 1, 5,
     FusedActivation::Relu, 0, 0, true},
    // 7x7 (ConvNeXt) on wide rows: three vectors per row at a time, then
    // single ones and the tails; an odd row count (a last single row), a
    // bias-only epilogue on a 56-wide plane and a 101-wide one with ReLU
    // and a residual.
    {"depthwise_7x7_direct_rows_56", 1, 3, 13, 56, 3, 7, 7,
     1, 1, 3, 3, 3, 3, 1, 1, 3,
     FusedActivation::None, 0, 0, false},
    {"depthwise_7x7_direct_rows_101_relu_res", 2, 2, 9, 101, 2, 7, 7,
     1, 1, 3, 3, 3, 3, 1, 1, 2,
     FusedActivation::Relu, 0, 0, true},
    {"depthwise_row_longer_than_band", 1, 2, 3, 5000, 2, 3, 3,
     1, 1, 1, 1, 1, 1, 1, 1, 2,
     FusedActivation::Relu, 0, 0, true},
    {"depthwise_s2_wide_dilated_asym_res", 1, 2, 33, 70, 2, 3, 3,
     2, 2, 0, 1, 1, 0, 2, 2, 2,
     FusedActivation::HardSwish, 1.f / 6, 0.5f, true},
    // Wide stride 2, undilated: phase bands on 8-lane targets (65 outputs
    // per row, asymmetric pads, a residual); a 5x5 row of 550 outputs too
    // long for the phase buffer (the interior-rows path).
    {"depthwise_s2_wide_phase_asym_res", 1, 3, 21, 131, 3, 3, 3,
     2, 2, 1, 0, 0, 1, 1, 1, 3,
     FusedActivation::Clip, 0.f, 6.f, true},
    {"depthwise_s2_5x5_row_past_phase_buffer", 1, 2, 6, 1100, 2, 5, 5,
     2, 2, 2, 2, 2, 2, 1, 1, 2,
     FusedActivation::None, 0, 0, false},
    {"depthwise_stride3_fallback", 1, 2, 20, 23, 2, 3, 3,
     3, 3, 1, 1, 1, 1, 1, 1, 2,
     FusedActivation::None, 0, 0, false},
    // Stride-2 rows of one 8-lane vector (shuffled vectors on 8-lane
    // targets): 14x14 -> 7x7 with Clip and a batch; 5x5 with a residual;
    // 8 outputs whose last reads the right pad, row stride 1 and dilated
    // rows with asymmetric pads; rows of 2 outputs from a 3-wide plane.
    {"depthwise_s2_one_vector_clip", 2, 6, 14, 14, 6, 3, 3,
     2, 2, 1, 1, 1, 1, 1, 1, 6,
     FusedActivation::Clip, 0.f, 6.f, false},
    {"depthwise_s2_one_vector_5x5_res", 1, 5, 14, 13, 5, 5, 5,
     2, 2, 2, 2, 2, 2, 1, 1, 5,
     FusedActivation::None, 0, 0, true},
    {"depthwise_s2_full_vector_dilated_rows", 1, 3, 11, 16, 3, 3, 3,
     1, 2, 2, 0, 1, 1, 2, 1, 3,
     FusedActivation::Relu, 0, 0, true},
    {"depthwise_s2_narrow_plane", 1, 4, 5, 3, 4, 3, 3,
     2, 2, 1, 1, 0, 1, 1, 1, 4,
     FusedActivation::None, 0, 0, false},
    // Channel-vector depthwise (auto on narrow rows and 5x5 up to 32
    // wide; every depthwise case also runs forced both ways): 40 channels
    // (a partial 16-channel block) on 7x7 in chunks of two rows with SiLU
    // and a residual; 5x5 stride 2 to 7x7 over a batch; 3x3 outputs (a
    // chunk wider than the plane); rows of 16+ in overlapping segments with
    // several bands (dilated, asymmetric pads); 5x5 on 28x28.
    {"dwcv_partial_block_7x7_silu_res", 1, 40, 7, 7, 40, 3, 3,
     1, 1, 1, 1, 1, 1, 1, 1, 40,
     FusedActivation::SiLU, 0, 0, true},
    {"dwcv_5x5_s2_batch_clip", 2, 20, 14, 14, 20, 5, 5,
     2, 2, 2, 2, 2, 2, 1, 1, 20,
     FusedActivation::Clip, 0.f, 6.f, false},
    {"dwcv_tiny_output_res", 1, 17, 5, 6, 17, 3, 3,
     2, 2, 1, 1, 1, 1, 1, 1, 17,
     FusedActivation::None, 0, 0, true},
    {"dwcv_wide_bands_dilated_asym", 1, 18, 60, 45, 18, 3, 3,
     1, 1, 2, 1, 0, 2, 2, 2, 18,
     FusedActivation::Relu, 0, 0, true},
    {"dwcv_5x5_28x28_sigmoid", 1, 33, 28, 28, 33, 5, 5,
     1, 1, 2, 2, 2, 2, 1, 1, 33,
     FusedActivation::Sigmoid, 0, 0, false},
    // Winograd-eligible shapes (3x3, stride 1, >= 16 channels each way),
    // each also run with F(2x2) and F(4x4) forced; the last number is the
    // tile the auto rule picks. A partial 32-column panel, relu and a
    // residual; odd planes in a batch of two with partial tiles at the right
    // and bottom; no padding; 7x7; C = 520 > 512 (two passes over K in the
    // GEMM, 25 channels: a 1-row last filter block); asymmetric pads; a row
    // of 38 F(4x4) tiles (two transform chunks); 56x56, where auto picks
    // F(4x4).
    {"wino_relu_res", 1, 32, 20, 20, 24, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1,
     FusedActivation::Relu, 0, 0, true, 4},
    {"wino_odd_batch_clip", 2, 17, 13, 11, 30, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1,
     FusedActivation::Clip, -0.5f, 0.5f, false, 0},
    {"wino_unpadded_leaky", 1, 20, 18, 18, 16, 3, 3, 1, 1, 0, 0, 0, 0, 1, 1, 1,
     FusedActivation::LeakyRelu, 0.1f, 0, false, 0},
    {"wino_7x7_relu_res", 1, 64, 7, 7, 40, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1,
     FusedActivation::Relu, 0, 0, true, 2},
    {"wino_k_passes", 1, 520, 12, 12, 25, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1,
     FusedActivation::None, 0, 0, true, 4},
    {"wino_asym_pads", 1, 16, 9, 14, 16, 3, 3, 1, 1, 0, 1, 2, 0, 1, 1, 1,
     FusedActivation::None, 0, 0, false, 0},
    {"wino_wide_row_sigmoid", 1, 16, 6, 150, 16, 3, 3,
     1, 1, 1, 1, 1, 1, 1, 1, 1,
     FusedActivation::Sigmoid, 0, 0, true, 0},
    {"wino_auto_f4_56x56", 1, 32, 56, 56, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1,
     FusedActivation::Relu, 0, 0, true, 4},
    // V and M past 8 MB: bands of tile rows, each band's transforms and
    // GEMMs in turn (126x126 with pads: a band starts on real rows above
    // it, the last band and tile row are partial); two images of 89x96
    // with asymmetric pads, banded across both images.
    {"wino_bands_relu_res", 1, 32, 126, 126, 48, 3, 3,
     1, 1, 1, 1, 1, 1, 1, 1, 1,
     FusedActivation::Relu, 0, 0, true, 4},
    {"wino_bands_batch_asym", 2, 24, 90, 97, 40, 3, 3,
     1, 1, 1, 0, 0, 1, 1, 1, 1,
     FusedActivation::None, 0, 0, true, 4},
    // Thirteen 40x40 images whose V and M pass 8 MB but two images' fit
    // a band: pieces of two whole images, the last of one image.
    {"wino_pieces_image_groups", 13, 24, 40, 40, 24, 3, 3,
     1, 1, 1, 1, 1, 1, 1, 1, 1,
     FusedActivation::Relu, 0, 0, true, 4},
    // Narrow rows that a flat walk fills poorly take narrower tiles
    // (channel-vector GEMM): 7x7 in 7-pixel tiles with K = 360 walked in
    // slices over all tiles of a call; 8x8 in 8-pixel tiles; a 1x7 window
    // on 17x17 in 9-pixel tiles (a 9 + 8 row); 12x12 in 12-pixel tiles with
    // sliced K = 630. (Auto takes Winograd for the 3x3 ones; the runs with
    // the GEMMs forced and Winograd off keep these tiles covered.)
    {"cv_width7_7x7_sliced_silu_res", 1, 40, 7, 7, 40, 3, 3,
     1, 1, 1, 1, 1, 1, 1, 1, 1,
     FusedActivation::SiLU, 0, 0, true, 2},
    {"cv_width8_8x8_relu", 1, 24, 8, 8, 36, 3, 3,
     1, 1, 1, 1, 1, 1, 1, 1, 1,
     FusedActivation::Relu, 0, 0, false, 2},
    {"cv_width9_1x7_17x17_res", 1, 20, 17, 17, 40, 1, 7,
     1, 1, 0, 3, 0, 3, 1, 1, 1,
     FusedActivation::None, 0, 0, true},
    {"cv_width12_12x12_sliced_hswish", 1, 70, 12, 12, 33, 3, 3,
     1, 1, 1, 1, 1, 1, 1, 1, 1,
     FusedActivation::HardSwish, 1.f / 6, 0.5f, false, 4},
    // Flat walks (wasted pixels between rows, no narrower tile fits
    // better): dilation and asymmetric pads (rows 4 pixels wide); 3x3 on
    // 17x17 (19 pixels apart).
    {"cv_flat_17x17_relu_res", 1, 24, 17, 17, 20, 3, 3,
     1, 1, 1, 1, 1, 1, 1, 1, 1,
     FusedActivation::Relu, 0, 0, true},
    {"cv_flat_dilated_asym_relu", 2, 20, 9, 6, 33, 3, 3,
     1, 1, 2, 1, 2, 1, 2, 2, 1,
     FusedActivation::Relu, 0, 0, false},
    // Pointwise with K = 1024 on 14x14: sliced K, 14 tiles per call.
    {"pointwise_14x14_k1024_clip_res", 1, 1024, 14, 14, 40, 1, 1,
     1, 1, 0, 0, 0, 0, 1, 1, 1,
     FusedActivation::Clip, 0, 6, true},
    // Depthwise with column stride 2 on rows of 9-32 outputs (the plane
    // kernel's phase bands): row stride 1, no left pad, a right one.
    {"depthwise_phase_s1x2_asym_res", 1, 5, 11, 40, 5, 3, 3,
     1, 2, 1, 0, 1, 1, 1, 1, 5,
     FusedActivation::Relu, 0, 0, true},
    // Phase bands split as vectors of 8 with an overlapping last one (15
    // outputs, 5x5, pads of 2, a SiLU) and of 16 (32 outputs from 61
    // columns, left pad 3: phases start at different columns; top pad 3:
    // whole input rows in the padding).
    {"depthwise_phase_5x5_pad2_silu", 1, 7, 27, 29, 7, 5, 5,
     2, 2, 2, 2, 2, 2, 1, 1, 7,
     FusedActivation::SiLU, 0, 0, false},
    {"depthwise_phase_v16_pads_res", 2, 3, 20, 61, 3, 3, 3,
     2, 2, 3, 3, 1, 0, 1, 1, 3,
     FusedActivation::None, 0, 0, true},
    // Column stride 2 straight from the rows on 16-lane targets (rows of
    // 9-32 outputs): no pads (taps from the next column pair); 5x5 with
    // pads 1 / 3 (an odd tap from the next pair, the right pad: every
    // row's last block from a zero-padded copy); 17 outputs (a block of
    // 16 and one of 8) on dilated rows, batch 2; 30 outputs from 60
    // columns at row stride 3 (the last block reads past the row: from
    // the next row, on the plane's last row a copy); pads of 2 on 3x3;
    // 9 outputs (one block).
    {"depthwise_s2_rows_valid_res", 1, 5, 30, 30, 5, 3, 3,
     2, 2, 0, 0, 0, 0, 1, 1, 5,
     FusedActivation::None, 0, 0, true},
    {"depthwise_s2_rows_5x5_pads_1_3", 1, 3, 21, 40, 3, 5, 5,
     2, 2, 1, 1, 3, 3, 1, 1, 3,
     FusedActivation::Clip, 0.f, 6.f, false},
    {"depthwise_s2_rows_17_dilated_hswish", 2, 4, 23, 34, 4, 3, 3,
     2, 2, 2, 1, 2, 1, 2, 1, 4,
     FusedActivation::HardSwish, 1.f / 6, 0.5f, true},
    {"depthwise_s2_rows_30_row_stride3_relu", 1, 3, 9, 60, 3, 3, 3,
     3, 2, 1, 1, 1, 1, 1, 1, 3,
     FusedActivation::Relu, 0, 0, false},
    {"depthwise_s2_rows_pads2_silu_res", 1, 2, 12, 26, 2, 3, 3,
     2, 2, 2, 2, 2, 2, 1, 1, 2,
     FusedActivation::SiLU, 0, 0, true},
    {"depthwise_s2_rows_9_wide", 1, 6, 5, 18, 6, 3, 3,
     2, 2, 1, 1, 1, 1, 1, 1, 6,
     FusedActivation::None, 0, 0, false},
    // A right pad of 30 on 20 columns: 25 outputs, the first block of 16
    // already reads past the row (a zero-padded copy).
    {"depthwise_s2_rows_right_pad_past_first_block", 1, 2, 6, 20, 2, 3, 3,
     2, 2, 1, 1, 1, 30, 1, 1, 2,
     FusedActivation::None, 0, 0, true},
    // Stride-1 depthwise straight from the input rows (DepthwiseFlat.inc):
    // whole vectors per row on rows of 16 outputs or more (in blocks of 64
    // columns, the last block 16-79 wide), flat vectors across
    // rows masked by column (and by row near the plane's ends) on narrower
    // planes of the input's shape; the tensor's first and last planes take
    // the padded bands. Widths 7, 13, 14, 17, 28 and 31; planes of 16
    // floats (one vector reading past both ends) and of 143 (a last vector
    // overlapping the one before, over a residual the output overwrites);
    // 5x5, dilated and asymmetric pads of the same shape; rows of 3 and 4
    // vectors (56, 48 outputs of 50 unpadded columns, 64 dilated), of a
    // 64-column block and a 5-vector tail (143), of blocks of which the
    // middle one reads no padding (150, dilated); and stride 2 on the same
    // widths.
    {"dwflat_7x7_relu_res", 1, 5, 7, 7, 5, 3, 3,
     1, 1, 1, 1, 1, 1, 1, 1, 5,
     FusedActivation::Relu, 0, 0, true},
    {"dwflat_13_wide_clip_res", 1, 4, 11, 13, 4, 3, 3,
     1, 1, 1, 1, 1, 1, 1, 1, 4,
     FusedActivation::Clip, 0.f, 6.f, true},
    {"dwflat_14x14_silu_res", 2, 3, 14, 14, 3, 3, 3,
     1, 1, 1, 1, 1, 1, 1, 1, 3,
     FusedActivation::SiLU, 0, 0, true},
    {"dwflat_17_wide_hswish", 1, 3, 9, 17, 3, 3, 3,
     1, 1, 1, 1, 1, 1, 1, 1, 3,
     FusedActivation::HardSwish, 1.f / 6, 0.5f, false},
    {"dwflat_28x28_res", 1, 4, 28, 28, 4, 3, 3,
     1, 1, 1, 1, 1, 1, 1, 1, 4,
     FusedActivation::None, 0, 0, true},
    {"dwflat_31_wide_5x5_leaky", 1, 3, 10, 31, 3, 5, 5,
     1, 1, 2, 2, 2, 2, 1, 1, 3,
     FusedActivation::LeakyRelu, 0.1f, 0, false},
    {"dwflat_one_vector_plane", 1, 2, 4, 4, 2, 3, 3,
     1, 1, 1, 1, 1, 1, 1, 1, 2,
     FusedActivation::None, 0, 0, true},
    {"dwflat_14_dilated_res", 1, 3, 14, 14, 3, 3, 3,
     1, 1, 2, 2, 2, 2, 2, 2, 3,
     FusedActivation::None, 0, 0, true},
    {"dwflat_asym_pads_20_wide", 1, 2, 12, 20, 2, 3, 3,
     1, 1, 2, 0, 0, 2, 1, 1, 2,
     FusedActivation::Relu, 0, 0, false},
    {"dwflat_7x7_5x5_sigmoid", 1, 3, 7, 7, 3, 5, 5,
     1, 1, 2, 2, 2, 2, 1, 1, 3,
     FusedActivation::Sigmoid, 0, 0, false},
    {"dwrows_56_silu_res", 1, 3, 9, 56, 3, 3, 3,
     1, 1, 1, 1, 1, 1, 1, 1, 3,
     FusedActivation::SiLU, 0, 0, true},
    {"dwrows_48_valid_rows", 2, 2, 6, 50, 2, 3, 3,
     1, 1, 0, 0, 0, 0, 1, 1, 2,
     FusedActivation::None, 0, 0, false},
    {"dwrows_64_dilated_res", 1, 3, 8, 64, 3, 3, 3,
     1, 1, 2, 2, 2, 2, 2, 2, 3,
     FusedActivation::Relu, 0, 0, true},
    {"dwrows_143_five_vector_tail_res", 1, 3, 5, 143, 3, 3, 3,
     1, 1, 1, 1, 1, 1, 1, 1, 3,
     FusedActivation::Clip, -0.5f, 0.5f, true},
    {"dwrows_150_dilated_blocks", 2, 2, 7, 150, 2, 3, 3,
     1, 1, 2, 2, 2, 2, 2, 2, 2,
     FusedActivation::None, 0, 0, true},
    {"dwflat_s2_13_wide", 1, 3, 13, 13, 3, 3, 3,
     2, 2, 1, 1, 1, 1, 1, 1, 3,
     FusedActivation::None, 0, 0, true},
    {"dwflat_s2_31_wide_dilated", 1, 2, 17, 31, 2, 3, 3,
     2, 2, 2, 2, 2, 2, 2, 2, 2,
     FusedActivation::Relu, 0, 0, false},
    // Pixel-panel tasks that write their own patch panels (enough panels
    // for 8 chunks, one task per chunk): a stride-2 stem on 45x45 outputs
    // (31 panels and a 41-column tail, 10 channels = a full and a partial
    // block), batch 2; grouped, dilated, asymmetric pads.
    {"own_patches_stem_s2_relu_res", 2, 3, 90, 90, 10, 3, 3,
     2, 2, 1, 1, 1, 1, 1, 1, 1,
     FusedActivation::Relu, 0, 0, true},
    {"own_patches_grouped_dilated", 1, 4, 50, 47, 6, 3, 3,
     1, 1, 2, 1, 0, 2, 2, 2, 2,
     FusedActivation::None, 0, 0, false},
    // Grouped convolutions with few output channels per group, the shapes
    // the automatic rule sends along output rows (ConvRows.inc): ResNeXt's
    // 4 channels per group on 4-vector rows with a partial last vector;
    // 10 per group in two blocks of 5 with column stride 2 (two phases)
    // and a residual; a 5x5 dilated grouped conv with asymmetric pads on
    // rows narrower than a vector; a stride-3 grouped 1x1 (three phases);
    // rows split into bands (a tall plane) with batch 2.
    {"rows_resnext_4_per_group_relu", 1, 32, 20, 56, 32, 3, 3,
     1, 1, 1, 1, 1, 1, 1, 1, 8,
     FusedActivation::Relu, 0, 0, false},
    {"rows_stride2_two_blocks_res", 1, 40, 15, 37, 40, 3, 3,
     2, 2, 1, 1, 1, 1, 1, 1, 4,
     FusedActivation::None, 0, 0, true},
    {"rows_5x5_dilated_asym_silu", 1, 12, 13, 11, 18, 5, 5,
     1, 1, 3, 1, 2, 4, 2, 2, 3,
     FusedActivation::SiLU, 0, 0, false},
    {"rows_pointwise_stride3", 1, 12, 17, 29, 9, 1, 1,
     3, 3, 0, 0, 0, 0, 1, 1, 3,
     FusedActivation::None, 0, 0, false},
    {"rows_tall_bands_batch_clip", 2, 16, 300, 40, 16, 3, 3,
     1, 1, 1, 1, 1, 1, 1, 1, 4,
     FusedActivation::Clip, -0.5f, 0.5f, true},
};
// clang-format on

} // namespace test
} // namespace ember

#endif
