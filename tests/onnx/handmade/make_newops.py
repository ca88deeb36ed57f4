#!/usr/bin/env python3
"""Writes the hand-made conformance set 'newops': operators newer than the
node tests of Debian's libonnx-testdata (opset 18 and later), in the layout
of the ONNX node tests, the outputs computed by onnxruntime. Run with
/work/main/.venv-bench/bin/python (onnx >= 1.15: AffineGrid) from this
directory; the generated files are committed, so ctest needs neither.
"""
import os

import numpy as np
from onnx import TensorProto, helper, numpy_helper

from handmade_io import model, vi, write_set

F, I64 = TensorProto.FLOAT, TensorProto.INT64
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "newops")
rng = np.random.default_rng(20)


def size(name, v):
    return numpy_helper.from_array(np.array(v, np.int64), name)


# AffineGrid (opset 20), 2-D and 3-D, both align_corners.
for align in (0, 1):
    write_set(ROOT, "test_affine_grid_2d_align%d" % align, model(
        [helper.make_node("AffineGrid", ["theta", "size"], ["grid"],
                          align_corners=align)],
        [vi("theta", F, [2, 2, 3])], [vi("grid", F, [2, 5, 7, 2])], 20,
        [size("size", [2, 3, 5, 7])]),
        [[rng.standard_normal((2, 2, 3)).astype(np.float32)]])
write_set(ROOT, "test_affine_grid_3d", model(
    [helper.make_node("AffineGrid", ["theta", "size"], ["grid"])],
    [vi("theta", F, [1, 3, 4])], [vi("grid", F, [1, 2, 3, 4, 3])], 20,
    [size("size", [1, 1, 2, 3, 4])]),
    [[rng.standard_normal((1, 3, 4)).astype(np.float32)]])

# A spatial transformer, as torch exports F.affine_grid + F.grid_sample.
write_set(ROOT, "test_affine_grid_sample", model(
    [helper.make_node("AffineGrid", ["theta", "size"], ["grid"]),
     helper.make_node("GridSample", ["x", "grid"], ["y"])],
    [vi("x", F, [2, 3, 6, 8]), vi("theta", F, [2, 2, 3])],
    [vi("y", F, [2, 3, 4, 5])], 20, [size("size", [2, 3, 4, 5])]),
    [[rng.standard_normal((2, 3, 6, 8)).astype(np.float32),
      (np.array([[1, 0, 0], [0, 1, 0]], np.float32) +
       0.3 * rng.standard_normal((2, 2, 3))).astype(np.float32)]])

# LpPool's opset-18 window options: ceil_mode adding a last, partly outside
# window (W 8, kernel 3, stride 2: 4 windows, not 3), dilations, pads.
write_set(ROOT, "test_lppool_ceil_dilations", model(
    [helper.make_node("LpPool", ["x"], ["y"], kernel_shape=[2, 3], p=3,
                      strides=[1, 2], dilations=[2, 1], pads=[1, 0, 0, 0],
                      ceil_mode=1)],
    [vi("x", F, [1, 2, 7, 8])], [vi("y", F, [1, 2, 6, 4])], 18),
    [[rng.standard_normal((1, 2, 7, 8)).astype(np.float32)]])

# LpPool with auto_pad (resolved as the other pools resolve it) and plain.
write_set(ROOT, "test_lppool_same_upper", model(
    [helper.make_node("LpPool", ["x"], ["y"], kernel_shape=[3, 2],
                      strides=[2, 2], auto_pad="SAME_UPPER")],
    [vi("x", F, [1, 3, 5, 6])], [vi("y", F, [1, 3, 3, 3])], 18),
    [[rng.standard_normal((1, 3, 5, 6)).astype(np.float32)]])
write_set(ROOT, "test_lppool_1d_p1", model(
    [helper.make_node("LpPool", ["x"], ["y"], kernel_shape=[3], p=1)],
    [vi("x", F, [2, 3, 9])], [vi("y", F, [2, 3, 7])], 11),
    [[rng.standard_normal((2, 3, 9)).astype(np.float32)]])
