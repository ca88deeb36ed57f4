#!/usr/bin/env python3
"""Writes the hand-made conformance set 'controlflow' (If, Loop, Scan) in
the layout of the ONNX node tests: controlflow/NAME/model.onnx and
test_data_set_N/{input,output}_K.pb, the outputs computed by onnxruntime.
Run with /work/main/.venv/bin/python (onnx, onnxruntime) from this
directory; the generated files are committed, so ctest needs neither.
"""
import os

import numpy as np
from onnx import TensorProto, helper

from handmade_io import const, model, vi, write_set

F, B, I64 = TensorProto.FLOAT, TensorProto.BOOL, TensorProto.INT64
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "controlflow")


def write(name, m, data_sets):
    write_set(ROOT, name, m, data_sets)


rng = np.random.default_rng(7)
x23 = rng.standard_normal((2, 3)).astype(np.float32)

# If with a run-time condition: both branches read the outer x.
then_g = helper.make_graph(
    [const("c1", np.float32(1.5)), helper.make_node("Add", ["x", "c1"], ["t"])],
    "then", [], [vi("t", F, [2, 3])])
else_g = helper.make_graph(
    [const("c2", np.float32(-2.0)), helper.make_node("Mul", ["x", "c2"], ["e"]),
     helper.make_node("Relu", ["e"], ["e2"])],
    "else", [], [vi("e2", F, [2, 3])])
write("test_if_runtime_cond",
      model([helper.make_node("If", ["cond"], ["y"], then_branch=then_g,
                              else_branch=else_g)],
            [vi("cond", B, []), vi("x", F, [2, 3])], [vi("y", F, [2, 3])], 13),
      [[np.array(True), x23], [np.array(False), x23]])

# If with a constant condition: the branches may differ in shape.
else_small = helper.make_graph(
    [helper.make_node("ReduceSum", ["x"], ["s"], keepdims=0)], "else", [],
    [vi("s", F, [])])
then_id = helper.make_graph(
    [helper.make_node("Neg", ["x"], ["n"])], "then", [], [vi("n", F, [2, 3])])
write("test_if_constant_cond",
      model([const("k", np.array(True)),
             helper.make_node("If", ["k"], ["y"], then_branch=then_id,
                              else_branch=else_small)],
            [vi("x", F, [2, 3])], [vi("y", F, [2, 3])], 13),
      [[x23]])

# Loop with a constant trip count: y = 2 * y + i, the y of every
# iteration stacked.
body = helper.make_graph(
    [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
     helper.make_node("Cast", ["i"], ["fi"], to=F),
     const("two", np.float32(2.0)),
     helper.make_node("Mul", ["y_in", "two"], ["y2"]),
     helper.make_node("Add", ["y2", "fi"], ["y_out"]),
     helper.make_node("Identity", ["y_out"], ["scan"])],
    "body", [vi("i", I64, []), vi("cond_in", B, []), vi("y_in", F, [3])],
    [vi("cond_out", B, []), vi("y_out", F, [3]), vi("scan", F, [3])])
write("test_loop_static_trip_count",
      model([const("m", np.int64(4)), const("c", np.array(True)),
             helper.make_node("Loop", ["m", "c", "y0"], ["y", "ys"],
                              body=body)],
            [vi("y0", F, [3])], [vi("y", F, [3]), vi("ys", F, [4, 3])], 13),
      [[rng.standard_normal(3).astype(np.float32)]])

# Loop whose condition turns false: it folds from the iteration number, so
# the unrolled loop stops after iteration 2 of at most 10.
body_stop = helper.make_graph(
    [const("lim", np.int64(2)),
     helper.make_node("Less", ["i", "lim"], ["cond_out"]),
     helper.make_node("Cast", ["i"], ["fi"], to=F),
     helper.make_node("Sub", ["y_in", "fi"], ["y_out"]),
     helper.make_node("Identity", ["y_out"], ["scan"])],
    "body", [vi("i", I64, []), vi("cond_in", B, []), vi("y_in", F, [2])],
    [vi("cond_out", B, []), vi("y_out", F, [2]), vi("scan", F, [2])])
write("test_loop_condition_stops",
      model([const("m", np.int64(10)),
             helper.make_node("Loop", ["m", "", "y0"], ["y", "ys"],
                              body=body_stop)],
            [vi("y0", F, [2])], [vi("y", F, [2]), vi("ys", F, [3, 2])], 13),
      [[rng.standard_normal(2).astype(np.float32)]])

# Scan (opset 11): a running sum over axis 1 of a, b read in reverse along
# axis 0, and the per-step outputs stacked along axis 1, reversed.
scan_body = helper.make_graph(
    [helper.make_node("Add", ["s_in", "a_t"], ["s1"]),
     helper.make_node("Mul", ["s1", "b_t"], ["s_out"]),
     helper.make_node("Identity", ["s_out"], ["o"])],
    "body", [vi("s_in", F, [2]), vi("a_t", F, [2]), vi("b_t", F, [2])],
    [vi("s_out", F, [2]), vi("o", F, [2])])
write("test_scan_axes_directions",
      model([helper.make_node("Scan", ["s0", "a", "b"], ["s", "os"],
                              body=scan_body, num_scan_inputs=2,
                              scan_input_axes=[1, 0],
                              scan_input_directions=[0, 1],
                              scan_output_axes=[1],
                              scan_output_directions=[1])],
            [vi("s0", F, [2]), vi("a", F, [2, 4]), vi("b", F, [4, 2])],
            [vi("s", F, [2]), vi("os", F, [2, 4])], 11),
      [[rng.standard_normal(2).astype(np.float32),
        rng.standard_normal((2, 4)).astype(np.float32),
        rng.standard_normal((4, 2)).astype(np.float32)]])

# Scan (opset 8): a batch of 2, each scanned on its own.
body8 = helper.make_graph(
    [helper.make_node("Add", ["s_in", "x_t"], ["s_out"]),
     helper.make_node("Mul", ["s_out", "x_t"], ["o"])],
    "body", [vi("s_in", F, [3]), vi("x_t", F, [3])],
    [vi("s_out", F, [3]), vi("o", F, [3])])
write("test_scan8_batched",
      model([helper.make_node("Scan", ["", "s0", "x"], ["s", "os"],
                              body=body8, num_scan_inputs=1,
                              directions=[1])],
            [vi("s0", F, [2, 3]), vi("x", F, [2, 5, 3])],
            [vi("s", F, [2, 3]), vi("os", F, [2, 5, 3])], 8),
      [[rng.standard_normal((2, 3)).astype(np.float32),
        rng.standard_normal((2, 5, 3)).astype(np.float32)]])
