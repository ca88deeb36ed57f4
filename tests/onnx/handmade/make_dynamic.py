#!/usr/bin/env python3
"""Writes the hand-made conformance set 'dynamic': models whose output size
depends on the data and is declared as a dim_param (as torch.onnx.export
writes x.nonzero(), x[mask], torch.unique, boxes[nms(...)], topk with a
run-time k), in the layout of the ONNX node tests, each with data sets of
different counts (zero included), the outputs computed by onnxruntime.
Run with /work/main/.venv/bin/python from this directory; the generated
files are committed, so ctest needs neither.
"""
import os

import numpy as np
from onnx import TensorProto, helper, numpy_helper

from handmade_io import vi, write_set

F, B, I64 = TensorProto.FLOAT, TensorProto.BOOL, TensorProto.INT64
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "dynamic")
rng = np.random.default_rng(40)


def write(name, nodes, inputs, outputs, inits, data_sets, opset=13):
    """Builds the model and writes it with its data sets."""
    g = helper.make_graph(nodes, "g", inputs, outputs,
                          [numpy_helper.from_array(v, n)
                           for n, v in inits.items()])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    write_set(ROOT, name, m, data_sets)


def sparse(shape, frac):
    x = rng.standard_normal(shape).astype(np.float32)
    x[rng.random(shape) < frac] = 0
    return x


fracs = [.5, .1, 1.0]
write("test_nonzero_transpose",
      [helper.make_node("NonZero", ["x"], ["i"]),
       helper.make_node("Transpose", ["i"], ["y"], perm=[1, 0])],
      [vi("x", F, [3, 4])], [vi("y", I64, ["unk__0", 2])], {},
      [[sparse((3, 4), f)] for f in fracs])
write("test_mask_gathernd",
      [helper.make_node("Greater", ["x", "c"], ["m"]),
       helper.make_node("NonZero", ["m"], ["i"]),
       helper.make_node("Transpose", ["i"], ["t"], perm=[1, 0]),
       helper.make_node("GatherND", ["x", "t"], ["y"])],
      [vi("x", F, [3, 4])], [vi("y", F, ["unk__0"])],
      {"c": np.array(0.5, np.float32)},
      [[sparse((3, 4), 0)], [sparse((3, 4), .5)],
       [-np.ones((3, 4), np.float32)]])
write("test_unique_sorted",
      [helper.make_node("Unique", ["x"], ["y", "i", "v", "c"], sorted=1)],
      [vi("x", F, [8])],
      [vi("y", F, ["u"]), vi("i", I64, ["u"]), vi("v", I64, [8]),
       vi("c", I64, ["u"])], {},
      [[rng.integers(0, k, 8).astype(np.float32)] for k in (3, 8, 1)],
      opset=11)
def nms_box_indices():
    """Nodes giving k: the box indices NonMaxSuppression selects from the
    boxes bx and scores s of one batch and class."""
    return [helper.make_node("Unsqueeze", ["bx", "a0"], ["b3"]),
            helper.make_node("Unsqueeze", ["s", "a01"], ["s3"]),
            helper.make_node("NonMaxSuppression",
                             ["b3", "s3", "mo", "iou", "st"], ["sel"]),
            helper.make_node("Gather", ["sel", "two"], ["k1"], axis=1),
            helper.make_node("Squeeze", ["k1", "a1"], ["k"])]


xy = (rng.random((6, 2)) * 3).astype(np.float32)
boxes = np.concatenate([xy, xy + 1], 1)
write("test_nms_gather_boxes",
      nms_box_indices() + [
       helper.make_node("Gather", ["bx", "k"], ["y"], axis=0)],
      [vi("s", F, [6])], [vi("y", F, ["unk__0", 4])],
      {"bx": boxes, "a0": np.array([0], np.int64),
       "a01": np.array([0, 1], np.int64), "mo": np.array([10], np.int64),
       "iou": np.array([.3], np.float32), "st": np.array([.4], np.float32),
       "two": np.array([2], np.int64), "a1": np.array([1], np.int64)},
      [[rng.random(6).astype(np.float32)] for _ in range(2)] +
      [[np.zeros(6, np.float32)]])
write("test_topk_runtime_k",
      [helper.make_node("TopK", ["x", "k"], ["y", "i"], axis=1)],
      [vi("x", F, [2, 5]), vi("k", I64, [1])],
      [vi("y", F, [2, "k"]), vi("i", I64, [2, "k"])], {},
      [[rng.standard_normal((2, 5)).astype(np.float32),
        np.array([k], np.int64)] for k in (3, 5, 0)])
write("test_compress_runtime",
      [helper.make_node("Compress", ["x", "c"], ["y"], axis=1)],
      [vi("x", F, [2, 5]), vi("c", B, [5])], [vi("y", F, [2, "n"])], {},
      [[rng.standard_normal((2, 5)).astype(np.float32),
        rng.random(5) < p] for p in (.5, 1.0, 0.0)])
# torch.where(x > 0.5): NonZero, Transpose, Split into one column per dim
# (the split axis is not the counted one), Squeeze; torchvision's
# remove_small_boxes writes it.
write("test_where_split",
      [helper.make_node("Greater", ["x", "h"], ["m"]),
       helper.make_node("NonZero", ["m"], ["i"]),
       helper.make_node("Transpose", ["i"], ["t"], perm=[1, 0]),
       helper.make_node("Split", ["t"], ["r1", "c1"], axis=1),
       helper.make_node("Squeeze", ["r1", "a1"], ["r"]),
       helper.make_node("Squeeze", ["c1", "a1"], ["c"]),
       helper.make_node("Gather", ["w", "c"], ["y"], axis=0)],
      [vi("x", F, [3, 4])],
      [vi("r", I64, ["k"]), vi("y", F, ["k", 2])],
      {"h": np.array(0.5, np.float32), "a1": np.array([1], np.int64),
       "w": rng.standard_normal((4, 2)).astype(np.float32)},
      [[sparse((3, 4), 0)], [sparse((3, 4), .5)],
       [-np.ones((3, 4), np.float32)]])
# boxes[nms(...)[:2]]: a prefix of the selected rows (min(count, 2) of them),
# as torchvision's detectors keep their best detections.
write("test_nms_prefix",
      nms_box_indices() + [
       helper.make_node("Slice", ["k", "z", "e2", "a0"], ["kp"]),
       helper.make_node("Gather", ["bx", "kp"], ["y"], axis=0)],
      [vi("s", F, [6])], [vi("y", F, ["unk__0", 4])],
      {"bx": boxes, "a0": np.array([0], np.int64),
       "a01": np.array([0, 1], np.int64), "mo": np.array([10], np.int64),
       "iou": np.array([.3], np.float32), "st": np.array([.4], np.float32),
       "two": np.array([2], np.int64), "a1": np.array([1], np.int64),
       "z": np.array([0], np.int64), "e2": np.array([2], np.int64)},
      [[rng.random(6).astype(np.float32)] for _ in range(2)] +
      [[np.array([.9, .1, .1, .1, .1, .1], np.float32)],
       [np.zeros(6, np.float32)]])
# The detectors' post-processing: a score filter, then NonMaxSuppression
# (no score threshold) of the kept boxes, then the boxes it selects. Rows
# past the filter's count are not candidates (here they would be copies of
# row 0, which the filter may have dropped), and the boxes are gathered
# along their counted axis by indices within it.
write("test_filter_nms",
      [helper.make_node("Greater", ["s", "h"], ["m"]),
       helper.make_node("NonZero", ["m"], ["i"]),
       helper.make_node("Squeeze", ["i", "a0"], ["keep"]),
       helper.make_node("Gather", ["bx", "keep"], ["b"], axis=0),
       helper.make_node("Gather", ["s", "keep"], ["sk"], axis=0),
       helper.make_node("Unsqueeze", ["b", "a0"], ["b3"]),
       helper.make_node("Unsqueeze", ["sk", "a01"], ["s3"]),
       helper.make_node("NonMaxSuppression", ["b3", "s3", "mo", "iou"],
                        ["sel"]),
       helper.make_node("Gather", ["sel", "two"], ["k1"], axis=1),
       helper.make_node("Squeeze", ["k1", "a1"], ["k"]),
       helper.make_node("Gather", ["b", "k"], ["y"], axis=0)],
      [vi("s", F, [6])], [vi("y", F, ["unk__0", 4])],
      {"bx": boxes, "h": np.array(.3, np.float32),
       "a0": np.array([0], np.int64), "a01": np.array([0, 1], np.int64),
       "mo": np.array([10], np.int64), "iou": np.array([.3], np.float32),
       "two": np.array([2], np.int64), "a1": np.array([1], np.int64)},
      [[rng.random(6).astype(np.float32)] for _ in range(2)] +
      [[np.array([.1, .9, .2, .8, .1, .1], np.float32)],
       [np.array([.1, .2, .2, .1, .1, .1], np.float32)]])
# x[x > 0][-1]: a negative index counts from the count, not the bound.
write("test_mask_last",
      [helper.make_node("Greater", ["x", "z"], ["m"]),
       helper.make_node("NonZero", ["m"], ["i"]),
       helper.make_node("Squeeze", ["i", "a0"], ["keep"]),
       helper.make_node("Gather", ["x", "keep"], ["p"], axis=0),
       helper.make_node("Gather", ["p", "last"], ["y"], axis=0)],
      [vi("x", F, [8])], [vi("y", F, [1])],
      {"z": np.array(0, np.float32), "a0": np.array([0], np.int64),
       "last": np.array([-1], np.int64)},
      [[np.abs(rng.standard_normal(8)).astype(np.float32) *
        (rng.random(8) < p)] for p in (.5, .9)] +
      [[np.array([0, 3, 0, 0, 0, 0, 0, 0], np.float32)]])
# Two filters in a row, p = x[x > 0]; p[p < 0.5]: the second NonZero
# counts only rows within the first count (past it, copies of x[0], which
# is negative in the last two data sets and so below 0.5 but filtered out).
write("test_filter_twice",
      [helper.make_node("Greater", ["x", "z"], ["m"]),
       helper.make_node("NonZero", ["m"], ["i"]),
       helper.make_node("Squeeze", ["i", "a0"], ["keep"]),
       helper.make_node("Gather", ["x", "keep"], ["p"], axis=0),
       helper.make_node("Less", ["p", "h"], ["m2"]),
       helper.make_node("NonZero", ["m2"], ["i2"]),
       helper.make_node("Squeeze", ["i2", "a0"], ["k2"]),
       helper.make_node("Gather", ["p", "k2"], ["y"], axis=0)],
      [vi("x", F, [8])], [vi("y", F, ["n"])],
      {"z": np.array(0, np.float32), "h": np.array(.5, np.float32),
       "a0": np.array([0], np.int64)},
      [[rng.standard_normal(8).astype(np.float32)],
       [np.array([-1, .2, .9, .3, -2, .7, .1, 0], np.float32)],
       [np.array([-1, .9, .8, -3, 0, 0, 0, 0], np.float32)]])
# The Shape of a counted value holds the count (torchvision's detectors
# take min(count, k) for their TopK from it).
write("test_shape_of_count",
      [helper.make_node("Greater", ["x", "z"], ["m"]),
       helper.make_node("NonZero", ["m"], ["i"]),
       helper.make_node("Transpose", ["i"], ["t"], perm=[1, 0]),
       helper.make_node("Shape", ["t"], ["s"]),
       helper.make_node("Shape", ["t"], ["n"], end=1),
       helper.make_node("Concat", ["n", "k"], ["nk"], axis=0),
       helper.make_node("ReduceMin", ["nk"], ["y"], keepdims=0)],
      [vi("x", F, [3, 4])], [vi("s", I64, [2]), vi("y", I64, [])],
      {"z": np.array(0, np.float32), "k": np.array([5], np.int64)},
      [[sparse((3, 4), f)] for f in (.5, .1, 1.0)], opset=15)
# TopK of a counted value, K = min(count, 3) from its Shape (as the
# detectors rank each class's filtered scores), and the smallest 2 with a
# constant K: the rows past the count (copies of x[0], which the filter
# dropped) rank last.
write("test_topk_of_count",
      [helper.make_node("Greater", ["x", "z"], ["m"]),
       helper.make_node("NonZero", ["m"], ["i"]),
       helper.make_node("Squeeze", ["i", "a0"], ["keep"]),
       helper.make_node("Gather", ["x", "keep"], ["p"], axis=0),
       helper.make_node("Shape", ["p"], ["n"]),
       helper.make_node("Concat", ["n", "three"], ["nk"], axis=0),
       helper.make_node("ReduceMin", ["nk"], ["k"], keepdims=1),
       helper.make_node("TopK", ["p", "k"], ["y", "yi"]),
       helper.make_node("TopK", ["p", "two"], ["s", "si"], largest=0)],
      [vi("x", F, [8])],
      [vi("y", F, ["k"]), vi("yi", I64, ["k"]), vi("s", F, ["m"]),
       vi("si", I64, ["m"])],
      {"z": np.array(0, np.float32), "a0": np.array([0], np.int64),
       "three": np.array([3], np.int64), "two": np.array([2], np.int64)},
      [[np.array([-1, .2, .9, .3, -2, .7, .1, 0], np.float32)],
       [np.array([-5, .9, .8, -3, 0, 0, 0, 0], np.float32)],
       [np.array([5, 1, 2, 3, 4, -1, 7, 6], np.float32)]])


def filtered(x, out, op, c):
    """x[x OP c] for a 1-D x: Compare, NonZero, Squeeze, Gather."""
    return [helper.make_node(op, [x, c], [out + "_m"]),
            helper.make_node("NonZero", [out + "_m"], [out + "_i"]),
            helper.make_node("Squeeze", [out + "_i", "a0"], [out + "_k"]),
            helper.make_node("Gather", [x, out + "_k"], [out])]


# Concat along the counted axis of two counted values and a static one
# (retinanet's per-level detections): the entries compacted, the count the
# sum; Concat along another axis of values with the same count.
write("test_concat_counts",
      filtered("x", "p", "Greater", "h") + filtered("x", "q", "Less", "l") +
      [helper.make_node("Concat", ["p", "q", "c"], ["y"], axis=0),
       helper.make_node("Unsqueeze", ["p", "a1"], ["p1"]),
       helper.make_node("Neg", ["p1"], ["n1"]),
       helper.make_node("Concat", ["p1", "n1"], ["z"], axis=1),
       helper.make_node("Unsqueeze", ["z", "a1"], ["z3"]),
       helper.make_node("Flatten", ["z3"], ["f"], axis=1)],
      [vi("x", F, [8])],
      [vi("y", F, ["u"]), vi("z", F, ["v", 2]), vi("f", F, ["v", 2])],
      {"h": np.array(.5, np.float32), "l": np.array(-.5, np.float32),
       "a0": np.array([0], np.int64), "a1": np.array([1], np.int64),
       "c": np.array([7, 8, 9], np.float32)},
      [[np.array([-1, .2, .9, .3, -2, .7, .1, 0], np.float32)],
       [np.array([.6, .9, .8, .7, .55, .6, 1, 2], np.float32)],
       [np.zeros(8, np.float32)]])
# Reductions over the counted axis of rows P = X[x > 0.5] (Faster R-CNN's
# boxes.max() before its batched NMS): the rows past the count take no
# part; over another axis the count stays. Sum, Mean and Prod of no rows
# are 0, 0 (as onnxruntime gives) and 1; Max, Min and ArgMax need a row
# (test_reduce_count_max).
rows = filtered("x", "p", "Greater", "h")[:3] + [
    helper.make_node("Gather", ["X", "p_k"], ["P"])]
write("test_reduce_count",
      rows +
      [helper.make_node("ReduceSum", ["P"], ["s"], keepdims=0),
       helper.make_node("ReduceMean", ["P"], ["m"], axes=[0], keepdims=0),
       helper.make_node("ReduceProd", ["P"], ["r"], axes=[0], keepdims=1),
       helper.make_node("ReduceSum", ["P", "a1"], ["t"], keepdims=0)],
      [vi("x", F, [8]), vi("X", F, [8, 3])],
      [vi("s", F, []), vi("m", F, [3]), vi("r", F, [1, 3]),
       vi("t", F, ["u"])],
      {"h": np.array(.5, np.float32), "a0": np.array([0], np.int64),
       "a1": np.array([1], np.int64)},
      [[np.array([-1, .2, .9, .3, -2, .7, .1, 0], np.float32),
        rng.standard_normal((8, 3)).astype(np.float32)],
       [np.array([.6, .9, .8, .7, .55, .6, 1, 2], np.float32),
        rng.uniform(.5, 1.5, (8, 3)).astype(np.float32)],
       [np.zeros(8, np.float32), np.ones((8, 3), np.float32)]])
write("test_reduce_count_max",
      rows +
      [helper.make_node("ReduceMax", ["P"], ["mx"], keepdims=0),
       helper.make_node("ReduceMin", ["P"], ["mn"], axes=[0], keepdims=0),
       helper.make_node("ArgMax", ["P"], ["am"], axis=0, keepdims=0),
       helper.make_node("ArgMin", ["P"], ["an"], axis=1, keepdims=1)],
      [vi("x", F, [8]), vi("X", F, [8, 3])],
      [vi("mx", F, []), vi("mn", F, [3]), vi("am", I64, [3]),
       vi("an", I64, ["u", 1])],
      {"h": np.array(.5, np.float32), "a0": np.array([0], np.int64)},
      [[np.array([-1, .2, .9, .3, -2, .7, .1, 0], np.float32),
        -np.abs(rng.standard_normal((8, 3))).astype(np.float32)],
       [np.array([.6, .9, .8, .7, .55, .6, 1, 2], np.float32),
        rng.standard_normal((8, 3)).astype(np.float32)],
       [np.array([-1, 0, 0, 0, 0, 0, 0, .7], np.float32),
        np.abs(rng.standard_normal((8, 3))).astype(np.float32) + 1]])
# ConstantOfShape and Expand of the Shape of a counted value (ssdlite's
# per-class labels, torch.full_like(scores, label)) are counted with it.
write("test_shape_fill",
      rows +
      [helper.make_node("Shape", ["P"], ["S"]),
       helper.make_node("ConstantOfShape", ["S"], ["y"],
                        value=numpy_helper.from_array(
                            np.array([3], np.int64))),
       helper.make_node("Shape", ["p_k"], ["s1"]),
       helper.make_node("Expand", ["v", "s1"], ["e"])],
      [vi("x", F, [8]), vi("X", F, [8, 3])],
      [vi("y", I64, ["u", 3]), vi("e", F, ["u"])],
      {"h": np.array(.5, np.float32), "v": np.array([2.5], np.float32),
       "a0": np.array([0], np.int64)},
      [[np.array([-1, .2, .9, .3, -2, .7, .1, 0], np.float32),
        rng.standard_normal((8, 3)).astype(np.float32)],
       [np.zeros(8, np.float32), np.ones((8, 3), np.float32)]])


def nms_boxes(n, center, flip):
    """n boxes in clusters (so that many overlap), as corners y1, x1, y2, x2
    (some given in the other order when flip) or centers x, y, w, h."""
    c = rng.random((n, 2)).astype(np.float32) * 8
    c = c[rng.integers(0, n // 10, n)] + rng.standard_normal((n, 2)) * .3
    wh = rng.uniform(.5, 2, (n, 2))
    if center:
        return np.concatenate([c, wh], 1).astype(np.float32)
    b = np.concatenate([c[:, ::-1] - wh[:, ::-1] / 2,
                        c[:, ::-1] + wh[:, ::-1] / 2], 1)
    if flip:
        b[::3] = b[::3][:, [2, 3, 0, 1]]
    return b.astype(np.float32)


# NonMaxSuppression over more boxes than the unrolled graph took (256):
# one NMSKeep instruction per graph. Two batches, two classes, a score
# threshold, at most 130 per class (some classes select fewer); scores
# rounded to 0.05 so that ties are ordered by the lower box index (as
# onnxruntime orders them).
for center in (0, 1):
    write("test_nms_many_boxes%s" % ("_center" if center else ""),
          [helper.make_node("NonMaxSuppression",
                            ["b", "s", "mo", "iou", "st"], ["y"],
                            center_point_box=center)],
          [vi("b", F, [2, 300, 4]), vi("s", F, [2, 2, 300])],
          [vi("y", I64, ["n", 3])],
          {"mo": np.array([130], np.int64), "iou": np.array([.4], np.float32),
           "st": np.array([.1], np.float32)},
          [[np.stack([nms_boxes(300, center, True) for _ in range(2)]),
            np.round(rng.random((2, 2, 300)) * 20).astype(np.float32) / 20]
           for _ in range(2)] +
          [[np.stack([nms_boxes(300, center, False)] * 2),
            np.zeros((2, 2, 300), np.float32)]])
# Two counts equal by construction (ssdlite's batched NMS offsets): the
# boxes of two filters concatenated, and the per-row fills of their Shapes
# concatenated the same way, are added; Concat sums the counts separately
# for each, and the sums are the same computation on the same counts.
write("test_equal_counts",
      filtered("x", "p", "Greater", "h") + filtered("x", "q", "Less", "l") +
      [helper.make_node("Concat", ["p", "q"], ["pq"], axis=0),
       helper.make_node("Shape", ["p"], ["sp"]),
       helper.make_node("Shape", ["q"], ["sq"]),
       helper.make_node("ConstantOfShape", ["sp"], ["fp"],
                        value=numpy_helper.from_array(
                            np.array([10], np.float32))),
       helper.make_node("ConstantOfShape", ["sq"], ["fq"],
                        value=numpy_helper.from_array(
                            np.array([20], np.float32))),
       helper.make_node("Concat", ["fp", "fq"], ["f"], axis=0),
       helper.make_node("Add", ["pq", "f"], ["y"])],
      [vi("x", F, [8])], [vi("y", F, ["u"])],
      {"h": np.array(.5, np.float32), "l": np.array(-.5, np.float32),
       "a0": np.array([0], np.int64)},
      [[np.array([-1, .2, .9, .3, -2, .7, .1, 0], np.float32)],
       [np.array([.6, .9, .8, .7, .55, .6, 1, 2], np.float32)],
       [np.zeros(8, np.float32)]])
# Reshape of counted rows to a shape rebuilt from their Shape (retinanet's
# boxes after clipping: Gather of each entry, Unsqueeze, Concat), and to a
# constant shape with -1 at the counted axis: the rows keep their count.
write("test_reshape_shape_of_count",
      rows +
      [helper.make_node("Reshape", ["P", "m13"], ["T"]),
       helper.make_node("Shape", ["P"], ["S"]),
       helper.make_node("Gather", ["S", "i0"], ["s0"], axis=0),
       helper.make_node("Gather", ["S", "i1"], ["s1"], axis=0),
       helper.make_node("Unsqueeze", ["s0", "a0"], ["u0"]),
       helper.make_node("Unsqueeze", ["s1", "a0"], ["u1"]),
       helper.make_node("Concat", ["u0", "u1"], ["shp"], axis=0),
       helper.make_node("Reshape", ["T", "shp"], ["R"]),
       helper.make_node("Add", ["R", "P"], ["y"])],
      [vi("x", F, [8]), vi("X", F, [8, 3])],
      [vi("T", F, ["u", 1, 3]), vi("y", F, ["u", 3])],
      {"h": np.array(.5, np.float32), "a0": np.array([0], np.int64),
       "m13": np.array([-1, 1, 3], np.int64),
       "i0": np.array(0, np.int64), "i1": np.array(1, np.int64)},
      [[np.array([-1, .2, .9, .3, -2, .7, .1, 0], np.float32),
        rng.standard_normal((8, 3)).astype(np.float32)],
       [np.zeros(8, np.float32), np.ones((8, 3), np.float32)]])
# If with a run-time condition whose branches give an empty result and a
# counted one (torchvision's batched NMS: nothing when there are no boxes),
# or two counted ones of one bound: the count is selected with the data.
empty = numpy_helper.from_array(np.zeros(0, np.int64))
then_g = helper.make_graph(
    [helper.make_node("Constant", [], ["e"], value=empty)] +
    filtered("x", "lo", "Less", "h"), "then", [],
    [vi("e", I64, [0]), vi("lo", F, ["a"])])
else_g = helper.make_graph(
    filtered("x", "hi", "Greater", "h"), "else", [],
    [vi("hi_k", I64, ["b"]), vi("hi", F, ["c"])])
write("test_if_counted",
      [helper.make_node("ReduceSum", ["x"], ["t"], keepdims=0),
       helper.make_node("Less", ["t", "z"], ["c"]),
       helper.make_node("If", ["c"], ["y", "v"], then_branch=then_g,
                        else_branch=else_g)],
      [vi("x", F, [8])], [vi("y", I64, ["n"]), vi("v", F, ["m"])],
      {"h": np.array(.5, np.float32), "z": np.array(0, np.float32),
       "a0": np.array([0], np.int64)},
      [[np.array([-1, .2, .9, .3, -2, .7, .1, 0], np.float32)],
       [np.array([.6, .9, .8, .7, .55, .6, 1, 2], np.float32)],
       [np.array([-.6, .9, -.8, .7, -.55, .6, 1, 2], np.float32)]])
# x[:n] with n = 0 + the count of x from its Shape (Faster R-CNN's split of
# the proposals per image), and x[:n] with n the count of a smaller filter:
# the rows are cut to the end's count.
write("test_slice_to_count",
      rows + filtered("x", "q", "Greater", "h2") +
      [helper.make_node("Shape", ["P"], ["S"]),
       helper.make_node("Gather", ["S", "i0"], ["s0"], axis=0),
       helper.make_node("Unsqueeze", ["s0", "a0"], ["u0"]),
       helper.make_node("Add", ["z1", "u0"], ["end"]),
       helper.make_node("Slice", ["P", "z1", "end", "z1"], ["y"]),
       helper.make_node("Shape", ["q"], ["Q"]),
       helper.make_node("Slice", ["P", "z1", "Q", "z1"], ["w"])],
      [vi("x", F, [8]), vi("X", F, [8, 3])],
      [vi("y", F, ["u", 3]), vi("w", F, ["v", 3])],
      {"h": np.array(.5, np.float32), "h2": np.array(.8, np.float32),
       "a0": np.array([0], np.int64), "z1": np.array([0], np.int64),
       "i0": np.array(0, np.int64)},
      [[np.array([-1, .2, .9, .3, -2, .7, .1, 0], np.float32),
        rng.standard_normal((8, 3)).astype(np.float32)],
       [np.array([.6, .9, .8, .7, .55, .6, 1, 2], np.float32),
        rng.standard_normal((8, 3)).astype(np.float32)],
       [np.zeros(8, np.float32), np.ones((8, 3), np.float32)]])
# Faster R-CNN's second stage on counted rows P = X[x > 0.5]: Softmax over
# the row, Gemm and MatMul of the rows, Reshape to [-1, 2, 2] and then
# merging the rows with the next dim ([-1, 2]: the count doubles), and
# MultiScaleRoIAlign's scatter: rows r with P[r, 0] > 0 written back by
# index into zeros shaped like P, the index column expanded with torch's
# expand(-1, 3) (Where(shape == -1, 1, shape) on [count, 3]).
one3 = numpy_helper.from_array(np.array([1], np.int64))
write("test_count_rows_ops",
      rows +
      [helper.make_node("Softmax", ["P"], ["sm"], axis=1),
       helper.make_node("Gemm", ["P", "W", "c2"], ["g"]),
       helper.make_node("MatMul", ["P", "W4"], ["mm"]),
       helper.make_node("Reshape", ["mm", "s22"], ["R"]),
       helper.make_node("Reshape", ["R", "s2"], ["M"]),
       helper.make_node("Shape", ["P"], ["S"]),
       helper.make_node("ConstantOfShape", ["S"], ["zero"]),
       helper.make_node("Gather", ["P", "i0"], ["col"], axis=1),
       helper.make_node("Greater", ["col", "z"], ["pos"]),
       helper.make_node("NonZero", ["pos"], ["nz"]),
       helper.make_node("Reshape", ["nz", "m11"], ["q"]),
       helper.make_node("Shape", ["q"], ["Q"]),
       helper.make_node("Gather", ["Q", "i0"], ["q0"], axis=0),
       helper.make_node("Unsqueeze", ["q0", "a0"], ["qu"]),
       helper.make_node("Concat", ["qu", "three"], ["shp"], axis=0),
       helper.make_node("ConstantOfShape", ["two"], ["ones"], value=one3),
       helper.make_node("Mul", ["ones", "m1"], ["neg"]),
       helper.make_node("Equal", ["shp", "neg"], ["isneg"]),
       helper.make_node("Where", ["isneg", "ones", "shp"], ["shp2"]),
       helper.make_node("Expand", ["q", "shp2"], ["idx"]),
       helper.make_node("Squeeze", ["q", "a1"], ["qs"]),
       helper.make_node("Gather", ["P", "qs"], ["upd"], axis=0),
       helper.make_node("ScatterElements", ["zero", "idx", "upd"], ["sc"],
                        axis=0)],
      [vi("x", F, [8]), vi("X", F, [8, 3])],
      [vi("sm", F, ["u", 3]), vi("g", F, ["u", 2]), vi("M", F, ["w", 2]),
       vi("sc", F, ["u", 3])],
      {"h": np.array(.5, np.float32), "a0": np.array([0], np.int64),
       "a1": np.array([1], np.int64), "z": np.array(0, np.float32),
       "W": rng.standard_normal((3, 2)).astype(np.float32),
       "c2": rng.standard_normal(2).astype(np.float32),
       "W4": rng.standard_normal((3, 4)).astype(np.float32),
       "s22": np.array([-1, 2, 2], np.int64),
       "s2": np.array([-1, 2], np.int64), "i0": np.array(0, np.int64),
       "m11": np.array([-1, 1], np.int64), "m1": np.array([-1], np.int64),
       "two": np.array([2], np.int64), "three": np.array([3], np.int64)},
      [[np.array([-1, .2, .9, .3, -2, .7, .1, 0], np.float32),
        rng.standard_normal((8, 3)).astype(np.float32)],
       [np.array([.6, .9, .8, .7, .55, .6, 1, 2], np.float32),
        rng.standard_normal((8, 3)).astype(np.float32)],
       [np.zeros(8, np.float32), np.ones((8, 3), np.float32)]])
# Range to the count of counted rows (torch.arange(len(boxes))), from 0 by
# 1 and from 1 by 2, and the first added to a column of the rows.
write("test_range_to_count",
      rows +
      [helper.make_node("Shape", ["P"], ["S"]),
       helper.make_node("Gather", ["S", "i0"], ["n"], axis=0),
       helper.make_node("Range", ["zero", "n", "one"], ["r"]),
       helper.make_node("Range", ["one", "n", "two"], ["r2"]),
       helper.make_node("Cast", ["r"], ["rf"], to=F),
       helper.make_node("Gather", ["P", "i0"], ["col"], axis=1),
       helper.make_node("Add", ["rf", "col"], ["y"])],
      [vi("x", F, [8]), vi("X", F, [8, 3])],
      [vi("r", I64, ["u"]), vi("r2", I64, ["v"]), vi("y", F, ["u"])],
      {"h": np.array(.5, np.float32), "a0": np.array([0], np.int64),
       "i0": np.array(0, np.int64), "zero": np.array(0, np.int64),
       "one": np.array(1, np.int64), "two": np.array(2, np.int64)},
      [[np.array([-1, .2, .9, .3, -2, .7, .1, 0], np.float32),
        rng.standard_normal((8, 3)).astype(np.float32)],
       [np.array([.6, .9, .8, .7, .55, .6, 1, 2], np.float32),
        rng.standard_normal((8, 3)).astype(np.float32)],
       [np.zeros(8, np.float32), np.ones((8, 3), np.float32)]])
# Per-batch-entry ops over counted rows (Mask R-CNN's mask head: regions
# through Conv, Relu, pooling; padding off the counted axis) and a Flatten
# that merges the counted axis with the next (the count times its size).
imgs = filtered("x", "p", "Greater", "h")[:3] + [
    helper.make_node("Gather", ["X4", "p_k"], ["P"])]
write("test_counted_batch_conv",
      imgs +
      [helper.make_node("Conv", ["P", "W", "b"], ["c"], pads=[1, 1, 1, 1]),
       helper.make_node("Relu", ["c"], ["r"]),
       helper.make_node("MaxPool", ["r"], ["mp"], kernel_shape=[2, 2],
                        strides=[2, 2]),
       helper.make_node("Pad", ["mp", "pads"], ["pd"]),
       helper.make_node("BatchNormalization", ["pd", "g", "be", "mu", "va"],
                        ["bn"]),
       helper.make_node("Flatten", ["bn"], ["y"], axis=2),
       helper.make_node("GlobalAveragePool", ["c"], ["ga"])],
      [vi("x", F, [8]), vi("X4", F, [8, 2, 4, 4])],
      [vi("y", F, ["u", 16]), vi("ga", F, ["v", 3, 1, 1])],
      {"h": np.array(.5, np.float32), "a0": np.array([0], np.int64),
       "W": rng.standard_normal((3, 2, 3, 3)).astype(np.float32),
       "b": rng.standard_normal(3).astype(np.float32),
       "pads": np.array([0, 0, 1, 1, 0, 0, 1, 1], np.int64),
       "g": rng.random(3).astype(np.float32) + .5,
       "be": rng.standard_normal(3).astype(np.float32),
       "mu": rng.standard_normal(3).astype(np.float32),
       "va": rng.random(3).astype(np.float32) + .5},
      [[np.array([-1, .2, .9, .3, -2, .7, .1, 0], np.float32),
        rng.standard_normal((8, 2, 4, 4)).astype(np.float32)],
       [np.array([.6, .9, .8, .7, .55, .6, 1, 2], np.float32),
        rng.standard_normal((8, 2, 4, 4)).astype(np.float32)],
       [np.zeros(8, np.float32), np.ones((8, 2, 4, 4), np.float32)]])
write("test_counted_layernorm",
      rows +
      [helper.make_node("LayerNormalization", ["P", "g", "be"], ["ln"]),
       helper.make_node("HardSwish", ["ln"], ["y"])],
      [vi("x", F, [8]), vi("X", F, [8, 3])], [vi("y", F, ["u", 3])],
      {"h": np.array(.5, np.float32), "a0": np.array([0], np.int64),
       "g": rng.random(3).astype(np.float32) + .5,
       "be": rng.standard_normal(3).astype(np.float32)},
      [[np.array([-1, .2, .9, .3, -2, .7, .1, 0], np.float32),
        rng.standard_normal((8, 3)).astype(np.float32)],
       [np.zeros(8, np.float32), np.ones((8, 3), np.float32)]],
      opset=17)


def append_loop(k):
    """for i in range(len(P)): res = cat((res, f(P[i]))) from an empty res,
    with k rows appended per iteration (a scripted Python list append)."""
    piece = [helper.make_node("Gather", ["P", "i"], ["g"], axis=0),
             helper.make_node("MatMul", ["g", "Wl"], ["gw"]),
             helper.make_node("Unsqueeze", ["gw", "a0"], ["row"])]
    if k == 2:
        piece += [helper.make_node("Neg", ["row"], ["neg"]),
                  helper.make_node("Concat", ["row", "neg"], ["rows"],
                                   axis=0)]
    body = helper.make_graph(
        piece + [helper.make_node("Concat", ["res", "rows" if k == 2 else
                                             "row"], ["res2"], axis=0),
                 helper.make_node("Identity", ["cond"], ["cond2"])],
        "body", [vi("i", I64, []), vi("cond", B, []), vi("res", F, [None, 2])],
        [vi("cond2", B, []), vi("res2", F, [None, 2])])
    return [helper.make_node("Shape", ["P"], ["S"]),
            helper.make_node("Gather", ["S", "i0"], ["n"], axis=0),
            helper.make_node("Loop", ["n", "t", "empty"], ["y"], body=body)]


for k in (1, 2):
    write("test_loop_append_rows_%d" % k,
          rows + append_loop(k),
          [vi("x", F, [8]), vi("X", F, [8, 3])], [vi("y", F, ["u", 2])],
          {"h": np.array(.5, np.float32), "a0": np.array([0], np.int64),
           "i0": np.array(0, np.int64), "t": np.array(True),
           "empty": np.zeros((0, 2), np.float32),
           "Wl": rng.standard_normal((3, 2)).astype(np.float32)},
          [[np.array([-1, .2, .9, .3, -2, .7, .1, 0], np.float32),
            rng.standard_normal((8, 3)).astype(np.float32)],
           [np.array([.6, .9, .8, .7, .55, .6, 1, 2], np.float32),
            rng.standard_normal((8, 3)).astype(np.float32)],
           [np.zeros(8, np.float32), np.ones((8, 3), np.float32)]])
