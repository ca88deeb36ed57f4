#!/usr/bin/env python3
"""Writes the hand-made conformance set 'empty' (results with no elements:
a Slice, Compress, NonZero or Range that selects nothing, and the ops that
carry an empty value on to an empty graph output or into a Concat) in the
layout of the ONNX node tests, the outputs computed by onnxruntime. Run
with /work/main/.venv/bin/python from this directory; the generated files
are committed, so ctest needs neither.
"""
import os

import numpy as np
from onnx import TensorProto, helper

from handmade_io import const, model, vi, write_set

F, I64, B = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "empty")
rng = np.random.default_rng(3)


x34 = [rng.standard_normal((3, 4)).astype(np.float32) for _ in range(2)]

# A run-time-start Slice past the end: an empty graph output, then carried
# through Relu, Transpose and Reshape; the other output is unaffected.
write_set(ROOT, "test_empty_slice_chain", model(
    [const("e", [9]), const("ax", [1]),
     helper.make_node("Slice", ["x", "s", "e", "ax"], ["y"]),
     helper.make_node("Relu", ["y"], ["r"]),
     helper.make_node("Transpose", ["r"], ["t"], perm=[1, 0]),
     const("shape", [0, 3]),
     helper.make_node("Reshape", ["t", "shape"], ["z"], allowzero=1),
     helper.make_node("Neg", ["x"], ["n"])],
    [vi("x", F, [3, 4]), vi("s", I64, [1])],
    [vi("z", F, [0, 3]), vi("n", F, [3, 4])], opset=14,
    value_info=[vi("y", F, [3, 0])]),
    [[x34[0], np.array([4], np.int64)], [x34[1], np.array([7], np.int64)]])

# An empty constant slice concatenated with data: the Concat is the data.
write_set(ROOT, "test_empty_concat", model(
    [const("s", [2]), const("e", [2]), const("ax", [0]),
     helper.make_node("Slice", ["x", "s", "e", "ax"], ["y"]),
     helper.make_node("Concat", ["y", "x", "y"], ["z"], axis=0)],
    [vi("x", F, [3, 4])], [vi("z", F, [3, 4])]), [[x34[0]], [x34[1]]])

# NonZero of an all-zero constant, Compress with an all-false condition
# and an empty Range: empty graph outputs of three element types.
write_set(ROOT, "test_empty_selections", model(
    [const("zeros", np.zeros((2, 3), np.float32)),
     helper.make_node("NonZero", ["zeros"], ["nz"]),
     const("never", np.zeros(4, bool)),
     helper.make_node("Compress", ["x", "never"], ["c"], axis=1),
     const("a", np.int64(5)), const("b", np.int64(2)), const("d", np.int64(1)),
     helper.make_node("Range", ["a", "b", "d"], ["rg"]),
     helper.make_node("Sigmoid", ["x"], ["sx"])],
    [vi("x", F, [3, 4])],
    [vi("nz", I64, [2, 0]), vi("c", F, [3, 0]), vi("rg", I64, [0]),
     vi("sx", F, [3, 4])]),
    [[x34[0]], [x34[1]]])
